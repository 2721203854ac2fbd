import type { Queryable } from '../db.ts';

export type AccountStatus = 'active' | 'suspended' | 'cancelled';

export interface AccountRow {
  id: string;
  name: string;
  billing_email: string;
  status: AccountStatus;
  status_reason: string | null;
  status_since: Date;
  /** The latest billing event (provider time) that changed the account's state (migration 0045). */
  billing_event_at?: Date | null;
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

  async get(q: Queryable, id: string, forUpdate = false): Promise<AccountRow | undefined> {
    return (await q.query<AccountRow>(`SELECT * FROM accounts WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [id])).rows[0];
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
  async suspendIfActive(q: Queryable, id: string, reason: string, at: Date, eventAt: Date = at): Promise<AccountRow | undefined> {
    return (await q.query<AccountRow>(
      `UPDATE accounts SET status = 'suspended', status_reason = $2, status_since = $3, updated_at = $3, billing_event_at = $4
       WHERE id = $1 AND status = 'active' RETURNING *`,
      [id, reason, at, eventAt],
    )).rows[0];
  },

  /** A suspended account's reason changes (a subscription deleted while its payment had failed). */
  async resuspend(q: Queryable, id: string, fromReason: string, reason: string, at: Date, eventAt: Date): Promise<AccountRow | undefined> {
    return (await q.query<AccountRow>(
      `UPDATE accounts SET status_reason = $3, status_since = $4, updated_at = $4, billing_event_at = $5
       WHERE id = $1 AND status = 'suspended' AND status_reason = $2 RETURNING *`,
      [id, fromReason, reason, at, eventAt],
    )).rows[0];
  },

  /** Restored, when suspended (for `reason` only, when given). */
  async restoreIfSuspended(q: Queryable, id: string, at: Date, o: { reason?: string; eventAt?: Date } = {}): Promise<AccountRow | undefined> {
    return (await q.query<AccountRow>(
      `UPDATE accounts SET status = 'active', status_reason = NULL, status_since = $2, updated_at = $2, billing_event_at = $3
       WHERE id = $1 AND status = 'suspended' AND ($4::text IS NULL OR status_reason = $4) RETURNING *`,
      [id, at, o.eventAt ?? at, o.reason ?? null],
    )).rows[0];
  },
};
