/**
 * Numbered receipt duplicates (migration 0040): one row a reprint, numbered from 1 per
 * transaction (POST /v1/transactions/{id}/receipt/duplicate, receipts/service.ts).
 */
import { isUniqueViolation, type Queryable } from '../db.ts';

/** Racing reprints that find their number taken try the next one this many times more. */
const RACE_RETRIES = 5;

export const receiptDuplicatesRepo = {
  /**
   * Takes the transaction's next copy number, in one statement; the primary key sends a
   * racing reprint round again for the number after.
   */
  async takeNext(q: Queryable, transactionId: string, accountId: string, now: Date): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        const { rows } = await q.query<{ copy_number: number }>(
          `INSERT INTO receipt_duplicates (transaction_id, copy_number, account_id, created_at)
           SELECT $1, COALESCE(MAX(copy_number), 0) + 1, $2, $3 FROM receipt_duplicates WHERE transaction_id = $1
           RETURNING copy_number`, [transactionId, accountId, now]);
        return rows[0]!.copy_number;
      } catch (err) {
        if (attempt < RACE_RETRIES && isUniqueViolation(err)) continue;
        throw err;
      }
    }
  },

  /** Gives a number back (its reprint was not journaled, so not printed): the next reprint takes it. */
  async giveBack(q: Queryable, transactionId: string, copy: number): Promise<void> {
    await q.query('DELETE FROM receipt_duplicates WHERE transaction_id = $1 AND copy_number = $2', [transactionId, copy]);
  },
};
