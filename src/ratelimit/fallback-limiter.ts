import type { BucketSpec, RateLimiter, TakeResult } from './limiter.ts';

export interface FallbackLimiterOptions {
  /** The longest a take may wait for the shared store before the node's own buckets answer (default 500 ms). */
  timeoutMs?: number;
  /** After a failure, how long takes go straight to the node's buckets before the shared store is tried again (default 1 s). */
  retryAfterMs?: number;
  /** Told once when the shared store stops answering (an outage begins), with the cause. */
  onDown?: (err: unknown) => void;
  /** Told once when it answers again. */
  onUp?: () => void;
}

/**
 * The shared rate-limit store (Redis) with the node's own in-memory buckets behind it.
 *
 * The limiter protects the service; it must not take it down. When the shared store fails
 * or does not answer within `timeoutMs`, the request is limited by this node's buckets
 * instead (same tier, same headers; with N nodes an account may get up to N times its
 * limit for the outage) rather than answered with a 500 or held until Redis comes back.
 * For `retryAfterMs` after a failure the shared store is not asked at all (no request pays
 * the timeout twice in a row); then the next take tries it again, and once it answers,
 * every take goes back to it: recovery needs no restart.
 */
export function createFallbackLimiter(primary: RateLimiter, fallback: RateLimiter, opts: FallbackLimiterOptions = {}): RateLimiter {
  const timeoutMs = opts.timeoutMs ?? 500;
  const retryAfterMs = opts.retryAfterMs ?? 1_000;
  /** Real time (not the app clock) before which the shared store is not tried. */
  let skipUntil = 0;
  let down = false;

  function withTimeout(p: Promise<TakeResult>): Promise<TakeResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`rate-limit store did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    // A take that loses the race may still fail later: nobody waits for it any more.
    p.catch(() => {});
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }

  return {
    async take(key: string, spec: BucketSpec, nowMs: number): Promise<TakeResult> {
      if (Date.now() < skipUntil) return fallback.take(key, spec, nowMs);
      let result: TakeResult;
      try {
        result = await withTimeout(primary.take(key, spec, nowMs));
      } catch (err) {
        // An invalid bucket is a bug, not an outage: the memory store throws the same.
        if (err instanceof RangeError) throw err;
        skipUntil = Date.now() + retryAfterMs;
        if (!down) {
          down = true;
          opts.onDown?.(err);
        }
        return fallback.take(key, spec, nowMs);
      }
      if (down) {
        down = false;
        opts.onUp?.();
      }
      return result;
    },
    async close(): Promise<void> {
      await Promise.all([primary.close(), fallback.close()]);
    },
  };
}
