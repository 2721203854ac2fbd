import { isUuid } from '../../core/ids.ts';
import type { RenderHint } from '../../core/render-hint.ts';
import type { TransactionStatus } from '../../core/status.ts';
import type { TransactionDraft } from '../../core/transaction.ts';
import type { IssuerAsIssued } from '../../countries/types.ts';
import type { Queryable } from '../db.ts';
import { issuerAsIssued } from './fiscal-records-repo.ts';
import type { LocationRow } from './locations-repo.ts';

export type TransactionKind = 'sale' | 'refund' | 'void' | 'cancellation';

export interface TransactionRow {
  id: string;
  account_id: string;
  location_id: string;
  environment: 'test' | 'live';
  type: TransactionKind;
  status: TransactionStatus;
  amount: number;
  currency: string;
  country: string;
  system: string;
  idempotency_key: string;
  request_hash: string;
  request_payload: unknown;
  normalized: TransactionDraft;
  response_payload: Record<string, unknown>;
  fiscal_id: string | null;
  fiscal_id_upstream: string | null;
  error_message: string | null;
  render_hints: RenderHint[];
  sandbox_mode: 'stub' | 'authority' | null;
  cancels_id: string | null;
  cancelled_by_id: string | null;
  deadline_at: Date | null;
  offline_until: Date | null;
  submitted_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** What a submission needs of the fiscal record. */
export interface SubmissionRecord {
  kind: 'record' | 'cancellation';
  body: string;
  content_type: string;
  fiscal_id: string | null;
  /** The issuer as the record was issued (`fiscal_records.issuer`, migration 0059); null for records stored before it was kept. */
  issuer?: unknown;
  /**
   * A cancellation's: the issuer its original's record kept (that record's `issuer`); null
   * when the original's record kept none, and for every other record.
   */
  cancelled_issuer?: unknown;
}

export interface TransactionFilter {
  status?: string | undefined;
  location_id?: string | undefined;
  /** Created at or after (the portal's date range). */
  created_from?: Date | undefined;
  /** Created strictly before. */
  created_before?: Date | undefined;
}

/** Columns written by `update` (never taken from input). */
const UPDATABLE = new Set([
  'status', 'response_payload', 'fiscal_id', 'fiscal_id_upstream', 'error_message', 'render_hints',
  'cancelled_by_id', 'offline_until', 'submitted_at', 'completed_at',
]);
const JSON_COLUMNS = new Set(['response_payload', 'render_hints', 'request_payload', 'normalized']);

/** pg returns bigint as text: amounts are read back as numbers (they are safe integers by validation). */
const fix = (r: TransactionRow | undefined): TransactionRow | undefined => (r ? { ...r, amount: Number(r.amount) } : r);

/** A submission attempt begun: the transaction (now `processing`), its record and its location. */
export interface StartedSubmission {
  t: TransactionRow;
  record: SubmissionRecord;
  location: LocationRow;
}

export const transactionsRepo = {
  /** Transactions of a scope created in (from, to], and how many of them failed (the engine's telemetry). */
  async countCreatedBetween(q: Queryable, scope: { accountId: string; environment: string }, from: Date, to: Date): Promise<{ total: number; failed: number }> {
    const r = await q.query<{ total: string; failed: string }>(
      `SELECT count(*)::text AS total, count(*) FILTER (WHERE status LIKE 'failed%')::text AS failed
         FROM transactions WHERE account_id = $1 AND environment = $2 AND created_at > $3 AND created_at <= $4`,
      [scope.accountId, scope.environment, from, to],
    );
    return { total: Number(r.rows[0]?.total ?? 0), failed: Number(r.rows[0]?.failed ?? 0) };
  },

  /** A scope's transactions in these statuses, oldest first, with what their deadline is read from (the engine's queue). */
  async listInStatuses(q: Queryable, scope: { accountId: string; environment: string }, statuses: readonly string[]) {
    return (await q.query<{ id: string; country: string; system: string; created_at: Date; deadline_at: Date | null }>(
      `SELECT id, country, system, created_at, deadline_at FROM transactions
        WHERE account_id = $1 AND environment = $2 AND status = ANY($3::text[])
        ORDER BY created_at`,
      [scope.accountId, scope.environment, statuses],
    )).rows;
  },

  async get(q: Queryable, accountId: string, id: string): Promise<TransactionRow | undefined> {
    if (!isUuid(id)) return undefined;
    return fix((await q.query<TransactionRow>('SELECT * FROM transactions WHERE account_id = $1 AND id = $2', [accountId, id])).rows[0]);
  },

  /** By id alone: for workers, which act for every account. */
  async getById(q: Queryable, id: string, opts: { forUpdate?: boolean } = {}): Promise<TransactionRow | undefined> {
    return fix((await q.query<TransactionRow>(`SELECT * FROM transactions WHERE id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`, [id])).rows[0]);
  },

  /**
   * A transaction with its latest job of these kinds (its status and when it runs next), in
   * one snapshot: what a cancellation waiting for its original reads (jobs/tasks/submit.ts).
   * A job and the status its attempt set commit together, so a job no longer `processing`
   * means the status is that attempt's outcome.
   */
  async getWithLatestJob(q: Queryable, id: string, kinds: readonly string[]): Promise<{ t: TransactionRow; job: { status: string; run_at: Date } | null } | undefined> {
    const res = await q.query<TransactionRow & { latest_job_status: string | null; latest_job_run_at: Date | null }>(
      `SELECT t.*, j.status AS latest_job_status, j.run_at AS latest_job_run_at
         FROM transactions t
         LEFT JOIN LATERAL (SELECT status, run_at FROM jobs WHERE transaction_id = t.id AND kind = ANY($2::text[])
                             ORDER BY created_at DESC, id DESC LIMIT 1) j ON true
        WHERE t.id = $1`,
      [id, [...kinds]],
    );
    const row = res.rows[0];
    if (!row) return undefined;
    const { latest_job_status: status, latest_job_run_at: runAt, ...t } = row;
    return { t: fix(t as TransactionRow)!, job: status === null ? null : { status, run_at: new Date(runAt!) } };
  },

  async findByIdempotencyKey(q: Queryable, accountId: string, environment: string, key: string): Promise<TransactionRow | undefined> {
    return fix((await q.query<TransactionRow>(
      'SELECT * FROM transactions WHERE account_id = $1 AND environment = $2 AND idempotency_key = $3',
      [accountId, environment, key],
    )).rows[0]);
  },

  /** Several by id (the earlier holders of a batch's idempotency keys). */
  async getByIds(q: Queryable, ids: readonly string[]): Promise<TransactionRow[]> {
    if (ids.length === 0) return [];
    const res = await q.query<TransactionRow>('SELECT * FROM transactions WHERE id = ANY($1::uuid[])', [ids]);
    return res.rows.map((r) => fix(r)!);
  },

  /**
   * The start of submission attempts, in one statement (by transaction id): moves each
   * transaction in an `open` status to `processing` (one in a `kept` status keeps it:
   * Greece's offline receipt already says "transmitted later") and returns it with its fiscal record and
   * its location. Settled transactions are left out.
   */
  async beginSubmissions(q: Queryable, ids: readonly string[], now: Date, open: readonly string[], kept: readonly string[]): Promise<Map<string, StartedSubmission>> {
    const out = new Map<string, StartedSubmission>();
    if (ids.length === 0) return out;
    const res = await q.query<TransactionRow & { record: SubmissionRecord; location: LocationRow }>(
      `WITH upd AS (
         UPDATE transactions
         SET status = CASE WHEN status = ANY($4::text[]) THEN status ELSE 'processing' END,
             submitted_at = COALESCE(submitted_at, $2), updated_at = $2
         WHERE id = ANY($1::uuid[]) AND status = ANY($3::text[])
         RETURNING *)
       SELECT upd.*,
              jsonb_build_object('kind', r.kind, 'body', r.body, 'content_type', r.content_type, 'fiscal_id', r.fiscal_id, 'issuer', r.issuer,
                                 'cancelled_issuer', o.issuer) AS record,
              to_jsonb(l) AS location
       FROM upd JOIN fiscal_records r ON r.transaction_id = upd.id JOIN locations l ON l.id = upd.location_id
       LEFT JOIN fiscal_records o ON r.kind = 'cancellation' AND o.transaction_id = upd.cancels_id`,
      [ids, now, open, kept],
    );
    const parse = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
    for (const { record, location, ...t } of res.rows) {
      out.set(t.id, { t: fix(t as TransactionRow)!, record: parse<SubmissionRecord>(record), location: parse<LocationRow>(location) });
    }
    return out;
  },

  /**
   * The transaction an authority's later message is about (services/inbound.ts), among the
   * records that were sent (`submitted_at`: a submission was attempted), preferring those
   * of the message's world (`prefer`): `authority` for a message from the real authority
   * (live records, and test records sent to its test service), `stub` for the sandbox
   * stub's; with `transactionId`, that record only (the stub's message names the record
   * it was made for). In order: by the id the authority gave it; else by its fiscal id
   * among records in one of the `open` statuses (those the authority may still move), the
   * first sent first (the authority keeps the first file of a name and refuses later
   * ones); else, with `history`, by its fiscal id in any status, preferring one that once
   * carried the id under that name (migration 0047's index: fiscal ids of sent records).
   */
  async findByAuthorityId(
    q: Queryable, system: string, match: { upstreamId?: string | undefined; fiscalId?: string | undefined; history?: string | undefined },
    scope: { prefer: 'stub' | 'authority'; transactionId?: string | undefined; open: readonly string[] },
  ): Promise<TransactionRow | undefined> {
    const params: unknown[] = [system, scope.prefer];
    let cond = 'system = $1 AND submitted_at IS NOT NULL';
    const world = "(COALESCE(sandbox_mode, 'authority') = $2) DESC";
    if (scope.transactionId !== undefined) {
      if (!isUuid(scope.transactionId)) return undefined;
      params.push(scope.transactionId);
      cond += ` AND id = $${params.length}`;
    }
    const n = params.length;
    if (match.upstreamId) {
      const row = (await q.query<TransactionRow>(
        `SELECT * FROM transactions WHERE ${cond} AND fiscal_id_upstream = $${n + 1} ORDER BY ${world}, created_at LIMIT 1`, [...params, match.upstreamId])).rows[0];
      if (row) return fix(row);
    }
    if (!match.fiscalId) return undefined;
    const open = fix((await q.query<TransactionRow>(
      `SELECT * FROM transactions WHERE ${cond} AND fiscal_id = $${n + 1} AND status = ANY($${n + 2}::text[])
       ORDER BY ${world}, submitted_at, created_at LIMIT 1`, [...params, match.fiscalId, scope.open])).rows[0]);
    if (open || !match.history || !match.upstreamId) return open;
    // Another copy's message (InboundMessage.match.history): the record that named that copy first.
    return fix((await q.query<TransactionRow>(
      `SELECT * FROM transactions WHERE ${cond} AND fiscal_id = $${n + 1}
       ORDER BY ${world},
                (response_payload->'authority'->>($${n + 3}::text) = $${n + 2}::text
                 OR (response_payload::jsonb)->'notifications' @> jsonb_build_array(jsonb_build_object($${n + 3}::text, $${n + 2}::text))) DESC NULLS LAST,
                submitted_at, created_at
       LIMIT 1`, [...params, match.fiscalId, match.upstreamId, match.history])).rows[0]);
  },

  /** Whether the location has issued anything (a PATCH may not move it to another system then). */
  async anyAtLocation(q: Queryable, accountId: string, locationId: string): Promise<boolean> {
    const res = await q.query('SELECT 1 FROM transactions WHERE account_id = $1 AND location_id = $2 LIMIT 1', [accountId, locationId]);
    return res.rows.length > 0;
  },

  /** The latest cancellation of a transaction (earlier ones were refused: services/transactions.ts `cancel`). */
  async findCancellation(q: Queryable, originalId: string): Promise<TransactionRow | undefined> {
    return fix((await q.query<TransactionRow>('SELECT * FROM transactions WHERE cancels_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1', [originalId])).rows[0]);
  },

  /**
   * Points an original's `cancelled_by_id` at the cancellation that stands: its latest
   * cancellation in none of the `refused` statuses, else none (docs/decisions.md "The
   * cancellation that stands"). The original's row is locked first, so the choice is read
   * after any concurrent change of another of its cancellations has committed.
   */
  async relinkCancellation(q: Queryable, originalId: string, refused: readonly string[], now: Date): Promise<void> {
    await q.query('SELECT 1 FROM transactions WHERE id = $1 FOR UPDATE', [originalId]);
    await q.query(
      `UPDATE transactions o SET cancelled_by_id = s.id, updated_at = $3
         FROM (SELECT (SELECT c.id FROM transactions c
                        WHERE c.cancels_id = $1 AND NOT (c.status = ANY($2::text[]))
                        ORDER BY c.created_at DESC, c.id DESC LIMIT 1) AS id) s
        WHERE o.id = $1 AND o.cancelled_by_id IS DISTINCT FROM s.id`,
      [originalId, refused, now],
    );
  },

  /** The original's cancellations in one of `statuses` (the refused ones: how many attempts ended so). */
  async countCancellations(q: Queryable, originalId: string, statuses: readonly string[]): Promise<number> {
    return Number((await q.query<{ n: string | number }>(
      'SELECT count(*) AS n FROM transactions WHERE cancels_id = $1 AND status = ANY($2::text[])', [originalId, statuses])).rows[0]!.n);
  },

  async list(q: Queryable, accountId: string, f: TransactionFilter, limit: number, offset: number): Promise<{ rows: TransactionRow[]; total: number }> {
    const where = ['account_id = $1'];
    const params: unknown[] = [accountId];
    if (f.status) {
      params.push(f.status);
      where.push(`status = $${params.length}`);
    }
    if (f.location_id) {
      if (!isUuid(f.location_id)) return { rows: [], total: 0 };
      params.push(f.location_id);
      where.push(`location_id = $${params.length}`);
    }
    if (f.created_from) {
      params.push(f.created_from);
      where.push(`created_at >= $${params.length}`);
    }
    if (f.created_before) {
      params.push(f.created_before);
      where.push(`created_at < $${params.length}`);
    }
    const cond = where.join(' AND ');
    const [rows, count] = await Promise.all([
      q.query<TransactionRow>(
        `SELECT * FROM transactions WHERE ${cond} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, limit, offset],
      ),
      q.query<{ n: number }>(`SELECT count(*)::int AS n FROM transactions WHERE ${cond}`, params),
    ]);
    return { rows: rows.rows.map((r) => fix(r)!), total: count.rows[0]?.n ?? 0 };
  },

  /**
   * Updates the given columns; with `fromStatuses`, only while the row is in one of them
   * (a compare-and-set on the status, so concurrent transitions cannot both win).
   */
  async update(
    q: Queryable,
    id: string,
    patch: Partial<TransactionRow>,
    now: Date,
    fromStatuses?: readonly TransactionStatus[],
  ): Promise<TransactionRow | undefined> {
    const sets: string[] = [];
    const params: unknown[] = [id, now];
    for (const [col, value] of Object.entries(patch)) {
      if (value === undefined || !UPDATABLE.has(col)) continue;
      params.push(JSON_COLUMNS.has(col) ? JSON.stringify(value) : value);
      sets.push(`${col} = $${params.length}`);
    }
    let cond = 'id = $1';
    if (fromStatuses) {
      params.push(fromStatuses);
      cond += ` AND status = ANY($${params.length}::text[])`;
    }
    const res = await q.query<TransactionRow>(`UPDATE transactions SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE ${cond} RETURNING *`, params);
    return fix(res.rows[0]);
  },
};

// ---- batch submission (src/batch) -------------------------------------------------------

/** A transaction a batch processor claimed, with what sending it needs. */
export interface BatchClaim {
  t: TransactionRow;
  record: SubmissionRecord;
  location: LocationRow;
  /**
   * The issuer as the record was issued, read as the plug-ins take it (`StoredRecord.issuer`:
   * `issuerAsIssued` of `record.issuer`), so a processor reads it as the submit worker hands
   * it and imports nothing from services; undefined for records stored before it was kept.
   */
  issuer?: IssuerAsIssued | undefined;
}

export interface BatchClaimOptions {
  accountId: string;
  environment: 'test' | 'live';
  system: string;
  now: Date;
  /** The status of a record inside a batch that was sent (the system's own: `statuses.inBatch`). */
  inBatch: string;
  /** A claim older than this was left by a run that died: it is taken again. */
  staleBefore: Date;
  /** Ids already handled in this run (records sent back to wait are not taken twice). */
  exclude: readonly string[];
  limit: number;
}

/**
 * Batch processors (DECISIONS "Statuses": `pending_batch` waits for the next batch; the
 * system's in-batch status, which its plug-in declares, is inside one that was sent).
 * Claiming is a status move in one statement: rows are locked FOR UPDATE SKIP LOCKED and
 * moved to the in-batch status, so
 * concurrent runs (several nodes, a manual call during the daily run) never take the same
 * record; once committed, the others no longer see it waiting.
 */
export const batchTransactionsRepo = {
  /** Accounts and environments with records of `system` waiting (or stranded by a dead run). */
  async scopesWaiting(q: Queryable, system: string, inBatch: string, staleBefore: Date): Promise<{ account_id: string; environment: 'test' | 'live' }[]> {
    return (await q.query<{ account_id: string; environment: 'test' | 'live' }>(
      `SELECT DISTINCT account_id, environment FROM transactions
       WHERE system = $1 AND (status = 'pending_batch' OR (status = $3 AND updated_at < $2))
       ORDER BY account_id, environment`,
      [system, staleBefore, inBatch],
    )).rows;
  },

  /**
   * Claims waiting records, oldest first, moving them to the in-batch status. A cancellation
   * waits while its original is inside a batch in flight: an annulment must reach the
   * authority after the invoice it annuls.
   */
  async claim(q: Queryable, o: BatchClaimOptions): Promise<BatchClaim[]> {
    const res = await q.query<TransactionRow & { record: SubmissionRecord; location: LocationRow }>(
      `WITH picked AS (
         SELECT t.id FROM transactions t
         LEFT JOIN transactions o ON o.id = t.cancels_id
         WHERE t.account_id = $1 AND t.environment = $2 AND t.system = $3
           AND (t.status = 'pending_batch' OR (t.status = $8 AND t.updated_at < $5))
           AND NOT (t.id = ANY($6::uuid[]))
           AND (o.id IS NULL OR o.status <> $8)
         ORDER BY t.created_at, t.id
         LIMIT $7
         FOR UPDATE OF t SKIP LOCKED),
       upd AS (
         UPDATE transactions t SET status = $8, submitted_at = COALESCE(t.submitted_at, $4), updated_at = $4
         FROM picked WHERE t.id = picked.id
         RETURNING t.*)
       SELECT upd.*,
              jsonb_build_object('kind', r.kind, 'body', r.body, 'content_type', r.content_type, 'fiscal_id', r.fiscal_id, 'issuer', r.issuer) AS record,
              to_jsonb(l) AS location
       FROM upd JOIN fiscal_records r ON r.transaction_id = upd.id JOIN locations l ON l.id = upd.location_id
       ORDER BY upd.created_at, upd.id`,
      [o.accountId, o.environment, o.system, o.now, o.staleBefore, o.exclude, o.limit, o.inBatch],
    );
    const parse = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
    return res.rows.map(({ record, location, ...t }) => {
      const r = parse<SubmissionRecord>(record);
      const issuer = issuerAsIssued(r.issuer);
      return { t: fix(t as TransactionRow)!, record: r, location: parse<LocationRow>(location), ...(issuer ? { issuer } : {}) };
    });
  },

  /** Current statuses of some transactions (a batch checks the originals of its annulments). */
  async statuses(q: Queryable, ids: readonly string[]): Promise<Map<string, TransactionStatus>> {
    if (ids.length === 0) return new Map();
    const res = await q.query<{ id: string; status: TransactionStatus }>('SELECT id, status FROM transactions WHERE id = ANY($1::uuid[])', [ids]);
    return new Map(res.rows.map((r) => [r.id, r.status]));
  },

  /** Sends claimed records back to wait for the next run; returns how many were still claimed. */
  async release(q: Queryable, ids: readonly string[], inBatch: string, now: Date): Promise<number> {
    if (ids.length === 0) return 0;
    const res = await q.query(
      `UPDATE transactions SET status = 'pending_batch', updated_at = $2 WHERE id = ANY($1::uuid[]) AND status = $3`,
      [ids, now, inBatch],
    );
    return res.rowCount;
  },
};
