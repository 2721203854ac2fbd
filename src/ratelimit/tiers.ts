import type { BucketSpec } from './limiter.ts';

/**
 * Rate-limit tiers (spec "Limits"). Sandbox is for test keys whatever the subscription;
 * the other tiers follow the subscription's merchant count.
 *
 * The spec leaves the scale tier's values unshown; 10,000 rpm / 20,000 burst is the value
 * this service chose: between growth and enterprise, with the same burst = 2 x rpm shape.
 */
export type RateLimitTier = 'sandbox' | 'starter' | 'growth' | 'scale' | 'enterprise';

export const RATE_LIMIT_TIERS: Readonly<Record<RateLimitTier, Readonly<BucketSpec>>> = Object.freeze({
  sandbox: Object.freeze({ requestsPerMinute: 100, burst: 200 }),
  starter: Object.freeze({ requestsPerMinute: 1_000, burst: 2_000 }),
  growth: Object.freeze({ requestsPerMinute: 5_000, burst: 10_000 }),
  scale: Object.freeze({ requestsPerMinute: 10_000, burst: 20_000 }),
  enterprise: Object.freeze({ requestsPerMinute: 20_000, burst: 40_000 }),
});

/**
 * The tier of a live account with `merchantCount` merchants: starter 0-10, growth 11-50,
 * scale 51-250, enterprise 251+. Zero is starter: an account that has not subscribed yet
 * (or went down to nothing) still gets the smallest paid tier's limit, not a lock-out.
 */
export function tierForMerchantCount(merchantCount: number): Exclude<RateLimitTier, 'sandbox'> {
  if (!Number.isSafeInteger(merchantCount) || merchantCount < 0) {
    throw new RangeError(`merchant count must be a non-negative integer, got ${merchantCount}`);
  }
  if (merchantCount <= 10) return 'starter';
  if (merchantCount <= 50) return 'growth';
  if (merchantCount <= 250) return 'scale';
  return 'enterprise';
}
