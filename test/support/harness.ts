import crypto from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { inject } from 'vitest';
import { ManualClock, systemClock, type Clock } from '../../src/core/clock.ts';
import { deriveKeys } from '../../src/crypto/master-key.ts';
import { buildApp, type AppOptions } from '../../src/http/app.ts';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import type { RateLimiter } from '../../src/ratelimit/limiter.ts';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPgliteDb } from '../../src/store/pglite-db.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';

export const STORE = (process.env.TEST_STORE ?? 'pglite') as 'pglite' | 'postgres';

/** A fresh store for one test file: in-memory PGlite, or the run's PostgreSQL database. */
export async function openTestDb(): Promise<Db> {
  if (STORE === 'postgres') return openPostgresDb(inject('databaseUrl'));
  const db = await openPgliteDb();
  await migrate(db);
  return db;
}

export interface TestAppOptions {
  db?: Db;
  clock?: Clock;
  limiter?: RateLimiter;
  liveEnabled?: boolean;
  masterKey?: Buffer;
  app?: AppOptions;
}

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  clock: Clock;
  request(opts: InjectOptions & { key?: string }): Promise<LightMyRequestResponse>;
  /** Signs up a fresh account; returns its ids and its root test key. */
  signup(overrides?: Record<string, unknown>): Promise<{ accountId: string; key: string; keyId: string; email: string }>;
  close(): Promise<void>;
}

export const TEST_MASTER_KEY = Buffer.alloc(32, 7);

export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const ownDb = !opts.db;
  const db = opts.db ?? (await openTestDb());
  const clock = opts.clock ?? systemClock;
  const limiter = opts.limiter ?? createMemoryLimiter();
  const app = await buildApp(
    { db, clock, keys: deriveKeys(opts.masterKey ?? TEST_MASTER_KEY), config: { liveEnabled: opts.liveEnabled ?? false, mode: 'cloud' }, limiter },
    opts.app ?? {},
  );
  await app.ready();

  const request: TestApp['request'] = ({ key, headers, ...rest }) =>
    app.inject({ ...rest, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(headers ?? {}) } });

  return {
    app,
    db,
    clock,
    request,
    async signup(overrides = {}) {
      const email = `owner-${crypto.randomUUID()}@example.com`;
      const res = await request({
        method: 'POST', url: '/v1/accounts', payload: { name: 'Test Merchant SL', billing_email: email, ...overrides },
        // Each sign-up from a new address, so the per-address sign-up bucket never interferes.
        remoteAddress: `10.${rnd()}.${rnd()}.${rnd()}`,
      });
      if (res.statusCode !== 201) throw new Error(`signup failed: ${res.statusCode} ${res.body}`);
      const body = res.json();
      return { accountId: body.account.id, key: body.api_key.key, keyId: body.api_key.id, email };
    },
    async close() {
      await app.close();
      await limiter.close(); // the harness owns the limiter, passed in or not
      if (ownDb) await db.close();
    },
  };
}

const rnd = () => crypto.randomInt(0, 256);

export { ManualClock };
