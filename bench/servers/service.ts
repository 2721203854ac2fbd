import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../src/core/clock.ts';
import { deriveKeys } from '../../src/crypto/master-key.ts';
import { buildApp } from '../../src/http/app.ts';
import { createRuntime } from '../../src/runtime.ts';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { checkMasterKey } from '../../src/services/server-secrets.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openDb } from '../../src/store/open.ts';
import { runChild } from '../lib/child-main.ts';
import { createBenchLimiter } from '../lib/unthrottled-limiter.ts';

/**
 * The real service in a child process, built the way src/main.ts builds it:
 * openDb + migrate + checkMasterKey, buildApp with the system clock and a fresh master key.
 * Differences from `serve`, all deliberate: logger off (as in tests: logging every request
 * would be measured too), port 0, and the rate limiter wrapped so it never refuses
 * (bench/lib/unthrottled-limiter.ts).
 *
 * Env: BENCH_STORE=pglite + DATA_DIR (file-backed, durable), or BENCH_STORE=postgres + DATABASE_URL.
 */
await runChild(async () => {
  const store = process.env.BENCH_STORE;
  let db;
  if (store === 'pglite') {
    // Without a dataDir openDb would give an in-memory PGlite: never benchmark that by mistake.
    if (!process.env.DATA_DIR) throw new Error('BENCH_STORE=pglite needs DATA_DIR');
    db = await openDb({ dataDir: process.env.DATA_DIR });
  } else if (store === 'postgres') {
    if (!process.env.DATABASE_URL) throw new Error('BENCH_STORE=postgres needs DATABASE_URL');
    db = await openDb({ databaseUrl: process.env.DATABASE_URL });
  } else {
    throw new Error(`BENCH_STORE must be pglite or postgres (got ${store})`);
  }
  if (db.kind !== store) throw new Error(`asked for ${store}, opened ${db.kind}`);

  const applied = await migrate(db);
  const keys = deriveKeys(randomBytes(32));
  await checkMasterKey(db, keys);
  const limiter = createBenchLimiter();
  const rt = createRuntime({
    db, clock: systemClock, keys, limiter, log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
    config: { liveEnabled: false, mode: 'cloud' },
  });
  // Workers run in-process, as under `serve`.
  rt.worker.start();
  const app = await buildApp(rt);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;

  return {
    port,
    info: { store: db.kind, migrations: applied, dataDir: store === 'pglite' ? process.env.DATA_DIR : undefined },
    stats: () => ({ limiterTakes: limiter.takes, limiterRefused: limiter.refused }),
    async close() {
      await app.close();
      await rt.worker.stop();
      await limiter.close();
      await db.close();
    },
  };
});
