import { cleanupStack } from './lib/cleanup.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from '../src/store/db.ts';
import { openDb } from '../src/store/open.ts';
import { loadSettingsFromEnv, type Measurement, measure } from './lib/cannon.ts';
import { type FloorResult, runChainFloor } from './lib/chain-floor.ts';
import { type ProfileSummary, startProfiler, summarizeProfile } from './lib/cpu-profile.ts';
import { type ProbeSnapshot, probeDb } from './lib/db-probe.ts';
import { type CodeVersion, codeVersion } from './lib/code-version.ts';
import { forkServer } from './lib/fork-server.ts';
import { type ActivityProfile, type ActivitySampler, sampleActivity } from './lib/pg-activity.ts';
import { createBenchDatabase, dropBenchDatabase } from './lib/pg-admin.ts';
import { cpuBetween, cpuSnapshot } from './lib/proc-cpu.ts';
import { enqueueSubmitJobs, openQueueContext } from './lib/queue.ts';
import { fileStamp, fmt, markdownTable } from './lib/report.ts';
import { BENCH_SYSTEMS, type BenchSystem, prepareService } from './transactions.ts';

/**
 * Where the time goes in the transactions benchmark (`npm run bench -- transactions-profile`,
 * not part of `npm run bench`). The same loads as bench/transactions.ts, with instruments
 * that the measured benchmark never carries:
 *
 *   - the service child with BENCH_PROBE=1: every statement timed (bench/lib/db-probe.ts),
 *     the chain-head lock's wait and hold times, the event-loop delay, and a V8 CPU profile
 *     of the measured window only (node:inspector), summarized by category and function;
 *   - POST /v1/transactions on one France location (as measured) and spread over
 *     BENCH_PROFILE_LOCATIONS locations (one hash chain each): what the chain lock costs;
 *   - the queue drain in this process with the same probe and profiler.
 *
 * Figures are lower than the benchmark's (the instruments cost a little); read them for
 * proportions. Env: BENCH_DURATION (default 10), BENCH_CONNECTIONS (50), BENCH_WARMUP (5),
 * BENCH_PROFILE_LOCATIONS (50), BENCH_PROFILE_JOBS (5,000 on PostgreSQL, a fifth on PGlite),
 * BENCH_PROFILE_DIR (also keep the raw .cpuprofile files there, to open in Chrome DevTools).
 */

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVICE = path.join(HERE, 'servers', 'service.ts');
const RESULTS_DIR = path.join(HERE, 'results');

interface HttpProfile {
  label: string;
  store: 'postgres' | 'pglite';
  locations: number;
  measurement: Measurement;
  probe: ProbeSnapshot;
  profile: ProfileSummary;
  activity?: ActivityProfile;
}

interface DrainProfile {
  store: 'postgres' | 'pglite';
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  probe: ProbeSnapshot;
  profile: ProfileSummary;
  activity?: ActivityProfile;
  /** This process during the drain, % of one core (PGlite: the database included). */
  nodeCpuPct: number;
  postgresCpuPct: number | undefined;
}

export interface ProfileReport {
  benchmark: 'transactions-profile';
  startedAt: string;
  finishedAt: string;
  code: CodeVersion;
  http: HttpProfile[];
  drains: DrainProfile[];
  chainFloor: FloorResult[];
}

export async function runTransactionsProfile(): Promise<ProfileReport> {
  const startedAt = new Date();
  const load = loadSettingsFromEnv();
  const spread = Number(process.env.BENCH_PROFILE_LOCATIONS ?? 50);
  const jobs = Number(process.env.BENCH_PROFILE_JOBS ?? 5000);
  // BENCH_PROFILE_SYSTEM=pt-saft: the HTTP runs create for that system (default France);
  // BENCH_PROFILE_ONLY=http-pg1: only the PostgreSQL one-location run, no drains, no floor.
  const system = (process.env.BENCH_PROFILE_SYSTEM ?? 'fr-nf525') as BenchSystem;
  if (!BENCH_SYSTEMS.includes(system)) throw new Error(`BENCH_PROFILE_SYSTEM must be one of ${BENCH_SYSTEMS.join(', ')} (got "${system}")`);
  const only = process.env.BENCH_PROFILE_ONLY;
  if (only !== undefined && only !== 'http-pg1') throw new Error(`BENCH_PROFILE_ONLY must be http-pg1 or unset (got "${only}")`);
  const rawDir = process.env.BENCH_PROFILE_DIR ? path.resolve(process.env.BENCH_PROFILE_DIR) : undefined;
  const log = (s: string) => console.error(`[profile] ${s}`);
  const cleanups = cleanupStack('stopping servers, dropping the profile databases');
  try {
    const http: HttpProfile[] = [];
    const all: Array<{ store: 'postgres' | 'pglite'; locations: number }> = [
      { store: 'postgres', locations: 1 },
      { store: 'postgres', locations: spread },
      { store: 'pglite', locations: 1 },
    ];
    const runs = all.filter((r) => only !== 'http-pg1' || (r.store === 'postgres' && r.locations === 1));
    for (const run of runs) {
      const database = run.store === 'postgres' ? await createBenchDatabase() : undefined;
      if (database) cleanups.push(() => dropBenchDatabase(database.name));
      const dataDir = run.store === 'pglite' ? fs.mkdtempSync(path.join(process.env.BENCH_DATA_ROOT ?? os.tmpdir(), 'bench-pglite-prof-')) : undefined;
      if (dataDir) cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
      const env: Record<string, string> = {
        BENCH_PROBE: '1',
        ...(rawDir ? { BENCH_PROFILE_DIR: rawDir } : {}),
        ...(database ? { BENCH_STORE: 'postgres', DATABASE_URL: database.url } : { BENCH_STORE: 'pglite', DATA_DIR: dataDir! }),
      };
      const label = `POST /v1/transactions (${system}), ${run.locations} location${run.locations > 1 ? 's' : ''}`;
      log(`${label} on ${run.store}…`);
      const server = await forkServer(SERVICE, env);
      cleanups.push(() => server.stop());
      const prep = await prepareService(server, `prof-${run.store}-${run.locations}`, run.locations, system);
      let sampler: ActivitySampler | undefined;
      let activity: ActivityProfile | undefined;
      let probe: ProbeSnapshot | undefined;
      let profile: ProfileSummary | undefined;
      const m = await measure(`${label} on ${run.store}`, server, prep.spec, load, {
        beforeMeasured: async () => {
          if (database) sampler = await sampleActivity(database.url, database.name);
          await server.control('probe-reset');
          await server.control('profile-start');
        },
        afterMeasured: async () => {
          profile = (await server.control('profile-stop')) as ProfileSummary;
          probe = (await server.control('probe-read')) as ProbeSnapshot;
          activity = await sampler?.stop();
        },
      });
      log(`  ${fmt.int(m.reqPerSec)} req/s, p99 ${m.latencyMs.p99} ms; ${(probe!.totalStatements / Math.max(1, m.ok2xx)).toFixed(1)} statements/request; ` +
        `lock wait ${probe!.lock.waitMeanMs} ms, hold ${probe!.lock.holdMeanMs} ms`);
      http.push({ label, store: run.store, locations: run.locations, measurement: m, probe: probe!, profile: profile!, ...(activity ? { activity } : {}) });
      await server.stop();
      cleanups.pop();
    }

    const drains: DrainProfile[] = [];
    for (const store of only === 'http-pg1' ? [] : (['postgres', 'pglite'] as const)) {
      const n = store === 'postgres' ? jobs : Math.max(1, Math.round(jobs / 5));
      let inner: Db;
      let database: { name: string; url: string } | undefined;
      if (store === 'postgres') {
        database = await createBenchDatabase();
        const d = database;
        cleanups.push(() => dropBenchDatabase(d.name));
        inner = await openDb({ databaseUrl: database.url });
      } else {
        const dir = fs.mkdtempSync(path.join(process.env.BENCH_DATA_ROOT ?? os.tmpdir(), 'bench-pglite-prof-q-'));
        cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
        inner = await openDb({ dataDir: dir });
      }
      const probe = probeDb(inner);
      cleanups.push(() => probe.db.close());
      const ctx = await openQueueContext(probe.db, 20);
      cleanups.push(() => ctx.close());
      log(`queue drain on ${store}: enqueueing ${fmt.int(n)}…`);
      await enqueueSubmitJobs(ctx, n, 40);
      await probe.db.exec('ANALYZE jobs; ANALYZE transactions; ANALYZE fiscal_records');
      const sampler = database ? await sampleActivity(database.url, database.name) : undefined;
      probe.reset();
      const profiler = startProfiler();
      const cpu0 = process.cpuUsage();
      const m0 = cpuSnapshot();
      const t0 = process.hrtime.bigint();
      await ctx.rt.worker.drain(1_000_000);
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpu = process.cpuUsage(cpu0);
      const machine = cpuBetween(m0, cpuSnapshot(), seconds * 1000);
      const raw = await profiler.stop();
      const snap = probe.snapshot();
      const activity = await sampler?.stop();
      if (rawDir) {
        fs.mkdirSync(rawDir, { recursive: true });
        fs.writeFileSync(path.join(rawDir, `drain-${store}-${process.pid}.cpuprofile`), JSON.stringify(raw));
      }
      // drain() counts the jobs it claimed: for es-verifactu the heads of batches, whose
      // adopted followers complete with them. Count the completed jobs instead.
      const done = Number((await probe.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'submit' AND status = 'completed'`)).rows[0]!.n);
      if (done !== n) throw new Error(`drained ${done} of ${n}`);
      log(`  ${fmt.int(done / seconds)} jobs/s; ${(snap.totalStatements / done).toFixed(1)} statements/job`);
      drains.push({
        store, jobs: done, seconds: Math.round(seconds * 100) / 100, jobsPerSecond: Math.round(done / seconds),
        probe: snap, profile: summarizeProfile(raw), ...(activity ? { activity } : {}),
        nodeCpuPct: Math.round(((cpu.user + cpu.system) / 1e6 / seconds) * 1000) / 10,
        postgresCpuPct: machine.postgresPct === undefined ? undefined : Math.round(machine.postgresPct * 10) / 10,
      });
      await cleanups.pop()!(); // ctx
      await cleanups.pop()!(); // db
    }
    if (only === 'http-pg1') return { benchmark: 'transactions-profile', startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), code: codeVersion(), http, drains, chainFloor: [] };
    log('chain floor: one hash chain behind a row lock, bare SQL…');
    const floorDb = await createBenchDatabase();
    cleanups.push(() => dropBenchDatabase(floorDb.name));
    const chainFloor = await runChainFloor(floorDb.url, [
      { label: 'lock + 2 statements + COMMIT, 50 callers', statementsAfterLock: 2, batch: 1 },
      { label: 'lock + 2 statements + COMMIT, 1 caller (appends queued in Node)', statementsAfterLock: 2, batch: 1, callers: 1 },
      { label: 'lock + 1 statement + COMMIT, 50 callers', statementsAfterLock: 1, batch: 1 },
      { label: 'lock + 1 statement + COMMIT, 10 appends per transaction, 5 callers', statementsAfterLock: 1, batch: 10 },
    ], Math.min(5, load.durationS));
    for (const f of chainFloor) log(`  ${f.label}: ${fmt.int(f.appendsPerSecond)} appends/s, p99 ${f.p99Ms} ms`);
    return { benchmark: 'transactions-profile', startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), code: codeVersion(), http, drains, chainFloor };
  } finally {
    await cleanups.done();
  }
}

function statementsTable(p: ProbeSnapshot, units: number, unit: string): string {
  return markdownTable(
    ['statement', `per ${unit}`, 'in tx', 'mean ms', 'max ms', 'total s'],
    p.statements.filter((s) => s.calls >= units * 0.01).slice(0, 16).map((s) => [
      '`' + s.sql.replace(/\|/g, '\\|') + '`', (s.calls / Math.max(1, units)).toFixed(2), s.inTransaction ? 'yes' : '', String(s.meanMs), String(s.maxMs),
      (s.totalMs / 1000).toFixed(1),
    ]),
    [false, true, false, true, true, true],
  );
}

function profileTables(p: ProfileSummary): string[] {
  return [
    `CPU profile of the window: ${fmt.int(p.wallMs)} ms wall, ${fmt.int(p.busyMs)} ms on the thread (${fmt.pct((p.busyMs / Math.max(1, p.wallMs)) * 100)}).`,
    '',
    markdownTable(['self time by category', 'ms', '% of wall'],
      p.categories.filter((c) => c.pctOfWall >= 0.5).map((c) => [c.category, fmt.int(c.ms), `${c.pctOfWall} %`]), [false, true, true]),
    '',
    markdownTable(['top functions (self)', 'where', 'category', '% of wall'],
      p.top.slice(0, 15).map((f) => [f.fn, f.where, f.category, `${f.pctOfWall} %`]), [false, false, false, true]),
    '',
    markdownTable(['service functions (inclusive)', 'where', '% of wall'],
      p.inclusive.slice(0, 15).map((f) => [f.fn, f.where, `${f.pctOfWall} %`]), [false, false, true]),
  ];
}

export function profileMarkdown(r: ProfileReport): string {
  const out: string[] = [
    `# Transactions profile — ${r.startedAt}`,
    '',
    `Service code: commit ${r.code.commit} (${r.code.subject}), src/ sha256 ${r.code.srcSha256}` +
      (r.code.uncommittedSrc.length ? `, uncommitted: ${r.code.uncommittedSrc.join(', ')}` : '') + '.',
    '',
  ];
  const loop = (p: ProbeSnapshot) => `${p.eventLoopDelayMs.p50} / ${p.eventLoopDelayMs.p99} / ${p.eventLoopDelayMs.max}`;
  out.push(markdownTable(
    ['run', 'store', 'req/s or jobs/s', 'p50 ms', 'p99 ms', 'Node CPU ms/unit', 'PG CPU ms/unit', 'statements / unit', 'tx acquire ms', 'tx body ms', 'commit ms', 'lock wait ms', 'lock hold ms', 'event-loop delay p50/p99/max ms'],
    [
      ...r.http.map((h) => {
        const m = h.measurement;
        const u = Math.max(1, m.ok2xx);
        const per = (pct: number | undefined) => (pct === undefined ? '?' : ((pct / 100 / Math.max(1e-9, m.okPerSec)) * 1000).toFixed(2));
        return [h.label, h.store, fmt.int(m.reqPerSec), String(m.latencyMs.p50), String(m.latencyMs.p99), per(m.serverCpuPct),
          h.store === 'pglite' ? '(in Node)' : per(m.postgresCpuPct),
          (h.probe.totalStatements / u).toFixed(1), String(h.probe.tx.acquireMeanMs), String(h.probe.tx.bodyMeanMs),
          String(h.probe.tx.commitMeanMs), String(h.probe.lock.waitMeanMs), String(h.probe.lock.holdMeanMs), loop(h.probe)];
      }),
      ...r.drains.map((d) => [`queue drain, ${fmt.int(d.jobs)} jobs`, d.store, fmt.int(d.jobsPerSecond), '–', '–',
        ((d.nodeCpuPct / 100 / d.jobsPerSecond) * 1000).toFixed(2),
        d.store === 'pglite' ? '(in Node)' : d.postgresCpuPct === undefined ? '?' : ((d.postgresCpuPct / 100 / d.jobsPerSecond) * 1000).toFixed(2),
        (d.probe.totalStatements / d.jobs).toFixed(1), String(d.probe.tx.acquireMeanMs),
        String(d.probe.tx.bodyMeanMs), String(d.probe.tx.commitMeanMs), '–', '–', loop(d.probe)]),
    ],
    [false, false, true, true, true, true, true, true, true, true, true, true, true, true],
  ));
  out.push('', 'Statements are counted by the probe (BEGIN/COMMIT not included: they are the "acquire" and "commit" columns). ' +
    'Lock wait: the `INSERT INTO chain_heads … ON CONFLICT DO UPDATE` statement (it queues behind the current holder); ' +
    'lock hold: from its answer to the end of COMMIT. With one chain, throughput ≤ 1000 / hold ms. ' +
    'Node/PG CPU per unit: process CPU time over the window ÷ units (with PGlite the database runs in the Node process). ' +
    'Event-loop delay: how late a 10 ms timer fires (the thread busy, or a promise chain never yielding to I/O). ' +
    'The instruments (statement timing, the sampling profiler) cost the service some CPU: throughput here is a little lower ' +
    'than in the benchmark; read the proportions.', '');
  out.push('## Chain floor: one hash chain behind a row lock, bare SQL (PostgreSQL)', '',
    markdownTable(['variant', 'appends/s', 'transactions/s', 'p50 ms', 'p99 ms', 'Node CPU', 'PostgreSQL CPU'],
      r.chainFloor.map((f) => [f.label, fmt.int(f.appendsPerSecond), fmt.int(f.transactionsPerSecond), String(f.p50Ms), String(f.p99Ms),
        fmt.pct(f.nodeCpuPct), f.postgresCpuPct === undefined ? '?' : fmt.pct(f.postgresCpuPct)]),
      [false, true, true, true, true, true, true]),
    '', 'No HTTP, no service code: BEGIN, the service\'s head-lock upsert, sha256 in Node, the appends, COMMIT ' +
      '(compare the statements the create runs under the lock in the first POST table below); ' +
      'callers on a pool of 20. What the row-lock design allows one chain, whatever the code around it. Latency: the transaction\'s own ' +
      '(with 1 caller, the wait in the Node queue is not included).', '');
  for (const h of r.http) {
    out.push(`## ${h.label} — ${h.store}`, '');
    if (h.activity) {
      const a = h.activity.avg;
      out.push(`Backends (avg): running ${a.running}, waiting on a lock ${a.lockWait}, IO ${a.ioWait}, LWLock ${a.lwlockWait}, idle in transaction ${a.idleInTransaction}, idle ${a.idle}; ` +
        `top waits: ${Object.entries(h.activity.topWaits).map(([k, v]) => `${k} ${v}`).join(', ')}`, '');
    }
    out.push(`CPU: server ${fmt.pct(h.measurement.serverCpuPct)}, PostgreSQL ${h.measurement.postgresCpuPct === undefined ? '?' : fmt.pct(h.measurement.postgresCpuPct)}, ` +
      `autocannon ${fmt.pct(h.measurement.loadgenCpuPct)}, other ${fmt.pct(h.measurement.otherCpuPct)}.`, '');
    out.push(statementsTable(h.probe, h.measurement.ok2xx, 'request'), '', ...profileTables(h.profile), '');
  }
  for (const d of r.drains) {
    out.push(`## queue drain — ${d.store}`, '');
    if (d.activity) {
      const a = d.activity.avg;
      out.push(`Backends (avg): running ${a.running}, waiting on a lock ${a.lockWait}, IO ${a.ioWait}, LWLock ${a.lwlockWait}, idle in transaction ${a.idleInTransaction}, idle ${a.idle}; ` +
        `top waits: ${Object.entries(d.activity.topWaits).map(([k, v]) => `${k} ${v}`).join(', ')}`, '');
    }
    out.push(statementsTable(d.probe, d.jobs, 'job'), '', ...profileTables(d.profile), '');
  }
  return out.join('\n');
}

export async function main(): Promise<ProfileReport> {
  const report = await runTransactionsProfile();
  const md = profileMarkdown(report);
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const stem = path.join(RESULTS_DIR, `transactions-profile-${fileStamp(new Date(report.startedAt))}`);
  fs.writeFileSync(`${stem}.md`, md);
  fs.writeFileSync(`${stem}.json`, JSON.stringify(report, null, 2) + '\n');
  console.log(md);
  console.error(`[profile] wrote ${path.relative(process.cwd(), stem)}.md and .json`);
  return report;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
    process.exitCode = 1;
  });
}
