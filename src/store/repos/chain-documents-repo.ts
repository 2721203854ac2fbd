import type { Queryable } from '../db.ts';

/**
 * What a chain's records name, by role (migration 0049): the documents they annul
 * (FiscalSystem.annulledDocument) and the numbers their requests chose
 * (FiscalSystem.issuedDocument). Each is once per chain while it stands.
 */
export type ChainDocumentRole = 'annulled' | 'issued';

export const chainDocumentsRepo = {
  /**
   * Whether another transaction's row of this role and document stands: its transaction is
   * in none of the `refused` statuses (the authority refused it, or its retries ran out:
   * then the document was not annulled, the number not issued).
   */
  async standing(q: Queryable, role: ChainDocumentRole, chainKey: string, document: string, exceptTransactionId: string, refused: readonly string[]): Promise<boolean> {
    const res = await q.query(
      `SELECT 1 FROM chain_documents a JOIN transactions t ON t.id = a.transaction_id
        WHERE a.chain_key = $1 AND a.role = $2 AND a.document = $3 AND a.transaction_id <> $4 AND NOT (t.status = ANY($5::text[]))
        LIMIT 1`,
      [chainKey, role, document, exceptTransactionId, [...refused]],
    );
    return res.rows.length > 0;
  },

  async insert(q: Queryable, a: { role: ChainDocumentRole; chainKey: string; document: string; transactionId: string; now: Date }): Promise<void> {
    await q.query(
      'INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at) VALUES ($1, $2, $3, $4, $5)',
      [a.chainKey, a.role, a.document, a.transactionId, a.now],
    );
  },
};
