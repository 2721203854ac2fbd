import { describe, expect, it } from 'vitest';
import { RATE_LIMIT_TIERS, tierForMerchantCount } from './tiers.ts';

describe('rate-limit tiers', () => {
  it('has the spec values (scale: our choice, the spec shows none)', () => {
    expect(RATE_LIMIT_TIERS).toEqual({
      sandbox: { requestsPerMinute: 100, burst: 200 },
      starter: { requestsPerMinute: 1_000, burst: 2_000 },
      growth: { requestsPerMinute: 5_000, burst: 10_000 },
      scale: { requestsPerMinute: 10_000, burst: 20_000 },
      enterprise: { requestsPerMinute: 20_000, burst: 40_000 },
    });
  });

  it('cannot be modified by a caller', () => {
    expect(Object.isFrozen(RATE_LIMIT_TIERS)).toBe(true);
    expect(Object.isFrozen(RATE_LIMIT_TIERS.starter)).toBe(true);
  });

  it.each([
    [0, 'starter'],
    [1, 'starter'],
    [10, 'starter'],
    [11, 'growth'],
    [50, 'growth'],
    [51, 'scale'],
    [250, 'scale'],
    [251, 'enterprise'],
    [1_000_000, 'enterprise'],
  ] as const)('%i merchants -> %s', (count, tier) => {
    expect(tierForMerchantCount(count)).toBe(tier);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('rejects merchant count %s', (count) => {
    expect(() => tierForMerchantCount(count)).toThrow(RangeError);
  });
});
