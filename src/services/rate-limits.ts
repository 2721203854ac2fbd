import { ApiError } from '../core/errors.ts';
import { rateLimitHeaders } from '../ratelimit/headers.ts';
import type { BucketSpec } from '../ratelimit/limiter.ts';
import { RATE_LIMIT_TIERS } from '../ratelimit/tiers.ts';
import type { AccountTiers } from './account-tiers.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';
import { NO_RATE_LIMIT_METRICS, type RateLimitObserver } from '../metrics/observers.ts';

/** The bucket for unauthenticated sign-ups, per client address: enough to sign up, not to spray. */
export const SIGNUP_BUCKET: BucketSpec = { requestsPerMinute: 10, burst: 20 };

/**
 * Per-account token buckets. Test keys always draw from the sandbox bucket; live keys
 * from their tier's. Test and live traffic of one account have separate buckets, so a
 * runaway integration test cannot starve production.
 */
export function createRateLimitService(deps: Deps, tiers: AccountTiers, metrics: RateLimitObserver = NO_RATE_LIMIT_METRICS) {
  /** The tier follows the subscription at once (AccountTiers: cached, invalidated on every node). */
  async function bucketFor(auth: AuthContext): Promise<{ tier: string; spec: BucketSpec }> {
    if (auth.environment === 'test') return { tier: 'sandbox', spec: RATE_LIMIT_TIERS.sandbox };
    const tier = (await tiers.of(auth.accountId)).tier;
    return { tier, spec: RATE_LIMIT_TIERS[tier] };
  }

  /** Takes one token; returns the rate headers, or throws the spec's 429 with them. `bucket` names the bucket in the metrics. */
  async function take(key: string, spec: BucketSpec, bucket: string): Promise<Record<string, string>> {
    const result = await deps.limiter.take(key, spec, deps.clock.now().getTime());
    const headers = rateLimitHeaders(result);
    if (!result.allowed) {
      metrics.rejected(bucket);
      throw new ApiError(429, 'rate_limit_exceeded', { headers, body: { error: 'rate_limit_exceeded', retry_after: result.retryAfterSeconds } });
    }
    return headers;
  }

  return {
    async forKey(auth: AuthContext) {
      const { tier, spec } = await bucketFor(auth);
      return take(`acct:${auth.accountId}:${auth.environment}`, spec, tier);
    },
    forSignup(clientAddress: string) {
      return take(`signup:${clientAddress}`, SIGNUP_BUCKET, 'signup');
    },
  };
}

export type RateLimitService = ReturnType<typeof createRateLimitService>;
