import { InvalidatingCache } from '../core/invalidating-cache.ts';
import { tierForMerchantCount } from '../ratelimit/tiers.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { locationsRepo } from '../store/repos/locations-repo.ts';
import { subscriptionsRepo, type PaidTier } from '../store/repos/subscriptions-repo.ts';
import type { Deps } from './deps.ts';

/** How long an account without a subscription reuses its location count (the old guess, kept for them). */
const LOCATION_COUNT_MS = 30_000;
const SUBSCRIPTION_CACHE = { ttlMs: 300_000, maxEntries: 50_000 };

export interface AccountTier {
  tier: PaidTier;
  merchantCount: number;
  /** Where the count came from: the subscription, or (none yet) the active locations. */
  source: 'subscription' | 'locations';
}

/**
 * An account's tier, read on every live request by the rate limiter. The subscription's
 * merchant count decides it; an account without one is counted by its active locations,
 * as before subscriptions existed. The subscription row is cached per account and dropped
 * when the database reports a change of it (migration 0022's trigger, any node), and at
 * once on this node by `forget` after a PATCH commits: a tier change is felt by the very
 * next request.
 */
export function createAccountTiers(deps: Pick<Deps, 'db' | 'clock'>, changes?: ChangeFeed) {
  const subs = new InvalidatingCache<string, number | null>({ ...SUBSCRIPTION_CACHE, live: () => changes?.live() ?? false });
  const byLocations = new Map<string, { count: number; until: number }>();
  changes?.on('subscriptions', (accountId) => subs.invalidate(accountId));
  changes?.onReset(() => subs.clear());

  /** `fresh`: count the locations now (account status shows the count; the rate limiter may reuse it for 30 s). */
  async function of(accountId: string, opts: { fresh?: boolean } = {}): Promise<AccountTier> {
    const subscribed = await subs.get(accountId, async () => (await subscriptionsRepo.merchantCount(deps.db, accountId)) ?? null);
    if (subscribed !== null) return { tier: tierForMerchantCount(subscribed), merchantCount: subscribed, source: 'subscription' };
    const nowMs = deps.clock.now().getTime();
    let hit = byLocations.get(accountId);
    if (!hit || hit.until <= nowMs || opts.fresh) {
      hit = { count: await locationsRepo.countActive(deps.db, accountId), until: nowMs + LOCATION_COUNT_MS };
      if (byLocations.size >= SUBSCRIPTION_CACHE.maxEntries) byLocations.delete(byLocations.keys().next().value as string);
      byLocations.set(accountId, hit);
    }
    return { tier: tierForMerchantCount(hit.count), merchantCount: hit.count, source: 'locations' };
  }

  return {
    of,
    /** Drops what this node holds for the account (after its subscription changed here). */
    forget(accountId: string) {
      subs.invalidate(accountId);
      byLocations.delete(accountId);
    },
  };
}

export type AccountTiers = ReturnType<typeof createAccountTiers>;
