import type { Db } from './db.ts';
import { openPgliteDb } from './pglite-db.ts';
import { openPostgresDb } from './pg-db.ts';

/** Opens the store the configuration asks for: PostgreSQL when a URL is given, else PGlite. */
export async function openDb(opts: { databaseUrl?: string; dataDir?: string; inMemory?: boolean }): Promise<Db> {
  if (opts.databaseUrl) return openPostgresDb(opts.databaseUrl);
  return openPgliteDb(opts.inMemory ? undefined : opts.dataDir);
}
