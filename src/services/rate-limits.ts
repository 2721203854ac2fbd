import { ApiError } from '../core/errors.ts';
import { rateLimitHeaders } from '../ratelimit/headers.ts';
import type { BucketSpec } from '../ratelimit/limiter.ts';
import { RATE_LIMIT_TIERS } from '../ratelimit/tiers.ts';
import type { AccountTiers } from './account-tiers.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';

/** The bucket for unauthenticated sign-ups, per client address: enough to sign up, not to spray. */
export const SIGNUP_BUCKET: BucketSpec = { requestsPerMinute: 10, burst: 20 };

/**
 * Per-account token buckets. Test keys always draw from the sandbox bucket; live keys
 * from their tier's. Test and live traffic of one account have separate buckets, so a
 * runaway integration test cannot starve production.
 */
export function createRateLimitService(deps: Deps, tiers: AccountTiers) {
  /** The tier follows the subscription at once (AccountTiers: cached, invalidated on every node). */
  async function bucketFor(auth: AuthContext): Promise<BucketSpec> {
    if (auth.environment === 'test') return RATE_LIMIT_TIERS.sandbox;
    return RATE_LIMIT_TIERS[(await tiers.of(auth.accountId)).tier];
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
      return take(`acct:${auth.accountId}:${auth.environment}`, await bucketFor(auth));
    },
    forSignup(clientAddress: string) {
      return take(`signup:${clientAddress}`, SIGNUP_BUCKET);
    },
  };
}

export type RateLimitService = ReturnType<typeof createRateLimitService>;
