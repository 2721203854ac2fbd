import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger, FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import pg from 'pg';
import { inject } from 'vitest';
import { ManualClock, systemClock, type Clock } from '../../src/core/clock.ts';
import { deriveKeys } from '../../src/crypto/master-key.ts';
import type { SoftwareIdentity } from '../../src/countries/types.ts';
import { buildApp, type AppOptions } from '../../src/http/app.ts';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import type { RateLimiter } from '../../src/ratelimit/limiter.ts';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.ts';
import type { Worker } from '../../src/jobs/runner.ts';
import { openPgliteDb, snapshotPgliteDb } from '../../src/store/pglite-db.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';

export const STORE = (process.env.TEST_STORE ?? 'pglite') as 'pglite' | 'postgres';

/** A new PostgreSQL database for this test file, copied from the run's migrated template. */
export async function createTestDatabase(): Promise<string> {
  const adminUrl = inject('pgAdminUrl');
  // A random suffix, not pid + a module counter: with isolate: false a worker imports this
  // module once per project, so two projects' files in one process counted from 1 alike
  // and asked for the same database (CI: 'database ... already exists').
  const name = `${inject('pgTemplate')}_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The migrated embedded store as a tarball, made once for the migrations as they are and
 * kept in the temporary folder (keyed by their hash and PGlite's version), so each test
 * app opens a copy without running initdb again (1.2-2 s each, several hundred times a run).
 */
let pgliteTemplate: Promise<Blob> | undefined;
function migratedPgliteTemplate(): Promise<Blob> {
  return (pgliteTemplate ??= (async () => {
    const dir = new URL('../../src/store/migrations/', import.meta.url);
    const hash = crypto.createHash('sha256');
    for (const f of fs.readdirSync(dir).sort()) hash.update(f).update(fs.readFileSync(new URL(f, dir)));
    hash.update(JSON.parse(fs.readFileSync(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url), 'utf8')).version);
    const file = path.join(os.tmpdir(), `fiscal-test-pglite-${hash.digest('hex').slice(0, 16)}.tar`);
    if (fs.existsSync(file)) return new Blob([fs.readFileSync(file)]);
    const db = await openPgliteDb();
    try {
      await migrate(db);
      const blob = await snapshotPgliteDb(db);
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, Buffer.from(await blob.arrayBuffer()));
      fs.renameSync(tmp, file);
      return blob;
    } finally {
      await db.close();
    }
  })());
}

/** A fresh store: in-memory PGlite (a copy of the migrated template), or a PostgreSQL database of its own. */
export async function openTestDb(): Promise<Db> {
  if (STORE === 'postgres') return openPostgresDb(await createTestDatabase());
  const db = await openPgliteDb(undefined, { loadDataDir: await migratedPgliteTemplate() });
  // Nothing to apply (the template is migrated); kept so a stale template could never pass unnoticed.
  await migrate(db);
  return db;
}

export interface TestAppOptions {
  /** The software identity records carry (default: the runtime's DEFAULT_SOFTWARE). */
  software?: SoftwareIdentity;
  db?: Db;
  clock?: Clock;
  limiter?: RateLimiter;
  liveEnabled?: boolean;
  masterKey?: Buffer;
  app?: AppOptions;
  /** Extra runtime configuration (retry attempts, backoff, webhook mode, translation AI…). */
  config?: Partial<RuntimeOptions['config']>;
  log?: FastifyBaseLogger;
  random?: () => number;
  worker?: RuntimeOptions['worker'];
  /** The plug-in of a system key (default: the registry's): a test wraps a system to give it a hook it lacks yet. */
  systems?: RuntimeOptions['systems'];
  /** HardwareDevice mode: an opened PKCS#11 device (test/support/softhsm.ts); the test closes it. */
  signingDevice?: RuntimeOptions['signingDevice'];
}

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  clock: Clock;
  rt: Runtime;
  /** The job worker, not started: tests run `worker.drain()` at the clock they choose. */
  worker: Worker;
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
  const rt = createRuntime({
    db, clock, limiter,
    keys: deriveKeys(opts.masterKey ?? TEST_MASTER_KEY),
    log: opts.log ?? (pino({ level: 'silent' }) as unknown as FastifyBaseLogger),
    config: { liveEnabled: opts.liveEnabled ?? false, mode: 'cloud', webhookAllowInsecure: true, ...opts.config },
    ...(opts.random ? { random: opts.random } : {}),
    ...(opts.worker ? { worker: opts.worker } : {}),
    ...(opts.software ? { software: opts.software } : {}),
    ...(opts.systems ? { systems: opts.systems } : {}),
    ...(opts.signingDevice ? { signingDevice: opts.signingDevice } : {}),
  });
  const app = await buildApp(rt, opts.app ?? {});
  await app.ready();

  const request: TestApp['request'] = ({ key, headers, ...rest }) =>
    app.inject({ ...rest, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(headers ?? {}) } });

  return {
    app,
    db,
    clock,
    rt,
    worker: rt.worker,
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
      await rt.worker.stop();
      rt.changes.close();
      rt.mailer.close();
      await limiter.close(); // the harness owns the limiter, passed in or not
      if (ownDb) await db.close();
    },
  };
}

const rnd = () => crypto.randomInt(0, 256);

export { ManualClock };

/** A rate limiter that never limits: for tests that fire more requests than a tier allows (chains, bulk records). */
export function unlimitedLimiter(): RateLimiter {
  const inner = createMemoryLimiter();
  return { take: (k, _spec, now) => inner.take(k, { requestsPerMinute: 1e9, burst: 1e9 }, now), close: () => inner.close() };
}
