import type { Queryable } from '../db.ts';

export type AccountStatus = 'active' | 'suspended' | 'cancelled';

export interface AccountRow {
  id: string;
  name: string;
  billing_email: string;
  status: AccountStatus;
  status_reason: string | null;
  status_since: Date;
  created_at: Date;
  updated_at: Date;
}

export const accountsRepo = {
  /** The embedded engine's mirror of its token's account (active, named for the agent); nothing if it exists. */
  async ensureMirror(q: Queryable, id: string, name: string, billingEmail: string, now: Date): Promise<void> {
    await q.query(
      `INSERT INTO accounts (id, name, billing_email, status, status_since, created_at, updated_at)
       VALUES ($1, $2, $3, 'active', $4, $4, $4) ON CONFLICT (id) DO NOTHING`,
      [id, name, billingEmail, now],
    );
  },

  async insert(q: Queryable, a: Omit<AccountRow, 'status_reason' | 'updated_at'>): Promise<void> {
    await q.query(
      `INSERT INTO accounts (id, name, billing_email, status, status_since, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)`,
      [a.id, a.name, a.billing_email, a.status, a.status_since, a.created_at],
    );
  },

  async get(q: Queryable, id: string): Promise<AccountRow | undefined> {
    return (await q.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id])).rows[0];
  },

  async setStatus(q: Queryable, id: string, status: AccountStatus, reason: string | null, at: Date): Promise<void> {
    await q.query(
      `UPDATE accounts SET status = $2, status_reason = $3, status_since = $4, updated_at = $4
       WHERE id = $1 AND status IS DISTINCT FROM $2`,
      [id, status, reason, at],
    );
  },

  /**
   * Billing transitions (billing/receiver.ts): each moves only from the state it names and
   * returns the row it changed (undefined: nothing to do). A cancelled account is neither
   * restored by a payment nor suspended again.
   */
  async suspendIfActive(q: Queryable, id: string, reason: string, at: Date): Promise<AccountRow | undefined> {
    return (await q.query<AccountRow>(
      `UPDATE accounts SET status = 'suspended', status_reason = $2, status_since = $3, updated_at = $3
       WHERE id = $1 AND status = 'active' RETURNING *`,
      [id, reason, at],
    )).rows[0];
  },

  async restoreIfSuspended(q: Queryable, id: string, at: Date): Promise<AccountRow | undefined> {
    return (await q.query<AccountRow>(
      `UPDATE accounts SET status = 'active', status_reason = NULL, status_since = $2, updated_at = $2
       WHERE id = $1 AND status = 'suspended' RETURNING *`,
      [id, at],
    )).rows[0];
  },
};
