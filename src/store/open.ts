import type { Db } from './db.ts';
import { openPgliteDb } from './pglite-db.ts';
import { openPostgresDb } from './pg-db.ts';

/**
 * Opens the store the configuration asks for: PostgreSQL when a URL is given, else PGlite.
 * The statement bounds apply to PostgreSQL only (pg-db.ts); unset, their defaults (timeouts.ts).
 */
export async function openDb(opts: {
  databaseUrl?: string | undefined; dataDir?: string; inMemory?: boolean;
  statementTimeoutMs?: number | undefined; longStatementTimeoutMs?: number | undefined; idleInTransactionTimeoutMs?: number | undefined;
}): Promise<Db> {
  if (opts.databaseUrl) {
    return openPostgresDb(opts.databaseUrl, {
      ...(opts.statementTimeoutMs !== undefined ? { statementTimeoutMs: opts.statementTimeoutMs } : {}),
      ...(opts.longStatementTimeoutMs !== undefined ? { longStatementTimeoutMs: opts.longStatementTimeoutMs } : {}),
      ...(opts.idleInTransactionTimeoutMs !== undefined ? { idleInTransactionTimeoutMs: opts.idleInTransactionTimeoutMs } : {}),
    });
  }
  return openPgliteDb(opts.inMemory ? undefined : opts.dataDir);
}
