/**
 * The store and runtime a command works on, chosen as the server chooses them
 * (config.ts: DATABASE_URL, else the embedded store in DATA_DIR), migrations applied and
 * MASTER_KEY checked against the store, so an operator tool never writes with another key.
 */
import pino from 'pino';
import { loadConfig, type Config } from '../config.ts';
import { systemClock } from '../core/clock.ts';
import { SYSTEM_KEYS } from '../countries/registry.ts';
import { deriveKeys } from '../crypto/master-key.ts';
import { CLOUD_BACKOFF, EMBEDDED_BACKOFF } from '../jobs/backoff.ts';
import { createRateLimiter } from '../ratelimit/index.ts';
import { createRuntime, DEFAULT_SOFTWARE, type Runtime } from '../runtime.ts';
import { checkMasterKey } from '../services/server-secrets.ts';
import type { Db } from '../store/db.ts';
import { migrate } from '../store/migrate.ts';
import { openDb } from '../store/open.ts';
import { openConfiguredSigningDevice } from '../signing/pkcs11/configured.ts';
import type { SigningDevice } from '../signing/pkcs11/device.ts';
import { packageVersion } from './version.ts';

export interface Store {
  config: Config;
  db: Db;
  log: pino.Logger;
  /** Migrations applied by this opening. */
  applied: string[];
  /** HardwareDevice mode (`serve`, `worker`): the configured PKCS#11 token, open. */
  signingDevice?: SigningDevice | undefined;
}

/** Opens the configured store (ConfigError → exit 78) and brings it up to date. */
export async function openStore(opts: { logLevel?: string; signingDevice?: boolean } = {}): Promise<Store> {
  const config = loadConfig(process.env, 'cloud', SYSTEM_KEYS);
  // Operator tools log to stderr, quietly: stdout holds their results.
  const log = opts.logLevel ? pino({ level: opts.logLevel }, pino.destination(2)) : pino({ level: config.logLevel });
  // HardwareDevice mode: the token is checked before anything else (a bad PIN or label stops start-up).
  const signingDevice = opts.signingDevice ? openConfiguredSigningDevice(config.signingDevice) : undefined;
  if (signingDevice) log.info({ device: signingDevice.description }, 'signing device open');
  const db = await openDb({
    databaseUrl: config.databaseUrl, dataDir: config.dataDir,
    statementTimeoutMs: config.databaseStatementTimeoutMs, longStatementTimeoutMs: config.databaseLongStatementTimeoutMs,
    idleInTransactionTimeoutMs: config.databaseIdleInTransactionTimeoutMs,
  });
  const applied = await migrate(db);
  await checkMasterKey(db, deriveKeys(config.masterKey));
  return { config, db, log, applied, signingDevice };
}

/** The service's runtime on an open store (the same services the HTTP routes use). */
export function runtimeFor(store: Store) {
  const { config, db, log } = store;
  const keys = deriveKeys(config.masterKey);
  const limiter = createRateLimiter(config.redisUrl ? { redisUrl: config.redisUrl, log } : {});
  const backoff = { ...(config.mode === 'local' ? EMBEDDED_BACKOFF : CLOUD_BACKOFF), baseMs: config.submissionRetryBaseMs };
  const rt = createRuntime({
    db, clock: systemClock, keys, limiter, log,
    config: { ...config, backoff, submissionMaxAttempts: config.submissionMaxAttempts },
    software: { ...DEFAULT_SOFTWARE, name: config.softwareName, vendorTaxId: config.softwareVendorNif || DEFAULT_SOFTWARE.vendorTaxId, version: packageVersion(), producerKeys: config.producerKeys },
    signingDevice: store.signingDevice,
  });
  return { rt, keys, limiter };
}

/** Runs `work` on a runtime of the store, then closes everything it opened. */
export async function withRuntime<T>(store: Store, work: (rt: Runtime, keys: ReturnType<typeof deriveKeys>) => Promise<T>): Promise<T> {
  const { rt, keys, limiter } = runtimeFor(store);
  try {
    return await work(rt, keys);
  } finally {
    rt.changes.close();
    rt.mailer.close();
    await limiter.close();
  }
}
