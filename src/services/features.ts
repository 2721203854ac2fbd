import { SYSTEM_KEYS } from '../countries/registry.ts';
import type { RateLimitTier } from '../ratelimit/tiers.ts';

/**
 * Features an account's tier includes, as reported by GET /v1/account/status.
 * Every tier may fiscalize in every registered system (its key, in registry order);
 * larger tiers add operations features. The spec names the list but not its contents:
 * this is our choice.
 */
const BASE: readonly string[] = [...SYSTEM_KEYS, 'webhooks', 'retry_queue', 'sandbox'];

export const FEATURES_BY_TIER: Record<Exclude<RateLimitTier, 'sandbox'>, readonly string[]> = {
  starter: BASE,
  growth: [...BASE, 'batch_processing'],
  scale: [...BASE, 'batch_processing', 'fleet_telemetry'],
  enterprise: [...BASE, 'batch_processing', 'fleet_telemetry', 'extended_offline_grace'],
};
