import type { FiscalSystem } from '../countries/types.ts';
import type { RateLimitTier } from '../ratelimit/tiers.ts';
import type { TransactionRow } from '../store/repos/transactions-repo.ts';
import type { AccountTiers } from './account-tiers.ts';

/**
 * The offline grace window of a system with an offline fallback (Greece), by account tier
 * (spec Limits: "offline grace default 7 days (up to 1 month by tier)"). The plug-in
 * declares the facts (`capabilities.offlineGraceSeconds`, `offlineGraceByTier`); this
 * module only reads them, for any system.
 *
 * When the tier is read: once, when a record first goes offline (jobs/tasks/submit.ts
 * `fail`). Its window, created_at + that tier's grace, is then stored in `offline_until`
 * and every later attempt keeps it: the receipt and the transaction already told the
 * merchant when the record expires, and a tier change (a PATCH of the subscription, a
 * location added) must not shorten a window the merchant was promised, nor make a record
 * stored in the past expire or revive depending on when its retry happens to run.
 */

type Capabilities = FiscalSystem['capabilities'];

/** The grace of an account of `tier` (undefined: the tier is unknown, as in the embedded engine → the default). */
export function offlineGraceSeconds(capabilities: Capabilities, tier?: RateLimitTier): number | undefined {
  const grace = capabilities.offlineGraceSeconds;
  if (grace === undefined) return undefined;
  return (tier !== undefined ? capabilities.offlineGraceByTier?.[tier] : undefined) ?? grace;
}

/** The longest window any account may get: what a submission job's attempts must cover. */
export function longestOfflineGraceSeconds(capabilities: Capabilities): number | undefined {
  const grace = capabilities.offlineGraceSeconds;
  if (grace === undefined) return undefined;
  return Math.max(grace, ...Object.values(capabilities.offlineGraceByTier ?? {}).filter((s): s is number => s !== undefined));
}

/**
 * The tier a transaction's grace follows: `sandbox` for a test record (as the rate limiter
 * gives test keys the sandbox bucket whatever the subscription), else the account's tier as
 * GET /v1/account/status reports it (AccountTiers: the subscription's merchant count, the
 * active locations while there is none). No AccountTiers (the embedded engine): no tier.
 */
export async function graceTierOf(t: Pick<TransactionRow, 'account_id' | 'environment'>, tiers?: Pick<AccountTiers, 'of'>): Promise<RateLimitTier | undefined> {
  if (t.environment === 'test') return 'sandbox';
  if (!tiers) return undefined;
  return (await tiers.of(t.account_id, { fresh: true })).tier;
}
