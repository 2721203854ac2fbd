import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { DbUnavailableError } from '../../src/core/errors.ts';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';
import { STORE, createTestDatabase, openTestDb } from '../support/harness.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

/*
 * Every PostgreSQL statement is bounded (pg-db.ts; docs/decisions.md "PostgreSQL statement
 * bounds"): the server cancels an API statement at DATABASE_STATEMENT_TIMEOUT_MS
 * (statement_timeout: a lock held forever), the driver gives the connection up a grace
 * later when the server never answers at all (query_timeout: a black hole). Either way a
 * DbUnavailableError (503), within the bound, never a hang; long work and migrations have
 * bounds of their own. Small bounds here keep the tests fast.
 */
const opened: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

/** How long `p` takes to settle, and how. */
async function timed<T>(p: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const t0 = performance.now();
  try {
    const value = await p;
    return { ms: performance.now() - t0, value };
  } catch (error) {
    return { ms: performance.now() - t0, error };
  }
}

const pid = async (q: Pick<Db, 'query'>) => (await q.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [])).rows[0]!.pid;

/** A session of its own holding an ACCESS EXCLUSIVE lock on `table` until `release`. */
async function holdLock(url: string, table: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`BEGIN; LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  const held = { release: async () => { await c.query('ROLLBACK'); await c.end(); }, close: () => c.end().catch(() => {}) };
  opened.push(held);
  return held;
}

describe.runIf(STORE === 'postgres')('PostgreSQL statement bounds', () => {
  it('a statement waiting for a lock held by another session is cancelled at the bound: DbUnavailableError, and the connection serves the next one', async () => {
    const url = await createTestDatabase();
    // One pool connection: the same backend answering before and after a transaction shows
    // it was kept. (A failed pool.query is another matter: node-postgres's pool drops the
    // connection of any statement that failed, whatever the error.)
    const db = await openPostgresDb(url, { statementTimeoutMs: 400, answerGraceMs: 2_000, max: 1 });
    opened.push(db);
    await db.exec('CREATE TABLE bound_probe (n int PRIMARY KEY)');
    const pipePid = await pid(db.pipe!);
    const lock = await holdLock(url, 'bound_probe');

    // Pool query: PostgreSQL cancels it at 400 ms (before the driver's own wait, 2.4 s).
    const read = await timed(db.query('SELECT count(*) FROM bound_probe'));
    expect(read.error).toBeInstanceOf(DbUnavailableError);
    expect((read.error as Error).cause).toMatchObject({ code: '57014' });
    // Told apart from a lost connection: the 503 says "timed out", the log names the reason.
    expect(read.error).toMatchObject({ reason: 'timeout', message: 'database timed out' });
    expect(read.ms).toBeGreaterThan(350);
    expect(read.ms).toBeLessThan(2_000);
    const poolPid = await pid(db);

    // A transaction: rolled back on the same, sound connection.
    const tx = await timed(db.transaction(async (q) => {
      await q.query('SELECT 1');
      await q.query('INSERT INTO bound_probe (n) VALUES ($1)', [1]);
    }));
    expect(tx.error).toBeInstanceOf(DbUnavailableError);
    expect(tx.error).toMatchObject({ reason: 'timeout' });
    expect(tx.ms).toBeLessThan(2_000);
    expect(await pid(db)).toBe(poolPid);

    // The pipe: the cancelled statement fails alone, the one behind it runs, on the same connection.
    const [blocked, behind] = await Promise.allSettled([
      db.pipe!.query('INSERT INTO bound_probe (n) VALUES ($1)', [2]),
      db.pipe!.query<{ n: number }>('SELECT $1::int AS n', [7]),
    ]);
    expect(blocked).toMatchObject({ status: 'rejected', reason: expect.any(DbUnavailableError) });
    expect((blocked as PromiseRejectedResult).reason).toMatchObject({ reason: 'timeout' });
    expect(behind).toMatchObject({ status: 'fulfilled', value: { rows: [{ n: 7 }] } });
    expect(await pid(db.pipe!)).toBe(pipePid);

    await lock.release();
    await db.pipe!.query('INSERT INTO bound_probe (n) VALUES ($1)', [3]);
    expect((await db.query('SELECT n FROM bound_probe ORDER BY n')).rows).toEqual([{ n: 3 }]);
  });

  it('a server that never answers: the driver gives up at the bound plus the grace and discards the connection; the pipe too, with every statement on it; the next ones get new connections', async () => {
    const url = await createTestDatabase();
    const proxy: TcpProxy = await startTcpProxy({ host: new URL(url).hostname, port: Number(new URL(url).port || 5432) });
    opened.push(proxy);
    const db = await openPostgresDb(proxy.url(url), { statementTimeoutMs: 300, answerGraceMs: 300, connectionTimeoutMillis: 1_000, max: 2 });
    opened.push(db);
    // Two pool connections open and idle, and the pipe's.
    await Promise.all([db.query('SELECT pg_sleep(0.05)'), db.query('SELECT pg_sleep(0.05)')]);
    const pipePid = await pid(db.pipe!);

    proxy.blackhole(true);
    const read = await timed(db.query('SELECT 1'));
    expect(read.error).toBeInstanceOf(DbUnavailableError);
    expect(String(((read.error as Error).cause as Error).message)).toMatch(/Query read timeout/);
    expect(read.error).toMatchObject({ reason: 'timeout' });
    expect(read.ms).toBeGreaterThan(550);
    expect(read.ms).toBeLessThan(1_500);

    // A transaction whose statement goes unanswered: no ROLLBACK waited for behind it.
    const tx = await timed(db.transaction((q) => q.query('SELECT 1')));
    expect(tx.error).toBeInstanceOf(DbUnavailableError);
    expect(tx.ms).toBeLessThan(1_500);

    // The pipe: three statements on the wire; the first's wait ends the connection, and
    // every statement on it fails (none is answered from a stale pipeline).
    const piped = await timed(Promise.allSettled([1, 2, 3].map((n) => db.pipe!.query('SELECT $1::int AS n', [n]))));
    expect(piped.ms).toBeLessThan(1_500);
    for (const r of piped.value!) expect(r).toMatchObject({ status: 'rejected', reason: expect.any(DbUnavailableError) });
    // The one that ran out of its wait timed out; those behind it lost their connection with it.
    expect((piped.value![0] as PromiseRejectedResult).reason).toMatchObject({ reason: 'timeout' });

    proxy.blackhole(false);
    expect((await db.query<{ n: number }>('SELECT $1::int AS n', [5])).rows).toEqual([{ n: 5 }]);
    expect(await db.transaction(async (q) => (await q.query<{ n: number }>('SELECT $1::int AS n', [6])).rows[0]!.n)).toBe(6);
    const again = await pid(db.pipe!);
    expect(again).not.toBe(pipePid);
    expect((await db.pipe!.query<{ n: number }>('SELECT $1::int AS n', [8])).rows).toEqual([{ n: 8 }]);
  });

  it('a server that accepts connections and never says a word: every statement, the pipe\'s and the listener\'s connection fail within the connect timeout, and closing the store does not wait for them', async () => {
    const sockets = new Set<net.Socket>();
    const hole = net.createServer((s) => void sockets.add(s.on('error', () => {})));
    await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
    opened.push({ close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); hole.close(() => r()); }) });
    const port = (hole.address() as net.AddressInfo).port;
    const db = await openPostgresDb(`postgres://postgres@127.0.0.1:${port}/none`, { connectionTimeoutMillis: 500, statementTimeoutMs: 300, answerGraceMs: 200 });
    let resets = 0;
    const sub = db.subscribe('hole_probe', { message: () => {}, reset: () => void resets++ });
    const tries = await Promise.all([db.query('SELECT 1'), db.pipe!.query('SELECT $1::int', [1]), db.transaction((q) => q.query('SELECT 1'))].map(timed));
    for (const r of tries) {
      expect(r.error).toBeInstanceOf(DbUnavailableError);
      // No connection was ever made: unreachable, not a statement that timed out.
      expect(r.error).toMatchObject({ reason: 'unreachable', message: 'database unreachable' });
      expect(r.ms).toBeLessThan(1_500);
    }
    expect(sub.live).toBe(false);
    expect((await timed(db.close())).ms).toBeLessThan(1_500);
  });

  it('long work is not cut by the API bound; its own bound ends with its transaction', async () => {
    const url = await createTestDatabase();
    const db = await openPostgresDb(url, { statementTimeoutMs: 300, longStatementTimeoutMs: 5_000, max: 1 });
    opened.push(db);
    await expect(db.query('SELECT pg_sleep(0.6)')).rejects.toBeInstanceOf(DbUnavailableError);

    const long = db.longWork!();
    expect((await long.query<{ s: string }>("SELECT current_setting('statement_timeout') AS s")).rows).toEqual([{ s: '5s' }]);
    expect((await long.query('SELECT pg_sleep(0.6) AS slept')).rows).toHaveLength(1);
    // Values go through as bound ones would.
    expect((await long.query<{ n: number; t: string }>('SELECT $1::int + 1 AS n, $2::text AS t', [41, "it's"])).rows).toEqual([{ n: 42, t: "it's" }]);
    expect(await long.transaction(async (q) => {
      await q.query('SELECT pg_sleep(0.4)');
      return (await q.query<{ s: string }>("SELECT current_setting('statement_timeout') AS s")).rows[0]!.s;
    })).toBe('5s');
    // Its own bound still holds.
    await expect(db.longWork!(400).query('SELECT pg_sleep(0.8)')).rejects.toBeInstanceOf(DbUnavailableError);
    expect((await db.longWork!(0).query<{ s: string }>("SELECT current_setting('statement_timeout') AS s")).rows).toEqual([{ s: '0' }]);
    // The one connection is back at the API bound: nothing leaked from long work.
    expect((await db.query<{ s: string }>("SELECT current_setting('statement_timeout') AS s")).rows).toEqual([{ s: '300ms' }]);
    await expect(db.query('SELECT pg_sleep(0.6)')).rejects.toBeInstanceOf(DbUnavailableError);
  });
});

describe.runIf(STORE === 'postgres')('PostgreSQL: a transaction left idle', () => {
  it('is ended by the server at the idle bound (idle_in_transaction_session_timeout): its locks are freed while the process still holds it; its next statement fails with a DbUnavailableError; the process goes on', async () => {
    const url = await createTestDatabase();
    const db = await openPostgresDb(url, { statementTimeoutMs: 5_000, idleInTransactionTimeoutMs: 300, longStatementTimeoutMs: 5_000, max: 2 });
    opened.push(db);
    await db.exec('CREATE TABLE idle_probe (n int PRIMARY KEY)');
    // Every connection of the store has it: the pool's and the pipe's.
    expect((await db.query<{ s: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS s")).rows).toEqual([{ s: '300ms' }]);
    expect((await db.pipe!.query<{ s: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS s", [])).rows).toEqual([{ s: '300ms' }]);

    const other = new pg.Client({ connectionString: url });
    await other.connect();
    opened.push({ close: () => other.end().catch(() => {}) });
    let freedWhileHeld = false;
    const stuck = timed(db.transaction(async (q) => {
      await q.query('INSERT INTO idle_probe (n) VALUES ($1)', [1]);
      await q.query('LOCK TABLE idle_probe IN ACCESS EXCLUSIVE MODE');
      // A process that hangs holding the transaction: the server ends it at 300 ms, and
      // another session gets the table while this one is still "inside" it.
      await new Promise((r) => setTimeout(r, 700));
      freedWhileHeld = (await other.query("SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'idle_probe' AND l.mode = 'AccessExclusiveLock'")).rows[0].n === 0;
      await other.query("SET lock_timeout = '200ms'; LOCK TABLE idle_probe IN ACCESS EXCLUSIVE MODE NOWAIT");
      await q.query('INSERT INTO idle_probe (n) VALUES ($1)', [2]);
    }));
    const r = await stuck;
    expect(freedWhileHeld).toBe(true);
    expect(r.error).toBeInstanceOf(DbUnavailableError);
    // The server said why (SQLSTATE 25P03): a bound reached, told apart from a lost server.
    expect(r.error).toMatchObject({ reason: 'timeout', cause: { code: '25P03' } });
    // Rolled back; the store goes on with another connection.
    expect((await db.query('SELECT n FROM idle_probe')).rows).toEqual([]);
    await db.transaction(async (q) => {
      await q.query('INSERT INTO idle_probe (n) VALUES ($1)', [3]);
      await new Promise((res) => setTimeout(res, 100)); // idle, under the bound
      await q.query('INSERT INTO idle_probe (n) VALUES ($1)', [4]);
    });
    expect((await db.query('SELECT n FROM idle_probe ORDER BY n')).rows).toEqual([{ n: 3 }, { n: 4 }]);

    // Long work may sit idle as long as its statements may run (the JS work of a batch
    // between two statements); migrations (bound 0) without any.
    const long = db.longWork!();
    expect(await long.transaction(async (q) => {
      await q.query('SELECT 1');
      await new Promise((res) => setTimeout(res, 600));
      return (await q.query<{ s: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS s")).rows[0]!.s;
    })).toBe('5s');
    expect((await db.longWork!(0).query<{ s: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS s")).rows).toEqual([{ s: '0' }]);
    // Nothing leaked into the pool.
    for (let i = 0; i < 2; i++) {
      expect((await db.query<{ s: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS s")).rows).toEqual([{ s: '300ms' }]);
    }
  });
});

describe('migrations under the statement bound', () => {
  it('run without it: a migration longer than the API bound is applied', async () => {
    const db = STORE === 'postgres' ? await openPostgresDb(await createTestDatabase(), { statementTimeoutMs: 300 }) : await openTestDb();
    opened.push(db);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slow-migration-'));
    fs.writeFileSync(path.join(dir, '0001_slow.sql'), 'SELECT pg_sleep(0.6);\nCREATE TABLE slow_probe (n int);\n');
    expect(await migrate(db, dir)).toEqual(['0001_slow.sql']);
    expect((await db.query('SELECT count(*)::int AS n FROM slow_probe')).rows).toEqual([{ n: 0 }]);
    if (STORE === 'postgres') await expect(db.query('SELECT pg_sleep(0.6)')).rejects.toBeInstanceOf(DbUnavailableError);
  });
});

describe.runIf(STORE === 'pglite')('the embedded store', () => {
  it('has no statement bound (no network, one backend in process): no longWork, long statements run', async () => {
    const db = await openTestDb();
    opened.push(db);
    expect(db.longWork).toBeUndefined();
    expect((await db.query('SELECT pg_sleep(0.3) AS slept')).rows).toHaveLength(1);
  });
});
