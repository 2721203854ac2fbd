import { describe, expect, it } from 'vitest';
import { validate, version } from 'uuid';
import { isUuid, newId } from './ids.ts';

describe('newId', () => {
  it('makes valid, distinct, time-ordered UUIDv7 ids, monotonic within a millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => newId());
    expect(ids.every((id) => validate(id) && version(id) === 7 && isUuid(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids); // generation order is sort order
    const ms = parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16);
    expect(Math.abs(ms - Date.now())).toBeLessThan(5_000);
  });
});
