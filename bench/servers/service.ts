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
import fs from 'node:fs';
import path from 'node:path';
import { runChild } from '../lib/child-main.ts';
import { type CpuProfile, startProfiler, summarizeProfile } from '../lib/cpu-profile.ts';
import { probeDb } from '../lib/db-probe.ts';
import { createBenchLimiter } from '../lib/unthrottled-limiter.ts';

/**
 * The real service in a child process, built the way src/main.ts builds it:
 * openDb + migrate + checkMasterKey, buildApp with the system clock and a fresh master key.
 * Differences from `serve`, all deliberate: logger off (as in tests: logging every request
 * would be measured too), port 0, and the rate limiter wrapped so it never refuses
 * (bench/lib/unthrottled-limiter.ts).
 *
 * Env: BENCH_STORE=pglite + DATA_DIR (file-backed, durable), or BENCH_STORE=postgres + DATABASE_URL.
 * BENCH_PROBE=1 (profiling runs only, never the measured benchmark): the store is wrapped in
 * bench/lib/db-probe.ts (every statement timed) and the parent may send the control actions
 * probe-reset, probe-read, profile-start, profile-stop (V8 CPU profile of the window, summarized;
 * the raw .cpuprofile goes to BENCH_PROFILE_DIR when set).
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

  const probe = process.env.BENCH_PROBE === '1' ? probeDb(db) : undefined;
  if (probe) db = probe.db;
  const applied = await migrate(db);
  // BENCH_MASTER_KEY (hex): several servers of one run on one database share the key it was set up with.
  const keys = deriveKeys(process.env.BENCH_MASTER_KEY ? Buffer.from(process.env.BENCH_MASTER_KEY, 'hex') : randomBytes(32));
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
    ...(probe ? { control: probeControl(probe) } : {}),
    async close() {
      await app.close();
      await rt.worker.stop();
      await limiter.close();
      await db.close();
    },
  };
});

/** The control actions of a profiling run. */
function probeControl(probe: ReturnType<typeof probeDb>): (action: string) => Promise<unknown> {
  let profiler: ReturnType<typeof startProfiler> | undefined;
  return async (action) => {
    switch (action) {
      case 'probe-reset':
        probe.reset();
        return null;
      case 'probe-read':
        return probe.snapshot();
      case 'profile-start':
        // BENCH_PROFILE_HEAP=1 with BENCH_PROFILE_DIR: the window's allocations too (.heapprofile).
        profiler = startProfiler(process.env.BENCH_PROFILE_HEAP === '1' && process.env.BENCH_PROFILE_DIR
          ? path.join(process.env.BENCH_PROFILE_DIR, `service-${process.env.BENCH_STORE}-${process.pid}.heapprofile`)
          : undefined);
        return null;
      case 'profile-stop': {
        if (!profiler) throw new Error('profile-stop before profile-start');
        const profile: CpuProfile = await profiler.stop();
        profiler = undefined;
        const dir = process.env.BENCH_PROFILE_DIR;
        if (dir) {
          fs.mkdirSync(dir, { recursive: true });
          fs.writeFileSync(path.join(dir, `service-${process.env.BENCH_STORE}-${process.pid}.cpuprofile`), JSON.stringify(profile));
        }
        return summarizeProfile(profile);
      }
      default:
        throw new Error(`unknown action ${action}`);
    }
  };
}
