import { describe, it, expect } from 'vitest';
import {
  compact,
  givenTaxId,
  oneOf,
  optionalHttpsUrl,
  optionalPatternString,
  optionalString,
  patternString,
  readConfigObject,
  rejectUnknownFields,
  requiredString,
} from './config-fields.ts';
import { luhnValid } from './checksums.ts';
import { expect400 } from './test-helpers.ts';

describe('readConfigObject', () => {
  it('treats undefined and null as absent', () => {
    expect(readConfigObject(undefined)).toBeUndefined();
    expect(readConfigObject(null)).toBeUndefined();
  });
  it('returns an object as is', () => {
    const o = { a: 1 };
    expect(readConfigObject(o)).toBe(o);
  });
  it.each([[[]], ['x'], [1], [true]])('refuses %j', (value) => {
    expect400(() => readConfigObject(value), 'country_config must be an object');
  });
});

describe('rejectUnknownFields', () => {
  it('accepts known fields', () => {
    expect(() => rejectUnknownFields({ a: 1 }, ['a', 'b'], 'X')).not.toThrow();
  });
  it('names the first unknown field and the system', () => {
    expect400(() => rejectUnknownFields({ a: 1, zz: 2 }, ['a'], 'ticketbai'), 'country_config.zz is not a known field for ticketbai');
  });
  it('uses the given path for nested objects', () => {
    expect400(() => rejectUnknownFields({ q: 1 }, [], 'SAF-T PT', 'country_config.series[FT]'), 'country_config.series[FT].q is not a known field for SAF-T PT');
  });
});

describe('string readers', () => {
  it('optionalString trims, and treats blank and null as absent', () => {
    expect(optionalString({ a: '  x ' }, 'a')).toBe('x');
    expect(optionalString({ a: '   ' }, 'a')).toBeUndefined();
    expect(optionalString({ a: null }, 'a')).toBeUndefined();
    expect(optionalString(undefined, 'a')).toBeUndefined();
  });
  it('optionalString refuses non-strings and over-long values', () => {
    expect400(() => optionalString({ a: 5 }, 'a'), 'country_config.a must be a string');
    expect400(() => optionalString({ a: 'x'.repeat(256) }, 'a'), 'country_config.a must be at most 255 characters');
  });
  it('requiredString gives the missing message for absent or blank', () => {
    expect(requiredString({ a: ' v ' }, 'a', 'a is required')).toBe('v');
    expect400(() => requiredString({}, 'a', 'a is required'), 'a is required');
    expect400(() => requiredString({ a: ' ' }, 'a', 'a is required'), 'a is required');
  });
  it('patternString gives its one message for absent, non-string and mismatch', () => {
    expect(patternString({ a: ' AB ' }, 'a', /^[A-Z]{2}$/, 'bad')).toBe('AB');
    expect400(() => patternString({}, 'a', /^[A-Z]{2}$/, 'bad'), 'bad');
    expect400(() => patternString({ a: 12 }, 'a', /^[A-Z]{2}$/, 'bad'), 'bad');
    expect400(() => patternString({ a: 'abc' }, 'a', /^[A-Z]{2}$/, 'bad'), 'bad');
  });
  it('optionalPatternString allows absence only', () => {
    expect(optionalPatternString({}, 'a', /^x$/, 'bad')).toBeUndefined();
    expect(optionalPatternString({ a: ' ' }, 'a', /^x$/, 'bad')).toBeUndefined();
    expect(optionalPatternString({ a: ' x' }, 'a', /^x$/, 'bad')).toBe('x');
    expect400(() => optionalPatternString({ a: 'y' }, 'a', /^x$/, 'bad'), 'bad');
    expect400(() => optionalPatternString({ a: 1 }, 'a', /^x$/, 'bad'), 'bad');
  });
  it('oneOf matches exactly after trimming', () => {
    expect(oneOf({ a: ' B ' }, 'a', ['A', 'B'], 'bad')).toBe('B');
    expect400(() => oneOf({ a: 'b' }, 'a', ['A', 'B'], 'bad'), 'bad');
    expect400(() => oneOf({}, 'a', ['A', 'B'], 'bad'), 'bad');
  });
  it('optionalHttpsUrl accepts https only', () => {
    expect(optionalHttpsUrl({ u: ' https://tsa.example.com/tsr ' }, 'u')).toBe('https://tsa.example.com/tsr');
    expect(optionalHttpsUrl({}, 'u')).toBeUndefined();
    expect400(() => optionalHttpsUrl({ u: 'http://tsa.example.com' }, 'u'), 'country_config.u must be an https URL');
    expect400(() => optionalHttpsUrl({ u: 'not a url' }, 'u'), 'country_config.u must be an https URL');
  });
});

describe('compact and givenTaxId', () => {
  it('compact drops undefined values only', () => {
    expect(compact({ a: 1, b: undefined, c: null, d: '' })).toEqual({ a: 1, c: null, d: '' });
    expect('b' in compact({ b: undefined })).toBe(false);
  });
  it('givenTaxId treats null, undefined and blank as not given', () => {
    expect(givenTaxId(null)).toBeUndefined();
    expect(givenTaxId(undefined)).toBeUndefined();
    expect(givenTaxId('  ')).toBeUndefined();
    expect(givenTaxId('X')).toBe('X');
  });
});

describe('luhnValid', () => {
  it('accepts Luhn-valid numbers and refuses others', () => {
    expect(luhnValid('79927398713')).toBe(true); // the classic Luhn example
    expect(luhnValid('79927398710')).toBe(false);
    expect(luhnValid('732829320')).toBe(true);
  });
});
