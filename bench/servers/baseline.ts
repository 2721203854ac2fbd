import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pg from 'pg';
import { runChild } from '../lib/child-main.ts';

/**
 * The baseline: what "an HTTP route that writes/reads a row in PostgreSQL" costs with no
 * service around it. Bare Fastify (logger off, default JSON parser and serializer, no
 * schemas, no hooks) and a `pg` Pool sized and configured like src/store/pg-db.ts (max 20).
 *
 * The table has the shape of `locations` (uuid key, text columns, jsonb, timestamptz, the
 * same partial index for the newest-first list) but no foreign key and no other tables.
 *
 * - POST /rows: inserts one row from the JSON body, answers 201 with the row.
 * - GET  /rows: the newest 20 rows of the account, one query (the service also counts).
 *
 * Env: DATABASE_URL.
 */
const DDL = `
CREATE TABLE IF NOT EXISTS bench_baseline (
  id             uuid PRIMARY KEY,
  account_id     uuid NOT NULL,
  name           text NOT NULL,
  country        text NOT NULL,
  system         text,
  address        text,
  tax_id         text,
  country_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  status         text NOT NULL DEFAULT 'active',
  cert_expiry    timestamptz,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  deleted_at     timestamptz
);
CREATE INDEX IF NOT EXISTS bench_baseline_account_idx
  ON bench_baseline (account_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
`;

interface RowBody {
  name: string;
  country: string;
  address?: string;
  tax_id?: string;
  country_config?: Record<string, unknown>;
}

await runChild(async () => {
  const connectionString = process.env.DATABASE_URL;
  if (!connectionString) throw new Error('the baseline needs DATABASE_URL');
  const pool = new pg.Pool({ connectionString, max: 20, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
  pool.on('error', () => {});
  await pool.query(DDL);

  const accountId = randomUUID();
  const app = Fastify({ logger: false });

  app.post('/rows', async (req, reply) => {
    const b = req.body as RowBody;
    const now = new Date();
    const row = {
      id: randomUUID(),
      account_id: accountId,
      name: b.name,
      country: b.country,
      system: 'fr-nf525',
      address: b.address ?? null,
      tax_id: b.tax_id ?? null,
      country_config: b.country_config ?? {},
      status: 'active',
      cert_expiry: null,
      created_at: now,
      updated_at: now,
    };
    await pool.query(
      `INSERT INTO bench_baseline (id, account_id, name, country, system, address, tax_id, country_config, status, cert_expiry, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [row.id, row.account_id, row.name, row.country, row.system, row.address, row.tax_id, JSON.stringify(row.country_config),
        row.status, row.cert_expiry, row.created_at, row.updated_at],
    );
    return reply.code(201).send(row);
  });

  app.get('/rows', async () => {
    const res = await pool.query(
      `SELECT * FROM bench_baseline WHERE account_id = $1 AND deleted_at IS NULL
       ORDER BY created_at DESC, id DESC LIMIT 20`,
      [accountId],
    );
    return { data: res.rows };
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    port,
    info: { store: 'postgres', poolMax: 20 },
    async close() {
      await app.close();
      await pool.end();
    },
  };
});
