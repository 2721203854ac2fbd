import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../support/harness.ts';
import type { Db } from '../../src/store/db.ts';

/*
 * The ordered pipe (Db.pipe, PostgreSQL only): statements written without waiting for the
 * answer before, run in the order sent, each autocommitted, a failed one not stopping
 * those behind it, and a lost connection replaced at the next statement. The create's
 * one-statement appends rely on each of these (services/transactions.ts).
 */
let db: Db;
beforeAll(async () => {
  db = await openTestDb();
  await db.exec('CREATE TABLE pipe_probe (n int PRIMARY KEY, backend int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())');
});
afterAll(() => db.close());

describe.runIf(process.env.TEST_STORE === 'postgres')('the ordered pipe', () => {
  it('runs statements in the order sent, on one backend, each committed on its own', async () => {
    const pipe = db.pipe!;
    // Each statement sleeps a little: were they sent one after the other's answer, or
    // run side by side, the order or the backend would tell.
    const sent = Array.from({ length: 20 }, (_, i) =>
      pipe.query('INSERT INTO pipe_probe (n, backend) SELECT $1, pg_backend_pid() FROM pg_sleep(0.002)', [i + 1]));
    await Promise.all(sent);
    const rows = (await db.query<{ n: number; backend: number }>('SELECT n, backend FROM pipe_probe ORDER BY at')).rows;
    expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(new Set(rows.map((r) => r.backend)).size).toBe(1);
  });

  it('a failed statement fails alone: the ones behind it run and commit', async () => {
    const pipe = db.pipe!;
    const results = await Promise.allSettled([
      pipe.query('INSERT INTO pipe_probe (n, backend) VALUES ($1, pg_backend_pid())', [101]),
      pipe.query('INSERT INTO pipe_probe (n, backend) VALUES ($1, pg_backend_pid())', [101]), // duplicate key
      pipe.query('INSERT INTO pipe_probe (n, backend) VALUES ($1, pg_backend_pid())', [102]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
    expect((await db.query('SELECT n FROM pipe_probe WHERE n > 100 ORDER BY n')).rows).toEqual([{ n: 101 }, { n: 102 }]);
  });

  it('keeps generic plans: made once per statement, not for every execution', async () => {
    const pipe = db.pipe!;
    // The pool plans every statement with its values; the pipe keeps the default mode, where
    // a saved plan (its named statements, and the foreign-key checks their inserts fire)
    // becomes generic after five executions and is reused (pg-db.ts).
    expect((await db.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode')).rows[0]!.plan_cache_mode).toBe('force_custom_plan');
    expect((await pipe.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode', [])).rows[0]!.plan_cache_mode).toBe('auto');
    for (let n = 201; n <= 210; n++) await pipe.query('INSERT INTO pipe_probe (n, backend) VALUES ($1, pg_backend_pid())', [n]);
    const plans = await pipe.query<{ generic_plans: string; custom_plans: string }>(
      "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE 'INSERT INTO pipe_probe (n, backend) VALUES%'", []);
    expect(plans.rows).toHaveLength(1);
    expect(Number(plans.rows[0]!.generic_plans)).toBeGreaterThan(0);
    expect(Number(plans.rows[0]!.custom_plans)).toBeLessThanOrEqual(5);
  });

  it('a lost connection fails what was on it, and the next statement opens another', async () => {
    const pipe = db.pipe!;
    const pid = (await pipe.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [])).rows[0]!.pid;
    const running = pipe.query('SELECT pg_sleep($1::float8)', [5]).then(() => 'answered', (err: unknown) => err);
    await new Promise((r) => setTimeout(r, 100));
    await db.query('SELECT pg_terminate_backend($1)', [pid]);
    expect(await running).toMatchObject({ name: 'DbUnavailableError' });
    const again = (await pipe.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [])).rows[0]!.pid;
    expect(again).not.toBe(pid);
  });
});

describe.runIf(process.env.TEST_STORE === 'pglite')('the embedded store', () => {
  it('has no pipe: its one backend runs each statement at once', () => {
    expect(db.pipe).toBeUndefined();
  });
});
