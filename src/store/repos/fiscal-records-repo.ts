import type { IssuerAsIssued } from '../../countries/types.ts';
import type { Queryable } from '../db.ts';

/**
 * A transaction's issuer as its document was issued (migration 0059, services/record-issuer.ts):
 * the location's name, address and legal name when the record was built.
 */
export interface RecordIssuer {
  name: string;
  address: string | null;
  legal_name: string | null;
}

/** The issuer a record kept (`fiscal_records.issuer`), or undefined when it kept none (older records) or not of that shape. */
export function keptIssuer(kept: unknown): RecordIssuer | undefined {
  if (kept === null || typeof kept !== 'object') return undefined;
  const k = kept as Record<string, unknown>;
  const text = (v: unknown) => v === null || typeof v === 'string';
  if (typeof k.name !== 'string' || !text(k.address) || !text(k.legal_name)) return undefined;
  return { name: k.name, address: (k.address as string | null) || null, legal_name: (k.legal_name as string | null) || null };
}

/**
 * The kept issuer as the plug-ins take it (`StoredRecord.issuer`, `BatchClaim.issuer`), or
 * undefined when the record kept none: what every sender hands a plug-in (a record, a
 * correction sent under the record it corrects, a batch claim), so all read it alike.
 */
export function issuerAsIssued(kept: unknown): IssuerAsIssued | undefined {
  const issuer = keptIssuer(kept);
  return issuer ? { name: issuer.name, address: issuer.address, legalName: issuer.legal_name } : undefined;
}

export interface FiscalRecordRow {
  id: string;
  /** Null for records of no transaction (closures, journal entries: migration 0017; corrections, named by theirs: 0057). */
  transaction_id: string | null;
  account_id: string;
  system: string;
  kind: 'record' | 'cancellation' | 'closure' | 'journal' | 'correction';
  chain_key: string;
  seq: number;
  previous_fingerprint: string | null;
  fingerprint: string | null;
  fiscal_id: string | null;
  document_number: string | null;
  qr_data: string | null;
  content_type: string;
  body: string;
  placeholder: boolean;
  /** The issuer as the document was issued; null (or absent where not written) for records stored before it was kept and for records of no transaction. */
  issuer?: RecordIssuer | null | undefined;
  created_at: Date;
}

export const fiscalRecordsRepo = {
  /** A record by its own id (a correction's: services/corrections.ts). */
  async getById(q: Queryable, id: string): Promise<FiscalRecordRow | undefined> {
    const r = (await q.query<FiscalRecordRow>('SELECT * FROM fiscal_records WHERE id = $1', [id])).rows[0];
    return r ? { ...r, seq: Number(r.seq) } : r;
  },

  async getForTransaction(q: Queryable, transactionId: string): Promise<FiscalRecordRow | undefined> {
    const r = (await q.query<FiscalRecordRow>('SELECT * FROM fiscal_records WHERE transaction_id = $1', [transactionId])).rows[0];
    return r ? { ...r, seq: Number(r.seq) } : r;
  },

  /**
   * The records (not annulments) of these transactions, by transaction id: their number and
   * issue time, in one read for several (a sale's standing corrections, services/corrected-sales.ts).
   */
  async recordsOf(q: Queryable, transactionIds: readonly string[]): Promise<Map<string, { documentNumber: string | null; createdAt: Date }>> {
    if (transactionIds.length === 0) return new Map();
    const res = await q.query<{ transaction_id: string; document_number: string | null; created_at: Date }>(
      `SELECT transaction_id, document_number, created_at FROM fiscal_records
        WHERE transaction_id = ANY($1::uuid[]) AND kind = 'record'`,
      [[...transactionIds]],
    );
    return new Map(res.rows.map((r) => [r.transaction_id, { documentNumber: r.document_number, createdAt: new Date(r.created_at) }]));
  },

  /**
   * The transactions whose records (not annulments) sit at these places of their chains
   * (`chain_key`, `seq`: the unique index of a chain's records), each with its place.
   */
  async atPositions(q: Queryable, positions: readonly { chainKey: string; seq: number }[]): Promise<{ chainKey: string; seq: number; transactionId: string }[]> {
    if (positions.length === 0) return [];
    const res = await q.query<{ chain_key: string; seq: string | number; transaction_id: string }>(
      `SELECT r.chain_key, r.seq, r.transaction_id FROM fiscal_records r
         JOIN unnest($1::text[], $2::bigint[]) AS p(chain_key, seq) ON r.chain_key = p.chain_key AND r.seq = p.seq
        WHERE r.kind = 'record' ORDER BY r.chain_key, r.seq`,
      [positions.map((p) => p.chainKey), positions.map((p) => p.seq)],
    );
    return res.rows.map((r) => ({ chainKey: r.chain_key, seq: Number(r.seq), transactionId: r.transaction_id }));
  },

  /**
   * A cancellation's record completed before it is first sent (`FiscalSystem.completeCancellation`):
   * the body it is sent with, in place of `from`. Nothing else of the record changes (number,
   * fingerprint). Returns whether the record had `from` (false: completed already by another attempt).
   */
  async completeUnsentCancellation(q: Queryable, transactionId: string, from: string, to: string): Promise<boolean> {
    const r = await q.query(
      `UPDATE fiscal_records SET body = $3 WHERE transaction_id = $1 AND kind = 'cancellation' AND body = $2`,
      [transactionId, from, to],
    );
    return r.rowCount === 1;
  },
};
