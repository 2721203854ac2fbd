import { describe, it, expect } from 'vitest';
import { canonicalJson, canonicalText, sha256Hex } from './canonical.ts';
import { decimal } from './amounts.ts';
import { dmyDate, isDmyDate, isIsoDate, isoDate, localDate } from './dates.ts';
import { requireEur } from './currency.ts';
import { baseMetadata, customerTaxId, optionalAmount, optionalBoolean, optionalChoice, optionalText } from './metadata-fields.ts';
import { chainedFingerprint } from './placeholder.ts';
import { expect400 } from './test-helpers.ts';
import { draft } from './test-fixtures.ts';

describe('canonicalJson', () => {
  it('sorts keys at every depth, drops undefined, keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1], c: 'x' }, u: undefined })).toBe('{"a":{"c":"x","d":[3,1]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    expect(canonicalJson([undefined, null])).toBe('[null,null]');
  });

  it('is the reference text whatever the keys: integer-like keys sort as text, not first', () => {
    const values: unknown[] = [
      { b: 1, 10: 'ten', 2: 'two', a: [{ 1: true, z: null }] },
      { nested: { '01': 1, '1': 2, '4294967295': 3, x: [1.5, -0, 'é\u2028'] } },
      [{ c: 1, b: { a: 'x' } }, 'y', 3, false],
      'just a string', 42, true, null,
    ];
    for (const v of values) expect(canonicalJson(v)).toBe(canonicalText(v));
    expect(canonicalJson({ 10: 'a', 9: 'b' })).toBe('{"10":"a","9":"b"}');
    expect(() => canonicalJson({ a: Number.NaN })).toThrow('non-finite');
    expect(() => canonicalJson({ a: () => 1 })).toThrow('cannot encode a function');
    expect(() => canonicalJson({ a: 1n })).toThrow('cannot encode a bigint');
  });
  it('refuses what JSON cannot carry', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow();
    expect(() => canonicalJson({ f: () => 1 })).toThrow();
  });
  it('sha256Hex', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
  it('placeholder chaining depends on the previous link', () => {
    expect(chainedFingerprint(null, 'x')).toBe(sha256Hex('\nx'));
    expect(chainedFingerprint('p', 'x')).not.toBe(chainedFingerprint(null, 'x'));
  });
});

describe('decimal', () => {
  it.each([
    [1210, '12.10'],
    [5, '0.05'],
    [0, '0.00'],
    [-470, '-4.70'],
    [106480, '1064.80'],
  ])('%i → %s', (minor, text) => expect(decimal(minor)).toBe(text));
  it('refuses a non-integer', () => expect(() => decimal(1.5)).toThrow());
});

describe('dates', () => {
  it('uses the local date of the country, not UTC', () => {
    const lateUtc = new Date('2026-01-14T23:30:00Z'); // 00:30 on the 15th in Madrid and Athens
    expect(isoDate(localDate(lateUtc, 'ES'))).toBe('2026-01-15');
    expect(isoDate(localDate(lateUtc, 'GR'))).toBe('2026-01-15');
    expect(isoDate(localDate(lateUtc, 'PT'))).toBe('2026-01-14'); // Lisbon is on UTC in winter
    expect(dmyDate(localDate(lateUtc, 'ES'))).toBe('15-01-2026');
  });
  it('validates real calendar dates', () => {
    expect(isIsoDate('2024-02-29')).toBe(true);
    expect(isIsoDate('2026-02-29')).toBe(false);
    expect(isIsoDate('2026-13-01')).toBe(false);
    expect(isIsoDate('15-01-2026')).toBe(false);
    expect(isDmyDate('31-12-2026')).toBe(true);
    expect(isDmyDate('31-04-2026')).toBe(false);
    expect(isDmyDate('2026-01-15')).toBe(false);
  });
});

describe('metadata readers', () => {
  it('optionalText trims, treats blank/null as absent, takes integers when allowed', () => {
    expect(optionalText({ a: ' x ' }, 'a', 'bad')).toBe('x');
    expect(optionalText({ a: ' ' }, 'a', 'bad')).toBeUndefined();
    expect(optionalText({ a: null }, 'a', 'bad')).toBeUndefined();
    expect(optionalText({ a: 42 }, 'a', 'bad', undefined, true)).toBe('42');
    expect400(() => optionalText({ a: 42 }, 'a', 'bad'), 'bad');
    expect400(() => optionalText({ a: 'x' }, 'a', 'bad', /^\d+$/), 'bad');
  });
  it('optionalChoice, optionalBoolean, optionalAmount', () => {
    expect(optionalChoice({ a: ' B ' }, 'a', ['A', 'B'], 'bad')).toBe('B');
    expect400(() => optionalChoice({ a: 'b' }, 'a', ['A', 'B'], 'bad'), 'bad');
    expect(optionalBoolean({ f: false }, 'f')).toBe(false);
    expect400(() => optionalBoolean({ f: 'true' }, 'f'), 'metadata.f must be a boolean');
    expect(optionalAmount({ n: 0 }, 'n')).toBe(0);
    expect400(() => optionalAmount({ n: 1.5 }, 'n'), 'metadata.n must be a non-negative integer amount in minor units');
    expect400(() => optionalAmount({ n: -1 }, 'n'), 'metadata.n must be a non-negative integer amount in minor units');
  });
  it('customerTaxId reads nif or tax_id', () => {
    expect(customerTaxId(draft())).toBeUndefined();
    expect(customerTaxId(draft({ customer_context: { nif: ' B12345674 ' } }))).toBe('B12345674');
    expect(customerTaxId(draft({ customer_context: { tax_id: 'X' } }))).toBe('X');
    expect(customerTaxId(draft({ customer_context: { nif: '' } }))).toBeUndefined();
  });
});

describe('shared transaction rules', () => {
  it.each([
    ['ES', 'Spain'],
    ['IT', 'Italy'],
    ['FR', 'France'],
    ['PT', 'Portugal'],
    ['GR', 'Greece'],
  ] as const)('currency must be EUR in %s', (country, name) => {
    expect(() => requireEur(draft(), country)).not.toThrow();
    expect400(() => requireEur(draft({ currency: 'USD' }), country), `currency must be EUR for ${name} locations`);
  });
  it('baseMetadata keeps the client keys and normalizes sandbox_outcome', () => {
    expect(baseMetadata(draft({ metadata: { order: 'o-1', sandbox_outcome: ' timeout ' } }), 'FR')).toEqual({
      order: 'o-1',
      sandbox_outcome: 'timeout',
    });
    expect(baseMetadata(draft({ metadata: { sandbox_outcome: null } }), 'FR')).toEqual({});
  });
});
