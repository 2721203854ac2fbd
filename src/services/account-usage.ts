import { badRequest } from '../core/errors.ts';
import { DEFAULT_PRICES, quote, type PriceList } from '../billing/pricing.ts';
import { accountUsageRepo, type OnboardingFacts } from '../store/repos/account-usage-repo.ts';
import { subscriptionsRepo, type PaidTier } from '../store/repos/subscriptions-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';

/** The checklist, in the order a new account goes through it (docs/decisions.md "Onboarding checklist"). */
export const ONBOARDING_STEPS = [
  'api_key_created', 'location_registered', 'certificate_uploaded', 'first_test_transaction', 'webhook_configured', 'live_key_created',
] as const;
export type OnboardingStep = (typeof ONBOARDING_STEPS)[number];

const FACT_OF: Record<OnboardingStep, keyof OnboardingFacts> = {
  api_key_created: 'first_key_at',
  location_registered: 'first_location_at',
  certificate_uploaded: 'first_certificate_at',
  first_test_transaction: 'first_test_transaction_at',
  webhook_configured: 'first_webhook_at',
  live_key_created: 'first_live_key_at',
};

export interface OnboardingView {
  account_id: string;
  steps: Array<{ step: OnboardingStep; done: boolean; done_at?: Date }>;
  completed_steps: number;
  total_steps: number;
  completed: boolean;
}

export interface UsageView {
  account_id: string;
  period: string;
  period_start: Date;
  period_end: Date;
  transactions: { total: number; test: number; live: number; by_country: Array<{ country: string; environment: 'test' | 'live'; count: number }> };
  active_merchants: { live: number; test: number };
  billing: {
    basis: 'subscription' | 'none';
    tier: PaidTier | null;
    merchant_count: number | null;
    billable_amount: number;
    estimated_amount: number;
    currency: 'EUR';
  };
}

/** A month's share of a subscription: yearly ones are ten months over twelve, rounded half up. */
export function monthlyShare(monthlyAmount: number, interval: 'month' | 'year', prices: PriceList = DEFAULT_PRICES): number {
  return interval === 'year' ? Math.round((monthlyAmount * prices.yearlyMonths) / 12) : monthlyAmount;
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
export const PERIOD_ERROR = 'period must be a month in the form YYYY-MM';

/** The UTC calendar month `period` names; absent means the current month. */
export function monthBounds(period: unknown, now: Date): { period: string; start: Date; end: Date } {
  let p: string;
  if (period === undefined) {
    p = now.toISOString().slice(0, 7);
  } else {
    if (typeof period !== 'string') throw badRequest(PERIOD_ERROR);
    p = period;
  }
  const m = MONTH.exec(p);
  // 9999-12 ends in the year 10000, whose ISO form (+010000-…) the store cannot read: it was
  // a 500 (platform audit). Years before 1970 hold nothing either.
  if (!m || Number(m[1]) < 1970 || (m[1] === '9999' && m[2] === '12')) throw badRequest(PERIOD_ERROR);
  const y = Number(m[1]);
  const mo = Number(m[2]) - 1;
  return { period: p, start: new Date(Date.UTC(y, mo, 1)), end: new Date(Date.UTC(y, mo + 1, 1)) };
}

/**
 * Onboarding checklist and usage metering (DECISIONS "Beyond the spec"): both computed on
 * read from the account's own rows, so they can never disagree with what the API shows.
 */
export function createAccountUsageService(deps: Deps, o: { prices?: PriceList } = {}) {
  const { db, clock } = deps;
  const prices = o.prices ?? DEFAULT_PRICES;

  async function onboarding(auth: AuthContext): Promise<OnboardingView> {
    const facts = await accountUsageRepo.onboarding(db, auth.accountId);
    const steps = ONBOARDING_STEPS.map((step) => {
      const at = facts[FACT_OF[step]];
      return at ? { step, done: true, done_at: at } : { step, done: false };
    });
    const done = steps.filter((s) => s.done).length;
    return { account_id: auth.accountId, steps, completed_steps: done, total_steps: steps.length, completed: done === steps.length };
  }

  async function usage(auth: AuthContext, query: { period?: unknown }): Promise<UsageView> {
    const { period, start, end } = monthBounds(query.period, clock.now());
    const [rows, active, sub] = await Promise.all([
      accountUsageRepo.countsByCountry(db, auth.accountId, start, end),
      accountUsageRepo.activeLocations(db, auth.accountId, start, end),
      subscriptionsRepo.getByAccount(db, auth.accountId),
    ]);
    const sum = (env?: 'test' | 'live') => rows.filter((r) => !env || r.environment === env).reduce((a, r) => a + r.count, 0);
    // A subscription bills its monthly amount for every month it overlaps (the current
    // amount: a mid-month change is settled by proration in the billing ledger, not here);
    // a yearly one bills a twelfth of its period amount (a year costs yearlyMonths months).
    const subscribed = sub !== undefined && sub.created_at.getTime() < end.getTime();
    // What the month would cost on a subscription sized to the live merchants it saw.
    const estimated = active.live > 0 ? quote(active.live, 'month', active.live, prices).monthlyAmount : 0;
    return {
      account_id: auth.accountId, period, period_start: start, period_end: end,
      transactions: { total: sum(), test: sum('test'), live: sum('live'), by_country: rows },
      active_merchants: active,
      billing: {
        basis: subscribed ? 'subscription' : 'none',
        tier: subscribed ? sub.current_tier : null,
        merchant_count: subscribed ? sub.merchant_count : null,
        billable_amount: subscribed ? monthlyShare(sub.monthly_amount, sub.billing_interval, prices) : 0,
        estimated_amount: estimated,
        currency: 'EUR',
      },
    };
  }

  return { onboarding, usage };
}

export type AccountUsageService = ReturnType<typeof createAccountUsageService>;
