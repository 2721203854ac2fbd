import { describe, expect, it } from 'vitest';
import { centsOf, italianDay } from './printed.ts';

describe('Italian prints', () => {
  it('a day as DD-MM-YYYY', () => {
    expect(italianDay('2026-03-01')).toBe('01-03-2026');
    expect(italianDay('not a day')).toBe('not a day');
  });

  it('record amounts back into cents', () => {
    expect(centsOf('12.34')).toBe(1234);
    expect(centsOf('-0.01')).toBe(-1);
    expect(centsOf('0.00')).toBe(0);
    expect(centsOf('12.3')).toBeUndefined();
    expect(centsOf(undefined)).toBeUndefined();
  });
});
