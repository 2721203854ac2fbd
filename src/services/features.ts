import type { RateLimitTier } from '../ratelimit/tiers.ts';

/**
 * Features an account's tier includes, as reported by GET /v1/account/status.
 * Every tier may fiscalize in every supported system; larger tiers add operations
 * features. The spec names the list but not its contents: this is our choice.
 */
const BASE = ['es-ticketbai', 'es-verifactu', 'es-sii', 'it-sdi', 'it-dc', 'fr-nf525', 'pt-saft', 'gr-mydata', 'webhooks', 'retry_queue', 'sandbox'] as const;

export const FEATURES_BY_TIER: Record<Exclude<RateLimitTier, 'sandbox'>, readonly string[]> = {
  starter: BASE,
  growth: [...BASE, 'batch_processing'],
  scale: [...BASE, 'batch_processing', 'fleet_telemetry'],
  enterprise: [...BASE, 'batch_processing', 'fleet_telemetry', 'extended_offline_grace'],
};
