import pg from 'pg';

export const PG_ADMIN_URL =
  process.env.BENCH_PG_ADMIN_URL ?? process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  try {
    await c.connect();
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${PG_ADMIN_URL} (${(err as Error).message}); start it or set BENCH_PG_ADMIN_URL`);
  }
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates a fresh database `bench_<timestamp>`; returns its name and URL. */
export async function createBenchDatabase(): Promise<{ name: string; url: string }> {
  const name = `bench_${Date.now()}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

export async function dropBenchDatabase(name: string): Promise<void> {
  if (!/^bench_\d+$/.test(name)) throw new Error(`refusing to drop ${name}: not a benchmark database`);
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** The server settings that decide what a commit costs, for the report. */
export async function postgresSettings(): Promise<Record<string, string>> {
  return withAdmin(async (c) => {
    const out: Record<string, string> = {};
    out.version = (await c.query<{ v: string }>('SELECT current_setting(\'server_version\') AS v')).rows[0]!.v;
    for (const s of ['fsync', 'synchronous_commit', 'wal_sync_method', 'max_connections', 'shared_buffers']) {
      out[s] = (await c.query<{ v: string }>('SELECT current_setting($1) AS v', [s])).rows[0]!.v;
    }
    return out;
  });
}

/**
 * Leaves the benchmark database as a quiet server would be before a measured run, the way
 * pgbench vacuums before its runs: VACUUM (ANALYZE) of every table, then a CHECKPOINT, then
 * no autovacuum worker still busy on it. Why: each scenario writes 30,000-50,000 rows
 * (~100 MB of WAL) in 15 s, and the next one paid for them: the checkpoint that WAL
 * triggers and the autovacuum of the tables it filled ran during whichever measured window
 * came next (PostgreSQL CPU and disk on the same 2 cores), so a scenario's figure depended
 * on the one before it. Every scenario, the baseline included, starts settled alike.
 * Answers how long it took (ms).
 */
export async function settleDatabase(url: string, name: string, waitMs = 30_000): Promise<number> {
  const t0 = Date.now();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('VACUUM (ANALYZE)');
    await c.query('CHECKPOINT');
    for (;;) {
      const busy = (await c.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND datname = $1", [name])).rows[0]!.n;
      if (busy === 0 || Date.now() - t0 > waitMs) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await c.end();
  }
  return Date.now() - t0;
}
