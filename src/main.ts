import fs from 'node:fs';
import pino from 'pino';
import { ConfigError, loadConfig, type Config, type Mode } from './config.ts';
import { systemClock } from './core/clock.ts';
import { SYSTEM_KEYS } from './countries/registry.ts';
import { deriveKeys } from './crypto/master-key.ts';
import { buildApp } from './http/app.ts';
import { CLOUD_BACKOFF, EMBEDDED_BACKOFF } from './jobs/backoff.ts';
import { createRateLimiter } from './ratelimit/index.ts';
import { createRuntime, DEFAULT_SOFTWARE, scheduleRecurringJobs } from './runtime.ts';
import { checkMasterKey } from './services/server-secrets.ts';
import { createOfflineTokenService } from './services/offline-tokens.ts';
import { migrate } from './store/migrate.ts';
import { openDb } from './store/open.ts';

/**
 * CLI:
 * - `serve`: the cloud host: HTTP API, with the job workers in-process (WORKERS_IN_PROCESS);
 * - `worker`: job workers only, as separate processes on the same PostgreSQL (they claim
 *   with FOR UPDATE SKIP LOCKED, so any number may run);
 * - `migrate`: apply migrations and exit;
 * - `rotate-token-key [--drop-retired]`: a new offline-token signing key
 *   (services/offline-tokens.ts); `--drop-retired` also unpublishes the old ones (a leak).
 */
const USAGE = 'usage: main <serve|worker|migrate|rotate-token-key [--drop-retired]>';

function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

function runtimeFor(config: Config, db: Awaited<ReturnType<typeof openDb>>, log: pino.Logger) {
  const keys = deriveKeys(config.masterKey);
  const limiter = createRateLimiter(config.redisUrl ? { redisUrl: config.redisUrl } : {});
  const backoff = { ...(config.mode === 'local' ? EMBEDDED_BACKOFF : CLOUD_BACKOFF), baseMs: config.submissionRetryBaseMs };
  const rt = createRuntime({
    db, clock: systemClock, keys, limiter, log,
    config: { ...config, backoff, submissionMaxAttempts: config.submissionMaxAttempts },
    software: { ...DEFAULT_SOFTWARE, name: config.softwareName, vendorTaxId: config.softwareVendorNif || DEFAULT_SOFTWARE.vendorTaxId, version: packageVersion(), producerKeys: config.producerKeys },
  });
  return { rt, keys, limiter };
}

async function main(argv: string[]): Promise<void> {
  const command = argv[0];
  if (command !== 'serve' && command !== 'migrate' && command !== 'worker' && command !== 'rotate-token-key') {
    console.error(USAGE);
    process.exit(2);
  }
  const mode: Mode = 'cloud';
  const config = loadConfig(process.env, mode, SYSTEM_KEYS);
  const log = pino({ level: config.logLevel });
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const applied = await migrate(db);
  await checkMasterKey(db, deriveKeys(config.masterKey));

  if (command === 'migrate') {
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
    await db.close();
    return;
  }
  if (command === 'rotate-token-key') {
    const keys = deriveKeys(config.masterKey);
    const limiter = createRateLimiter({});
    const tokens = createOfflineTokenService({ db, clock: systemClock, keys, config, limiter, log });
    const { kid, dropped } = await tokens.rotate({ dropRetired: argv.includes('--drop-retired') });
    await limiter.close();
    console.log(`offline tokens are now signed with key ${kid}${dropped.length ? `; unpublished: ${dropped.join(', ')}` : ''}`);
    await db.close();
    return;
  }
  if (command === 'worker' && db.kind === 'pglite') {
    throw new ConfigError('the worker command needs DATABASE_URL (PostgreSQL): the embedded store belongs to one process, and `serve` runs its workers in-process');
  }

  const { rt, limiter } = runtimeFor(config, db, log);
  let stopping = false;
  let closeApp: (() => Promise<void>) | null = null;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    await closeApp?.();
    await rt.worker.stop();
    await limiter.close();
    await db.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  if (command === 'worker') {
    log.info({ store: db.kind, workerId: rt.worker.workerId }, 'worker starting');
    await scheduleRecurringJobs(rt);
    rt.worker.start();
    return;
  }

  const app = await buildApp(rt, { bodyLimitBytes: config.bodyLimitBytes, serviceVersion: packageVersion() });
  closeApp = () => app.close();
  log.info({ store: db.kind, dataDir: db.kind === 'pglite' ? config.dataDir : undefined, rateLimiter: config.redisUrl ? 'redis' : 'memory', masterKey: config.masterKeySource, migrations: applied, workers: config.workersInProcess }, 'starting');
  if (config.masterKeySource === 'generated') log.warn(`MASTER_KEY not set: generated one in ${config.dataDir}/master.key; keep it with the data, and set MASTER_KEY when running several nodes`);
  await app.listen({ host: config.host, port: config.port });
  if (config.workersInProcess) {
    await scheduleRecurringJobs(rt);
    rt.worker.start();
  }
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(78);
  }
  console.error(err);
  process.exit(1);
});
