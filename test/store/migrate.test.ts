import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.ts';
import { deriveKeys } from '../../src/crypto/master-key.ts';
import { checkMasterKey } from '../../src/services/server-secrets.ts';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { STORE, TEST_MASTER_KEY, openTestDb } from '../support/harness.ts';

let db: Db;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(() => db.close());

describe('migrations', () => {
  it('are applied once: a second run (and concurrent runs) find nothing to do', async () => {
    const again = await Promise.all([migrate(db), migrate(db), migrate(db)]);
    expect(again).toEqual([[], [], []]);
    const versions = (await db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
    expect(versions[0]).toBe('0001_platform.sql');
  });

  it('created the platform tables', async () => {
    const tables = (await db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name",
    )).rows.map((r) => r.table_name);
    expect(tables).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'consents', 'locations', 'server_secrets', 'schema_migrations']));
  });

  it('compresses long record bodies and request columns with lz4 where the server has it (0041)', async () => {
    const methods = (await db.query<{ attname: string; c: string }>(
      `SELECT attname, attcompression::text AS c FROM pg_attribute
        WHERE (attrelid = 'fiscal_records'::regclass AND attname = 'body')
           OR (attrelid = 'transactions'::regclass AND attname IN ('request_payload', 'normalized', 'response_payload', 'render_hints'))`,
    )).rows;
    expect(methods).toHaveLength(5);
    // Debian's PostgreSQL (this machine's, CI's) is built with LZ4; PGlite may not be, and
    // then keeps the default ('': pglz) on all five.
    const expected = STORE === 'postgres' ? ['l'] : ['l', ''];
    expect(expected).toContain(methods[0]!.c);
    for (const m of methods) expect(m.c).toBe(methods[0]!.c);
  });
});

describe('MASTER_KEY check', () => {
  it('accepts the key the database was set up with and refuses another', async () => {
    await checkMasterKey(db, deriveKeys(TEST_MASTER_KEY));
    await checkMasterKey(db, deriveKeys(TEST_MASTER_KEY));
    await expect(checkMasterKey(db, deriveKeys(Buffer.alloc(32, 9)))).rejects.toThrow(ConfigError);
  });
});

describe('transactions', () => {
  it('roll back everything when the callback throws', async () => {
    await db.query('CREATE TABLE IF NOT EXISTS tx_probe (id int PRIMARY KEY)');
    await expect(db.transaction(async (tx) => {
      await tx.query('INSERT INTO tx_probe (id) VALUES (1)');
      throw new Error('abort');
    })).rejects.toThrow('abort');
    expect((await db.query('SELECT * FROM tx_probe')).rows).toHaveLength(0);
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO tx_probe (id) VALUES (2)');
    });
    expect((await db.query('SELECT * FROM tx_probe')).rows).toHaveLength(1);
  });
});
