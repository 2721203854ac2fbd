import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openPostgresDb } from '../../src/store/pg-db.ts';
import { migrate } from '../../src/store/migrate.ts';

/**
 * The postgres project's global setup: a fresh database per run on the machine's
 * PostgreSQL (TEST_PG_ADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * migrated once, dropped at the end.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const adminUrl = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `fiscal_test_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${adminUrl} (${(err as Error).message}); start it, or run with TEST_STORES=pglite`);
  }
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openPostgresDb(url.toString());
  await migrate(db);
  await db.close();
  project.provide('databaseUrl', url.toString());

  return async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
}
