import type { BucketSpec, RateLimiter, TakeResult } from '../../src/ratelimit/limiter.ts';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';

/**
 * The bucket every take is drawn from during a benchmark: far more than any run can use.
 * (1e9 tokens x TOKEN_SCALE = 6e13 units, still an exact integer in a double.)
 */
export const BENCH_BUCKET: Readonly<BucketSpec> = Object.freeze({ requestsPerMinute: 1_000_000_000, burst: 1_000_000_000 });

export interface CountingLimiter extends RateLimiter {
  /** Takes seen (every authenticated request and every sign-up makes one). */
  readonly takes: number;
  /** Takes that were refused: must stay 0, or the run measured 429s. */
  readonly refused: number;
}

/**
 * A RateLimiter that keeps the real limiter on the request path but never limits.
 *
 * A test key draws from the sandbox bucket (100 rpm, burst 200): a benchmark on it would
 * measure 429s after the first 200 requests. Rather than skipping the limiter, this
 * wrapper hands every take to the real memory limiter (bucket lookup, refill maths,
 * headers, periodic sweep: all of it runs) with the spec replaced by BENCH_BUCKET.
 * It counts takes, so the benchmark can check that the limiter really ran on each request.
 */
export function createBenchLimiter(inner: RateLimiter = createMemoryLimiter()): CountingLimiter {
  let takes = 0;
  let refused = 0;
  return {
    get takes() {
      return takes;
    },
    get refused() {
      return refused;
    },
    async take(key: string, _spec: BucketSpec, nowMs: number): Promise<TakeResult> {
      takes++;
      const result = await inner.take(key, BENCH_BUCKET, nowMs);
      if (!result.allowed) refused++;
      return result;
    },
    close: () => inner.close(),
  };
}
