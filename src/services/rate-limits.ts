import { ApiError } from '../core/errors.ts';
import { rateLimitHeaders } from '../ratelimit/headers.ts';
import type { BucketSpec } from '../ratelimit/limiter.ts';
import { RATE_LIMIT_TIERS, tierForMerchantCount } from '../ratelimit/tiers.ts';
import { locationsRepo } from '../store/repos/locations-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';

/** How long a live account's tier (from its merchant count) is reused before it is counted again. */
const TIER_CACHE_MS = 30_000;

/** The bucket for unauthenticated sign-ups, per client address: enough to sign up, not to spray. */
export const SIGNUP_BUCKET: BucketSpec = { requestsPerMinute: 10, burst: 20 };

/**
 * Per-account token buckets. Test keys always draw from the sandbox bucket; live keys
 * from their tier's. Test and live traffic of one account have separate buckets, so a
 * runaway integration test cannot starve production.
 */
export function createRateLimitService(deps: Deps) {
  const tierCache = new Map<string, { spec: BucketSpec; until: number }>();

  async function bucketFor(auth: AuthContext, nowMs: number): Promise<BucketSpec> {
    if (auth.environment === 'test') return RATE_LIMIT_TIERS.sandbox;
    const cached = tierCache.get(auth.accountId);
    if (cached && cached.until > nowMs) return cached.spec;
    const spec = RATE_LIMIT_TIERS[tierForMerchantCount(await locationsRepo.countActive(deps.db, auth.accountId))];
    tierCache.set(auth.accountId, { spec, until: nowMs + TIER_CACHE_MS });
    return spec;
  }

  /** Takes one token; returns the rate headers, or throws the spec's 429 with them. */
  async function take(key: string, spec: BucketSpec): Promise<Record<string, string>> {
    const result = await deps.limiter.take(key, spec, deps.clock.now().getTime());
    const headers = rateLimitHeaders(result);
    if (!result.allowed) {
      throw new ApiError(429, 'rate_limit_exceeded', { headers, body: { error: 'rate_limit_exceeded', retry_after: result.retryAfterSeconds } });
    }
    return headers;
  }

  return {
    async forKey(auth: AuthContext) {
      const nowMs = deps.clock.now().getTime();
      return take(`acct:${auth.accountId}:${auth.environment}`, await bucketFor(auth, nowMs));
    },
    forSignup(clientAddress: string) {
      return take(`signup:${clientAddress}`, SIGNUP_BUCKET);
    },
  };
}

export type RateLimitService = ReturnType<typeof createRateLimitService>;
