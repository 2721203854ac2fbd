import type { Queryable } from '../db.ts';

/**
 * What a chain's records name, by role (migration 0049): the documents they annul
 * (FiscalSystem.annulledDocument), the numbers their requests chose
 * (FiscalSystem.issuedDocument) and the earlier sales they replace (FiscalSystem.replaces:
 * `document` is the replaced transaction's id, the scope its location's). Each is once per
 * chain (`chain_key`: the chain, or the wider scope the system names) while it stands. A
 * chosen number in a series counter's form carries its place in that series
 * (`numbering_key`, `number`: migration 0052); an issued number may carry a shorter,
 * non-unique `alias` a correction looks it up by (migration 0054). Beside each `replaced`
 * row, a `replaced_ref` row: the reference (the plug-in's: number and date) a correction
 * would name that sale by (SaleReplacement.corrected), not once: a lookup for the
 * correction, serialized on it; and for each correction naming a sale by such a reference,
 * a `corrected_ref` row under the same key, which a later replacement looks up. Both in
 * the issuer's scope (`replaced:<SaleReplacement.scope>`), not the location's. A `corrected`
 * row: a refund or void counted against the sale it corrects (CorrectedSaleLookup.
 * cumulative; `document` the sale's transaction id, in `corrected:<account>`), or a sale
 * naming it (CorrectedSaleLookup.sales: it counts for nothing, but holds the sale as a
 * correction does), one per sale and document: many stand together (migration 0058
 * registered those stored before).
 */
export type ChainDocumentRole = 'annulled' | 'issued' | 'replaced' | 'replaced_ref' | 'corrected_ref' | 'corrected';

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

  /** The transactions whose row of this role and document stands (their status in none of `lapsed`), oldest first. */
  async standingTransactions(q: Queryable, role: ChainDocumentRole, chainKey: string, document: string, lapsed: readonly string[]): Promise<string[]> {
    const res = await q.query<{ transaction_id: string }>(
      `SELECT a.transaction_id FROM chain_documents a JOIN transactions t ON t.id = a.transaction_id
        WHERE a.chain_key = $1 AND a.role = $2 AND a.document = $3 AND NOT (t.status = ANY($4::text[]))
        ORDER BY a.created_at, a.transaction_id`,
      [chainKey, role, document, [...lapsed]],
    );
    return res.rows.map((r) => r.transaction_id);
  },

  /**
   * The transactions registered under any of `documents` of this role in `chainKey`, each
   * with the document it holds (a lookup on the primary key's first columns). Whether each
   * stands, and whose it is, the caller reads from the transaction.
   */
  async registered(q: Queryable, role: ChainDocumentRole, chainKey: string, documents: readonly string[]): Promise<{ document: string; transactionId: string }[]> {
    if (documents.length === 0) return [];
    const res = await q.query<{ document: string; transaction_id: string }>(
      'SELECT document, transaction_id FROM chain_documents WHERE chain_key = $1 AND role = $2 AND document = ANY($3::text[]) ORDER BY document, transaction_id',
      [chainKey, role, [...documents]],
    );
    return res.rows.map((r) => ({ document: r.document, transactionId: r.transaction_id }));
  },

  /**
   * The transactions registered under this role and document whose status is one of
   * `refused` (the document did not take: the number was not issued), oldest first, with
   * their record's issue time and number (FiscalSystem.issuedDocument: a number issued again,
   * BuildInput.earlierIssues).
   */
  async lapsedRegistrations(q: Queryable, role: ChainDocumentRole, chainKey: string, document: string, refused: readonly string[]): Promise<{ transactionId: string; status: string; issuedAt: Date; documentNumber: string | null }[]> {
    const res = await q.query<{ transaction_id: string; status: string; issued_at: Date; document_number: string | null }>(
      `SELECT a.transaction_id, t.status, COALESCE(r.created_at, t.created_at) AS issued_at, r.document_number
         FROM chain_documents a
         JOIN transactions t ON t.id = a.transaction_id
         LEFT JOIN fiscal_records r ON r.transaction_id = a.transaction_id AND r.kind = 'record'
        WHERE a.chain_key = $1 AND a.role = $2 AND a.document = $3 AND t.status = ANY($4::text[])
        ORDER BY issued_at, a.transaction_id`,
      [chainKey, role, document, [...refused]],
    );
    return res.rows.map((r) => ({ transactionId: r.transaction_id, status: r.status, issuedAt: new Date(r.issued_at), documentNumber: r.document_number }));
  },

  /**
   * The transactions registered with `alias` (FiscalSystem.issuedDocument `alias`, migration
   * 0054) in this role and `chainKey`, each with the document it holds (an indexed read:
   * `chain_documents_aliases`). As `registered`, whether each stands the caller reads.
   */
  async registeredAs(q: Queryable, role: ChainDocumentRole, chainKey: string, alias: string): Promise<{ document: string; transactionId: string }[]> {
    const res = await q.query<{ document: string; transaction_id: string }>(
      'SELECT document, transaction_id FROM chain_documents WHERE chain_key = $1 AND role = $2 AND alias = $3 ORDER BY document, transaction_id',
      [chainKey, role, alias],
    );
    return res.rows.map((r) => ({ document: r.document, transactionId: r.transaction_id }));
  },

  /**
   * Registers the row. With `counter` (a number a request chose, where a series counter
   * would write the same document: FiscalSystem.issuedDocument) the same statement raises
   * the series' `client_max` (migration 0052), which locks the series row until the end of
   * the transaction as the counter's `takeNumbers` does, so the two are serialized; and
   * answers whether the counter has given that number already (`reached`: above the
   * numbers that predate the register, at or below its last). Else `reached` is false.
   */
  async insert(
    q: Queryable,
    a: { role: ChainDocumentRole; chainKey: string; document: string; transactionId: string; now: Date; counter?: { numberingKey: string; number: number } | undefined; alias?: string | undefined },
  ): Promise<{ reached: boolean }> {
    if (!a.counter) {
      await q.query(
        'INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at, alias) VALUES ($1, $2, $3, $4, $5, $6)',
        [a.chainKey, a.role, a.document, a.transactionId, a.now, a.alias ?? null],
      );
      return { reached: false };
    }
    const res = await q.query<{ reached: boolean }>(
      `WITH series AS (
         INSERT INTO number_series (numbering_key, last_number, updated_at, client_max) VALUES ($6, 0, $5, $7)
         ON CONFLICT (numbering_key) DO UPDATE SET client_max = GREATEST(number_series.client_max, EXCLUDED.client_max)
         RETURNING last_number, counted_from),
       doc AS (
         INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at, numbering_key, number, alias) VALUES ($1, $2, $3, $4, $5, $6, $7, $8))
       SELECT $7 > counted_from AND $7 <= last_number AS reached FROM series`,
      [a.chainKey, a.role, a.document, a.transactionId, a.now, a.counter.numberingKey, a.counter.number, a.alias ?? null],
    );
    return { reached: res.rows[0]!.reached };
  },

  /**
   * Whether the counter of `numberingKey` has given `number` already, read without a lock
   * (a preview): what `insert` answers as `reached`.
   */
  async counterReached(q: Queryable, counter: { numberingKey: string; number: number }): Promise<boolean> {
    const res = await q.query<{ reached: boolean }>(
      'SELECT $2 > counted_from AND $2 <= last_number AS reached FROM number_series WHERE numbering_key = $1',
      [counter.numberingKey, counter.number],
    );
    return res.rows[0]?.reached === true;
  },

  /**
   * Whether another transaction registered `number` of the series (a request chose it):
   * then the counter skipped it, and a number the counter reached is not the counter's.
   */
  async registeredInSeries(q: Queryable, counter: { numberingKey: string; number: number }, exceptTransactionId: string): Promise<boolean> {
    const res = await q.query(
      'SELECT 1 FROM chain_documents WHERE numbering_key = $1 AND number = $2 AND transaction_id <> $3 LIMIT 1',
      [counter.numberingKey, counter.number, exceptTransactionId],
    );
    return res.rows.length > 0;
  },

  /**
   * Serializes, until the end of the transaction, the appends that register `document`
   * in `scope` from chains of their own (one issuer's locations: FiscalSystem.
   * issuedDocument `scope`): each then reads what the one before committed. A
   * transaction-scoped advisory lock: the document has no row to lock before the first.
   */
  async lockDocument(q: Queryable, role: ChainDocumentRole, scope: string, document: string): Promise<void> {
    await q.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7340215003))', [`${role}\n${scope}\n${document}`]);
  },
};
