import type { Queryable } from '../db.ts';

export type SubscriptionStatus = 'active' | 'suspended';
export type BillingInterval = 'month' | 'year';
export type PaidTier = 'starter' | 'growth' | 'scale' | 'enterprise';

export interface SubscriptionRow {
  id: string;
  account_id: string;
  company_name: string;
  billing_email: string;
  payment_method_id: string;
  billing_customer_id: string;
  billing_subscription_id: string;
  status: SubscriptionStatus;
  merchant_count: number;
  billing_interval: BillingInterval;
  current_tier: PaidTier;
  monthly_amount: number;
  period_start: Date;
  period_end: Date;
  created_at: Date;
  updated_at: Date;
}

export interface BillingLedgerRow {
  id: string;
  account_id: string;
  subscription_id: string;
  kind: 'period_charge' | 'proration';
  description: string;
  amount: number;
  currency: string;
  from_merchant_count: number | null;
  to_merchant_count: number;
  period_start: Date;
  period_end: Date;
  remaining_seconds: number | null;
  period_seconds: number;
  provider_ref: string | null;
  created_at: Date;
}

/** bigint columns come back as strings (pg) or bigints (PGlite): amounts are safe integers here (merchant_count is capped). */
const num = (v: unknown): number => Number(v);
const toSub = (r: SubscriptionRow): SubscriptionRow => ({ ...r, monthly_amount: num(r.monthly_amount) });
const toLine = (r: BillingLedgerRow): BillingLedgerRow => ({
  ...r, amount: num(r.amount), period_seconds: num(r.period_seconds), remaining_seconds: r.remaining_seconds === null ? null : num(r.remaining_seconds),
});

export const subscriptionsRepo = {
  async insert(q: Queryable, s: SubscriptionRow): Promise<void> {
    await q.query(
      `INSERT INTO subscriptions (id, account_id, company_name, billing_email, payment_method_id, billing_customer_id,
         billing_subscription_id, status, merchant_count, billing_interval, current_tier, monthly_amount, period_start,
         period_end, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [s.id, s.account_id, s.company_name, s.billing_email, s.payment_method_id, s.billing_customer_id, s.billing_subscription_id,
        s.status, s.merchant_count, s.billing_interval, s.current_tier, s.monthly_amount, s.period_start, s.period_end, s.created_at, s.updated_at],
    );
  },

  async getByAccount(q: Queryable, accountId: string, forUpdate = false): Promise<SubscriptionRow | undefined> {
    const row = (await q.query<SubscriptionRow>(`SELECT * FROM subscriptions WHERE account_id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [accountId])).rows[0];
    return row && toSub(row);
  },

  /** For the billing receiver: the subscription an event's customer id names. */
  async getByBillingCustomer(q: Queryable, customerId: string): Promise<SubscriptionRow | undefined> {
    const row = (await q.query<SubscriptionRow>('SELECT * FROM subscriptions WHERE billing_customer_id = $1', [customerId])).rows[0];
    return row && toSub(row);
  },

  /** The merchant count the tier follows, or undefined without a subscription (request path: one indexed read). */
  async merchantCount(q: Queryable, accountId: string): Promise<number | undefined> {
    return (await q.query<{ merchant_count: number }>('SELECT merchant_count FROM subscriptions WHERE account_id = $1', [accountId])).rows[0]?.merchant_count;
  },

  async update(q: Queryable, s: SubscriptionRow): Promise<void> {
    await q.query(
      `UPDATE subscriptions SET merchant_count = $2, current_tier = $3, monthly_amount = $4, period_start = $5, period_end = $6,
         status = $7, updated_at = $8 WHERE id = $1`,
      [s.id, s.merchant_count, s.current_tier, s.monthly_amount, s.period_start, s.period_end, s.status, s.updated_at],
    );
  },

  /** For the billing receiver (suspend / restore): the subscription's status follows the account's. */
  /** A suspended subscription replaced by a new one (the same row and id: its ledger lines stay attached). */
  async renew(q: Queryable, s: SubscriptionRow): Promise<boolean> {
    const r = await q.query(
      `UPDATE subscriptions SET company_name = $2, billing_email = $3, payment_method_id = $4, billing_customer_id = $5,
         billing_subscription_id = $6, status = 'active', merchant_count = $7, billing_interval = $8, current_tier = $9,
         monthly_amount = $10, period_start = $11, period_end = $12, created_at = $13, updated_at = $13
       WHERE account_id = $1 AND status = 'suspended'`,
      [s.account_id, s.company_name, s.billing_email, s.payment_method_id, s.billing_customer_id, s.billing_subscription_id,
        s.merchant_count, s.billing_interval, s.current_tier, s.monthly_amount, s.period_start, s.period_end, s.created_at],
    );
    return (r.rowCount ?? 0) > 0;
  },

  async setStatus(q: Queryable, accountId: string, status: SubscriptionStatus, at: Date): Promise<boolean> {
    const r = await q.query('UPDATE subscriptions SET status = $2, updated_at = $3 WHERE account_id = $1', [accountId, status, at]);
    return (r.rowCount ?? 0) > 0;
  },

  async appendLine(q: Queryable, l: BillingLedgerRow): Promise<void> {
    await q.query(
      `INSERT INTO billing_ledger (id, account_id, subscription_id, kind, description, amount, currency, from_merchant_count,
         to_merchant_count, period_start, period_end, remaining_seconds, period_seconds, provider_ref, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [l.id, l.account_id, l.subscription_id, l.kind, l.description, l.amount, l.currency, l.from_merchant_count, l.to_merchant_count,
        l.period_start, l.period_end, l.remaining_seconds, l.period_seconds, l.provider_ref, l.created_at],
    );
  },

  async lines(q: Queryable, accountId: string): Promise<BillingLedgerRow[]> {
    return (await q.query<BillingLedgerRow>('SELECT * FROM billing_ledger WHERE account_id = $1 ORDER BY created_at, id', [accountId])).rows.map(toLine);
  },
};
