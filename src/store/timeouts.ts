/**
 * How long a PostgreSQL statement may take (docs/decisions.md "PostgreSQL statement
 * bounds"). No imports: config.ts reads the settings with these defaults, pg-db.ts applies
 * them. The embedded store (PGlite, in process, no network) has no bound.
 */

/**
 * An API statement (DATABASE_STATEMENT_TIMEOUT_MS): every statement of the pool and of
 * the ordered pipe, unless run through `Db.longWork`. PostgreSQL cancels it at this bound
 * (statement_timeout: a lock held forever, a runaway plan); the request answers 503.
 */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/**
 * A statement of long work (DATABASE_LONG_STATEMENT_TIMEOUT_MS): batch processors, month
 * files and archives (`Db.longWork()`). 0: none. Migrations run with none, whatever this says.
 */
export const DEFAULT_LONG_STATEMENT_TIMEOUT_MS = 3_600_000;

/**
 * How much longer than the server's bound the driver waits for an answer before it gives
 * the connection up (the driver's query_timeout): the server that never answers at all (a
 * hung server, a network black hole) cannot cancel anything. Beyond the statement's bound,
 * so a statement PostgreSQL cancels comes back as its own error on a connection that
 * stays usable; only silence costs the connection.
 */
export const DEFAULT_ANSWER_GRACE_MS = 1_000;

/**
 * How long a transaction may sit idle between two of its statements
 * (DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS) before PostgreSQL ends its session
 * (idle_in_transaction_session_timeout, 25P03), rolling it back and freeing its locks. No
 * transaction of the API waits on anything but the store between its statements, so only
 * a process that hung (or lost its way) holding one reaches it; twice the statement bound
 * leaves a busy event loop far more than it ever needs. Long work's transactions take
 * their own statement bound instead (none for migrations).
 */
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
