import fs from 'node:fs';
import { PGlite, type PGliteOptions, type Transaction } from '@electric-sql/pglite';
import type { Db, Queryable, QueryResult, Subscription } from './db.ts';
import { DurableNodeFS, durableStartParams } from './durable-nodefs.ts';

/**
 * The embedded store: PGlite, one Postgres backend in this process.
 * `dataDir` undefined = in memory (tests); otherwise a durable file store (see
 * durable-nodefs.ts). PGlite serializes queries and transactions internally.
 * `artifacts`: PGlite's WebAssembly modules and file-system bundle, for a host where they
 * do not sit beside PGlite's module (the single executable: scripts/sea/).
 */
export type PgliteArtifacts = Pick<PGliteOptions, 'pgliteWasmModule' | 'initdbWasmModule' | 'fsBundle' | 'loadDataDir'>;

/** The PGlite behind each embedded Db (for `snapshotPgliteDb`). */
const engines = new WeakMap<Db, PGlite>();

/**
 * The store's data directory as a tarball, which `openPgliteDb(undefined, { loadDataDir })`
 * opens again without running initdb (about 0.3 s instead of 1.2-2 s: the tests open a
 * migrated copy per test app, test/support/harness.ts).
 */
export async function snapshotPgliteDb(db: Db): Promise<Blob> {
  const pg = engines.get(db);
  if (!pg) throw new Error('not an embedded (PGlite) store');
  return pg.dumpDataDir('none');
}

export async function openPgliteDb(dataDir?: string, artifacts: PgliteArtifacts = {}): Promise<Db> {
  let pg: PGlite;
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true });
    pg = await PGlite.create({ ...artifacts, fs: new DurableNodeFS(dataDir), startParams: durableStartParams() });
  } else {
    pg = await PGlite.create({ ...artifacts });
  }
  // Operations started and not finished (PGlite runs one at a time): Db.stats.
  let inFlight = 0;
  const tracked = async <T>(op: () => Promise<T>): Promise<T> => {
    inFlight++;
    try {
      return await op();
    } finally {
      inFlight--;
    }
  };
  const run = async <T>(q: PGlite | Transaction, sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> => {
    const res = await q.query<T>(sql, params as unknown[] | undefined);
    return { rows: res.rows, rowCount: res.affectedRows ?? res.rows.length };
  };
  const db: Db = {
    kind: 'pglite',
    query: (sql, params) => tracked(() => run(pg, sql, params)),
    exec: (sql) => tracked(async () => {
      await pg.exec(sql);
    }),
    transaction: (fn) =>
      tracked(() => pg.transaction((tx) => {
        const q: Queryable = {
          query: (sql, params) => run(tx, sql, params),
          exec: async (sql) => {
            await tx.exec(sql);
          },
        };
        return fn(q);
      })),
    stats: () => ({ total: 1, idle: inFlight === 0 ? 1 : 0, waiting: Math.max(0, inFlight - 1), max: 1 }),
    subscribe(channel, listener): Subscription {
      // PGlite delivers the NOTIFYs of its (only) backend once the notifying transaction
      // committed; nothing can drop in between, so `reset` is never needed.
      let live = false;
      let closed = false;
      let unlisten: (() => Promise<void>) | undefined;
      pg.listen(channel, (payload) => listener.message(payload)).then(
        (u) => {
          if (closed) return void u().catch(() => {});
          unlisten = u;
          live = true;
        },
        () => {},
      );
      return {
        get live() {
          return live;
        },
        close() {
          closed = true;
          live = false;
          unlisten?.().catch(() => {});
        },
      };
    },
    close: () => pg.close(),
  };
  engines.set(db, pg);
  return db;
}
