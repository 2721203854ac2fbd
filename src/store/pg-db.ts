import crypto from 'node:crypto';
import pg from 'pg';
import pgUtils from 'pg/lib/utils.js';
import { DbUnavailableError } from '../core/errors.ts';
import type { Db, Queryable, QueryResult } from './db.ts';
import { createPgListener } from './pg-listener.ts';
import {
  DEFAULT_ANSWER_GRACE_MS, DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS, DEFAULT_LONG_STATEMENT_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS,
} from './timeouts.ts';

/** Error codes meaning "the server is not reachable or not accepting work now". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN', 'EPIPE',
  '57P01', '57P02', '57P03', // admin_shutdown, crash_shutdown, cannot_connect_now
  '08000', '08001', '08003', '08004', '08006', // connection exceptions
  '53300', // too_many_connections
  // query_canceled: the statement ran past its bound (statement_timeout: a lock held
  // forever, a hung server) or was cancelled. Nothing of it was written; the request may
  // be sent again (503 with Retry-After, like an unreachable server).
  '57014',
  // idle_in_transaction_session_timeout: the server ended a session whose transaction sat
  // idle past its bound (a process that hung holding it). Rolled back; the connection is gone.
  '25P03',
]);

/**
 * The driver's own error when the server did not answer within query_timeout (the server
 * that never answers: a black hole). Its outcome is unknown: the statement may have run.
 */
const NO_ANSWER = /Query read timeout/;

/**
 * A statement that ran out of its bound: PostgreSQL's own cancel at statement_timeout
 * (57014 "canceling statement due to statement timeout"; 57014 is also an operator's
 * pg_cancel_backend, "due to user request", which is not a timeout), or no answer within
 * the driver's query_timeout.
 */
const timedOut = (e: { code?: string; message?: string }): boolean =>
  (e.code === '57014' && /statement timeout/i.test(e.message ?? '')) || e.code === '25P03' || NO_ANSWER.test(e.message ?? '');

function classify(err: unknown): unknown {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return err;
  if ((e.code && UNAVAILABLE_CODES.has(e.code)) || NO_ANSWER.test(e.message ?? '')
    || /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|not queryable/i.test(e.message ?? '')) {
    return new DbUnavailableError(err, timedOut(e) ? 'timeout' : 'unreachable');
  }
  return err;
}

/**
 * The store is unavailable and its connection is done: it timed out on the client side,
 * was lost, or the server ended the session (a FATAL answer: terminated backend, shutdown).
 * Such a connection is never used again: a statement may still be running on it, or its
 * answers be lost. Not a statement PostgreSQL refused on a live session (its own
 * statement timeout, an ERROR): the connection is sound after that.
 */
function connectionLost(err: unknown): boolean {
  const unavailable = err instanceof DbUnavailableError ? err : (err as { cause?: unknown } | null)?.cause;
  if (!(unavailable instanceof DbUnavailableError)) return false;
  const answer = unavailable.cause;
  return !(answer instanceof pg.DatabaseError) || answer.severity === 'FATAL' || answer.severity === 'PANIC';
}

/**
 * What a transaction's failure says of where it failed: `atCommit` is set (true) on the
 * DbUnavailableError of a transaction whose COMMIT was sent and failed so (no answer, the
 * connection lost). Only then may the transaction have committed all the same (its
 * outcome is unknown when the error carries no server answer: a failure PostgreSQL
 * itself answered, an ERROR, rolled back). A failure of any statement before COMMIT, or
 * of `fn` itself, rolled everything back and never carries it. Read by the ledger
 * (ledger.ts), which learns such a transaction's outcome before answering.
 */
export interface TransactionFailure {
  atCommit?: true;
}

/**
 * Named (server-side prepared) statements: PostgreSQL parses a named statement once per
 * connection instead of at every call (plans are still made per call: see the pool's
 * plan_cache_mode). The names are a hash of the SQL text. Statements built with a varying shape (a
 * batch insert of N rows) would each leave a prepared statement on every connection, so
 * only the first MAX_PREPARED distinct texts are prepared; later ones run unnamed.
 */
const MAX_PREPARED = 500;
const prepared = new Map<string, string>();
function statementName(sql: string): string | undefined {
  let name = prepared.get(sql);
  if (name === undefined && prepared.size < MAX_PREPARED) {
    name = `s_${crypto.createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
    prepared.set(sql, name);
  }
  return name;
}

/**
 * A parameterized statement as plain SQL, its values written in as literals (the text
 * form the driver would send, quoted by the driver's own escapeLiteral). Only for the
 * statement that opens a transaction: see `transaction`.
 */
export function inlineParams(sql: string, params: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_m, n: string) => {
    const value = pgUtils.prepareValue(params[Number(n) - 1]) as unknown;
    if (value === null || value === undefined) return 'NULL';
    if (Buffer.isBuffer(value)) return `'\\x${value.toString('hex')}'`;
    return pgUtils.escapeLiteral(String(value));
  });
}

export interface PgDbOptions {
  max?: number;
  connectionTimeoutMillis?: number;
  /**
   * The bound of an API statement in ms (PostgreSQL's statement_timeout on every pool and
   * pipe connection; DATABASE_STATEMENT_TIMEOUT_MS); 0: none. Default 30 s (timeouts.ts).
   */
  statementTimeoutMs?: number;
  /** The bound of a statement of `Db.longWork()` (DATABASE_LONG_STATEMENT_TIMEOUT_MS); 0: none. Default 1 h. */
  longStatementTimeoutMs?: number;
  /**
   * How long a transaction may sit idle between its statements before PostgreSQL ends the
   * session (idle_in_transaction_session_timeout on every pool and pipe connection;
   * DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS); 0: none. Default 60 s (timeouts.ts). Long
   * work's transactions take their statement bound instead (0: none, migrations).
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * How long after a statement's bound the driver stops waiting for an answer and gives
   * the connection up (query_timeout = bound + grace). Default 1 s.
   */
  answerGraceMs?: number;
  /**
   * The LISTEN connection's check (pg-listener.ts): a round trip every this many ms, given
   * up when not answered within as long; 0: none. Default 5 s.
   */
  listenHeartbeatMs?: number;
}

function checkBound(name: string, ms: number): number {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > 2_000_000_000) throw new Error(`${name} must be an integer number of milliseconds from 0 to 2000000000 (got ${ms})`);
  return ms;
}

/**
 * PostgreSQL through a `pg` connection pool (DATABASE_URL).
 *
 * Every statement is bounded (docs/decisions.md "PostgreSQL statement bounds"): PostgreSQL
 * cancels an API statement after `statementTimeoutMs` (statement_timeout, set on each
 * connection), and the driver stops waiting `answerGraceMs` later (query_timeout, for the
 * server that never answers at all) and discards the connection. Either way the caller
 * gets a DbUnavailableError (503 with Retry-After), never a hang. Long work runs through
 * `longWork()`, on the same pool, under its own bound (SET LOCAL in its transaction).
 */
export async function openPostgresDb(connectionString: string, opts: PgDbOptions = {}): Promise<Db> {
  const statementTimeoutMs = checkBound('statementTimeoutMs', opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS);
  const longStatementTimeoutMs = checkBound('longStatementTimeoutMs', opts.longStatementTimeoutMs ?? DEFAULT_LONG_STATEMENT_TIMEOUT_MS);
  const answerGraceMs = checkBound('answerGraceMs', opts.answerGraceMs ?? DEFAULT_ANSWER_GRACE_MS);
  const idleInTransactionMs = checkBound('idleInTransactionTimeoutMs', opts.idleInTransactionTimeoutMs ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS);
  /** The driver's wait for the answer to a statement of that bound (none when unbounded). */
  // (At most setTimeout's largest delay: beyond it Node fires at once.)
  const readTimeout = (bound: number): number | undefined => (bound === 0 ? undefined : Math.min(bound + answerGraceMs, 2_147_483_647));
  const apiWait = readTimeout(statementTimeoutMs);
  // Named statements are parsed once per connection, but planned at every execution
  // with the actual values: a generic plan made while a table was small (a new
  // database) can stick to a poor index. Seen: the create's idempotency lookup used the
  // account index (scanning the account's transactions) instead of the unique key.
  //
  // No JIT: its compilation (10 ms, seen on the claim) is made for long analytical
  // queries; every statement here is short, and a high cost estimate on a growing queue
  // made each claim pay it.
  // A transaction left idle (the process holding it hung, or lost its way between two
  // statements) is ended by the server after idleInTransactionMs: its locks (a chain head's
  // row, a table lock) do not outlive a stuck node for as long as its connection lives.
  const bound = `-c statement_timeout=${statementTimeoutMs} -c idle_in_transaction_session_timeout=${idleInTransactionMs}`;
  const options = `-c plan_cache_mode=force_custom_plan -c jit=off ${bound}`;
  // The ordered pipe runs only the one-statement appends (ledger-repo appendGuarded). Its
  // inserts fire foreign-key checks, which PostgreSQL runs as saved plans that
  // plan_cache_mode governs too: under force_custom_plan every check of every row was
  // planned again (perf on a busy France chain: planning and running those checks about a
  // third of PostgreSQL's CPU). So the pipe keeps the default mode, where a saved plan
  // becomes generic after five executions and is reused. That suits the append itself
  // too: its rows travel as JSON parameters, so no value can make one plan better than
  // another, and a generic plan is made once per statement text instead of at every
  // execution. It does not outlive the tables' statistics: PostgreSQL plans a prepared
  // statement again whenever ANALYZE (autovacuum's included) updated the statistics of a
  // table it uses (documented under PREPARE), so a plan made on a new database's empty
  // chain_heads does not stick as the table grows.
  const pipeOptions = `-c jit=off ${bound}`;
  const connectionTimeoutMillis = opts.connectionTimeoutMillis ?? 5_000;
  const max = opts.max ?? 20;
  const pool = new pg.Pool({ connectionString, options, max, connectionTimeoutMillis, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const listener = createPgListener(connectionString, {
    connectionTimeoutMillis, readTimeoutMs: apiWait,
    ...(opts.listenHeartbeatMs !== undefined ? { heartbeatMs: checkBound('listenHeartbeatMs', opts.listenHeartbeatMs) } : {}),
  });

  // The ordered pipe (Db.pipe): one connection of its own in the driver's pipeline mode
  // (each statement its own Parse/Bind/Execute/Sync, written at once; answers come back in
  // order). Opened at first use; a lost connection fails what was on it, and the next
  // statement opens another.
  //
  // Bounds: PostgreSQL cancels a statement past statement_timeout; that one fails alone
  // (its own Sync), the ones behind it run, the connection stays. A statement not answered
  // within its query_timeout (the server went silent) cannot be taken off the wire: the
  // driver destroys the connection, which fails every statement on it (each a
  // DbUnavailableError, outcome unknown: the server may have run some, as with a cut
  // connection; a retry with the same Idempotency-Key finds what committed, the chain
  // guard and the unique keys write nothing twice). The connection is dropped here and
  // the next statement opens another: nothing is ever sent behind a stale pipeline.
  let pipeClient: pg.Client | undefined;
  const dropPipe = (client: pg.Client) => {
    if (pipeClient !== client) return;
    pipeClient = undefined;
    client.end().catch(() => {});
  };
  /** Pipe connections that got through: a statement's wait that ends before is no connection, not a timeout. */
  const connectedPipes = new WeakSet<pg.Client>();
  const pipeNow = (): pg.Client => {
    if (pipeClient) return pipeClient;
    const client = new pg.Client({ connectionString, options: pipeOptions, connectionTimeoutMillis, pipeline: true } as pg.ClientConfig);
    client.on('error', () => dropPipe(client));
    client.on('end', () => dropPipe(client));
    // A failed connect fails the statements queued on it (their own errors).
    client.connect().then(() => void connectedPipes.add(client), () => dropPipe(client));
    pipeClient = client;
    return client;
  };
  const pipeQuery = async <T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> => {
    const client = pipeNow();
    // The driver writes a statement as four or five messages, each its own socket write:
    // corked, they leave in one (the query is written synchronously, within `run`'s call).
    const stream = (client as unknown as { connection?: { stream?: { cork(): void; uncork(): void } } }).connection?.stream;
    stream?.cork();
    const answer = run<T>(client, sql, params, apiWait);
    stream?.uncork();
    try {
      return await answer;
    } catch (err) {
      // The connection is gone (terminated, reset, or silent past the answer's wait: the
      // driver destroyed it): the statements behind fail with it, the next ones go on a new
      // one. (Its 'end' comes a little later than this answer.) A statement PostgreSQL
      // cancelled (its statement_timeout) leaves the connection, and the order, as it was.
      if (connectionLost(err)) dropPipe(client);
      // Queued behind a connect that never came through (the driver's wait for the answer
      // started with the connect): the server was not reached.
      if (err instanceof DbUnavailableError && err.reason === 'timeout' && !connectedPipes.has(client)) throw new DbUnavailableError(err.cause, 'unreachable');
      throw err;
    }
  };

  /** One statement; `wait`: the driver's query_timeout (undefined: none). */
  const run = async <T>(q: pg.Pool | pg.PoolClient | pg.Client, sql: string, params: readonly unknown[] | undefined, wait: number | undefined): Promise<QueryResult<T>> => {
    try {
      const name = params?.length ? statementName(sql) : undefined;
      const res = await q.query(statement(sql, params, wait, name));
      return { rows: res.rows as T[], rowCount: res.rowCount ?? res.rows.length };
    } catch (err) {
      throw classify(err);
    }
  };

  /**
   * A transaction on a pool connection. `stmtBound`: its statements' bound; `idleBound`:
   * how long it may sit idle between them (long work: as long as one of its statements may
   * run, for the JS work of a batch between two statements). When either is not the
   * connections' own, it is set for this transaction only (SET LOCAL, in the message that
   * opens it): it ends with the transaction, whatever happens.
   */
  const transaction = async <R>(stmtBound: number, fn: (tx: Queryable) => Promise<R>, idleBound = idleInTransactionMs): Promise<R> => {
    const wait = readTimeout(stmtBound);
    const setBound = (stmtBound === statementTimeoutMs ? '' : `SET LOCAL statement_timeout = ${stmtBound}; `)
      + (idleBound === idleInTransactionMs ? '' : `SET LOCAL idle_in_transaction_session_timeout = ${idleBound}; `);
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw classify(err);
    }
    // While it is ours, the pool no longer listens for the connection's errors: one lost
    // between two statements (the server ended the idle transaction, a restart) would be an
    // unhandled 'error' event, which ends the process. Kept here; the next statement fails
    // on the dead connection and says why (the server's own reason when it gave one).
    let lostWith: unknown;
    const onError = (err: unknown) => void (lostWith ??= err);
    client.on('error', onError);
    const classifyHere = (err: unknown): unknown => {
      const e = classify(err);
      if (lostWith === undefined || !(e instanceof DbUnavailableError)) return e;
      const why = classify(lostWith);
      return why instanceof DbUnavailableError ? why : e;
    };
    // BEGIN travels with the transaction's first statement, in one simple-protocol
    // message ("BEGIN; <statement>", its values inlined): one round trip less for every
    // transaction. The create's batch holds its chain's lock from that statement to
    // COMMIT, and each round trip on that path waits for a busy event loop.
    // (Not COMMIT with the last statement: inlining a batch's large insert cost more
    // Node CPU than the round trip it saved, measured.)
    let begun = false;
    const first = async <T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> => {
      begun = true;
      try {
        const text = `BEGIN; ${setBound}${params?.length ? inlineParams(sql, params) : sql}`;
        const results = (await client.query(statement(text, undefined, wait))) as unknown as pg.QueryResult[];
        const res = results[results.length - 1]!;
        return { rows: res.rows as T[], rowCount: res.rowCount ?? res.rows.length };
      } catch (err) {
        throw classifyHere(err);
      }
    };
    const q: Queryable = {
      query: <T>(sql: string, params?: readonly unknown[]) => (begun ? run<T>(client, sql, params, wait).catch((err: unknown) => Promise.reject(classifyHere(err))) : first<T>(sql, params)),
      exec: async (sql) => {
        if (!begun) return void (await first(sql));
        await client.query(statement(sql, undefined, wait)).catch((err) => Promise.reject(classifyHere(err)));
      },
    };
    const release = (destroy?: boolean) => {
      client.off('error', onError);
      // pg-pool's own listener is back once the connection is idle in the pool; one that
      // broke while ours is not put back.
      client.release(destroy || lostWith !== undefined ? true : undefined);
    };
    try {
      const result = await fn(q);
      if (begun) {
        await q.query('COMMIT').catch((err: unknown) => {
          if (err instanceof DbUnavailableError) (err as TransactionFailure).atCommit = true;
          throw err;
        });
      }
      release();
      return result;
    } catch (err) {
      // A connection that went silent (or was lost) is not asked for a ROLLBACK: that would
      // wait as long again behind the statement still on it. Closing it rolls back.
      if (begun && (connectionLost(err) || lostWith !== undefined)) {
        release(true);
        throw err;
      }
      try {
        if (begun) await client.query(statement('ROLLBACK', undefined, apiWait));
        release();
      } catch {
        release(true); // the connection is broken: drop it from the pool
      }
      throw err;
    }
  };

  const subscribe: Db['subscribe'] = (channel, l) => listener.subscribe(channel, l);
  const stats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max });
  const close = async () => {
    await listener.close();
    const pipe = pipeClient;
    pipeClient = undefined;
    await pipe?.end().catch(() => {});
    await pool.end();
  };

  /**
   * The same store for long work, its statements bounded by `stmtBound` (0: none): each
   * query a transaction of its own whose first message sets the bound (SET LOCAL), and the
   * driver waiting as long (plus the grace) for each answer. Same pool, no pipe; closing
   * it closes nothing (the store's owner closes the store).
   */
  const views = new Map<number, Db>();
  const longWork = (ms: number = longStatementTimeoutMs): Db => {
    const stmtBound = checkBound('statement timeout', ms);
    // Its transactions may sit idle as long as one of its statements may run.
    if (stmtBound === statementTimeoutMs && stmtBound === idleInTransactionMs) return db;
    let view = views.get(stmtBound);
    if (!view) {
      view = {
        kind: 'postgres',
        query: (sql, params) => transaction(stmtBound, (tx) => tx.query(sql, params), stmtBound),
        exec: (sql) => transaction(stmtBound, (tx) => tx.exec(sql), stmtBound),
        transaction: (fn) => transaction(stmtBound, fn, stmtBound),
        longWork,
        subscribe,
        stats,
        close: async () => {},
      };
      views.set(stmtBound, view);
    }
    return view;
  };

  const db: Db = {
    kind: 'postgres',
    query: (sql, params) => run(pool, sql, params, apiWait),
    exec: async (sql) => {
      await pool.query(statement(sql, undefined, apiWait)).catch((err) => Promise.reject(classify(err)));
    },
    pipe: { query: pipeQuery },
    transaction: (fn) => transaction(statementTimeoutMs, fn),
    longWork,
    subscribe,
    stats,
    close,
  };
  return db;
}

/** A statement for the driver: named when `name` is given, with its answer's wait (query_timeout). */
function statement(text: string, params: readonly unknown[] | undefined, wait: number | undefined, name?: string): pg.QueryConfig {
  const config: pg.QueryConfig & { query_timeout?: number } = { text, values: params as unknown[] | undefined };
  if (name) config.name = name;
  if (wait !== undefined) config.query_timeout = wait;
  return config;
}
