/**
 * The one database port. Two adapters speak the same PostgreSQL dialect:
 * - PGlite (embedded, WASM Postgres): file-backed in DATA_DIR, or in memory for tests;
 * - PostgreSQL through `pg` when DATABASE_URL is set.
 * Repositories (store/repos) are the only code that writes SQL.
 */
export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/** A LISTEN on one channel (see `Db.subscribe`). */
export interface Subscription {
  /**
   * True while notifications are being received. False before the LISTEN is in place and
   * after its connection was lost (until it is back): a cache must not trust itself then.
   */
  readonly live: boolean;
  close(): void;
}

export interface NotificationListener {
  /** One NOTIFY payload, delivered after the notifying transaction committed. */
  message(payload: string): void;
  /** Notifications may have been missed (the listening connection dropped): forget everything. */
  reset(): void;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Listens to NOTIFY on `channel` (PostgreSQL LISTEN/NOTIFY; with PGlite, the notifications
   * of this process's own backend). Used to invalidate in-process caches when another
   * node, or a trigger, changes a row.
   */
  subscribe(channel: string, listener: NotificationListener): Subscription;
  /**
   * An ordered pipe, where the store has one (PostgreSQL): statements run one after the
   * other in the order they were sent, each on its own (autocommitted), and the next is
   * sent without waiting for the answer to the one before: the server finds it waiting
   * the moment it is done with the previous. A failed statement does not stop the ones
   * behind it. For statements that must not overtake each other and should not wait for
   * a round trip between them (a busy chain's one-statement appends: services/transactions.ts).
   */
  readonly pipe?: Pick<Queryable, 'query'> | undefined;
  /** Runs `fn` in one database transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * This store for long work, whose statements the API's bound must not cut (PostgreSQL:
   * every statement of the store is bounded, DATABASE_STATEMENT_TIMEOUT_MS, and a request
   * whose statement ran past it answers 503). Batch processors, month files and archives
   * run here, under `statementTimeoutMs` (default: the store's long-work bound,
   * DATABASE_LONG_STATEMENT_TIMEOUT_MS; 0: none, migrations). The same connections, no
   * pipe; its `close` closes nothing. Absent where statements have no bound (the embedded
   * store): use the store itself (`db.longWork?.() ?? db`).
   */
  longWork?(statementTimeoutMs?: number): Db;
  close(): Promise<void>;
  /** The connections as they are now, for the metrics (src/metrics): O(1), no I/O. */
  stats?(): DbStats;
}

/**
 * PostgreSQL: the `pg` pool's clients. The embedded store has one backend that runs one
 * statement or transaction at a time: `total` and `max` are 1, `waiting` counts the
 * operations queued behind the running one.
 */
export interface DbStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/** SQLSTATE of a unique-index violation: how races are settled (duplicate email, idempotency key…). */
export const UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string } | null;
  if (!e || e.code !== UNIQUE_VIOLATION) return false;
  return constraint === undefined || e.constraint === constraint || String((err as Error).message).includes(constraint);
}
