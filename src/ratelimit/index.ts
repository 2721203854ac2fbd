import type { RateLimiter } from './limiter.ts';
import { createMemoryLimiter } from './memory-limiter.ts';
import { createRedisLimiter } from './redis-limiter.ts';

export type { BucketSpec, RateLimiter, TakeResult } from './limiter.ts';
export { createMemoryLimiter } from './memory-limiter.ts';
export { createRedisLimiter } from './redis-limiter.ts';
export { RATE_LIMIT_TIERS, type RateLimitTier, tierForMerchantCount } from './tiers.ts';
export { rateLimitHeaders } from './headers.ts';

/**
 * The limiter the configuration asks for: Redis (shared by all nodes) when a URL is given,
 * else in memory (one node only: with several, each would grant the full limit).
 */
export function createRateLimiter(opts: { redisUrl?: string; keyPrefix?: string } = {}): RateLimiter {
  if (opts.redisUrl) {
    return createRedisLimiter(opts.redisUrl, opts.keyPrefix === undefined ? {} : { keyPrefix: opts.keyPrefix });
  }
  return createMemoryLimiter();
}
