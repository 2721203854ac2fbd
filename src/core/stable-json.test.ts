import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sortKeys, stableHash, stableStringify } from './stable-json.ts';

/** The text the stored request hashes were made with (before session 24's writer). */
const reference = (v: unknown): string | undefined => JSON.stringify(sortKeys(v));

/** A seeded generator: the same values on every run, many shapes. */
function random(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const KEYS = ['a', 'b', 'Z', 'é', 'items', 'tax_rate', '0', '10', '2', '01', '1a', '-1', '', ' ', 'ü', '\u{1F600}', '__x', 'toString', 'constructor', 'true'];
  const STRINGS = ['', 'x', 'quote " and \\ back', 'line\nbreak', 'ünïcödé', '\u{1F600}', '\ud800 lone', '\u2028', '<&>'];
  const NUMBERS = [0, -0, 1, -1, 1.5, 1e21, 1e-7, 2 ** 53, Number.MAX_VALUE, 0.1 + 0.2];
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 3 || r < 0.35) return pick<unknown>([null, true, false, pick(NUMBERS), pick(STRINGS)]);
    if (r < 0.55) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 6); i > 0; i--) o[pick(KEYS)] = value(depth + 1);
    return o;
  };
  return value;
}

describe('stableStringify', () => {
  it('writes exactly what JSON.stringify writes of the key-sorted copy, for 20,000 generated JSON values', () => {
    for (let seed = 1; seed <= 20_000; seed++) {
      const v = random(seed)(0);
      expect(stableStringify(v), `seed ${seed}`).toBe(reference(v));
    }
  });

  it('sorts every level, and is the same text whatever order the keys came in', () => {
    const a = { b: [{ y: 1, x: 2 }], a: { d: null, c: 'é' } };
    const b = { a: { c: 'é', d: null }, b: [{ x: 2, y: 1 }] };
    expect(stableStringify(a)).toBe('{"a":{"c":"é","d":null},"b":[{"x":2,"y":1}]}');
    expect(stableStringify(b)).toBe(stableStringify(a));
  });

  it('keeps JSON.stringify\'s rules: integer-like keys first in numeric order, undefined skipped in objects and null in arrays, Dates as text', () => {
    const v = { b: 1, 10: 'ten', 2: 'two', a: undefined, list: [undefined, () => 1, 3], at: new Date('2026-01-15T10:30:00Z') };
    expect(stableStringify(v)).toBe('{"2":"two","10":"ten","at":"2026-01-15T10:30:00.000Z","b":1,"list":[null,null,3]}');
    expect(stableStringify(v)).toBe(reference(v));
    const own = { z: 1, toJSON: () => ({ replaced: true }) };
    expect(stableStringify({ own })).toBe(reference({ own }));
    expect(stableStringify(undefined)).toBe(reference(undefined));
    class Point { constructor(readonly y: number, readonly x: number) {} }
    expect(stableStringify({ p: new Point(2, 1) })).toBe('{"p":{"x":1,"y":2}}');
  });
});

describe('stableHash', () => {
  it('is the hex SHA-256 of the stable text (the idempotency hash of a create)', () => {
    const v = { body: { location_id: 'x', items: [{ tax_rate: 20 }] }, sandbox: null };
    expect(stableHash(v)).toBe(crypto.createHash('sha256').update(reference(v)!).digest('hex'));
  });
});
