/**
 * Retry delay (DECISIONS "Idempotency, retries"): min(base × 2^(attempt−1), cap) with
 * ±10 % jitter, so a fleet of failed submissions does not retry in lockstep.
 */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

/** Cloud defaults: 2 s doubling to 1 h; the embedded queue caps at 6 h. */
export const CLOUD_BACKOFF: BackoffPolicy = { baseMs: 2_000, capMs: 3_600_000 };
export const EMBEDDED_BACKOFF: BackoffPolicy = { baseMs: 2_000, capMs: 21_600_000 };

/** `random` in [0, 1): injectable so tests are exact. */
export function retryDelayMs(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.baseMs * 2 ** Math.max(0, attempt - 1), policy.capMs);
  const jitter = 1 + (random() * 2 - 1) * 0.1;
  return Math.round(exp * jitter);
}
