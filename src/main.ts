import fs from 'node:fs';
import { ConfigError, loadConfig, type Mode } from './config.ts';
import { systemClock } from './core/clock.ts';
import { deriveKeys } from './crypto/master-key.ts';
import { buildApp } from './http/app.ts';
import { createRateLimiter } from './ratelimit/index.ts';
import { checkMasterKey } from './services/server-secrets.ts';
import { migrate } from './store/migrate.ts';
import { openDb } from './store/open.ts';

/**
 * CLI: `serve` (the cloud host: HTTP API), `migrate` (apply migrations and exit).
 * Later issues add `worker` and `local`.
 */
const USAGE = 'usage: main <serve|migrate>';

function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

async function main(argv: string[]): Promise<void> {
  const command = argv[0];
  if (command !== 'serve' && command !== 'migrate') {
    console.error(USAGE);
    process.exit(2);
  }
  const mode: Mode = 'cloud';
  const config = loadConfig(process.env, mode);
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const applied = await migrate(db);
  const keys = deriveKeys(config.masterKey);
  await checkMasterKey(db, keys);

  if (command === 'migrate') {
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
    await db.close();
    return;
  }

  const limiter = createRateLimiter(config.redisUrl ? { redisUrl: config.redisUrl } : {});
  const app = await buildApp(
    { db, clock: systemClock, keys, config, limiter },
    { logger: { level: config.logLevel }, bodyLimitBytes: config.bodyLimitBytes, serviceVersion: packageVersion() },
  );
  app.log.info({ store: db.kind, dataDir: db.kind === 'pglite' ? config.dataDir : undefined, rateLimiter: config.redisUrl ? 'redis' : 'memory', masterKey: config.masterKeySource, migrations: applied }, 'starting');
  if (config.masterKeySource === 'generated') app.log.warn(`MASTER_KEY not set: generated one in ${config.dataDir}/master.key; keep it with the data, and set MASTER_KEY when running several nodes`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stopping');
    await app.close();
    await limiter.close();
    await db.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  await app.listen({ host: config.host, port: config.port });
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(78);
  }
  console.error(err);
  process.exit(1);
});
