import type { TakeResult } from './limiter.ts';

/**
 * The rate headers for an authenticated response (spec "Limits"); Retry-After only on a
 * refusal, which the caller answers with 429.
 */
export function rateLimitHeaders(result: TakeResult): Record<string, string> {
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(result.limit),
    'X-RateLimit-Remaining': String(result.remaining),
    'X-RateLimit-Reset': String(result.resetEpochSeconds),
  };
  if (!result.allowed) headers['Retry-After'] = String(result.retryAfterSeconds);
  return headers;
}
