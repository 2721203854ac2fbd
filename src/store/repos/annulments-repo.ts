import type { Queryable } from '../db.ts';

/**
 * The documents of a chain that records annul (migration 0048, FiscalSystem.annulledDocument):
 * a document is annulled once, whichever way the annulment came.
 */
export const annulmentsRepo = {
  /**
   * Whether another transaction's annulment of `document` in the chain stands: its
   * transaction is in none of the `refused` statuses (the authority refused it, or its
   * retries ran out: then the document was not annulled).
   */
  async standing(q: Queryable, chainKey: string, document: string, exceptTransactionId: string, refused: readonly string[]): Promise<boolean> {
    const res = await q.query(
      `SELECT 1 FROM annulled_documents a JOIN transactions t ON t.id = a.transaction_id
        WHERE a.chain_key = $1 AND a.document = $2 AND a.transaction_id <> $3 AND NOT (t.status = ANY($4::text[]))
        LIMIT 1`,
      [chainKey, document, exceptTransactionId, [...refused]],
    );
    return res.rows.length > 0;
  },

  async insert(q: Queryable, a: { chainKey: string; document: string; transactionId: string; now: Date }): Promise<void> {
    await q.query(
      'INSERT INTO annulled_documents (chain_key, document, transaction_id, created_at) VALUES ($1, $2, $3, $4)',
      [a.chainKey, a.document, a.transactionId, a.now],
    );
  },
};
