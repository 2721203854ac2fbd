/**
 * The behaviour every RateLimiter store must have, as a vitest suite that each store's
 * test file runs against its own store (memory-limiter.test.ts, redis-limiter.test.ts).
 * Not a *.test.ts file itself: it only runs through those.
 */
import { describe, expect, it } from 'vitest';
import type { BucketSpec, RateLimiter, TakeResult } from './limiter.ts';
import { RATE_LIMIT_TIERS } from './tiers.ts';

/** A whole second, so the expected X-RateLimit-Reset values are easy to read. */
export const T0 = 1_900_000_000_000;
const T0_S = T0 / 1000;
const SANDBOX: BucketSpec = RATE_LIMIT_TIERS.sandbox; // 100 rpm: one token per 600 ms; burst 200

export async function takeMany(
  limiter: RateLimiter,
  key: string,
  spec: BucketSpec,
  nowMs: number,
  n: number,
): Promise<TakeResult[]> {
  const results: TakeResult[] = [];
  // Sequential on purpose: the assertions below read the order of `remaining`.
  for (let i = 0; i < n; i++) results.push(await limiter.take(key, spec, nowMs));
  return results;
}

const allowedCount = (rs: TakeResult[]) => rs.filter((r) => r.allowed).length;

/**
 * @param getLimiter returns the store under test; called inside each test, so it may be set
 *   up in a beforeAll of the calling file.
 */
export function describeLimiterContract(storeName: string, getLimiter: () => RateLimiter): void {
  let n = 0;
  // A fresh bucket per test: tests never share state, whatever the store keeps.
  const freshKey = () => `contract-${storeName}-${n++}`;

  describe(`RateLimiter contract: ${storeName}`, () => {
    it('allows exactly `burst` requests at one instant, then refuses with Retry-After >= 1', async () => {
      const limiter = getLimiter();
      const key = freshKey();
      const rs = await takeMany(limiter, key, SANDBOX, T0, 200);
      expect(rs.every((r) => r.allowed)).toBe(true);
      expect(rs.map((r) => r.remaining)).toEqual(Array.from({ length: 200 }, (_, i) => 199 - i));

      const refused = await limiter.take(key, SANDBOX, T0);
      expect(refused.allowed).toBe(false);
      expect(refused.remaining).toBe(0);
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    });

    it('refills continuously at rpm / 60 per second (100 rpm: one token after 0.6 s)', async () => {
      const limiter = getLimiter();
      const key = freshKey();
      await takeMany(limiter, key, SANDBOX, T0, 200);

      expect((await limiter.take(key, SANDBOX, T0 + 599)).allowed).toBe(false);
      const one = await limiter.take(key, SANDBOX, T0 + 600);
      expect(one).toMatchObject({ allowed: true, remaining: 0 });
      expect((await limiter.take(key, SANDBOX, T0 + 600)).allowed).toBe(false);

      // 3 s later: 5 more tokens (3000 ms / 600 ms), no more.
      expect(allowedCount(await takeMany(limiter, key, SANDBOX, T0 + 3600, 10))).toBe(5);
    });

    it('refills at the tier rate (starter: 1000 rpm, one token per 60 ms)', async () => {
      const limiter = getLimiter();
      const key = freshKey();
      const starter = RATE_LIMIT_TIERS.starter;
      expect(allowedCount(await takeMany(limiter, key, starter, T0, 2001))).toBe(2000);
      expect(allowedCount(await takeMany(limiter, key, starter, T0 + 59, 3))).toBe(0);
      expect(allowedCount(await takeMany(limiter, key, starter, T0 + 60, 3))).toBe(1);
      expect(allowedCount(await takeMany(limiter, key, starter, T0 + 60 + 1000, 20))).toBe(16); // floor(1000/60)
    });

    it('caps the bucket at the burst after a long idle time', async () => {
      const limiter = getLimiter();
      const key = freshKey();
      await takeMany(limiter, key, SANDBOX, T0, 200);
      const later = T0 + 24 * 3600_000;
      const rs = await takeMany(limiter, key, SANDBOX, later, 201);
      expect(rs[0]).toMatchObject({ allowed: true, remaining: 199 });
      expect(allowedCount(rs)).toBe(200);
    });

    it('reports limit, remaining, reset (bucket full again) and Retry-After (one token back)', async () => {
      const limiter = getLimiter();
      const key = freshKey();
      // One token used: full again 600 ms later.
      expect(await limiter.take(key, SANDBOX, T0)).toEqual({
        allowed: true,
        limit: 100,
        remaining: 199,
        resetEpochSeconds: T0_S + 1,
        retryAfterSeconds: 0,
      });
      await takeMany(limiter, key, SANDBOX, T0, 199);
      // Empty: full again after 200 x 0.6 s = 120 s. T0 is 40 s past a minute: Retry-After
      // is the 20 s to the next minute boundary (spec, Limits).
      expect(await limiter.take(key, SANDBOX, T0)).toEqual({
        allowed: false,
        limit: 100,
        remaining: 0,
        resetEpochSeconds: T0_S + 120,
        retryAfterSeconds: 20,
      });
      // 300 ms in: still full at T0 + 120 s; 19.7 s to the boundary, rounded up.
      expect(await limiter.take(key, SANDBOX, T0 + 300)).toMatchObject({
        allowed: false,
        remaining: 0,
        resetEpochSeconds: T0_S + 120,
        retryAfterSeconds: 20,
      });
      // Reset is rounded up to the next whole second.
      expect((await limiter.take(key, SANDBOX, T0 + 1500)).resetEpochSeconds).toBe(T0_S + 121);
      // 19.9 s in, the tokens refilled by then taken: 0.1 s to the boundary, rounded up.
      const late = await takeMany(limiter, key, SANDBOX, T0 + 19_900, 40);
      expect(late.at(-1)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    });

    it('gives Retry-After never earlier than one token is back, on a bucket slower than the minute boundary (1 rpm)', async () => {
      const limiter = getLimiter();
      const key = freshKey();
      const slow: BucketSpec = { requestsPerMinute: 1, burst: 1 };
      expect((await limiter.take(key, slow, T0)).allowed).toBe(true);
      // The boundary is 20 s away, the token 60 s: the later.
      expect(await limiter.take(key, slow, T0)).toMatchObject({ allowed: false, retryAfterSeconds: 60, resetEpochSeconds: T0_S + 60 });
      // 59.5 s in: the token in 0.5 s, the boundary in 20.5 s: 21.
      expect(await limiter.take(key, slow, T0 + 59_500)).toMatchObject({ allowed: false, retryAfterSeconds: 21 });
      expect(await limiter.take(key, slow, T0 + 60_000)).toMatchObject({ allowed: true, remaining: 0 });
    });

    it('keeps separate keys independent', async () => {
      const limiter = getLimiter();
      const a = freshKey();
      const b = freshKey();
      await takeMany(limiter, a, SANDBOX, T0, 200);
      expect((await limiter.take(a, SANDBOX, T0)).allowed).toBe(false);
      expect(await limiter.take(b, SANDBOX, T0)).toMatchObject({ allowed: true, remaining: 199 });
      expect((await limiter.take(a, SANDBOX, T0)).allowed).toBe(false);
    });

    it('adds no tokens when the clock goes backwards, and credits no interval twice', async () => {
      const limiter = getLimiter();
      const key = freshKey();
      await takeMany(limiter, key, SANDBOX, T0, 200);

      // A node 60 s behind: nothing is refilled, and the wait is counted from its own clock.
      const behind = await limiter.take(key, SANDBOX, T0 - 60_000);
      expect(behind).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 61 });
      // Back on time: T0 -> T0 + 600 earns exactly one token (the earlier time did not
      // reset the bucket's clock to T0 - 60 s, which would grant 100 tokens).
      expect(allowedCount(await takeMany(limiter, key, SANDBOX, T0 + 600, 5))).toBe(1);
    });

    it('still takes tokens at a time earlier than the stored one', async () => {
      const limiter = getLimiter();
      const key = freshKey();
      expect((await limiter.take(key, SANDBOX, T0)).remaining).toBe(199);
      expect(await limiter.take(key, SANDBOX, T0 - 10_000)).toMatchObject({ allowed: true, remaining: 198 });
      // One token back 600 ms after T0 (the stored time), not after T0 - 10 s.
      expect((await limiter.take(key, SANDBOX, T0 + 600)).remaining).toBe(198);
    });

    it('applies a smaller tier at once (bucket cut to the new burst)', async () => {
      const limiter = getLimiter();
      const key = freshKey();
      expect((await limiter.take(key, RATE_LIMIT_TIERS.starter, T0)).remaining).toBe(1999);
      expect(await limiter.take(key, SANDBOX, T0)).toMatchObject({ allowed: true, limit: 100, remaining: 199 });
    });

    it('floors fractional milliseconds', async () => {
      const limiter = getLimiter();
      const key = freshKey();
      await takeMany(limiter, key, SANDBOX, T0, 200);
      expect((await limiter.take(key, SANDBOX, T0 + 599.9)).allowed).toBe(false);
      expect((await limiter.take(key, SANDBOX, T0 + 600.2)).allowed).toBe(true);
    });

    it('rejects an invalid bucket spec', async () => {
      const limiter = getLimiter();
      await expect(limiter.take(freshKey(), { requestsPerMinute: 0, burst: 10 }, T0)).rejects.toThrow(RangeError);
      await expect(limiter.take(freshKey(), { requestsPerMinute: 10, burst: 1.5 }, T0)).rejects.toThrow(RangeError);
      await expect(limiter.take(freshKey(), SANDBOX, Number.NaN)).rejects.toThrow(RangeError);
    });
  });
}
