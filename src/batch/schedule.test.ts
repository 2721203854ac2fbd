import { describe, expect, it } from 'vitest';
import { nextRunAt, parseCron } from './schedule.ts';

describe('batch schedule', () => {
  it('daily at 02:00 UTC: the next 02:00 strictly after now', () => {
    expect(nextRunAt('0 2 * * *', new Date('2026-03-02T10:00:00Z')).toISOString()).toBe('2026-03-03T02:00:00.000Z');
    expect(nextRunAt('0 2 * * *', new Date('2026-03-02T01:59:59Z')).toISOString()).toBe('2026-03-02T02:00:00.000Z');
    expect(nextRunAt('0 2 * * *', new Date('2026-03-02T02:00:00Z')).toISOString()).toBe('2026-03-03T02:00:00.000Z');
    // Across a month and a year.
    expect(nextRunAt('0 2 * * *', new Date('2026-12-31T23:00:00Z')).toISOString()).toBe('2027-01-01T02:00:00.000Z');
  });

  it('monthly, yearly and weekly forms', () => {
    expect(nextRunAt('30 3 1 * *', new Date('2026-03-02T10:00:00Z')).toISOString()).toBe('2026-04-01T03:30:00.000Z');
    expect(nextRunAt('0 0 29 2 *', new Date('2026-03-01T00:00:00Z')).toISOString()).toBe('2028-02-29T00:00:00.000Z');
    // 2026-03-02 is a Monday; the next Sunday is 03-08 (0 and 7 both mean Sunday).
    expect(nextRunAt('0 2 * * 0', new Date('2026-03-02T10:00:00Z')).toISOString()).toBe('2026-03-08T02:00:00.000Z');
    expect(nextRunAt('0 2 * * 7', new Date('2026-03-02T10:00:00Z')).toISOString()).toBe('2026-03-08T02:00:00.000Z');
  });

  it('refuses what it would not understand', () => {
    expect(() => parseCron('0 2 * *')).toThrow(/five fields/);
    expect(() => parseCron('*/5 2 * * *')).toThrow(/minute/);
    expect(() => parseCron('0 * * * *')).toThrow(/hour/);
    expect(() => parseCron('0 24 * * *')).toThrow(/between 0 and 23/);
    expect(() => parseCron('0 2 1 * 1')).toThrow(/not both/);
    expect(() => nextRunAt('0 0 31 2 *', new Date('2026-01-01T00:00:00Z'))).toThrow(/never fires/);
  });
});
