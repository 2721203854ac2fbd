import type { Queryable } from '../db.ts';

export type BillingOutcome = 'suspended' | 'restored' | 'unchanged' | 'logged' | 'ignored';

export const billingEventsRepo = {
  /**
   * Records an event id; false when it was already recorded. A concurrent insert of the
   * same id waits for the first transaction and then does nothing: whatever the number of
   * duplicate deliveries racing, one transaction applies the event.
   */
  async claim(q: Queryable, e: { event_id: string; type: string; account_id: string | null; outcome: BillingOutcome; received_at: Date }): Promise<boolean> {
    const r = await q.query(
      `INSERT INTO billing_events (event_id, type, account_id, outcome, received_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
      [e.event_id, e.type, e.account_id, e.outcome, e.received_at],
    );
    return r.rows.length === 1;
  },

  async setOutcome(q: Queryable, eventId: string, outcome: BillingOutcome): Promise<void> {
    await q.query('UPDATE billing_events SET outcome = $2 WHERE event_id = $1', [eventId, outcome]);
  },

  async listForAccount(q: Queryable, accountId: string): Promise<{ event_id: string; type: string; outcome: BillingOutcome }[]> {
    return (await q.query<{ event_id: string; type: string; outcome: BillingOutcome }>(
      'SELECT event_id, type, outcome FROM billing_events WHERE account_id = $1 ORDER BY received_at, event_id', [accountId])).rows;
  },
};
