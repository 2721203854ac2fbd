/**
 * France NF525: what the closure run and the inspectors' lists read (the French plug-in's
 * closures folder). Closures and JET entries are fiscal records of their own chains (kinds
 * `closure`, `journal`); a register's records are those of its record chain, whose
 * environment is their transaction's.
 */
import type { Queryable } from '../db.ts';

export interface Nf525RecordRow {
  seq: number;
  created_at: Date;
  body: string;
}

export interface ChainEntryRow {
  id: string;
  seq: number;
  body: string;
  created_at: Date;
}

export const nf525Repo = {
  /** The chain head's last link (linkData) and seq; undefined for a chain never written. */
  async head(q: Queryable, chainKey: string): Promise<{ seq: number; fingerprint: string | null; link: Record<string, string> | null } | undefined> {
    const r = (await q.query<{ seq: string | number; last_fingerprint: string | null; last_link: Record<string, string> | null }>(
      'SELECT seq, last_fingerprint, last_link FROM chain_heads WHERE chain_key = $1', [chainKey])).rows[0];
    return r ? { seq: Number(r.seq), fingerprint: r.last_fingerprint, link: r.last_link } : undefined;
  },

  /**
   * The register's first record of `environment` after `afterSeq` in chain order, issued at or
   * after `from` when given: where the next daily closure starts (`from` null), or the first
   * record it stops before (`from`: the end of its day). Placeholders (before NF525 records)
   * are not closed.
   */
  async nextRecord(q: Queryable, s: { chainKey: string; environment: string; afterSeq: number; from: Date | null }): Promise<{ seq: number; created_at: Date } | undefined> {
    const r = (await q.query<{ seq: string | number; created_at: Date }>(
      `SELECT f.seq, f.created_at FROM fiscal_records f JOIN transactions t ON t.id = f.transaction_id
       WHERE f.chain_key = $1 AND f.seq > $2 AND t.environment = $3 AND f.kind IN ('record', 'cancellation') AND NOT f.placeholder
         AND ($4::timestamptz IS NULL OR f.created_at >= $4)
       ORDER BY f.seq LIMIT 1`,
      [s.chainKey, s.afterSeq, s.environment, s.from])).rows[0];
    return r ? { seq: Number(r.seq), created_at: new Date(r.created_at) } : undefined;
  },

  /**
   * The register's records of `environment` with seq after `afterSeq` and before `beforeSeq`
   * (null: no bound), whatever their timestamp, in chain order: what a daily closure covers.
   */
  async records(q: Queryable, s: { chainKey: string; environment: string; afterSeq: number; beforeSeq: number | null }): Promise<Nf525RecordRow[]> {
    const res = await q.query<{ seq: string | number; created_at: Date; body: string }>(
      `SELECT f.seq, f.created_at, f.body FROM fiscal_records f JOIN transactions t ON t.id = f.transaction_id
       WHERE f.chain_key = $1 AND f.seq > $2 AND t.environment = $3 AND f.kind IN ('record', 'cancellation') AND NOT f.placeholder
         AND ($4::bigint IS NULL OR f.seq < $4)
       ORDER BY f.seq`,
      [s.chainKey, s.afterSeq, s.environment, s.beforeSeq]);
    return res.rows.map((r) => ({ seq: Number(r.seq), created_at: new Date(r.created_at), body: r.body }));
  },

  /**
   * The register's records of `environment` with seq in [fromSeq, toSeq] stamped before
   * `before`, in chain order: those a daily closure covers though their own day is earlier
   * (late records, journaled in the JET).
   */
  async lateRecords(q: Queryable, s: { chainKey: string; environment: string; fromSeq: number; toSeq: number; before: Date }): Promise<Array<{ seq: number; transaction_id: string; created_at: Date; body: string }>> {
    const res = await q.query<{ seq: string | number; transaction_id: string; created_at: Date; body: string }>(
      `SELECT f.seq, f.transaction_id, f.created_at, f.body FROM fiscal_records f JOIN transactions t ON t.id = f.transaction_id
       WHERE f.chain_key = $1 AND f.seq >= $2 AND f.seq <= $3 AND t.environment = $4 AND f.kind IN ('record', 'cancellation') AND NOT f.placeholder
         AND f.created_at < $5
       ORDER BY f.seq`,
      [s.chainKey, s.fromSeq, s.toSeq, s.environment, s.before]);
    return res.rows.map((r) => ({ seq: Number(r.seq), transaction_id: r.transaction_id, created_at: new Date(r.created_at), body: r.body }));
  },

  /** A chain's entries written at or after `since`, in chain order. */
  async entriesSince(q: Queryable, chainKey: string, since: Date): Promise<ChainEntryRow[]> {
    const res = await q.query<{ id: string; seq: string | number; body: string; created_at: Date }>(
      'SELECT id, seq, body, created_at FROM fiscal_records WHERE chain_key = $1 AND created_at >= $2 ORDER BY seq', [chainKey, since]);
    return res.rows.map((r) => ({ id: r.id, seq: Number(r.seq), body: r.body, created_at: new Date(r.created_at) }));
  },

  /** A chain's entries after `afterSeq`, in chain order (at most `limit`). */
  async entriesAfter(q: Queryable, chainKey: string, afterSeq: number, limit: number): Promise<ChainEntryRow[]> {
    const res = await q.query<{ id: string; seq: string | number; body: string; created_at: Date }>(
      'SELECT id, seq, body, created_at FROM fiscal_records WHERE chain_key = $1 AND seq > $2 ORDER BY seq LIMIT $3', [chainKey, afterSeq, limit]);
    return res.rows.map((r) => ({ id: r.id, seq: Number(r.seq), body: r.body, created_at: new Date(r.created_at) }));
  },

  /** A page of a chain's entries, newest first, and how many it has. */
  async page(q: Queryable, chainKey: string, limit: number, offset: number): Promise<{ rows: ChainEntryRow[]; total: number }> {
    const total = Number((await q.query<{ n: string | number }>('SELECT count(*) AS n FROM fiscal_records WHERE chain_key = $1', [chainKey])).rows[0]?.n ?? 0);
    const res = await q.query<{ id: string; seq: string | number; body: string; created_at: Date }>(
      'SELECT id, seq, body, created_at FROM fiscal_records WHERE chain_key = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3', [chainKey, limit, offset]);
    return { rows: res.rows.map((r) => ({ id: r.id, seq: Number(r.seq), body: r.body, created_at: new Date(r.created_at) })), total };
  },

  /**
   * A chain's entries with seq in [fromSeq, toSeq], in chain order, with the environment of
   * their transaction (null for entries without one: closures, JET): what an archive holds.
   */
  async range(q: Queryable, chainKey: string, fromSeq: number, toSeq: number): Promise<Array<ChainEntryRow & { environment: string | null }>> {
    const res = await q.query<{ id: string; seq: string | number; body: string; created_at: Date; environment: string | null }>(
      `SELECT f.id, f.seq, f.body, f.created_at, t.environment FROM fiscal_records f LEFT JOIN transactions t ON t.id = f.transaction_id
       WHERE f.chain_key = $1 AND f.seq >= $2 AND f.seq <= $3 ORDER BY f.seq`, [chainKey, fromSeq, toSeq]);
    return res.rows.map((r) => ({ id: r.id, seq: Number(r.seq), body: r.body, created_at: new Date(r.created_at), environment: r.environment }));
  },

  /** A chain's entry at `seq`, if any. */
  async at(q: Queryable, chainKey: string, seq: number): Promise<ChainEntryRow | undefined> {
    const r = (await q.query<{ id: string; seq: string | number; body: string; created_at: Date }>(
      'SELECT id, seq, body, created_at FROM fiscal_records WHERE chain_key = $1 AND seq = $2', [chainKey, seq])).rows[0];
    return r ? { id: r.id, seq: Number(r.seq), body: r.body, created_at: new Date(r.created_at) } : undefined;
  },

  /**
   * The JET entries of one event (France's archives: event `archive`), newest first; the
   * event name is read from the stored JSON body (`"event": "<name>"`, as jet.ts writes it).
   */
  async events(q: Queryable, chainKey: string, event: string): Promise<ChainEntryRow[]> {
    const res = await q.query<{ id: string; seq: string | number; body: string; created_at: Date }>(
      `SELECT id, seq, body, created_at FROM fiscal_records WHERE chain_key = $1 AND kind = 'journal' AND body LIKE $2 ORDER BY seq DESC`,
      [chainKey, `%"event": ${JSON.stringify(event)},%`]);
    return res.rows.map((r) => ({ id: r.id, seq: Number(r.seq), body: r.body, created_at: new Date(r.created_at) }));
  },

  /** The account's locations of the system (deleted ones too: their records still close). */
  async locationIds(q: Queryable, accountId: string, system: string): Promise<string[]> {
    const res = await q.query<{ id: string }>('SELECT id FROM locations WHERE account_id = $1 AND system = $2 ORDER BY created_at, id', [accountId, system]);
    return res.rows.map((r) => r.id);
  },

  /** Accounts and environments with records of the system issued in [from, before): where closures may be due. */
  async scopesWithRecords(q: Queryable, s: { system: string; from: Date; before: Date }): Promise<Array<{ account_id: string; environment: 'test' | 'live' }>> {
    const res = await q.query<{ account_id: string; environment: 'test' | 'live' }>(
      `SELECT DISTINCT account_id, environment FROM transactions
       WHERE system = $1 AND created_at >= $2 AND created_at < $3 ORDER BY 1, 2`,
      [s.system, s.from, s.before]);
    return res.rows;
  },
};
