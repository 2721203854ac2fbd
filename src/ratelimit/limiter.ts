/**
 * Token-bucket rate limiting: the contract every store implements, and the bucket math.
 *
 * The math lives here once. The memory store calls it directly; the Redis store runs the
 * same steps in Lua (redis-limiter.ts) and then derives its answer with `describeTake`
 * from this file. The two must agree to the token; redis-limiter.test.ts replays one
 * random sequence of takes against both stores and requires identical results.
 *
 * Units: tokens are kept as integers scaled by TOKEN_SCALE (60,000), so that a bucket at
 * R requests per minute gains exactly R units per millisecond. Refill, take and caps are
 * then integer additions and comparisons, exact in doubles (the largest value,
 * 40,000 burst x 60,000 = 2.4e9, is far below 2^53) and exact in Lua, whose numbers are
 * doubles too and which Redis writes back to a hash with 14-17 significant digits: a
 * fractional token count would be rounded there and drift away from the memory store.
 */

/** Requests per minute (the refill rate and the X-RateLimit-Limit value) and the bucket size. */
export interface BucketSpec {
  requestsPerMinute: number;
  burst: number;
}

export interface TakeResult {
  /** Whether a token was taken; false means answer 429. */
  allowed: boolean;
  /** X-RateLimit-Limit: requests per window (the minute), i.e. requestsPerMinute. */
  limit: number;
  /** X-RateLimit-Remaining: whole tokens left after this take. */
  remaining: number;
  /** X-RateLimit-Reset: UTC epoch seconds at which the bucket is full again (rounded up). */
  resetEpochSeconds: number;
  /** Retry-After on a refusal: whole seconds to the next minute boundary (1-60; describeTake). 0 when allowed. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Takes one token from the bucket `key` (normally the account id) at time `nowMs`
   * (epoch milliseconds; passed in so tests drive the clock). A bucket never seen is full.
   */
  take(key: string, spec: BucketSpec, nowMs: number): Promise<TakeResult>;
  /** Releases what the store holds (a Redis connection it opened itself). */
  close(): Promise<void>;
}

/** Scaled units per token: one minute in milliseconds, so R rpm refills R units per ms. */
export const TOKEN_SCALE = 60_000;
/** Retry-After counts to the next minute boundary (spec, Limits). */
const MINUTE_MS = 60_000;

/** A bucket: scaled tokens, and the time (epoch ms) up to which refill has been credited. */
export interface BucketState {
  units: number;
  tsMs: number;
}

export function assertValidSpec(spec: BucketSpec): void {
  // Integers keep the unit arithmetic exact; zero would mean "never refill" or "never allow".
  if (!Number.isSafeInteger(spec.requestsPerMinute) || spec.requestsPerMinute < 1) {
    throw new RangeError(`requestsPerMinute must be a positive integer, got ${spec.requestsPerMinute}`);
  }
  if (!Number.isSafeInteger(spec.burst) || spec.burst < 1) {
    throw new RangeError(`burst must be a positive integer, got ${spec.burst}`);
  }
}

/** Whole epoch milliseconds: fractions would make the unit counts fractional. */
export function normalizeNow(nowMs: number): number {
  if (!Number.isFinite(nowMs)) throw new RangeError(`nowMs must be finite, got ${nowMs}`);
  return Math.floor(nowMs);
}

/**
 * The bucket at `nowMs`: `state` plus the tokens earned since `state.tsMs`, capped at the burst.
 * No state means a bucket never used (or evicted/expired because it was full): a full one.
 *
 * A clock that went backwards (another node slightly behind, an NTP step) earns nothing and
 * leaves `tsMs` at the later stored time, so the same interval is never credited twice.
 * A stored count above the cap (the account moved to a smaller tier) is cut to the new cap.
 */
export function refill(state: BucketState | undefined, spec: BucketSpec, nowMs: number): BucketState {
  const cap = spec.burst * TOKEN_SCALE;
  if (state === undefined) return { units: cap, tsMs: nowMs };
  const units = Math.min(state.units, cap);
  if (nowMs <= state.tsMs) return { units, tsMs: state.tsMs };
  // Clamp the elapsed time to what filling needs before multiplying, so a bucket idle
  // for years cannot overflow the exact-integer range.
  const msToFull = Math.ceil((cap - units) / spec.requestsPerMinute);
  const elapsed = Math.min(nowMs - state.tsMs, msToFull);
  return { units: Math.min(cap, units + elapsed * spec.requestsPerMinute), tsMs: nowMs };
}

/** Refill, then take one token if there is a whole one. */
export function takeToken(
  state: BucketState | undefined,
  spec: BucketSpec,
  nowMs: number,
): { state: BucketState; allowed: boolean } {
  const current = refill(state, spec, nowMs);
  if (current.units < TOKEN_SCALE) return { state: current, allowed: false };
  return { state: { units: current.units - TOKEN_SCALE, tsMs: current.tsMs }, allowed: true };
}

/** Milliseconds, from the bucket's own time, until it holds `tokens` whole tokens again. */
export function msUntilTokens(state: BucketState, spec: BucketSpec, tokens: number): number {
  return Math.max(0, Math.ceil((tokens * TOKEN_SCALE - state.units) / spec.requestsPerMinute));
}

/**
 * The client-facing answer for a take, from the bucket after it.
 *
 * Waits are measured from the bucket's time (`tsMs`, which is later than `nowMs` when the
 * caller's clock is behind) and then expressed relative to `nowMs`.
 *
 * Retry-After: seconds to the next minute boundary, as the spec says (Limits), 1 to 60.
 * With the tiers' rates (100 a minute and up) one token is back within 0.6 s, so the
 * boundary is never too early; a bucket slower than a token a second (tests only) answers
 * the later of the boundary and its next token, so a client retrying on time gets one.
 */
export function describeTake(state: BucketState, allowed: boolean, spec: BucketSpec, nowMs: number): TakeResult {
  const fullAtMs = state.tsMs + msUntilTokens(state, spec, spec.burst);
  let retryAfterSeconds = 0;
  if (!allowed) {
    const oneTokenAtMs = state.tsMs + msUntilTokens(state, spec, 1);
    const toMinuteBoundary = Math.ceil((MINUTE_MS - (((nowMs % MINUTE_MS) + MINUTE_MS) % MINUTE_MS)) / 1000);
    retryAfterSeconds = Math.max(1, toMinuteBoundary, Math.ceil((oneTokenAtMs - nowMs) / 1000));
  }
  return {
    allowed,
    limit: spec.requestsPerMinute,
    remaining: Math.floor(state.units / TOKEN_SCALE),
    resetEpochSeconds: Math.ceil(fullAtMs / 1000),
    retryAfterSeconds,
  };
}
