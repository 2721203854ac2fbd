import type { Queryable } from '../db.ts';

export interface FiscalRecordRow {
  id: string;
  transaction_id: string;
  account_id: string;
  system: string;
  kind: 'record' | 'cancellation';
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

export interface ChainHead {
  chain_key: string;
  seq: number;
  last_fingerprint: string | null;
  last_fiscal_id: string | null;
  last_issued_at: Date | null;
  last_link: Record<string, string> | null;
}

export const fiscalRecordsRepo = {
  /**
   * Locks the head of a chain (creating it at seq 0 the first time) until the end of the
   * database transaction: appends to one chain are serialized, so it never forks.
   *
   * In the same round trip it finds which of the batch's idempotency keys a stored
   * transaction holds already (ids in `existing`). That lookup reads the statement's
   * snapshot, taken before the lock was granted: a key committed by another node while we
   * waited is not seen here, and the unique index refuses our insert instead (the batch is
   * then re-run item by item, and the key found).
   */
  async lockChainHead(
    q: Queryable, chainKey: string, now: Date, keys: readonly { accountId: string; environment: string; key: string }[] = [],
  ): Promise<ChainHead & { existing: string[] }> {
    const res = await q.query<ChainHead & { existing: string[] }>(
      `WITH head AS (
         INSERT INTO chain_heads (chain_key, seq, updated_at) VALUES ($1, 0, $2)
         ON CONFLICT (chain_key) DO UPDATE SET chain_key = EXCLUDED.chain_key
         RETURNING chain_key, seq, last_fingerprint, last_fiscal_id, last_issued_at, last_link)
       SELECT head.*, ARRAY(
         SELECT t.id FROM unnest($3::uuid[], $4::text[], $5::text[]) AS k(account_id, environment, key)
         JOIN transactions t ON t.account_id = k.account_id AND t.environment = k.environment AND t.idempotency_key = k.key
       )::text[] AS existing
       FROM head`,
      [chainKey, now, keys.map((k) => k.accountId), keys.map((k) => k.environment), keys.map((k) => k.key)],
    );
    const head = res.rows[0]!;
    return { ...head, seq: Number(head.seq), existing: head.existing ?? [] };
  },

  /**
   * Takes `count` consecutive numbers of a series in one statement and returns the first
   * (a batch of appends numbers first, first + 1, …). Locked until the end of the transaction.
   */
  async takeNumbers(q: Queryable, numberingKey: string, count: number, now: Date): Promise<number> {
    const res = await q.query<{ last_number: string | number }>(
      `INSERT INTO number_series (numbering_key, last_number, updated_at) VALUES ($1, $3, $2)
       ON CONFLICT (numbering_key) DO UPDATE SET last_number = number_series.last_number + $3, updated_at = $2
       RETURNING last_number`,
      [numberingKey, now, count],
    );
    return Number(res.rows[0]!.last_number) - count + 1;
  },

  async getForTransaction(q: Queryable, transactionId: string): Promise<FiscalRecordRow | undefined> {
    const r = (await q.query<FiscalRecordRow>('SELECT * FROM fiscal_records WHERE transaction_id = $1', [transactionId])).rows[0];
    return r ? { ...r, seq: Number(r.seq) } : r;
  },
};
