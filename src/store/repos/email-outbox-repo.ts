import type { Queryable } from '../db.ts';

export interface OutboxRow {
  id: string;
  account_id: string | null;
  to_address: string;
  subject: string;
  body_text: string;
  created_at: Date;
  next_attempt_at: Date;
  claimed_until: Date | null;
  attempts: number;
  last_error: string | null;
  sent_at: Date | null;
}

export type NewOutboxRow = Pick<OutboxRow, 'id' | 'account_id' | 'to_address' | 'subject' | 'body_text' | 'created_at'>;

export const emailOutboxRepo = {
  async insert(q: Queryable, m: NewOutboxRow): Promise<void> {
    await q.query(
      `INSERT INTO email_outbox (id, account_id, to_address, subject, body_text, created_at, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)`,
      [m.id, m.account_id, m.to_address, m.subject, m.body_text, m.created_at],
    );
  },

  /**
   * Takes up to `limit` unsent messages that are due (or the given ones, if due), each
   * claimed until `claimUntil` so another node's sender skips them (SKIP LOCKED: two
   * senders never wait on each other, nor take the same row).
   */
  async claimDue(q: Queryable, now: Date, claimUntil: Date, limit: number, ids?: readonly string[]): Promise<OutboxRow[]> {
    return (await q.query<OutboxRow>(
      `UPDATE email_outbox SET claimed_until = $2
       WHERE id IN (
         SELECT id FROM email_outbox
         WHERE sent_at IS NULL AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until < $1)
           AND ($4::uuid[] IS NULL OR id = ANY($4::uuid[]))
         ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [now, claimUntil, limit, ids ? [...ids] : null],
    )).rows;
  },

  async markSent(q: Queryable, id: string, at: Date): Promise<void> {
    await q.query('UPDATE email_outbox SET sent_at = $2, attempts = attempts + 1, claimed_until = NULL, last_error = NULL WHERE id = $1', [id, at]);
  },

  async markFailed(q: Queryable, id: string, error: string, nextAttemptAt: Date): Promise<void> {
    await q.query(
      'UPDATE email_outbox SET attempts = attempts + 1, last_error = $2, next_attempt_at = $3, claimed_until = NULL WHERE id = $1',
      [id, error.slice(0, 1000), nextAttemptAt],
    );
  },

  async get(q: Queryable, id: string): Promise<OutboxRow | undefined> {
    return (await q.query<OutboxRow>('SELECT * FROM email_outbox WHERE id = $1', [id])).rows[0];
  },

  async listForAccount(q: Queryable, accountId: string): Promise<OutboxRow[]> {
    return (await q.query<OutboxRow>('SELECT * FROM email_outbox WHERE account_id = $1 ORDER BY created_at, id', [accountId])).rows;
  },
};
