import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, openTestDb } from '../support/harness.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';
import type { Db } from '../../src/store/db.ts';

/*
 * Db.stats, what /metrics exports as svc_db_pool_* (the metrics tests read it at rest,
 * where nobody waits): here a caller really waits for the connection another holds, and
 * the gauges say so, then return to rest.
 */
const STORE = process.env.TEST_STORE === 'postgres' ? 'postgres' : 'pglite';
let db: Db | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
});

describe('database pool gauges (Db.stats)', () => {
  it('count a caller waiting for the only connection, and nobody once it is free', async () => {
    db = STORE === 'postgres' ? await openPostgresDb(await createTestDatabase(), { max: 1 }) : await openTestDb();
    const d = db;
    expect(d.stats!()).toMatchObject({ waiting: 0, max: 1 });

    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let began = () => {};
    const started = new Promise<void>((r) => (began = r));
    const holder = d.transaction(async (tx) => {
      await tx.query('SELECT 1');
      began();
      await gate;
    });
    await started;
    const waiter = d.query<{ n: number }>('SELECT 2 AS n');
    // The waiter is queued synchronously (pg's pool, PGlite's count of operations begun).
    expect(d.stats!()).toMatchObject({ total: 1, idle: 0, waiting: 1, max: 1 });

    release();
    await holder;
    expect((await waiter).rows).toEqual([{ n: 2 }]);
    expect(d.stats!()).toMatchObject({ waiting: 0, idle: 1 });
  });
});
