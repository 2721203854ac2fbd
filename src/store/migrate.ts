import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Arbitrary constant: the advisory lock that serializes migrators on one database. */
const MIGRATION_LOCK = 7_340_215_001;

/**
 * Applies the plain SQL files in store/migrations in name order, each once, each in
 * its own transaction. Several nodes starting together are safe: the advisory lock
 * makes the others wait and then find nothing left to do.
 *
 * Without any statement bound (PostgreSQL: `longWork(0)`, SET LOCAL statement_timeout = 0
 * and no wait in the driver): a migration rewriting a large table, or a node waiting for
 * another's migrations behind the advisory lock, takes what it takes; the API's bound
 * (DATABASE_STATEMENT_TIMEOUT_MS) would stop start-up half way.
 */
export async function migrate(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
  const applied: string[] = [];
  await (db.longWork?.(0) ?? db).transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = fs.readFileSync(path.join(dir, file), 'utf8');
      await tx.exec(sql);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
      applied.push(file);
    }
  });
  return applied;
}
