import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openPostgresDb } from '../../src/store/pg-db.ts';
import { migrate } from '../../src/store/migrate.ts';

/**
 * The postgres project's global setup, on the machine's PostgreSQL
 * (TEST_PG_ADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres):
 * one migrated template database per run; every test file then gets its own copy
 * (CREATE DATABASE … TEMPLATE, see harness.ts), so files never see each other's jobs.
 * Everything of the run is dropped at the end.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

export default async function setup(project: TestProject) {
  const adminUrl = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const template = `fiscal_test_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${adminUrl} (${(err as Error).message}); start it, or run with TEST_STORES=pglite`);
  }
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${template}`;
  const db = await openPostgresDb(url.toString());
  await migrate(db);
  await db.close();
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);

  return async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    const dbs = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${template}%`]);
    for (const { datname } of dbs.rows) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await c.end();
  };
}
