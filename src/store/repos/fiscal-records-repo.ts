import type { Queryable } from '../db.ts';

export interface FiscalRecordRow {
  id: string;
  /** Null for records of no transaction (closures, journal entries: migration 0017). */
  transaction_id: string | null;
  account_id: string;
  system: string;
  kind: 'record' | 'cancellation' | 'closure' | 'journal';
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
  created_at: Date;
}

export const fiscalRecordsRepo = {
  async getForTransaction(q: Queryable, transactionId: string): Promise<FiscalRecordRow | undefined> {
    const r = (await q.query<FiscalRecordRow>('SELECT * FROM fiscal_records WHERE transaction_id = $1', [transactionId])).rows[0];
    return r ? { ...r, seq: Number(r.seq) } : r;
  },
};
