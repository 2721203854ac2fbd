import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../support/harness.ts';
import type { Db } from '../../src/store/db.ts';

/*
 * The PostgreSQL adapter sends BEGIN together with a transaction's first statement, its
 * values written in as literals (pg-db.ts). Values must come back exactly as bound ones
 * would, on both stores, and a failure in that first statement must roll back cleanly.
 */
let db: Db;
beforeAll(async () => {
  db = await openTestDb();
  await db.exec('CREATE TABLE begin_probe (id int PRIMARY KEY, t text, b bytea, d timestamptz, a text[], j jsonb)');
});
afterAll(() => db.close());

describe('a transaction opened with its first statement', () => {
  it('keeps every value intact', async () => {
    const values = [1, "it's a \\ 'tricky' text; DROP TABLE begin_probe; --", Buffer.from([0, 1, 254, 255]), new Date('2026-11-21T10:11:12.345Z'), ['x', 'y"z', "q'"], { k: "o'k", n: [1, 2] }];
    const rows = await db.transaction(async (tx) => {
      const ins = await tx.query<{ id: number }>('INSERT INTO begin_probe (id, t, b, d, a, j) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id', values);
      return ins.rows;
    });
    expect(rows).toEqual([{ id: 1 }]);
    const back = (await db.query<Record<string, unknown>>('SELECT * FROM begin_probe WHERE id = 1')).rows[0]!;
    expect(back.t).toBe(values[1]);
    expect(Buffer.from(back.b as Uint8Array)).toEqual(values[2]);
    expect((back.d as Date).toISOString()).toBe('2026-11-21T10:11:12.345Z');
    expect(back.a).toEqual(['x', 'y"z', "q'"]);
    expect(back.j).toEqual({ k: "o'k", n: [1, 2] });
  });

  it('rolls back when the first or a later statement fails', async () => {
    await expect(db.transaction((tx) => tx.query('INSERT INTO begin_probe (id) VALUES ($1)', [1]))).rejects.toThrow();
    await expect(db.transaction(async (tx) => {
      await tx.query('INSERT INTO begin_probe (id, t) VALUES ($1, $2)', [2, 'two']);
      await tx.query('INSERT INTO begin_probe (id) VALUES ($1)', [1]); // duplicate
    })).rejects.toThrow();
    expect((await db.query('SELECT id FROM begin_probe ORDER BY id')).rows).toEqual([{ id: 1 }]);
    // The connection is fine afterwards.
    expect(await db.transaction(async (tx) => (await tx.query<{ n: number }>('SELECT $1::int AS n', [7])).rows[0]!.n)).toBe(7);
  });
});
