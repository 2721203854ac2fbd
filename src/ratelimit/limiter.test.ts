import { describe, expect, it } from 'vitest';
import { rateLimitHeaders } from './headers.ts';
import { describeTake, refill, takeToken, TOKEN_SCALE } from './limiter.ts';
import { RATE_LIMIT_TIERS } from './tiers.ts';

const T0 = 1_900_000_000_000;
const spec = RATE_LIMIT_TIERS.enterprise; // the largest numbers

describe('bucket math', () => {
  it('starts a bucket never seen full', () => {
    expect(refill(undefined, spec, T0)).toEqual({ units: 40_000 * TOKEN_SCALE, tsMs: T0 });
  });

  it('stays on exact integers even after an idle time of decades', () => {
    const state = refill({ units: 0, tsMs: 0 }, spec, T0);
    expect(state).toEqual({ units: 40_000 * TOKEN_SCALE, tsMs: T0 });
    expect(Number.isSafeInteger(state.units)).toBe(true);
  });

  it('never refills backwards and keeps the later time', () => {
    expect(refill({ units: 5, tsMs: T0 }, spec, T0 - 1)).toEqual({ units: 5, tsMs: T0 });
    expect(refill({ units: 5, tsMs: T0 }, spec, T0)).toEqual({ units: 5, tsMs: T0 });
  });

  it('takes only a whole token', () => {
    const almost = { units: TOKEN_SCALE - 1, tsMs: T0 };
    expect(takeToken(almost, spec, T0).allowed).toBe(false);
    expect(takeToken(almost, spec, T0).state).toEqual(almost);
    expect(takeToken({ units: TOKEN_SCALE, tsMs: T0 }, spec, T0)).toEqual({ allowed: true, state: { units: 0, tsMs: T0 } });
  });

  it('answers Retry-After in seconds to the next minute boundary, never before one token is back', () => {
    // T0 is 40 s past a minute boundary.
    const tiers = { requestsPerMinute: 100, burst: 200 };
    for (const [offsetMs, want] of [[0, 20], [300, 20], [19_001, 1], [19_999, 1], [20_000, 60], [20_001, 60]] as const) {
      expect(describeTake({ units: 0, tsMs: T0 + offsetMs }, false, tiers, T0 + offsetMs).retryAfterSeconds, `+${offsetMs} ms`).toBe(want);
    }
    // A bucket slower than the boundary: its next token (0.1 a second).
    const slow = { requestsPerMinute: 6, burst: 3 };
    for (const tokens of [0, 0.05, 0.5, 0.95, 0.99]) {
      const units = Math.round(tokens * TOKEN_SCALE);
      const r = describeTake({ units, tsMs: T0 }, false, slow, T0);
      expect(r.retryAfterSeconds).toBe(Math.max(20, Math.ceil((1 - units / TOKEN_SCALE) / 0.1)));
    }
  });
});

describe('rateLimitHeaders', () => {
  it('sends the three headers, and Retry-After only on a refusal', () => {
    const ok = { allowed: true, limit: 100, remaining: 7, resetEpochSeconds: 1_900_000_005, retryAfterSeconds: 0 };
    expect(rateLimitHeaders(ok)).toEqual({
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '7',
      'X-RateLimit-Reset': '1900000005',
    });
    expect(rateLimitHeaders({ ...ok, allowed: false, remaining: 0, retryAfterSeconds: 2 })).toMatchObject({ 'Retry-After': '2' });
  });
});
