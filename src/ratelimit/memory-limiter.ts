import {
  assertValidSpec,
  type BucketSpec,
  type BucketState,
  describeTake,
  normalizeNow,
  type RateLimiter,
  refill,
  type TakeResult,
  takeToken,
  TOKEN_SCALE,
} from './limiter.ts';

/**
 * Buckets in a Map, for a single node (development, tests, one-instance deployments).
 * Several nodes each holding their own Map would each grant the full limit: use the
 * Redis store there.
 */
export interface MemoryRateLimiter extends RateLimiter {
  /** Buckets currently held (for tests and metrics). */
  readonly size: number;
}

export interface MemoryLimiterOptions {
  /** Sweep idle buckets after at least this many takes (default 1024); see below. */
  sweepEvery?: number;
}

/**
 * Memory stays bounded by sweeping out buckets that are full at the time of the sweep:
 * a full bucket is exactly what a missing key stands for, so dropping it changes no answer.
 * A bucket that is not full is never dropped (that would hand out free tokens), but it
 * fills within burst / rpm minutes (2 minutes on every tier), so the map holds at most the
 * keys seen in the last couple of minutes. No LRU cap: evicting a non-full bucket under
 * pressure would let a flood of distinct keys reset everybody's limit.
 *
 * The next sweep runs after as many takes as the map held after the last one (at least
 * `sweepEvery`): a sweep walks at most that many plus the keys added since, so its cost is
 * amortised to O(1) per take.
 */
export function createMemoryLimiter(opts: MemoryLimiterOptions = {}): MemoryRateLimiter {
  const sweepEvery = opts.sweepEvery ?? 1024;
  // The spec each bucket was last used with, so the sweep can compute its refill.
  const buckets = new Map<string, { state: BucketState; spec: BucketSpec }>();
  let takesSinceSweep = 0;
  let nextSweepAfter = sweepEvery;

  function sweep(nowMs: number): void {
    for (const [key, bucket] of buckets) {
      const { units } = refill(bucket.state, bucket.spec, nowMs);
      if (units >= bucket.spec.burst * TOKEN_SCALE) buckets.delete(key);
    }
    // Fixed at sweep time: compared with the live size instead, the threshold would grow
    // as fast as the counter when every take brings a new key, and never be reached.
    takesSinceSweep = 0;
    nextSweepAfter = Math.max(sweepEvery, buckets.size);
  }

  return {
    get size() {
      return buckets.size;
    },

    async take(key: string, spec: BucketSpec, nowMs: number): Promise<TakeResult> {
      assertValidSpec(spec);
      const now = normalizeNow(nowMs);
      if (++takesSinceSweep >= nextSweepAfter) sweep(now);
      const { state, allowed } = takeToken(buckets.get(key)?.state, spec, now);
      buckets.set(key, { state, spec: { requestsPerMinute: spec.requestsPerMinute, burst: spec.burst } });
      return describeTake(state, allowed, spec, now);
    },

    async close(): Promise<void> {
      buckets.clear();
    },
  };
}
