import { isUuid } from '../../core/ids.ts';
import type { RenderHint } from '../../core/render-hint.ts';
import type { TransactionStatus } from '../../core/status.ts';
import type { TransactionDraft } from '../../core/transaction.ts';
import type { Queryable } from '../db.ts';
import type { EnqueueInput } from './jobs-repo.ts';
import { jobRowsJson, jobsInsertFromJson } from './job-rows.ts';
import { deliveriesInsertFromJson, eventRowsJson, eventsSqlFromJson, webhookOf, type DeliveryRow, type EventBatch, type RenderedEvents, type WebhookRow } from './webhooks-repo.ts';
import type { FiscalRecordRow } from './fiscal-records-repo.ts';
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
}

export interface TransactionFilter {
  status?: string | undefined;
  location_id?: string | undefined;
}

/** Columns written by `update` (never taken from input). */
const UPDATABLE = new Set([
  'status', 'response_payload', 'fiscal_id', 'fiscal_id_upstream', 'error_message', 'render_hints',
  'cancelled_by_id', 'offline_until', 'submitted_at', 'completed_at',
]);
const JSON_COLUMNS = new Set(['response_payload', 'render_hints', 'request_payload', 'normalized']);

/** Every column of a TransactionRow, as the batch insert writes them. */
const TRANSACTION_COLUMN_LIST = [
  'id', 'account_id', 'location_id', 'environment', 'type', 'status', 'amount', 'currency', 'country', 'system', 'idempotency_key',
  'request_hash', 'request_payload', 'normalized', 'response_payload', 'fiscal_id', 'fiscal_id_upstream', 'error_message',
  'render_hints', 'sandbox_mode', 'cancels_id', 'cancelled_by_id', 'deadline_at', 'offline_until', 'submitted_at', 'completed_at',
  'created_at', 'updated_at',
] as const satisfies readonly (keyof TransactionRow)[];
const RECORD_COLUMN_LIST = [
  'id', 'transaction_id', 'account_id', 'system', 'kind', 'chain_key', 'seq', 'previous_fingerprint', 'fingerprint', 'fiscal_id',
  'document_number', 'qr_data', 'content_type', 'body', 'placeholder', 'created_at',
] as const satisfies readonly (keyof FiscalRecordRow)[];
// A column added to the row types must be added to the lists (else it would not be written).
type Missing<Row, List extends readonly unknown[]> = Exclude<keyof Row, List[number]>;
const allTransactionColumns: Missing<TransactionRow, typeof TRANSACTION_COLUMN_LIST> extends never ? true : never = true;
const allRecordColumns: Missing<FiscalRecordRow, typeof RECORD_COLUMN_LIST> extends never ? true : never = true;
void allTransactionColumns;
void allRecordColumns;
const TRANSACTION_COLUMNS = TRANSACTION_COLUMN_LIST.join(', ');
const RECORD_COLUMNS = RECORD_COLUMN_LIST.join(', ');

/** pg returns bigint as text: amounts are read back as numbers (they are safe integers by validation). */
const fix = (r: TransactionRow | undefined): TransactionRow | undefined => (r ? { ...r, amount: Number(r.amount) } : r);

/**
 * What a one-statement append was built on: the chain head it expects to move from, every
 * fact of it a record's build reads (seq alone would do for heads read from the database,
 * which only move forward; a head predicted from a batch that then failed may share its
 * seq with what another batch wrote instead).
 */
export interface AppendGuard {
  seq: number;
  fingerprint: string | null;
  fiscalId: string | null;
  issuedAt: Date | null;
  link: Record<string, string> | null;
}

/** SQLSTATEs a guarded append raises (migration 0015 `svc_assert`). */
export const CHAIN_HEAD_MOVED = 'SV001';
export const HAS_SUBSCRIBERS = 'SV002';
export const NUMBERS_MOVED = 'SV003';

/** A submission attempt begun: the transaction (now `processing`), its record and its location. */
export interface StartedSubmission {
  t: TransactionRow;
  record: SubmissionRecord;
  location: LocationRow;
}

/** Where a batch leaves its chain head. */
export interface ChainHeadMove {
  chainKey: string;
  seq: number;
  fingerprint: string | null;
  fiscalId: string | null;
  issuedAt: Date;
  link: Record<string, string> | null;
}

/** One chain's batch for `appendGuarded`. */
export interface GuardedAppend {
  items: readonly { t: TransactionRow; r: FiscalRecordRow }[];
  head: ChainHeadMove;
  guard: AppendGuard;
  events?: EventBatch | undefined;
  jobs?: readonly EnqueueInput[] | undefined;
  /** Numbering series the batch numbered its invoices from, each moved from `from` to `to`. */
  numbers?: readonly { key: string; from: number; to: number }[] | undefined;
  /**
   * With events: the subscriptions the batch's deliveries were planned for (id and the
   * event names each asked for); the statement checks they are exactly the ones that want
   * the events now.
   */
  subscribers?: readonly Pick<WebhookRow, 'id' | 'events'>[] | undefined;
  /** The webhook deliveries of the events (their jobs are among `jobs`). */
  deliveries?: readonly DeliveryRow[] | undefined;
}

/**
 * A batch's rows as its statement carries them: JSON text, one array per table, rendered
 * as soon as the batch is built (`renderAppend`: for the one-statement path, while the
 * statement before it on the chain still runs) and joined as they are when several batches
 * share a statement. Rows travel as JSON, one parameter per table, read back against the
 * table's own row type (json_populate_recordset): the statement's text does not vary with
 * the batch size (prepared once per connection), and the driver encodes a few strings
 * instead of some forty values per item. json columns keep the text JSON.stringify wrote.
 */
interface RenderedRows {
  tx: string;
  rec: string;
  jobs: { json: string; ids: string[] } | null;
  events: RenderedEvents | null;
  deliveries: string | null;
}

/** A `GuardedAppend` rendered (`renderAppend`), what `appendGuarded` takes. */
export interface RenderedAppend extends RenderedRows {
  chainKey: string;
  /** Its row of the heads' jsonb_to_recordset: where the head moves, and from where (the guard). */
  head: Record<string, unknown>;
  numbers: readonly { key: string; from: number; to: number; at: Date }[];
  subscribers: readonly Pick<WebhookRow, 'id' | 'events'>[];
}

function renderRows(part: Pick<GuardedAppend, 'items' | 'head' | 'events' | 'jobs' | 'deliveries'>): RenderedRows {
  const jobs = part.jobs && part.jobs.length > 0 ? jobRowsJson(part.jobs, part.head.issuedAt) : null;
  return {
    tx: JSON.stringify(part.items.map(({ t }) => t)),
    rec: JSON.stringify(part.items.map(({ r }) => r)),
    jobs,
    events: part.events && part.events.rows.length > 0 ? eventRowsJson(part.events) : null,
    deliveries: part.deliveries && part.deliveries.length > 0 ? JSON.stringify(part.deliveries) : null,
  };
}

/** One chain's batch as `appendGuarded` takes it (several such go in one statement). */
export function renderAppend(part: GuardedAppend): RenderedAppend {
  const { head, guard } = part;
  const iso = (d: Date | null) => (d === null ? null : d.toISOString());
  return {
    ...renderRows(part),
    chainKey: head.chainKey,
    head: {
      chain_key: head.chainKey, seq: head.seq, fingerprint: head.fingerprint, fiscal_id: head.fiscalId, issued_at: iso(head.issuedAt), link: head.link,
      g_seq: guard.seq, g_fingerprint: guard.fingerprint, g_fiscal_id: guard.fiscalId, g_issued_at: iso(guard.issuedAt), g_link: guard.link,
    },
    numbers: (part.numbers ?? []).map((n) => ({ ...n, at: head.issuedAt })),
    subscribers: part.subscribers ?? [],
  };
}

/** JSON arrays (each `[…]`, none empty) as one. */
function joinArrays(arrays: readonly string[]): string {
  return arrays.length === 1 ? arrays[0]! : `[${arrays.map((a) => a.slice(1, -1)).join(',')}]`;
}

/** The inserts of one or more rendered batches, as WITH parts of one statement. */
function batchWrites(
  param: (v: unknown) => string,
  parts: readonly RenderedRows[],
): { writes: string[]; ev: { insert: string; match: string } | null; jobIds: string[][] } {
  const writes = [
    `tx AS (INSERT INTO transactions (${TRANSACTION_COLUMNS}) SELECT ${TRANSACTION_COLUMNS} FROM json_populate_recordset(NULL::transactions, ${param(joinArrays(parts.map((p) => p.tx)))}::json))`,
    `rec AS (INSERT INTO fiscal_records (${RECORD_COLUMNS}) SELECT ${RECORD_COLUMNS} FROM json_populate_recordset(NULL::fiscal_records, ${param(joinArrays(parts.map((p) => p.rec)))}::json))`,
  ];
  const jobs = parts.flatMap((p) => (p.jobs ? [p.jobs.json] : []));
  if (jobs.length > 0) writes.push(`jobs AS (${jobsInsertFromJson(param(joinArrays(jobs)))})`);
  const events = parts.flatMap((p) => (p.events ? [p.events] : []));
  const ev = events.length > 0
    ? eventsSqlFromJson({
        json: joinArrays(events.map((e) => e.json)),
        accounts: [...new Set(events.flatMap((e) => e.accounts))],
        types: [...new Set(events.flatMap((e) => e.types))],
      }, param)
    : null;
  if (ev) writes.push(`ev AS (${ev.insert})`);
  const deliveries = parts.flatMap((p) => (p.deliveries ? [p.deliveries] : []));
  if (deliveries.length > 0) {
    writes.push(`dl AS (${deliveriesInsertFromJson(param(joinArrays(deliveries)))})`);
  }
  return { writes, ev, jobIds: parts.map((p) => p.jobs?.ids ?? []) };
}

export const transactionsRepo = {
  /**
   * A batch of appends to one chain (services/transactions.ts, group commit, the locking
   * path: inside the transaction that locked the chain head) in one statement: the
   * transactions, their fiscal records, their submit jobs and completion events, and the
   * chain head moved to the last of them. Answers the subscriptions that want the events
   * (the publisher writes their deliveries in the same transaction).
   */
  async insertManyWithRecords(
    q: Queryable,
    items: readonly { t: TransactionRow; r: FiscalRecordRow }[],
    head: ChainHeadMove,
    extra: Pick<GuardedAppend, 'events' | 'jobs'> = {},
  ): Promise<{ matched: WebhookRow[]; jobIds: string[] }> {
    const values: unknown[] = [];
    const param = (v: unknown) => `$${values.push(v)}`;
    const heads = `UPDATE chain_heads SET seq = ${param(head.seq)}, last_fingerprint = ${param(head.fingerprint)}, last_fiscal_id = ${param(head.fiscalId)},
         last_issued_at = ${param(head.issuedAt)}, updated_at = ${param(head.issuedAt)}, last_link = ${param(head.link === null ? null : JSON.stringify(head.link))}::jsonb
       WHERE chain_key = ${param(head.chainKey)}`;
    const { writes, ev, jobIds } = batchWrites(param, [renderRows({ ...extra, items, head })]);
    // The batch's events (records final at creation) go in the same statement, and it
    // answers with the subscriptions that want them (the publisher writes their deliveries).
    const res = await q.query<WebhookRow>(`WITH head AS (${heads}),\n       ${writes.join(',\n       ')}\n       ${ev ? ev.match : 'SELECT NULL LIMIT 0'}`, values);
    return { matched: res.rows.map(webhookOf), jobIds: jobIds[0]! };
  },

  /**
   * `insertManyWithRecords` for batches built on a chain head remembered from an earlier
   * commit, not read under a lock (the one-statement append): the statement stands alone
   * (autocommitted, no transaction around it), for one or more chains. Every head moves
   * only from its `guard`, every series from its `from`, and the subscriptions that want
   * the events are exactly the union of those the deliveries were planned for
   * (`subscribers`); else the statement fails as a whole, nothing written, with
   * `CHAIN_HEAD_MOVED` (another node appended), `NUMBERS_MOVED` or `HAS_SUBSCRIBERS`, and
   * the caller tells the parts apart by running them again one by one, then takes the
   * transactional path, which finds what moved. The heads are updated, and so locked,
   * before anything is inserted (the main query reads them; the other WITH parts run after
   * it), so two writers of one chain queue on the head row instead of deadlocking on the
   * records' unique index. Why several chains at once: with appends spread over many
   * locations, each chain's batch held about one record, and a statement of one record
   * paid its planning, its foreign-key trigger set-up and its commit alone (0.93 ms of
   * PostgreSQL CPU a record at 50 locations, against 0.19 for one busy chain, measured).
   * Heads first, then series (the locking path's order). Returns each part's job ids.
   */
  async appendGuarded(q: Pick<Queryable, 'query'>, parts: readonly RenderedAppend[]): Promise<{ jobIds: string[] }[]> {
    const values: unknown[] = [];
    const param = (v: unknown) => `$${values.push(v)}`;
    const heads = `UPDATE chain_heads h SET seq = v.seq, last_fingerprint = v.fingerprint, last_fiscal_id = v.fiscal_id,
         last_issued_at = v.issued_at, updated_at = v.issued_at, last_link = v.link
       FROM jsonb_to_recordset(${param(JSON.stringify(parts.map((p) => p.head)))}::jsonb) AS v(chain_key text, seq bigint, fingerprint text, fiscal_id text,
         issued_at timestamptz, link jsonb, g_seq bigint, g_fingerprint text, g_fiscal_id text, g_issued_at timestamptz, g_link jsonb)
       WHERE h.chain_key = v.chain_key AND h.seq = v.g_seq AND h.last_fingerprint IS NOT DISTINCT FROM v.g_fingerprint
         AND h.last_fiscal_id IS NOT DISTINCT FROM v.g_fiscal_id AND h.last_issued_at IS NOT DISTINCT FROM v.g_issued_at
         AND h.last_link IS NOT DISTINCT FROM v.g_link
       RETURNING 1`;
    const { writes, ev, jobIds } = batchWrites(param, parts);
    const numbers = parts.flatMap((p) => p.numbers);
    if (numbers.length > 0) {
      writes.push(`num AS (
         UPDATE number_series s SET last_number = v.next, updated_at = v.at
         FROM unnest(${param(numbers.map((n) => n.key))}::text[], ${param(numbers.map((n) => n.from))}::bigint[], ${param(numbers.map((n) => n.to))}::bigint[],
                     ${param(numbers.map((n) => n.at))}::timestamptz[]) AS v(key, expected, next, at)
         WHERE s.numbering_key = v.key AND s.last_number = v.expected
         RETURNING 1)`);
    }
    // The planned subscribers, each once (two chains of one account plan the same ones).
    const subscribers = new Map<string, Pick<WebhookRow, 'id' | 'events'>>();
    for (const p of parts) for (const w of p.subscribers) subscribers.set(w.id, { id: w.id, events: w.events });
    // The heads first (the main query reads them before the other WITH parts run), then
    // the series: the order the locking path takes them in.
    const main = `SELECT svc_assert((SELECT count(*) FROM head) = ${parts.length}, '${CHAIN_HEAD_MOVED}', 'chain head moved')${numbers.length > 0
      ? ` AND svc_assert((SELECT count(*) FROM num) = ${numbers.length}, '${NUMBERS_MOVED}', 'number series moved')`
      : ''}${ev
      // The subscriptions that want the events are exactly those the deliveries were planned
      // for (none, mostly): same ids, each asking for the same names.
      ? ` AND svc_assert(NOT EXISTS (
           SELECT 1 FROM (${ev.match}) m
           FULL JOIN jsonb_to_recordset(${param(JSON.stringify([...subscribers.values()]))}::jsonb) AS k(id uuid, events jsonb)
             ON k.id = m.id AND k.events = m.events
           WHERE m.id IS NULL OR k.id IS NULL), '${HAS_SUBSCRIBERS}', 'webhook subscriptions changed')`
      : ''} AS ok`;
    // Data-modifying WITH parts run whether or not the final query reads them.
    await q.query(`WITH head AS (${heads}),\n       ${writes.join(',\n       ')}\n       ${main}`, values);
    return jobIds.map((ids) => ({ jobIds: ids }));
  },

  async get(q: Queryable, accountId: string, id: string): Promise<TransactionRow | undefined> {
    if (!isUuid(id)) return undefined;
    return fix((await q.query<TransactionRow>('SELECT * FROM transactions WHERE account_id = $1 AND id = $2', [accountId, id])).rows[0]);
  },

  /** By id alone: for workers, which act for every account. */
  async getById(q: Queryable, id: string, opts: { forUpdate?: boolean } = {}): Promise<TransactionRow | undefined> {
    return fix((await q.query<TransactionRow>(`SELECT * FROM transactions WHERE id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`, [id])).rows[0]);
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
   * open transaction to `processing` (one in `offline_pending` keeps its status: its
   * receipt already says "transmitted later") and returns it with its fiscal record and
   * its location. Settled transactions are left out.
   */
  async beginSubmissions(q: Queryable, ids: readonly string[], now: Date): Promise<Map<string, StartedSubmission>> {
    const out = new Map<string, StartedSubmission>();
    if (ids.length === 0) return out;
    const res = await q.query<TransactionRow & { record: SubmissionRecord; location: LocationRow }>(
      `WITH upd AS (
         UPDATE transactions
         SET status = CASE WHEN status = 'offline_pending' THEN status ELSE 'processing' END,
             submitted_at = COALESCE(submitted_at, $2), updated_at = $2
         WHERE id = ANY($1::uuid[]) AND status IN ('pending', 'processing', 'failed', 'offline_pending')
         RETURNING *)
       SELECT upd.*,
              jsonb_build_object('kind', r.kind, 'body', r.body, 'content_type', r.content_type, 'fiscal_id', r.fiscal_id) AS record,
              to_jsonb(l) AS location
       FROM upd JOIN fiscal_records r ON r.transaction_id = upd.id JOIN locations l ON l.id = upd.location_id`,
      [ids, now],
    );
    const parse = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
    for (const { record, location, ...t } of res.rows) {
      out.set(t.id, { t: fix(t as TransactionRow)!, record: parse<SubmissionRecord>(record), location: parse<LocationRow>(location) });
    }
    return out;
  },

  async findCancellation(q: Queryable, originalId: string): Promise<TransactionRow | undefined> {
    return fix((await q.query<TransactionRow>('SELECT * FROM transactions WHERE cancels_id = $1', [originalId])).rows[0]);
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
}

export interface BatchClaimOptions {
  accountId: string;
  environment: 'test' | 'live';
  system: string;
  now: Date;
  /** A `pending_lroe` claim older than this was left by a run that died: it is taken again. */
  staleBefore: Date;
  /** Ids already handled in this run (records sent back to wait are not taken twice). */
  exclude: readonly string[];
  limit: number;
}

/**
 * Batch processors (DECISIONS "Statuses": `pending_batch` waits for the next batch,
 * `pending_lroe` is inside one that was sent). Claiming is a status move in one
 * statement: rows are locked FOR UPDATE SKIP LOCKED and moved to `pending_lroe`, so
 * concurrent runs (several nodes, a manual call during the daily run) never take the same
 * record; once committed, the others no longer see it waiting.
 */
export const batchTransactionsRepo = {
  /** Accounts and environments with records of `system` waiting (or stranded by a dead run). */
  async scopesWaiting(q: Queryable, system: string, staleBefore: Date): Promise<{ account_id: string; environment: 'test' | 'live' }[]> {
    return (await q.query<{ account_id: string; environment: 'test' | 'live' }>(
      `SELECT DISTINCT account_id, environment FROM transactions
       WHERE system = $1 AND (status = 'pending_batch' OR (status = 'pending_lroe' AND updated_at < $2))
       ORDER BY account_id, environment`,
      [system, staleBefore],
    )).rows;
  },

  /**
   * Claims waiting records, oldest first, moving them to `pending_lroe`. A cancellation
   * waits while its original is inside a batch in flight: an annulment must reach the
   * authority after the invoice it annuls.
   */
  async claim(q: Queryable, o: BatchClaimOptions): Promise<BatchClaim[]> {
    const res = await q.query<TransactionRow & { record: SubmissionRecord; location: LocationRow }>(
      `WITH picked AS (
         SELECT t.id FROM transactions t
         LEFT JOIN transactions o ON o.id = t.cancels_id
         WHERE t.account_id = $1 AND t.environment = $2 AND t.system = $3
           AND (t.status = 'pending_batch' OR (t.status = 'pending_lroe' AND t.updated_at < $5))
           AND NOT (t.id = ANY($6::uuid[]))
           AND (o.id IS NULL OR o.status <> 'pending_lroe')
         ORDER BY t.created_at, t.id
         LIMIT $7
         FOR UPDATE OF t SKIP LOCKED),
       upd AS (
         UPDATE transactions t SET status = 'pending_lroe', submitted_at = COALESCE(t.submitted_at, $4), updated_at = $4
         FROM picked WHERE t.id = picked.id
         RETURNING t.*)
       SELECT upd.*,
              jsonb_build_object('kind', r.kind, 'body', r.body, 'content_type', r.content_type, 'fiscal_id', r.fiscal_id) AS record,
              to_jsonb(l) AS location
       FROM upd JOIN fiscal_records r ON r.transaction_id = upd.id JOIN locations l ON l.id = upd.location_id
       ORDER BY upd.created_at, upd.id`,
      [o.accountId, o.environment, o.system, o.now, o.staleBefore, o.exclude, o.limit],
    );
    const parse = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
    return res.rows.map(({ record, location, ...t }) => ({
      t: fix(t as TransactionRow)!,
      record: parse<SubmissionRecord>(record),
      location: parse<LocationRow>(location),
    }));
  },

  /** Current statuses of some transactions (a batch checks the originals of its annulments). */
  async statuses(q: Queryable, ids: readonly string[]): Promise<Map<string, TransactionStatus>> {
    if (ids.length === 0) return new Map();
    const res = await q.query<{ id: string; status: TransactionStatus }>('SELECT id, status FROM transactions WHERE id = ANY($1::uuid[])', [ids]);
    return new Map(res.rows.map((r) => [r.id, r.status]));
  },

  /** Sends claimed records back to wait for the next run; returns how many were still claimed. */
  async release(q: Queryable, ids: readonly string[], now: Date): Promise<number> {
    if (ids.length === 0) return 0;
    const res = await q.query(
      `UPDATE transactions SET status = 'pending_batch', updated_at = $2 WHERE id = ANY($1::uuid[]) AND status = 'pending_lroe'`,
      [ids, now],
    );
    return res.rowCount;
  },
};
