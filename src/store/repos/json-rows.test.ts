import { describe, expect, it } from 'vitest';
import { isoText, jsonValue } from './json-rows.ts';

describe('json-rows', () => {
  it('writes a Date as JSON.stringify would, from the cache or not', () => {
    const a = new Date('2026-11-27T01:02:03.456Z');
    const b = new Date('2026-11-27T01:02:03.457Z');
    for (const d of [a, a, new Date(a.getTime()), b, a]) {
      expect(isoText(d)).toBe(d.toISOString());
      expect(JSON.stringify({ at: jsonValue(d) })).toBe(JSON.stringify({ at: d }));
    }
  });

  it('leaves every other value as it is', () => {
    const o = { x: 1 };
    expect(jsonValue(o)).toBe(o);
    expect(jsonValue('2026-11-27')).toBe('2026-11-27');
    expect(jsonValue(null)).toBeNull();
    expect(jsonValue(undefined)).toBeUndefined();
  });

  it('refuses an invalid Date as JSON.stringify would not silently write it', () => {
    // JSON.stringify writes null for an invalid Date; toISOString throws. A row never
    // carries one (the clock makes them), and a throw is the louder failure.
    expect(() => isoText(new Date(Number.NaN))).toThrow(RangeError);
  });
});
