import crypto from 'node:crypto';
import pg from 'pg';
import pgUtils from 'pg/lib/utils.js';
import { DbUnavailableError } from '../core/errors.ts';
import type { Db, Queryable, QueryResult } from './db.ts';
import { createPgListener } from './pg-listener.ts';

/** Error codes meaning "the server is not reachable or not accepting work now". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN', 'EPIPE',
  '57P01', '57P02', '57P03', // admin_shutdown, crash_shutdown, cannot_connect_now
  '08000', '08001', '08003', '08004', '08006', // connection exceptions
  '53300', // too_many_connections
]);

function classify(err: unknown): unknown {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return err;
  if ((e.code && UNAVAILABLE_CODES.has(e.code)) || /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(e.message ?? '')) {
    return new DbUnavailableError(err);
  }
  return err;
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
}

/** PostgreSQL through a `pg` connection pool (DATABASE_URL). */
export async function openPostgresDb(connectionString: string, opts: PgDbOptions = {}): Promise<Db> {
  // Named statements are parsed once per connection, but planned at every execution
  // with the actual values: a generic plan made while a table was small (a new
  // database) can stick to a poor index. Seen: the create's idempotency lookup used the
  // account index (scanning the account's transactions) instead of the unique key.
  //
  // No JIT: its compilation (10 ms, seen on the claim) is made for long analytical
  // queries; every statement here is short, and a high cost estimate on a growing queue
  // made each claim pay it.
  const options = '-c plan_cache_mode=force_custom_plan -c jit=off';
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
  const pipeOptions = '-c jit=off';
  const connectionTimeoutMillis = opts.connectionTimeoutMillis ?? 5_000;
  const max = opts.max ?? 20;
  const pool = new pg.Pool({ connectionString, options, max, connectionTimeoutMillis, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const listener = createPgListener(connectionString);

  // The ordered pipe (Db.pipe): one connection of its own in the driver's pipeline mode
  // (each statement its own Parse/Bind/Execute/Sync, written at once; answers come back in
  // order). Opened at first use; a lost connection fails what was on it, and the next
  // statement opens another.
  let pipeClient: pg.Client | undefined;
  const dropPipe = (client: pg.Client) => {
    if (pipeClient !== client) return;
    pipeClient = undefined;
    client.end().catch(() => {});
  };
  const pipeNow = (): pg.Client => {
    if (pipeClient) return pipeClient;
    const client = new pg.Client({ connectionString, options: pipeOptions, connectionTimeoutMillis, pipeline: true } as pg.ClientConfig);
    client.on('error', () => dropPipe(client));
    client.on('end', () => dropPipe(client));
    // A failed connect fails the statements queued on it (their own errors).
    client.connect().catch(() => dropPipe(client));
    pipeClient = client;
    return client;
  };
  const pipeQuery = async <T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> => {
    const client = pipeNow();
    // The driver writes a statement as four or five messages, each its own socket write:
    // corked, they leave in one (the query is written synchronously, within `run`'s call).
    const stream = (client as unknown as { connection?: { stream?: { cork(): void; uncork(): void } } }).connection?.stream;
    stream?.cork();
    const answer = run<T>(client, sql, params);
    stream?.uncork();
    try {
      return await answer;
    } catch (err) {
      // The connection is gone (terminated, reset): the statements behind fail with it,
      // the next ones go on a new one. (Its 'end' comes a little later than this answer.)
      if (err instanceof DbUnavailableError) dropPipe(client);
      throw err;
    }
  };

  const run = async <T>(q: pg.Pool | pg.PoolClient | pg.Client, sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> => {
    try {
      const name = params?.length ? statementName(sql) : undefined;
      const res = name
        ? await q.query({ name, text: sql, values: params as unknown[] })
        : await q.query(sql, params as unknown[] | undefined);
      return { rows: res.rows as T[], rowCount: res.rowCount ?? res.rows.length };
    } catch (err) {
      throw classify(err);
    }
  };

  return {
    kind: 'postgres',
    query: (sql, params) => run(pool, sql, params),
    exec: async (sql) => {
      await pool.query(sql).catch((err) => Promise.reject(classify(err)));
    },
    pipe: { query: pipeQuery },
    async transaction(fn) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw classify(err);
      }
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
          const results = (await client.query(`BEGIN; ${params?.length ? inlineParams(sql, params) : sql}`)) as unknown as pg.QueryResult[];
          const res = results[results.length - 1]!;
          return { rows: res.rows as T[], rowCount: res.rowCount ?? res.rows.length };
        } catch (err) {
          throw classify(err);
        }
      };
      const q: Queryable = {
        query: (sql, params) => (begun ? run(client, sql, params) : first(sql, params)),
        exec: async (sql) => {
          if (!begun) return void (await first(sql));
          await client.query(sql).catch((err) => Promise.reject(classify(err)));
        },
      };
      try {
        const result = await fn(q);
        if (begun) await q.query('COMMIT');
        client.release();
        return result;
      } catch (err) {
        try {
          if (begun) await client.query('ROLLBACK');
          client.release();
        } catch {
          client.release(true); // the connection is broken: drop it from the pool
        }
        throw err;
      }
    },
    subscribe: (channel, l) => listener.subscribe(channel, l),
    stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    close: async () => {
      await listener.close();
      const pipe = pipeClient;
      pipeClient = undefined;
      await pipe?.end().catch(() => {});
      await pool.end();
    },
  };
}
