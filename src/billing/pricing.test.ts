import { describe, expect, it } from 'vitest';
import { addMonthsUtc, DEFAULT_PRICES, periodAt, pricesFor, prorate, quote } from './pricing.ts';

describe('quote', () => {
  it('prices the whole count at its tier rate, by DECISIONS', () => {
    expect(quote(1, 'month', 0)).toEqual({ tier: 'starter', monthlyAmount: 1500, periodAmount: 1500 });
    expect(quote(10, 'month', 0)).toEqual({ tier: 'starter', monthlyAmount: 15_000, periodAmount: 15_000 });
    expect(quote(11, 'month', 0)).toEqual({ tier: 'growth', monthlyAmount: 13_200, periodAmount: 13_200 });
    expect(quote(50, 'month', 0).tier).toBe('growth');
    expect(quote(51, 'month', 0)).toEqual({ tier: 'scale', monthlyAmount: 45_900, periodAmount: 45_900 });
    expect(quote(250, 'month', 0).tier).toBe('scale');
    expect(quote(251, 'month', 0)).toEqual({ tier: 'enterprise', monthlyAmount: 175_700, periodAmount: 175_700 });
  });

  it('a year costs ten months', () => {
    expect(quote(3, 'year', 0)).toEqual({ tier: 'starter', monthlyAmount: 4500, periodAmount: 45_000 });
  });

  it('the HardwareDevice floor: 1000 a month per active location', () => {
    // 300 enterprise merchants at 700 = 210,000; 300 locations at the floor = 300,000.
    expect(quote(300, 'month', 300).monthlyAmount).toBe(300_000);
    // Fewer locations than the floor needs: the merchant price stands.
    expect(quote(300, 'month', 100).monthlyAmount).toBe(210_000);
    // One merchant subscribed, five devices: 5 × 1000 beats 1 × 1500.
    expect(quote(1, 'year', 5)).toEqual({ tier: 'starter', monthlyAmount: 5000, periodAmount: 50_000 });
    expect(DEFAULT_PRICES.locationFloorMonthly).toBe(1000);
  });

  it('pricesFor: the floor in HardwareDevice mode only', () => {
    expect(pricesFor({ hardwareDevice: true })).toBe(DEFAULT_PRICES);
    const cloud = pricesFor({ hardwareDevice: false });
    expect(cloud).toMatchObject({ locationFloorMonthly: 0, perMerchantMonthly: DEFAULT_PRICES.perMerchantMonthly });
    expect(quote(1, 'month', 52, cloud).monthlyAmount).toBe(1500);
    expect(quote(51, 'month', 52, cloud).monthlyAmount).toBe(51 * 900);
  });
});

describe('periods', () => {
  it('adds calendar months, clamping to the month end', () => {
    expect(addMonthsUtc(new Date('2026-01-31T10:00:00Z'), 1).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(addMonthsUtc(new Date('2028-01-31T10:00:00Z'), 1).toISOString()).toBe('2028-02-29T10:00:00.000Z');
    expect(addMonthsUtc(new Date('2026-11-15T00:00:00Z'), 2).toISOString()).toBe('2027-01-15T00:00:00.000Z');
  });

  it('finds the period containing now, counted from the anchor', () => {
    const anchor = new Date('2026-01-31T10:00:00Z');
    expect(periodAt(anchor, 'month', new Date('2026-01-31T10:00:00Z'))).toEqual({ start: anchor, end: new Date('2026-02-28T10:00:00Z') });
    expect(periodAt(anchor, 'month', new Date('2026-03-30T00:00:00Z'))).toEqual({ start: new Date('2026-02-28T10:00:00Z'), end: new Date('2026-03-31T10:00:00Z') });
    expect(periodAt(anchor, 'month', new Date('2026-03-31T10:00:00Z'))).toEqual({ start: new Date('2026-03-31T10:00:00Z'), end: new Date('2026-04-30T10:00:00Z') });
    expect(periodAt(anchor, 'year', new Date('2027-06-01T00:00:00Z'))).toEqual({ start: new Date('2027-01-31T10:00:00Z'), end: new Date('2028-01-31T10:00:00Z') });
  });
});

describe('prorate', () => {
  const period = { start: new Date('2026-04-01T00:00:00Z'), end: new Date('2026-05-01T00:00:00Z') }; // 30 days = 2,592,000 s

  it('charges the difference for the remaining seconds', () => {
    // Halfway through: 15,000 → 26,400 (10 starter → 22 growth) costs half the 11,400 difference.
    expect(prorate(15_000, 26_400, period, new Date('2026-04-16T00:00:00Z'))).toEqual({ amount: 5700, remainingSeconds: 1_296_000, periodSeconds: 2_592_000 });
  });

  it('credits a decrease (negative) and charges nothing at the very end', () => {
    expect(prorate(26_400, 15_000, period, new Date('2026-04-16T00:00:00Z')).amount).toBe(-5700);
    expect(prorate(15_000, 26_400, period, period.end).amount).toBe(0);
    expect(prorate(15_000, 26_400, period, period.start).amount).toBe(11_400);
  });

  it('rounds half away from zero to the minor unit', () => {
    // 1 × 1,296,001 / 2,592,000 = 0.500000386 → 1; 1 × 1,295,999 / 2,592,000 → 0.
    expect(prorate(0, 1, period, new Date(period.end.getTime() - 1_296_001_000)).amount).toBe(1);
    expect(prorate(0, 1, period, new Date(period.end.getTime() - 1_295_999_000)).amount).toBe(0);
    expect(prorate(1, 0, period, new Date(period.end.getTime() - 1_296_000_000)).amount).toBe(-1); // exactly half
    // One second remaining of a 7,000,000,000 change: 7e9 / 2,592,000 = 2700.617 → 2701.
    expect(prorate(0, 7_000_000_000, period, new Date(period.end.getTime() - 1000)).amount).toBe(2701);
  });

  it('ignores sub-second remainders (whole seconds only)', () => {
    expect(prorate(0, 2_592_000, period, new Date(period.end.getTime() - 10_999)).amount).toBe(10);
  });
});
