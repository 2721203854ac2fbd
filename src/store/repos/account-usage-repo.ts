import type { Queryable } from '../db.ts';

export interface OnboardingFacts {
  first_key_at: Date | null;
  first_location_at: Date | null;
  first_certificate_at: Date | null;
  first_test_transaction_at: Date | null;
  first_webhook_at: Date | null;
  first_live_key_at: Date | null;
}

export interface UsageRow { country: string; environment: 'test' | 'live'; count: number }

/**
 * Reads for the onboarding checklist and usage metering: computed from the tables that
 * hold the facts (no counters of their own to drift). Every query is bound to one account.
 */
export const accountUsageRepo = {
  /** The earliest still-present row of each kind: a revoked key or a deleted location does not count. */
  async onboarding(q: Queryable, accountId: string): Promise<OnboardingFacts> {
    const res = await q.query<OnboardingFacts>(
      `SELECT
         (SELECT min(created_at) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL) AS first_key_at,
         (SELECT min(created_at) FROM locations WHERE account_id = $1 AND deleted_at IS NULL) AS first_location_at,
         (SELECT min(created_at) FROM certificates WHERE account_id = $1) AS first_certificate_at,
         (SELECT min(created_at) FROM transactions WHERE account_id = $1 AND environment = 'test') AS first_test_transaction_at,
         (SELECT min(created_at) FROM webhook_subscriptions WHERE account_id = $1 AND deleted_at IS NULL) AS first_webhook_at,
         (SELECT min(created_at) FROM api_keys WHERE account_id = $1 AND environment = 'live' AND revoked_at IS NULL) AS first_live_key_at`,
      [accountId],
    );
    const r = res.rows[0]!;
    const d = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date));
    return {
      first_key_at: d(r.first_key_at), first_location_at: d(r.first_location_at), first_certificate_at: d(r.first_certificate_at),
      first_test_transaction_at: d(r.first_test_transaction_at), first_webhook_at: d(r.first_webhook_at), first_live_key_at: d(r.first_live_key_at),
    };
  },

  /** Transactions created in [from, to), per country and environment. */
  async countsByCountry(q: Queryable, accountId: string, from: Date, to: Date): Promise<UsageRow[]> {
    const res = await q.query<{ country: string; environment: 'test' | 'live'; n: number }>(
      `SELECT country, environment, count(*)::int AS n FROM transactions
        WHERE account_id = $1 AND created_at >= $2 AND created_at < $3
        GROUP BY country, environment ORDER BY country, environment`,
      [accountId, from, to],
    );
    return res.rows.map((r) => ({ country: r.country, environment: r.environment, count: Number(r.n) }));
  },

  /** Distinct locations with at least one transaction in [from, to), per environment. */
  async activeLocations(q: Queryable, accountId: string, from: Date, to: Date): Promise<{ test: number; live: number }> {
    const res = await q.query<{ environment: 'test' | 'live'; n: number }>(
      `SELECT environment, count(DISTINCT location_id)::int AS n FROM transactions
        WHERE account_id = $1 AND created_at >= $2 AND created_at < $3
        GROUP BY environment`,
      [accountId, from, to],
    );
    const out = { test: 0, live: 0 };
    for (const r of res.rows) out[r.environment] = Number(r.n);
    return out;
  },
};
