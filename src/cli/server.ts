/**
 * The service's own commands, as main.ts always ran them:
 * - `serve`: the cloud host: HTTP API, with the job workers in-process (WORKERS_IN_PROCESS);
 * - `worker`: job workers only, as separate processes on the same PostgreSQL (they claim
 *   with FOR UPDATE SKIP LOCKED, so any number may run);
 * - `migrate`: apply migrations and exit;
 * - `rotate-token-key [--drop-retired]`: a new offline-token signing key
 *   (services/offline-tokens.ts); `--drop-retired` also unpublishes the old ones (a leak).
 * - `local`: the local host (Embedded-Local mode): the API on 127.0.0.1:8080 over the
 *   embedded store, no scheduler (engine/local-host.ts).
 */
import Fastify from 'fastify';
import { metricsRoutes } from '../metrics/http.ts';
import { ConfigError } from '../config.ts';
import { systemClock } from '../core/clock.ts';
import { deriveKeys } from '../crypto/master-key.ts';
import { buildApp } from '../http/app.ts';
import { gettingStarted, listenUrl } from '../http/ready-message.ts';
import { createRateLimiter } from '../ratelimit/index.ts';
import { scheduleRecurringJobs } from '../runtime.ts';
import { startLocalHost } from '../engine/local-host.ts';
import { createOfflineTokenService } from '../services/offline-tokens.ts';
import { closeOnSignals } from './exit.ts';
import { openStore, runtimeFor } from './store.ts';
import { packageVersion } from './version.ts';

export async function migrateCommand(): Promise<void> {
  const { db, applied } = await openStore();
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  await db.close();
}

export async function rotateTokenKeyCommand(opts: { dropRetired?: boolean }): Promise<void> {
  const { config, db, log } = await openStore();
  const keys = deriveKeys(config.masterKey);
  const limiter = createRateLimiter({});
  const tokens = createOfflineTokenService({ db, clock: systemClock, keys, config, limiter, log });
  const { kid, dropped } = await tokens.rotate({ dropRetired: opts.dropRetired === true });
  await limiter.close();
  console.log(`offline tokens are now signed with key ${kid}${dropped.length ? `; unpublished: ${dropped.join(', ')}` : ''}`);
  await db.close();
}

/** `serve` and `worker`: run until SIGINT/SIGTERM, then stop cleanly (exit 0). */
export async function runService(command: 'serve' | 'worker'): Promise<void> {
  const store = await openStore({ signingDevice: true });
  const { config, db, log, applied } = store;
  if (command === 'worker' && db.kind === 'pglite') {
    throw new ConfigError('the worker command needs DATABASE_URL (PostgreSQL): the embedded store belongs to one process, and `serve` runs its workers in-process');
  }
  const { rt, limiter } = runtimeFor(store);
  let closeApp: (() => Promise<void>) | null = null;
  closeOnSignals(async (signal) => {
    log.info({ signal }, 'stopping');
    await closeApp?.();
    // After the API stopped taking requests: the systems journal the stop (France's JET).
    await rt.transactions.stop();
    await rt.worker.stop();
    await limiter.close();
    await db.close();
    store.signingDevice?.close();
  });

  if (command === 'worker') {
    log.info({ store: db.kind, workerId: rt.worker.workerId }, 'worker starting');
    if (config.metricsPort !== undefined) {
      // A worker has no API server: its own counters (submissions, webhook deliveries) are
      // scraped here, with the same access rule as the API's /metrics (docs/metrics.md).
      const metricsApp = Fastify({ logger: false });
      metricsRoutes(metricsApp, rt.metrics, { token: config.metricsToken });
      await metricsApp.listen({ host: config.host, port: config.metricsPort });
      closeApp = () => metricsApp.close();
      log.info({ url: `http://${config.host}:${config.metricsPort}/metrics` }, 'worker metrics');
    }
    await scheduleRecurringJobs(rt);
    rt.worker.start();
    return;
  }

  const app = await buildApp(rt, { bodyLimitBytes: config.bodyLimitBytes, serviceVersion: packageVersion() });
  closeApp = () => app.close();
  log.info({ store: db.kind, dataDir: db.kind === 'pglite' ? config.dataDir : undefined, rateLimiter: config.redisUrl ? 'redis' : 'memory', masterKey: config.masterKeySource, migrations: applied, workers: config.workersInProcess }, 'starting');
  if (config.masterKeySource === 'generated') log.warn(`MASTER_KEY not set: generated one in ${config.dataDir}/master.key; keep it with the data, and set MASTER_KEY when running several nodes`);
  await app.listen({ host: config.host, port: config.port });
  const url = listenUrl(app.server.address());
  log.info({ url }, readyMessage(url));
  if (config.workersInProcess) {
    await scheduleRecurringJobs(rt);
    rt.worker.start();
  }
}

/** What `npm start` says once it listens: where, then the shared getting-started line. */
function readyMessage(url: string): string {
  return `API ready at ${url}: ${gettingStarted(url)}`;
}

/** `local`: the host lives in engine/local-host.ts; here only its process life (signals). */
export async function runLocal(): Promise<void> {
  const host = await startLocalHost(process.env, { serviceVersion: packageVersion() });
  closeOnSignals(() => host.close());
}
