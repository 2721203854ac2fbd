import { randomBytes } from 'node:crypto';
import { ApiError, badRequest, conflict, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { DEFAULT_PRICES, MAX_MERCHANT_COUNT, periodAt, prorate, quote, type PriceList } from '../billing/pricing.ts';
import type { BillingProvider } from '../billing/provider.ts';
import { isUniqueViolation } from '../store/db.ts';
import { accountsRepo } from '../store/repos/accounts-repo.ts';
import { locationsRepo } from '../store/repos/locations-repo.ts';
import { subscriptionsRepo, type BillingInterval, type BillingLedgerRow, type SubscriptionRow } from '../store/repos/subscriptions-repo.ts';
import type { AccountTiers } from './account-tiers.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';

export interface SubscriptionView {
  id: string;
  account_id: string;
  company_name: string;
  billing_email: string;
  billing_customer_id: string;
  billing_subscription_id: string;
  status: SubscriptionRow['status'];
  merchant_count: number;
  billing_interval: BillingInterval;
  current_tier: SubscriptionRow['current_tier'];
  monthly_amount: number;
  /** What one billing period costs (a year is ten months). */
  period_amount: number;
  currency: 'EUR';
  current_period_start: Date;
  current_period_end: Date;
  created_at: Date;
  updated_at: Date;
}

export interface ProrationView {
  amount: number;
  currency: 'EUR';
  from_merchant_count: number;
  to_merchant_count: number;
  from_period_amount: number;
  to_period_amount: number;
  remaining_seconds: number;
  period_seconds: number;
  period_start: Date;
  period_end: Date;
}

const periodAmountOf = (s: Pick<SubscriptionRow, 'monthly_amount' | 'billing_interval'>, prices: PriceList) =>
  s.billing_interval === 'year' ? s.monthly_amount * prices.yearlyMonths : s.monthly_amount;

const toView = (s: SubscriptionRow, prices: PriceList): SubscriptionView => ({
  id: s.id, account_id: s.account_id, company_name: s.company_name, billing_email: s.billing_email,
  billing_customer_id: s.billing_customer_id, billing_subscription_id: s.billing_subscription_id,
  status: s.status, merchant_count: s.merchant_count, billing_interval: s.billing_interval, current_tier: s.current_tier,
  monthly_amount: s.monthly_amount, period_amount: periodAmountOf(s, prices), currency: 'EUR',
  current_period_start: s.period_start, current_period_end: s.period_end, created_at: s.created_at, updated_at: s.updated_at,
});

export interface CreateSubscriptionInput {
  company_name?: string;
  billing_email?: string;
  payment_method_id?: string;
  merchant_count?: number;
  billing_interval?: BillingInterval;
}

// The same shape as sign-up's billing_email check (schema `format: email`), kept loose on purpose.
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Required strings: absent, empty or blank is "is required" (the Go validator's `required`). */
function requiredString(v: string | undefined, field: string, max: number): string {
  const s = v?.trim() ?? '';
  if (s === '') throw badRequest(`${field} is required`);
  // Characters (code points), as the spec's limit means: an emoji is one.
  if ([...s].length > max) throw badRequest(`${field} must be at most ${max} characters`);
  return s;
}

function merchantCountOf(v: number | undefined): number {
  if (v === undefined || !Number.isInteger(v) || v < 1) throw badRequest('merchant_count must be at least 1');
  if (v > MAX_MERCHANT_COUNT) throw badRequest(`merchant_count must be at most ${MAX_MERCHANT_COUNT}`);
  return v;
}

/** The provider's failure is the service's 502: nothing was stored, the caller may retry. */
async function atProvider<T>(deps: Deps, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    deps.log.error({ err }, `billing provider: ${what} failed`);
    throw new ApiError(502, 'billing provider unavailable');
  }
}

/**
 * Subscriptions (spec "Subscriptions (portal)"): one per account. The merchant count sets
 * the tier at once (the rate limiter reads it through AccountTiers); a PATCH charges or
 * credits the difference for the remaining seconds of the current period, through the
 * provider, and writes it to the billing ledger in the same commit as the change.
 */
export function createSubscriptionService(deps: Deps, o: { provider: BillingProvider; tiers: AccountTiers; prices?: PriceList }) {
  const { db, clock } = deps;
  const prices = o.prices ?? DEFAULT_PRICES;

  async function get(auth: AuthContext): Promise<SubscriptionView> {
    const s = await subscriptionsRepo.getByAccount(db, auth.accountId);
    if (!s) throw notFound('subscription not found');
    return toView(await rolled(s), prices);
  }

  /** The row with its period moved to the one containing now (read-only: stored on the next write). */
  async function rolled(s: SubscriptionRow): Promise<SubscriptionRow> {
    const p = periodAt(s.created_at, s.billing_interval, clock.now());
    return { ...s, period_start: p.start, period_end: p.end };
  }

  async function create(auth: AuthContext, input: CreateSubscriptionInput): Promise<SubscriptionView> {
    const companyName = requiredString(input.company_name, 'company_name', 100);
    const email = requiredString(input.billing_email, 'billing_email', 254);
    if (!EMAIL_RE.test(email)) throw badRequest('billing_email must be a valid email address');
    const paymentMethodId = requiredString(input.payment_method_id, 'payment_method_id', 255);
    const merchantCount = merchantCountOf(input.merchant_count);
    const interval = input.billing_interval ?? 'month';
    if (interval !== 'month' && interval !== 'year') throw badRequest('billing_interval must be "month" or "year"');

    // One subscription per account: 409 while it is active. A suspended one (its payment
    // failed, or the provider deleted it) is replaced: the merchant's way back.
    const previous = await subscriptionsRepo.getByAccount(db, auth.accountId);
    if (previous?.status === 'active') throw conflict('subscription already exists');
    const renewalOf = previous?.billing_subscription_id;
    const now = clock.now();
    const q = quote(merchantCount, interval, await locationsRepo.countActive(db, auth.accountId), prices);
    const { customerId } = await atProvider(deps, 'create customer', () =>
      o.provider.createCustomer({ accountId: auth.accountId, companyName, email, paymentMethodId, renewalOf }));
    const { subscriptionId } = await atProvider(deps, 'create subscription', () =>
      o.provider.createSubscription({ customerId, accountId: auth.accountId, periodAmount: q.periodAmount, interval, renewalOf }));
    const period = periodAt(now, interval, now);
    const row: SubscriptionRow = {
      id: previous?.id ?? `sub_${randomBytes(12).toString('hex')}`, account_id: auth.accountId, company_name: companyName, billing_email: email,
      payment_method_id: paymentMethodId, billing_customer_id: customerId, billing_subscription_id: subscriptionId, status: 'active',
      merchant_count: merchantCount, billing_interval: interval, current_tier: q.tier, monthly_amount: q.monthlyAmount,
      period_start: period.start, period_end: period.end, created_at: now, updated_at: now,
    };
    let stored: boolean;
    try {
      stored = await db.transaction(async (tx) => {
        if (previous) {
          // Only the suspended row we read: a concurrent renewal that got there first wins.
          if (!(await subscriptionsRepo.renew(tx, row))) return false;
        } else {
          await subscriptionsRepo.insert(tx, row);
        }
        // A suspended account is active again at once (every node hears it through the
        // accounts change feed); a later billing event older than now changes nothing.
        await accountsRepo.restoreIfSuspended(tx, auth.accountId, now);
        await subscriptionsRepo.appendLine(tx, line(row, {
          kind: 'period_charge', description: `${previous ? 'renewed, first' : 'first'} ${interval}: ${merchantCount} merchants, ${q.tier}`,
          amount: q.periodAmount, from: null, remaining: null, ref: subscriptionId, now,
        }));
        return true;
      });
    } catch (err) {
      // Two POSTs at once: the unique account_id lets one in.
      if (!isUniqueViolation(err)) throw err;
      stored = false;
    }
    if (!stored) {
      await cancelQuietly(subscriptionId, 'a concurrent subscription won');
      throw conflict('subscription already exists');
    }
    // The replaced subscription stops charging (a deleted one has already stopped).
    if (renewalOf) await cancelQuietly(renewalOf, 'replaced by a renewal');
    o.tiers.forget(auth.accountId);
    return toView(row, prices);
  }

  /**
   * Ends a provider subscription we no longer keep. Not the request's failure: what we
   * stored stands, and an operator sees the log line (the provider would keep charging it).
   */
  async function cancelQuietly(subscriptionId: string, why: string): Promise<void> {
    try {
      await o.provider.cancelSubscription({ subscriptionId });
    } catch (err) {
      deps.log.error({ err, subscriptionId }, `billing provider: cancelling a subscription (${why}) failed; cancel it at the provider`);
    }
  }

  async function changeMerchantCount(auth: AuthContext, input: { merchant_count?: number }): Promise<SubscriptionView & { proration: ProrationView }> {
    const merchantCount = merchantCountOf(input.merchant_count);
    const result = await requote(auth.accountId, (current) => ({ merchantCount, force: true, why: `${current.merchant_count} → ${merchantCount} merchants` }));
    if (result === null || result === 'unchanged') throw notFound('subscription not found'); // forced: never unchanged
    return result;
  }

  /**
   * HardwareDevice mode: the subscription re-quoted after the account's active locations
   * changed (a location created, deactivated, reactivated or deleted), since the location
   * floor may have moved the amount (billing/pricing.ts `quote`). Charged or credited like a
   * PATCH, for the rest of the period, and written to the billing ledger. Nothing happens
   * when the amount stays, or without an active subscription. Run by the `billing:floor_requote`
   * job (billing/floor-requote.ts), so a location change never waits on the provider.
   */
  async function requoteFloor(accountId: string): Promise<'unchanged' | 'requoted' | 'no subscription'> {
    const r = await requote(accountId, (current) => ({ merchantCount: current.merchant_count, force: false, why: 'active locations changed (location floor)' }));
    return r === null ? 'no subscription' : r === 'unchanged' ? 'unchanged' : 'requoted';
  }

  /**
   * The one path that changes what a subscription costs: the row locked (PATCHes and
   * re-quotes of one account are serialized, each prorating from the previous one's
   * amount), the new quote, the provider told, the row and a `proration` ledger line
   * written in the same commit. `force: false` skips an unchanged amount; null: no active
   * subscription (a floor re-quote; a PATCH answers 404).
   */
  async function requote(
    accountId: string,
    change: (current: SubscriptionRow) => { merchantCount: number; force: boolean; why: string },
  ): Promise<(SubscriptionView & { proration: ProrationView }) | 'unchanged' | null> {
    const result = await db.transaction(async (tx) => {
      const current = await subscriptionsRepo.getByAccount(tx, accountId, true);
      if (!current) return null;
      const { merchantCount, force, why } = change(current);
      if (!force && current.status !== 'active') return null;
      const now = clock.now();
      const period = periodAt(current.created_at, current.billing_interval, now);
      const locations = await locationsRepo.countActive(tx, accountId);
      const q = quote(merchantCount, current.billing_interval, locations, prices);
      const fromPeriodAmount = periodAmountOf(current, prices);
      if (!force && q.periodAmount === fromPeriodAmount && q.tier === current.current_tier) return 'unchanged' as const;
      const p = prorate(fromPeriodAmount, q.periodAmount, period, now);
      const floor = prices.locationFloorMonthly > 0 ? `, ${locations} active locations` : '';
      const description = `${why} (${current.current_tier} → ${q.tier}${floor}), ${p.remainingSeconds} of ${p.periodSeconds} s left in the period`;
      const { prorationRef } = await atProvider(deps, 'change subscription', () => o.provider.changeSubscription({
        customerId: current.billing_customer_id, subscriptionId: current.billing_subscription_id, periodAmount: q.periodAmount,
        interval: current.billing_interval, prorationAmount: p.amount, description,
      }));
      const next: SubscriptionRow = {
        ...current, merchant_count: merchantCount, current_tier: q.tier, monthly_amount: q.monthlyAmount,
        period_start: period.start, period_end: period.end, updated_at: now,
      };
      await subscriptionsRepo.update(tx, next);
      await subscriptionsRepo.appendLine(tx, line(next, {
        kind: 'proration', description, amount: p.amount, from: current.merchant_count, remaining: p.remainingSeconds, ref: prorationRef, now,
      }));
      const proration: ProrationView = {
        amount: p.amount, currency: 'EUR', from_merchant_count: current.merchant_count, to_merchant_count: merchantCount,
        from_period_amount: fromPeriodAmount, to_period_amount: q.periodAmount, remaining_seconds: p.remainingSeconds,
        period_seconds: p.periodSeconds, period_start: period.start, period_end: period.end,
      };
      return { ...toView(next, prices), proration };
    });
    // This node's next request already sees the new tier; the others hear the trigger's NOTIFY.
    if (result !== null && result !== 'unchanged') o.tiers.forget(accountId);
    return result;
  }

  function line(s: SubscriptionRow, l: { kind: BillingLedgerRow['kind']; description: string; amount: number; from: number | null; remaining: number | null; ref: string | null; now: Date }): BillingLedgerRow {
    return {
      id: newId(), account_id: s.account_id, subscription_id: s.id, kind: l.kind, description: l.description, amount: l.amount,
      currency: 'EUR', from_merchant_count: l.from, to_merchant_count: s.merchant_count, period_start: s.period_start,
      period_end: s.period_end, remaining_seconds: l.remaining,
      period_seconds: Math.round((s.period_end.getTime() - s.period_start.getTime()) / 1000), provider_ref: l.ref, created_at: l.now,
    };
  }

  return { get, create, changeMerchantCount, requoteFloor };
}

export type SubscriptionService = ReturnType<typeof createSubscriptionService>;
