/**
 * The ledger's SQL (the only SQL that moves a chain): chain heads, number series, and the
 * statement that writes a batch of entries with their transactions, jobs and events.
 *
 * Rows travel as JSON, one parameter per table, read back against the table's own row
 * type (json_populate_recordset): the statement's text does not vary with the batch size
 * (prepared once per connection), and the driver encodes a few strings instead of some
 * forty values per entry. json columns keep the text JSON.stringify wrote.
 *
 * Except the large documents (`BYTE_COLUMNS`: the records' bodies, the transactions' json
 * documents): they go as one binary parameter (bytea, sent as bytes) with each value's
 * length, and the statement cuts them out in the rows' order. Inside the rows' JSON,
 * PostgreSQL 15 read each of them twice, character by character (once to check the JSON,
 * once to fill the row, unescaping each quote of a JSON body), before a json column's own
 * check: measured on the statement alone, 18 rows, the bodies 14 µs of PostgreSQL a France
 * record and 22 µs a Portugal one, the transactions' documents 2 and 12 µs, of ~0.15–0.21
 * ms of PostgreSQL CPU a create.
 */
import type { Queryable } from '../store/db.ts';
import type { EnqueueInput } from '../store/repos/jobs-repo.ts';
import { jobRowsJson, jobsInsertFromJson } from '../store/repos/job-rows.ts';
import { jsonValue } from '../store/repos/json-rows.ts';
import { eventRowsJson, eventsInsertFromJson, type EventBatch, type RenderedEvents } from '../store/repos/webhooks-repo.ts';
import type { FiscalRecordRow } from '../store/repos/fiscal-records-repo.ts';
import type { TransactionRow } from '../store/repos/transactions-repo.ts';

/** Every column of a TransactionRow, as the batch insert writes them. */
const TRANSACTION_COLUMN_LIST = [
  'id', 'account_id', 'location_id', 'environment', 'type', 'status', 'amount', 'currency', 'country', 'system', 'idempotency_key',
  'request_hash', 'request_payload', 'normalized', 'response_payload', 'fiscal_id', 'fiscal_id_upstream', 'error_message',
  'render_hints', 'sandbox_mode', 'cancels_id', 'cancelled_by_id', 'deadline_at', 'offline_until', 'submitted_at', 'completed_at',
  'created_at', 'updated_at',
] as const satisfies readonly (keyof TransactionRow)[];
const RECORD_COLUMN_LIST = [
  'id', 'transaction_id', 'account_id', 'system', 'kind', 'chain_key', 'seq', 'previous_fingerprint', 'fingerprint', 'fiscal_id',
  'document_number', 'qr_data', 'content_type', 'body', 'placeholder', 'issuer', 'created_at',
] as const satisfies readonly (keyof FiscalRecordRow)[];
// A column added to the row types must be added to the lists (else it would not be written).
type Missing<Row, List extends readonly unknown[]> = Exclude<keyof Row, List[number]>;
const allTransactionColumns: Missing<TransactionRow, typeof TRANSACTION_COLUMN_LIST> extends never ? true : never = true;
const allRecordColumns: Missing<FiscalRecordRow, typeof RECORD_COLUMN_LIST> extends never ? true : never = true;
void allTransactionColumns;
void allRecordColumns;
/** The columns that travel as bytes, not inside the rows' JSON, and their type. */
const BYTE_COLUMNS = {
  transactions: { request_payload: 'json', normalized: 'json', response_payload: 'json', render_hints: 'json' },
  fiscal_records: { body: 'text' },
} as const satisfies { transactions: Partial<Record<keyof TransactionRow, 'json' | 'text'>>; fiscal_records: Partial<Record<keyof FiscalRecordRow, 'json' | 'text'>> };
type ByteTable = keyof typeof BYTE_COLUMNS;
/** Each table's columns as its rows travel: as bytes (BYTE_COLUMNS, with their type) and inside the rows' JSON (all the others). */
const columnsOf = (table: ByteTable, list: readonly string[]) => {
  const inBytes = Object.entries(BYTE_COLUMNS[table]) as [string, 'json' | 'text'][];
  return { inBytes, inJson: list.filter((c) => !(c in BYTE_COLUMNS[table])) };
};
const COLUMNS = { transactions: columnsOf('transactions', TRANSACTION_COLUMN_LIST), fiscal_records: columnsOf('fiscal_records', RECORD_COLUMN_LIST) };

/** SQLSTATEs a guarded append raises (migration 0015 `svc_assert`). */
export const CHAIN_HEAD_MOVED = 'SV001';
export const NUMBERS_MOVED = 'SV003';

export interface ChainHead {
  chain_key: string;
  seq: number;
  last_fingerprint: string | null;
  last_fiscal_id: string | null;
  last_issued_at: Date | null;
  last_link: Record<string, string> | null;
}

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

/** Where a batch leaves its chain head. */
export interface ChainHeadMove {
  chainKey: string;
  seq: number;
  fingerprint: string | null;
  fiscalId: string | null;
  issuedAt: Date;
  link: Record<string, string> | null;
}

/** One chain's batch: its rows, where it leaves the head, and (one-statement path) what it was built on. */
export interface ChainBatch {
  records: readonly FiscalRecordRow[];
  transactions: readonly TransactionRow[];
  head: ChainHeadMove;
  events?: EventBatch | undefined;
  jobs?: readonly EnqueueInput[] | undefined;
  /**
   * The jobs that fan the events out to webhook subscriptions, one per account: written
   * only if a subscription of that account wants one of the events' names.
   */
  fanOut?: readonly EnqueueInput[] | undefined;
}

export interface GuardedBatch extends ChainBatch {
  guard: AppendGuard;
  /** Numbering series the batch numbered its invoices from, each moved from `from` to `to`. */
  numbers?: readonly { key: string; from: number; to: number }[] | undefined;
}

/**
 * A batch's rows as its statement carries them: JSON text, one array per table, rendered
 * as soon as the batch is built (`renderBatch`: for the one-statement path, while the
 * statement before it on the chain still runs) and joined as they are when several
 * batches share a statement.
 */
interface RenderedRows {
  /** The transactions without their BYTE_COLUMNS, and those apart. */
  tx: SplitRows | null;
  /** The records without their bodies, and the bodies apart. */
  rec: SplitRows;
  jobs: { json: string; ids: string[] } | null;
  events: RenderedEvents | null;
  fanOut: string | null;
}

/** A `GuardedBatch` rendered, what `appendGuarded` takes. */
export interface RenderedBatch extends RenderedRows {
  chainKey: string;
  /** Its row of the heads' jsonb_to_recordset: where the head moves, and from where (the guard). */
  head: Record<string, unknown>;
  numbers: readonly { key: string; from: number; to: number; at: Date }[];
}

function renderRows(part: ChainBatch): RenderedRows {
  const at = part.head.issuedAt;
  return {
    tx: part.transactions.length > 0 ? splitRows('transactions', part.transactions) : null,
    rec: splitRows('fiscal_records', part.records),
    jobs: part.jobs && part.jobs.length > 0 ? jobRowsJson(part.jobs, at) : null,
    events: part.events && part.events.rows.length > 0 ? eventRowsJson(part.events) : null,
    fanOut: part.fanOut && part.fanOut.length > 0 ? jobRowsJson(part.fanOut, at).json : null,
  };
}

/** One chain's batch as `appendGuarded` takes it (several such go in one statement). */
export function renderBatch(part: GuardedBatch): RenderedBatch {
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
  };
}

/**
 * Whether `next` was built on the head `prev` leaves (its guard is that head, every fact
 * of it): then both go in one statement as one move of their chain's head (`appendGuarded`).
 * A batch built on anything else (another node's head, one read after a failure) is not.
 */
export function continues(prev: RenderedBatch, next: RenderedBatch): boolean {
  const a = prev.head;
  const b = next.head;
  return prev.chainKey === next.chainKey && a.seq === b.g_seq && a.fingerprint === b.g_fingerprint && a.fiscal_id === b.g_fiscal_id
    && a.issued_at === b.g_issued_at && JSON.stringify(a.link) === JSON.stringify(b.g_link);
}

type SeriesMove = RenderedBatch['numbers'][number];

/**
 * The moves a statement makes: one per chain (from its first part's guard to its last
 * part's head) and one per series of a chain (from the first `from` to the last `to`),
 * for parts where each part of a chain continues the one before it (`continues`). Why
 * not one move per part: a row of an UPDATE ... FROM is updated once per statement,
 * whatever the FROM list holds.
 */
function movesOf(parts: readonly RenderedBatch[]): { heads: Record<string, unknown>[]; numbers: SeriesMove[] } {
  const chains = new Map<string, { head: Record<string, unknown>; last: RenderedBatch; numbers: Map<string, SeriesMove> }>();
  for (const p of parts) {
    const chain = chains.get(p.chainKey);
    if (chain === undefined) {
      chains.set(p.chainKey, { head: p.head, last: p, numbers: new Map(p.numbers.map((n) => [n.key, n])) });
      continue;
    }
    if (!continues(chain.last, p)) throw new Error(`ledger: two batches of ${p.chainKey} in one statement, the second not built on the first`);
    const g = chain.head;
    chain.head = { ...p.head, g_seq: g.g_seq, g_fingerprint: g.g_fingerprint, g_fiscal_id: g.g_fiscal_id, g_issued_at: g.g_issued_at, g_link: g.g_link };
    chain.last = p;
    for (const n of p.numbers) {
      const before = chain.numbers.get(n.key);
      if (before !== undefined && before.to !== n.from) throw new Error(`ledger: series ${n.key} of ${p.chainKey} does not continue in one statement`);
      chain.numbers.set(n.key, before === undefined ? n : { ...n, from: before.from });
    }
  }
  return { heads: [...chains.values()].map((c) => c.head), numbers: [...chains.values()].flatMap((c) => [...c.numbers.values()]) };
}

/**
 * Rows as the statement takes them: JSON without the table's BYTE_COLUMNS, and those
 * values apart, row after row in column order, joined, with each one's length in UTF-8
 * bytes (-1: NULL). A json column's text is what JSON.stringify writes, as it was inside
 * the row.
 */
interface SplitRows {
  json: string;
  text: string;
  bytes: number[];
}
function splitRows<T extends object>(table: ByteTable, rows: readonly T[]): SplitRows {
  const { inBytes: columns, inJson } = COLUMNS[table];
  const values: string[] = [];
  const bytes: number[] = [];
  const rest = rows.map((row) => {
    const r = row as Record<string, unknown>;
    // A new object with the same keys in the same order for every row (one shape: V8's
    // fast serializer), dates as their text (store/repos/json-rows.ts).
    const out: Record<string, unknown> = {};
    for (const c of inJson) out[c] = jsonValue(r[c]);
    for (const [column, type] of columns) {
      const v = r[column];
      const text = v === null || v === undefined ? null : type === 'json' ? JSON.stringify(v) : String(v);
      if (text === null) bytes.push(-1);
      else {
        values.push(text);
        bytes.push(Buffer.byteLength(text, 'utf8'));
      }
    }
    return out;
  });
  return { json: JSON.stringify(rest), text: values.join(''), bytes };
}

/**
 * The INSERT of `table`'s rows from several SplitRows: the JSON rows numbered in order
 * (WITH ORDINALITY), each joined to its values' offsets and lengths in the bytes (numbered
 * the same way, as many a row as the table has byte columns), inserted in the rows' order.
 */
function insertSplit(param: (v: unknown) => string, table: ByteTable, columnList: readonly string[], parts: readonly SplitRows[]): string {
  const byteColumns = COLUMNS[table].inBytes;
  const bytes = `${param(Buffer.from(parts.map((p) => p.text).join(''), 'utf8'))}::bytea`;
  const select = columnList.map((c) => {
    const k = byteColumns.findIndex(([name]) => name === c);
    if (k < 0) return `r.${c}`;
    const cut = `convert_from(substring(${bytes} FROM b.offs[${k + 1}] FOR b.lens[${k + 1}]), 'UTF8')`;
    return `CASE WHEN b.lens[${k + 1}] < 0 THEN NULL ELSE ${byteColumns[k]![1] === 'json' ? `${cut}::json` : cut} END`;
  });
  return `INSERT INTO ${table} (${columnList.join(', ')})
         SELECT ${select.join(', ')}
         FROM json_populate_recordset(NULL::${table}, ${param(joinArrays(parts.map((p) => p.json)))}::json) WITH ORDINALITY AS r
         JOIN (SELECT (n - 1) / ${byteColumns.length} + 1 AS row, array_agg(off ORDER BY n) AS offs, array_agg(len ORDER BY n) AS lens
               FROM (SELECT n, len, (sum(greatest(len, 0)) OVER (ORDER BY n) - greatest(len, 0) + 1)::int AS off
                     FROM unnest(${param(parts.flatMap((p) => p.bytes))}::int[]) WITH ORDINALITY AS l(len, n)) o
               GROUP BY 1) b ON b.row = r.ordinality
         ORDER BY r.ordinality`;
}

/** JSON arrays (each `[…]`, none empty) as one. */
function joinArrays(arrays: readonly string[]): string {
  return arrays.length === 1 ? arrays[0]! : `[${arrays.map((a) => a.slice(1, -1)).join(',')}]`;
}

/** The inserts of one or more rendered batches, as WITH parts of one statement; `fo` counts the fan-out jobs written. */
function batchWrites(param: (v: unknown) => string, parts: readonly RenderedRows[]): { writes: string[]; fannedOut: boolean; jobIds: string[][] } {
  const writes: string[] = [];
  const txs = parts.flatMap((p) => (p.tx ? [p.tx] : []));
  if (txs.length > 0) writes.push(`tx AS (${insertSplit(param, 'transactions', TRANSACTION_COLUMN_LIST, txs)})`);
  writes.push(`rec AS (${insertSplit(param, 'fiscal_records', RECORD_COLUMN_LIST, parts.map((p) => p.rec))})`);
  const jobs = parts.flatMap((p) => (p.jobs ? [p.jobs.json] : []));
  if (jobs.length > 0) writes.push(`jobs AS (${jobsInsertFromJson(param(joinArrays(jobs)))})`);
  const events = parts.flatMap((p) => (p.events ? [p.events] : []));
  if (events.length > 0) {
    const types = [...new Set(events.flatMap((e) => e.types))];
    writes.push(`ev AS (${eventsInsertFromJson(param(joinArrays(events.map((e) => e.json))))})`);
    // Ordinary fan-out: a job writes the deliveries later, written here only for an account
    // with a subscription that wants one of the names (most have none: no job at all).
    const fanOut = parts.flatMap((p) => (p.fanOut ? [p.fanOut] : []));
    if (fanOut.length > 0) {
      writes.push(`fo AS (${jobsInsertFromJson(param(joinArrays(fanOut)), `EXISTS (
           SELECT 1 FROM webhook_subscriptions w
           WHERE w.account_id = j.account_id AND w.enabled AND w.deleted_at IS NULL AND w.events ?| ${param(types)}::text[])`)} RETURNING 1)`);
      return { writes, fannedOut: true, jobIds: parts.map((p) => p.jobs?.ids ?? []) };
    }
  }
  return { writes, fannedOut: false, jobIds: parts.map((p) => p.jobs?.ids ?? []) };
}

/** What a batch statement wrote beyond its rows: the jobs' ids per part, and whether a fan-out job went in. */
export interface Written {
  jobIds: string[][];
  fannedOut: boolean;
}

/** Registered numbers a page of `freeNumbers` reads. */
const FREE_PAGE = 500;

/**
 * The first `count` numbers of a series after `after` that no request registered
 * (chain_documents `numbering_key`, `number`: whatever became of its record, the number is
 * the client's). Reads the registered ones in order, a page at a time.
 */
async function freeNumbers(q: Pick<Queryable, 'query'>, numberingKey: string, after: number, count: number): Promise<number[]> {
  const out: number[] = [];
  let next = after + 1;
  for (;;) {
    const page = await q.query<{ number: string | number }>(
      `SELECT DISTINCT number FROM chain_documents WHERE numbering_key = $1 AND number >= $2 ORDER BY number LIMIT ${FREE_PAGE}`, [numberingKey, next]);
    for (const taken of page.rows.map((r) => Number(r.number))) {
      while (next < taken && out.length < count) out.push(next++);
      if (out.length === count) return out;
      next = taken + 1;
    }
    if (page.rows.length < FREE_PAGE) {
      while (out.length < count) out.push(next++);
      return out;
    }
  }
}

export const ledgerRepo = {
  /**
   * Locks the head of a chain (creating it at seq 0 the first time) until the end of the
   * database transaction: appends to one chain are serialized, so it never forks.
   *
   * In the same round trip it finds which of the batch's idempotency keys a stored
   * transaction holds already (ids in `existing`). That lookup reads the statement's
   * snapshot, taken before the lock was granted: a key committed by another node while we
   * waited is not seen here, and the unique index refuses our insert instead (the batch is
   * then re-run entry by entry, and the key found).
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
   * Whether a fiscal record is stored: a one-statement append whose answer never came
   * committed all of its batch or none of it, so its first record answers for the batch.
   * The caller holds the chain's lock (`lockChainHead`) and asks in a statement of its own,
   * whose snapshot is taken after the lock was granted (see `ledger.ts` settleUnknown).
   */
  async recordWritten(q: Pick<Queryable, 'query'>, recordId: string): Promise<boolean> {
    const res = await q.query<{ written: boolean }>('SELECT EXISTS (SELECT 1 FROM fiscal_records WHERE id = $1) AS written', [recordId]);
    return res.rows[0]?.written === true;
  },

  /**
   * A chain's committed head, read without a lock and without creating it (a preview:
   * a snapshot that may be stale by the time anyone appends). Undefined: no record yet.
   */
  async readChainHead(q: Pick<Queryable, 'query'>, chainKey: string): Promise<ChainHead | undefined> {
    const res = await q.query<ChainHead>(
      'SELECT chain_key, seq, last_fingerprint, last_fiscal_id, last_issued_at, last_link FROM chain_heads WHERE chain_key = $1',
      [chainKey],
    );
    const head = res.rows[0];
    return head === undefined ? undefined : { ...head, seq: Number(head.seq) };
  },

  /**
   * The number a series hands out next, read without a lock (1: none yet): what
   * `takeNumbers` would hand now, past the numbers requests took ahead of it.
   */
  async nextNumber(q: Pick<Queryable, 'query'>, numberingKey: string): Promise<number> {
    const res = await q.query<{ last_number: string | number; client_max: string | number | null }>(
      'SELECT last_number, client_max FROM number_series WHERE numbering_key = $1', [numberingKey]);
    const last = Number(res.rows[0]?.last_number ?? 0);
    const clientMax = res.rows[0]?.client_max;
    return clientMax === null || clientMax === undefined || Number(clientMax) <= last ? last + 1 : (await freeNumbers(q, numberingKey, last, 1))[0]!;
  },

  /**
   * Takes the next `count` numbers of a series (a batch of appends numbers its entries in
   * order), locked until the end of the transaction: consecutive in one statement, unless
   * requests took numbers of the series ahead of the counter (`client_max`, migration
   * 0052): those are skipped, read under the series' lock (a request registers its number
   * under the same lock, chain-documents-repo `insert`). `clientAhead`: some still lie
   * ahead (the one-statement path cannot number this series: its guard refuses it).
   */
  async takeNumbers(q: Queryable, numberingKey: string, count: number, now: Date): Promise<{ numbers: number[]; clientAhead: boolean }> {
    const res = await q.query<{ last_number: string | number; client_max: string | number | null }>(
      `INSERT INTO number_series (numbering_key, last_number, updated_at) VALUES ($1, $3, $2)
       ON CONFLICT (numbering_key) DO UPDATE SET last_number = number_series.last_number + $3, updated_at = $2
       RETURNING last_number, client_max`,
      [numberingKey, now, count],
    );
    const last = Number(res.rows[0]!.last_number);
    const clientMax = res.rows[0]!.client_max === null ? null : Number(res.rows[0]!.client_max);
    if (clientMax === null || clientMax <= last - count) return { numbers: Array.from({ length: count }, (_, i) => last - count + 1 + i), clientAhead: false };
    const numbers = await freeNumbers(q, numberingKey, last - count, count);
    const end = numbers[numbers.length - 1]!;
    if (end !== last) await q.query('UPDATE number_series SET last_number = $2 WHERE numbering_key = $1', [numberingKey, end]);
    return { numbers, clientAhead: clientMax > end };
  },

  /**
   * A batch of one chain through the locking path (inside the transaction that locked the
   * chain head) in one statement: the transactions, their fiscal records, their jobs and
   * events (with their fan-out job when a subscription wants them), and the chain head
   * moved to the last of them.
   */
  async insertBatch(q: Queryable, batch: ChainBatch): Promise<{ jobIds: string[]; fannedOut: boolean }> {
    const values: unknown[] = [];
    const param = (v: unknown) => `$${values.push(v)}`;
    const { head } = batch;
    const heads = `UPDATE chain_heads SET seq = ${param(head.seq)}, last_fingerprint = ${param(head.fingerprint)}, last_fiscal_id = ${param(head.fiscalId)},
         last_issued_at = ${param(head.issuedAt)}, updated_at = ${param(head.issuedAt)}, last_link = ${param(head.link === null ? null : JSON.stringify(head.link))}::jsonb
       WHERE chain_key = ${param(head.chainKey)}`;
    const { writes, fannedOut, jobIds } = batchWrites(param, [renderRows(batch)]);
    const res = await q.query<{ fanned: string | number | null }>(
      `WITH head AS (${heads}),\n       ${writes.join(',\n       ')}\n       SELECT ${fannedOut ? '(SELECT count(*) FROM fo)' : '0'} AS fanned`, values,
    );
    return { jobIds: jobIds[0]!, fannedOut: Number(res.rows[0]?.fanned ?? 0) > 0 };
  },

  /**
   * `insertBatch` for batches built on a chain head remembered from an earlier commit, not
   * read under a lock (the one-statement append): the statement stands alone
   * (autocommitted, no transaction around it), for one or more chains. Every head moves
   * only from its `guard`, every series from its `from` (and only when no number a request
   * took lies above `from`: the locking path skips those); else the statement fails as a
   * whole, nothing written, with `CHAIN_HEAD_MOVED` (another node appended) or
   * `NUMBERS_MOVED`, and the caller tells the parts apart by running them again one by
   * one, then takes the locking path, which finds what moved. The heads are updated, and
   * so locked, before anything is inserted (the main query reads them; the other WITH
   * parts run after it), so two writers of one chain queue on the head row instead of
   * deadlocking on the records' unique index. Why several chains at once: with appends
   * spread over many locations, each chain's batch held about one record, and a statement
   * of one record paid its planning, its foreign-key trigger set-up and its commit alone
   * (0.93 ms of PostgreSQL CPU a record at 50 locations, against 0.19 for one busy chain,
   * measured). Heads first, then series (the locking path's order).
   * Several batches of one chain may go too, each built on the head the one before leaves
   * (`continues`): one move of the head and of each series, from the first to the last
   * (`movesOf`); anything else of a chain must wait for the next statement.
   */
  async appendGuarded(q: Pick<Queryable, 'query'>, parts: readonly RenderedBatch[]): Promise<Written> {
    const values: unknown[] = [];
    const param = (v: unknown) => `$${values.push(v)}`;
    const moves = movesOf(parts);
    const heads = `UPDATE chain_heads h SET seq = v.seq, last_fingerprint = v.fingerprint, last_fiscal_id = v.fiscal_id,
         last_issued_at = v.issued_at, updated_at = v.issued_at, last_link = v.link
       FROM jsonb_to_recordset(${param(JSON.stringify(moves.heads))}::jsonb) AS v(chain_key text, seq bigint, fingerprint text, fiscal_id text,
         issued_at timestamptz, link jsonb, g_seq bigint, g_fingerprint text, g_fiscal_id text, g_issued_at timestamptz, g_link jsonb)
       WHERE h.chain_key = v.chain_key AND h.seq = v.g_seq AND h.last_fingerprint IS NOT DISTINCT FROM v.g_fingerprint
         AND h.last_fiscal_id IS NOT DISTINCT FROM v.g_fiscal_id AND h.last_issued_at IS NOT DISTINCT FROM v.g_issued_at
         AND h.last_link IS NOT DISTINCT FROM v.g_link
       RETURNING 1`;
    const { writes, fannedOut, jobIds } = batchWrites(param, parts);
    const { numbers } = moves;
    if (numbers.length > 0) {
      writes.push(`num AS (
         UPDATE number_series s SET last_number = v.next, updated_at = v.at
         FROM unnest(${param(numbers.map((n) => n.key))}::text[], ${param(numbers.map((n) => n.from))}::bigint[], ${param(numbers.map((n) => n.to))}::bigint[],
                     ${param(numbers.map((n) => n.at))}::timestamptz[]) AS v(key, expected, next, at)
         WHERE s.numbering_key = v.key AND s.last_number = v.expected AND (s.client_max IS NULL OR s.client_max <= v.expected)
         RETURNING 1)`);
    }
    // The heads first (the main query reads them before the other WITH parts run), then
    // the series: the order the locking path takes them in.
    const main = `SELECT svc_assert((SELECT count(*) FROM head) = ${moves.heads.length}, '${CHAIN_HEAD_MOVED}', 'chain head moved')${numbers.length > 0
      ? ` AND svc_assert((SELECT count(*) FROM num) = ${numbers.length}, '${NUMBERS_MOVED}', 'number series moved')`
      : ''} AS ok, ${fannedOut ? '(SELECT count(*) FROM fo)' : '0'} AS fanned`;
    // Data-modifying WITH parts run whether or not the final query reads them.
    const res = await q.query<{ fanned: string | number | null }>(`WITH head AS (${heads}),\n       ${writes.join(',\n       ')}\n       ${main}`, values);
    return { jobIds, fannedOut: Number(res.rows[0]?.fanned ?? 0) > 0 };
  },
};
