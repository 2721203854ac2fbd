import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { BatchService } from '../batch/service.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openConfiguredSigningDevice } from '../signing/pkcs11/configured.ts';
import { systemClock } from '../core/clock.ts';
import { SYSTEM_KEYS } from '../countries/registry.ts';
import { deriveKeys } from '../crypto/master-key.ts';
import { buildApp } from '../http/app.ts';
import { gettingStarted, listenUrl } from '../http/ready-message.ts';
import { EMBEDDED_BACKOFF } from '../jobs/backoff.ts';
import { catchUpQueue } from '../jobs/catch-up.ts';
import { authOf } from '../http/hooks/auth.ts';
import { queueStatus } from './queue.ts';
import { createMemoryLimiter } from '../ratelimit/index.ts';
import { createRuntime, DEFAULT_SOFTWARE, type Runtime } from '../runtime.ts';
import { checkMasterKey } from '../services/server-secrets.ts';
import type { AuthContext } from '../services/auth-context.ts';
import { migrate } from '../store/migrate.ts';
import { openPgliteDb, type PgliteArtifacts } from '../store/pglite-db.ts';
import { DATA_DIR_LOCK_FILE, DataDirInUse, lockDataDir } from '../store/data-dir-lock.ts';

/**
 * The local host (DECISIONS "One core, three hosts": `local`, the spec's Embedded-Local
 * mode): the whole `/v1` and `/management/v1` API on 127.0.0.1:8080, over the embedded
 * store in DATA_DIR, for a POS or back-office program on the merchant's own machine.
 *
 * What differs from the cloud host (`serve`, src/main.ts), and why:
 * - the embedded store only: one process owns DATA_DIR. DATABASE_URL and REDIS_URL are
 *   refused rather than ignored (a setting that silently does nothing is a trap), and so is
 *   WORKERS_IN_PROCESS=false (nothing else would ever send the records);
 * - no scheduler (spec Deployment modes: "`POST /v1/admin/process-pending` is called by the
 *   integrator"): the recurring jobs (batch processors' cron, certificate-expiry scan, e-mail
 *   outbox) are never scheduled;
 * - the in-process worker still runs, so the retry queue (the embedded backoff: 2 s doubling
 *   to 6 h, 20 attempts by default) and webhook deliveries keep flowing by themselves: a
 *   sale is sent inline on create and retried in the background ("Webhooks and the retry
 *   queue are managed locally");
 * - `POST /v1/admin/process-pending` does, besides running the batch processors as in the
 *   cloud, a catch-up of the caller's account: every waiting retry or delivery is made due
 *   now and the queue is drained before the answer (see `withQueueCatchUp`), so after an
 *   outage the integrator need not wait out a backoff of up to six hours;
 * - http:// webhooks to loopback are allowed by default (WEBHOOK_ALLOW_INSECURE, config.ts).
 */
export interface LocalHost {
  /** `http://<host>:<port>` the API listens on (the real port when PORT=0). */
  url: string;
  dataDir: string;
  /** The wired core, for tests that look into the store. */
  runtime: Runtime;
  close(): Promise<void>;
}

export interface LocalHostOptions {
  /** What /health and the OpenAPI document report (main.ts reads package.json). */
  serviceVersion?: string;
  /** PGlite's wasm modules and data bundle when they are not beside its module (scripts/sea/). */
  pglite?: PgliteArtifacts;
  /** Where the SQL migrations are (default: src/store/migrations; the executable extracts its own). */
  migrationsDir?: string;
  /** Default: pino to stdout at LOG_LEVEL. */
  log?: pino.Logger;
}

type Env = Record<string, string | undefined>;

/** The settings the local host cannot honour: start-up stops naming them (config.ts ConfigError). */
function refuseCloudSettings(env: Env): void {
  if (env.DATABASE_URL) throw new ConfigError('the local command runs on the embedded store in DATA_DIR: unset DATABASE_URL (use `serve` for PostgreSQL)');
  if (env.REDIS_URL) throw new ConfigError('the local command is one process with an in-memory rate limiter: unset REDIS_URL (use `serve` for a shared Redis limiter)');
  if (env.WORKERS_IN_PROCESS && /^(0|false|no|off)$/i.test(env.WORKERS_IN_PROCESS)) {
    throw new ConfigError('the local command always runs its worker in-process (nothing else can reach its store): unset WORKERS_IN_PROCESS');
  }
}

/** One local host per data directory (store/data-dir-lock.ts); the engine takes the same lock. */
export const LOCK_FILE = DATA_DIR_LOCK_FILE;

function lockLocalDataDir(dataDir: string): () => void {
  try {
    return lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirInUse) {
      throw new ConfigError(`DATA_DIR ${dataDir} is in use by another local host or engine (process ${err.pid ?? '?'}; lock file ${err.lockFile}): one process per data directory`);
    }
    throw err;
  }
}

/**
 * `process-pending` in local mode: the batch processors (the cloud behaviour), then a
 * catch-up of the caller's account queue. Retries waiting for their backoff and deferred
 * deliveries are made due now (the attempt still counts towards the retry maximum; a
 * flow-control wait an authority imposed is re-checked by the submit job, which defers
 * again), and the worker drains everything runnable before the request answers. Dead
 * entries stay dead: they need a person (GET /v1/retry-queue).
 */
function withQueueCatchUp(rt: Runtime): BatchService {
  const { log } = rt.deps;
  const base = rt.batch;
  return {
    ...base,
    async processPending(auth: AuthContext) {
      const results = await base.processPending(auth);
      // The batch processors' results stand whatever happens here: a failing job is the
      // queue's business (its retry, GET /v1/retry-queue), not this answer's.
      try {
        const { broughtForward, jobsRun } = await catchUpQueue(rt, auth.accountId);
        log.info({ accountId: auth.accountId, broughtForward, jobsRun }, 'process-pending: local queue caught up');
      } catch (err) {
        log.error({ err, accountId: auth.accountId }, 'process-pending: draining the local queue failed');
      }
      return results;
    },
  };
}

export async function startLocalHost(env: Env = process.env, opts: LocalHostOptions = {}): Promise<LocalHost> {
  refuseCloudSettings(env);
  const config = loadConfig(env, 'local', SYSTEM_KEYS);
  const log = opts.log ?? pino({ level: config.logLevel });
  // HardwareDevice mode (docs/hardware-device.md): the same PKCS#11 settings as `serve`;
  // a bad one stops start-up (ConfigError) before anything is opened.
  const signingDevice = openConfiguredSigningDevice(config.signingDevice);
  if (signingDevice) log.info({ device: signingDevice.description }, 'signing device open');
  let unlock: () => void;
  try {
    unlock = lockLocalDataDir(config.dataDir);
  } catch (err) {
    signingDevice?.close();
    throw err;
  }
  let db: Awaited<ReturnType<typeof openPgliteDb>>;
  try {
    db = await openPgliteDb(config.dataDir, opts.pglite ?? {});
  } catch (err) {
    unlock();
    signingDevice?.close();
    throw err;
  }
  let runtime: Runtime | undefined;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    const applied = await migrate(db, ...(opts.migrationsDir ? [opts.migrationsDir] : []));
    const keys = deriveKeys(config.masterKey);
    await checkMasterKey(db, keys);
    const limiter = createMemoryLimiter();
    // The same wiring as main.ts `runtimeFor`, with the embedded queue's backoff (spec
    // "Embedded local queue": 2 s doubling, capped at 21,600 s; retry max 20 from config.ts).
    runtime = createRuntime({
      db, clock: systemClock, keys, limiter, log: log as unknown as FastifyBaseLogger,
      config: { ...config, backoff: { ...EMBEDDED_BACKOFF, baseMs: config.submissionRetryBaseMs }, submissionMaxAttempts: config.submissionMaxAttempts },
      software: {
        ...DEFAULT_SOFTWARE, name: config.softwareName, vendorTaxId: config.softwareVendorNif || DEFAULT_SOFTWARE.vendorTaxId,
        version: opts.serviceVersion ?? DEFAULT_SOFTWARE.version, producerKeys: config.producerKeys,
      },
      signingDevice,
    });
    const rt = runtime;
    app = await buildApp({ ...rt, batch: withQueueCatchUp(rt) }, { bodyLimitBytes: config.bodyLimitBytes, ...(opts.serviceVersion ? { serviceVersion: opts.serviceVersion } : {}) });
    // The local queue with its deadline alerts (spec "Embedded local queue": warning_75pct,
    // critical_90pct, breached_100pct), what the engine's `queue_status` answers: a POS that
    // integrates over HTTP learns which records near or passed their legal window.
    app.get('/v1/local/queue', {
      config: { permission: 'retry_queue:read' },
      schema: { tags: ['retry queue'], summary: 'Local host only: the local queue\'s counts and the deadline alerts of records not accepted by their authority', security: [{ bearer: [] }] },
    }, async (req) => {
      const auth = authOf(req);
      return { ...(await queueStatus(db, systemClock, auth)), retry_max: config.submissionMaxAttempts };
    });
    log.info(
      { mode: 'local', store: 'pglite', dataDir: config.dataDir, masterKey: config.masterKeySource, migrations: applied, scheduler: false },
      `local host: data in ${config.dataDir} (embedded store, master key and all records: back this directory up, keep it with its master.key)`,
    );
    if (config.masterKeySource === 'generated') log.warn(`MASTER_KEY not set: generated one in ${config.dataDir}/master.key`);
    await app.listen({ host: config.host, port: config.port });
    // No scheduleRecurringJobs: the integrator calls POST /v1/admin/process-pending.
    rt.worker.start();
    const server = app;
    const url = listenUrl(server.server.address());
    log.info({ url }, `local host listening at ${url}: ${gettingStarted(url)}`);
    let closing: Promise<void> | undefined;
    return {
      url,
      dataDir: config.dataDir,
      runtime: rt,
      close: () => (closing ??= (async () => {
        await server.close();
        // After the API stopped taking requests: the systems journal the stop (France's JET).
        await rt.transactions.stop();
        await rt.worker.stop();
        rt.changes.close();
        rt.mailer.close();
        await limiter.close();
        await db.close();
        signingDevice?.close();
        unlock();
      })()),
    };
  } catch (err) {
    // E.g. the port is taken: leave nothing open behind the error.
    await app?.close().catch(() => {});
    runtime?.changes.close();
    runtime?.mailer.close();
    await db.close().catch(() => {});
    signingDevice?.close();
    unlock();
    throw err;
  }
}
