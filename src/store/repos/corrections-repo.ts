import type { Queryable } from '../db.ts';
import type { TransactionDraft } from '../../core/transaction.ts';

/**
 * Corrections of accepted records (migration 0057, services/corrections.ts): a second fiscal
 * record of a transaction, of the same document, and what the authority answered to it.
 */
export type CorrectionStatus = 'pending' | 'accepted' | 'rejected';

export interface CorrectionRow {
  id: string;
  transaction_id: string;
  account_id: string;
  environment: 'test' | 'live';
  idempotency_key: string;
  request_hash: string;
  record_id: string;
  status: CorrectionStatus;
  /** The request's fields the correction changes (`customer_context`, `metadata`). */
  changes: Record<string, unknown>;
  /** The transaction's draft as corrected: what the record was built from. */
  draft: TransactionDraft;
  response: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

const JSON_COLUMNS = ['changes', 'draft', 'response'] as const;

/**
 * A transaction's last accepted correction (what its authority holds now), or undefined when
 * none was accepted, from its corrections oldest first (`correctionsRepo.ofTransaction`).
 * The one answer to "which correction stands": a new correction is built on it
 * (services/corrections.ts) and the receipt prints it (receipts/service.ts).
 */
export function lastAcceptedCorrection<C extends Pick<CorrectionRow, 'status'>>(oldestFirst: readonly C[]): C | undefined {
  return oldestFirst.findLast((c) => c.status === 'accepted');
}

export const correctionsRepo = {
  async insert(q: Queryable, row: CorrectionRow): Promise<void> {
    const cols = Object.keys(row) as (keyof CorrectionRow)[];
    const values = cols.map((c) => ((JSON_COLUMNS as readonly string[]).includes(c) ? JSON.stringify(row[c]) : row[c]));
    await q.query(`INSERT INTO transaction_corrections (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, values);
  },

  async get(q: Queryable, id: string, opts: { forUpdate?: boolean } = {}): Promise<CorrectionRow | undefined> {
    return (await q.query<CorrectionRow>(`SELECT * FROM transaction_corrections WHERE id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`, [id])).rows[0];
  },

  async findByIdempotencyKey(q: Queryable, accountId: string, environment: string, key: string): Promise<CorrectionRow | undefined> {
    return (await q.query<CorrectionRow>(
      'SELECT * FROM transaction_corrections WHERE account_id = $1 AND environment = $2 AND idempotency_key = $3', [accountId, environment, key],
    )).rows[0];
  },

  /** A transaction's corrections, oldest first. */
  async ofTransaction(q: Queryable, transactionId: string): Promise<CorrectionRow[]> {
    return (await q.query<CorrectionRow>('SELECT * FROM transaction_corrections WHERE transaction_id = $1 ORDER BY created_at, id', [transactionId])).rows;
  },

  /** Settles a pending correction; false when it was not pending any more. */
  async settle(q: Queryable, id: string, status: Exclude<CorrectionStatus, 'pending'>, response: Record<string, unknown>, now: Date): Promise<boolean> {
    const res = await q.query(
      `UPDATE transaction_corrections SET status = $2, response = $3, updated_at = $4, completed_at = $4 WHERE id = $1 AND status = 'pending'`,
      [id, status, JSON.stringify(response), now],
    );
    return (res.rowCount ?? 0) > 0;
  },

  /** Records a failed attempt that will be retried (the correction stays pending). */
  async noteAttempt(q: Queryable, id: string, response: Record<string, unknown>, now: Date): Promise<void> {
    await q.query(`UPDATE transaction_corrections SET response = $2, updated_at = $3 WHERE id = $1 AND status = 'pending'`, [id, JSON.stringify(response), now]);
  },
};
