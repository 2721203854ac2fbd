import type { RateLimiter } from './limiter.ts';
import { createMemoryLimiter } from './memory-limiter.ts';
import { createRedisLimiter } from './redis-limiter.ts';
import { createFallbackLimiter } from './fallback-limiter.ts';

export type { BucketSpec, RateLimiter, TakeResult } from './limiter.ts';
export { createMemoryLimiter } from './memory-limiter.ts';
export { createRedisLimiter } from './redis-limiter.ts';
export { createFallbackLimiter } from './fallback-limiter.ts';
export { RATE_LIMIT_TIERS, type RateLimitTier, tierForMerchantCount } from './tiers.ts';
export { rateLimitHeaders } from './headers.ts';

/** Where the limiter reports a shared store going away and coming back (a pino logger fits). */
export interface LimiterLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * The limiter the configuration asks for: Redis (shared by all nodes) when a URL is given,
 * else in memory (one node only: with several, each would grant the full limit). With
 * Redis, this node's own buckets answer while Redis is unreachable (fallback-limiter.ts):
 * requests are still limited and never fail because of the limiter.
 */
export function createRateLimiter(opts: { redisUrl?: string; keyPrefix?: string; log?: LimiterLog; timeoutMs?: number } = {}): RateLimiter {
  if (opts.redisUrl) {
    const redis = createRedisLimiter(opts.redisUrl, opts.keyPrefix === undefined ? {} : { keyPrefix: opts.keyPrefix });
    return createFallbackLimiter(redis, createMemoryLimiter(), {
      ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
      onDown: (err) => opts.log?.warn({ err }, 'rate-limit store (REDIS_URL) unreachable: limiting with this node\'s own buckets until it is back'),
      onUp: () => opts.log?.info({}, 'rate-limit store (REDIS_URL) reachable again: limits are shared again'),
    });
  }
  return createMemoryLimiter();
}
