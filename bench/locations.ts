import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, expectStatus, packageVersion, signup } from './lib/api.ts';
import { type LoadSettings, loadSettingsFromEnv, type Measurement, measure, type RequestSpec } from './lib/cannon.ts';
import { forkServer, type ServerProcess } from './lib/fork-server.ts';
import { createBenchDatabase, dropBenchDatabase, postgresSettings } from './lib/pg-admin.ts';
import { cleanupStack } from './lib/cleanup.ts';
import { fmt, markdownTable, publishReport } from './lib/report.ts';

/**
 * Locations benchmark: throughput and latency of the real HTTP server, side by side.
 *
 *   A. authenticated GET  /v1/locations (an account holding 20 locations)
 *   B. authenticated POST /v1/locations (a valid France location)
 *      each on PGlite (file-backed, durable, in a temp DATA_DIR) and on PostgreSQL
 *   C. the baseline: bare Fastify + pg Pool(20), one INSERT / one SELECT of 20 rows
 *
 * Every server runs in a child process of its own (bench/servers/*), one at a time;
 * autocannon runs here with the same settings for every scenario. See bench/README.md.
 */

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVICE = path.join(HERE, 'servers', 'service.ts');
const BASELINE = path.join(HERE, 'servers', 'baseline.ts');
export const RESULTS_DIR = path.join(HERE, 'results');

/** "Other" CPU (not server, autocannon or PostgreSQL) above this, in % of one core, flags a disturbed run. */
const OTHER_CPU_WARN_PCT = 30;

/** How many locations the listing account holds (the GET returns them all: limit defaults to 20). */
const LIST_SIZE = 20;

const franceLocation = (name: string) =>
  JSON.stringify({ name, country: 'FR', country_config: { legal_name: 'Acme SARL', register_id: '73282932000074' } });

type Operation = 'GET' | 'POST';
type Store = 'pglite' | 'postgres';
type Kind = 'service' | 'baseline';

interface Target {
  kind: Kind;
  store: Store;
  file: string;
  env: Record<string, string>;
}

export interface ScenarioResult {
  scenario: string;
  kind: Kind;
  operation: Operation;
  store: Store;
  request: string;
  measurement: Measurement;
  /** req/s divided by the baseline's req/s for the same operation. */
  ratioVsBaseline: number;
}

export interface LocationsReport {
  benchmark: 'locations';
  startedAt: string;
  finishedAt: string;
  load: LoadSettings & { pipelining: 1 };
  environment: Record<string, unknown>;
  results: ScenarioResult[];
}

function scenarioName(kind: Kind, op: Operation): string {
  if (kind === 'baseline') return op === 'GET' ? 'C. bare GET (20 rows)' : 'C. bare POST (1 row)';
  return op === 'GET' ? `A. GET /v1/locations (${LIST_SIZE})` : 'B. POST /v1/locations (FR)';
}

/** Creates the accounts/rows the scenarios need and returns the two requests to fire. */
async function prepare(target: Target, server: ServerProcess): Promise<Record<Operation, RequestSpec>> {
  const base = server.baseUrl;
  const json = { 'content-type': 'application/json' };
  if (target.kind === 'baseline') {
    for (let i = 1; i <= LIST_SIZE; i++) await expectStatus(call(base, 'POST', '/rows', json, franceLocation(`Seed ${i}`)), 201, 'baseline seed');
    const list = await expectStatus(call(base, 'GET', '/rows', {}), 200, 'baseline list');
    if ((list.data as unknown[]).length !== LIST_SIZE) throw new Error(`baseline list returned ${(list.data as unknown[]).length} rows`);
    return {
      GET: { method: 'GET', path: '/rows', headers: {} },
      POST: { method: 'POST', path: '/rows', headers: json, body: (n) => franceLocation(`Shop ${n}`) },
    };
  }

  // Two accounts: one holds exactly LIST_SIZE locations for the GET, the other takes the
  // POSTs, so the list never grows whatever order the scenarios run in.
  const listKey = await signup(base);
  const writeKey = await signup(base);
  const listAuth = { authorization: `Bearer ${listKey}` };
  for (let i = 1; i <= LIST_SIZE; i++) {
    await expectStatus(call(base, 'POST', '/v1/locations', { ...listAuth, ...json }, franceLocation(`Seed ${i}`)), 201, 'seed location');
  }
  const list = await expectStatus(call(base, 'GET', '/v1/locations', listAuth), 200, 'list locations');
  if (list.total !== LIST_SIZE || (list.data as unknown[]).length !== LIST_SIZE) {
    throw new Error(`list returned total ${String(list.total)}, ${(list.data as unknown[]).length} items; expected ${LIST_SIZE}`);
  }
  return {
    GET: { method: 'GET', path: '/v1/locations', headers: listAuth },
    POST: {
      method: 'POST',
      path: '/v1/locations',
      headers: { authorization: `Bearer ${writeKey}`, ...json },
      body: (n) => franceLocation(`Shop ${n}`),
    },
  };
}

export async function runLocationsBench(load: LoadSettings = loadSettingsFromEnv()): Promise<LocationsReport> {
  const startedAt = new Date();
  const cleanups = cleanupStack('stopping servers, dropping the benchmark database');

  try {
    const loadAverageAtStart = os.loadavg().map((x) => Math.round(x * 100) / 100);
    const pgSettings = await postgresSettings();
    const database = await createBenchDatabase();
    cleanups.push(() => dropBenchDatabase(database.name));
    const dataDir = fs.mkdtempSync(path.join(process.env.BENCH_DATA_ROOT ?? os.tmpdir(), 'bench-pglite-'));
    cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));

    const log = (s: string) => console.error(`[bench] ${s}`);
    log(`database ${database.name}, PGlite DATA_DIR ${dataDir}`);
    log(`autocannon: ${load.connections} connections, ${load.warmupS} s warm-up + ${load.durationS} s per scenario`);

    const targets: Target[] = [
      { kind: 'baseline', store: 'postgres', file: BASELINE, env: { DATABASE_URL: database.url } },
      { kind: 'service', store: 'postgres', file: SERVICE, env: { BENCH_STORE: 'postgres', DATABASE_URL: database.url } },
      { kind: 'service', store: 'pglite', file: SERVICE, env: { BENCH_STORE: 'pglite', DATA_DIR: dataDir } },
    ];

    const measured: Array<Omit<ScenarioResult, 'ratioVsBaseline'>> = [];
    for (const target of targets) {
      const name = `${target.kind}/${target.store}`;
      log(`starting ${name}`);
      const server = await forkServer(target.file, target.env);
      cleanups.push(() => server.stop());
      const requests = await prepare(target, server);
      for (const op of ['GET', 'POST'] as const) {
        const scenario = scenarioName(target.kind, op);
        log(`${scenario} on ${target.store}…`);
        const m = await measure(`${scenario} on ${name}`, server, requests[op], load);
        log(`  ${fmt.int(m.reqPerSec)} req/s, p50 ${m.latencyMs.p50} ms, p99 ${m.latencyMs.p99} ms; CPU: server ${fmt.pct(m.serverCpuPct)}, ` +
          `postgres ${m.postgresCpuPct === undefined ? '?' : fmt.pct(m.postgresCpuPct)}, other ${fmt.pct(m.otherCpuPct)}`);
        measured.push({ scenario, kind: target.kind, operation: op, store: target.store, request: `${requests[op].method} ${requests[op].path}`, measurement: m });
      }
      await server.stop();
      cleanups.pop();
    }

    const baseline = (op: Operation) => measured.find((r) => r.kind === 'baseline' && r.operation === op)!.measurement.reqPerSec;
    const order = (r: Omit<ScenarioResult, 'ratioVsBaseline'>) =>
      (r.operation === 'GET' ? 0 : 10) + (r.kind === 'baseline' ? 5 : r.store === 'pglite' ? 0 : 1);
    const results: ScenarioResult[] = measured
      .map((r) => ({ ...r, ratioVsBaseline: Math.round((r.measurement.reqPerSec / baseline(r.operation)) * 1000) / 1000 }))
      .sort((a, b) => order(a) - order(b));

    return {
      benchmark: 'locations',
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      load: { ...load, pipelining: 1 },
      environment: {
        node: process.version,
        platform: `${os.platform()} ${os.release()} ${os.arch()}`,
        cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
        memoryGb: Math.round(os.totalmem() / 1024 ** 3),
        loadAverageAtStart,
        postgres: pgSettings,
        pglite: packageVersion('@electric-sql/pglite'),
        pgliteDataDir: dataDir,
        fastify: packageVersion('fastify'),
        pg: packageVersion('pg'),
        autocannon: packageVersion('autocannon'),
      },
      results,
    };
  } finally {
    await cleanups.done();
  }
}

export function locationsMarkdown(report: LocationsReport): string {
  const env = report.environment as Record<string, unknown> & { postgres: Record<string, string> };
  const pg = env.postgres;
  const main = markdownTable(
    ['scenario', 'store', 'req/s', 'p50 ms', 'p97.5 ms', 'p99 ms', 'max ms', 'errors/non-2xx', 'ratio vs baseline'],
    report.results.map((r) => {
      const m = r.measurement;
      return [
        r.scenario,
        r.kind === 'baseline' ? 'postgres (bare pg)' : r.store === 'pglite' ? 'pglite (durable file)' : 'postgres',
        fmt.int(m.reqPerSec),
        fmt.ms(m.latencyMs.p50),
        fmt.ms(m.latencyMs.p97_5),
        fmt.ms(m.latencyMs.p99),
        fmt.ms(m.latencyMs.max),
        `${m.errors}/${m.non2xx}`,
        r.kind === 'baseline' ? '1.00× (baseline)' : fmt.ratio(r.ratioVsBaseline),
      ];
    }),
    [false, false, true, true, true, true, true, true, true],
  );
  const side = markdownTable(
    ['scenario', 'store', 'requests (2xx)', 'server CPU', 'autocannon CPU', 'PostgreSQL CPU', 'other CPU', 'server RSS MB', 'limiter takes'],
    report.results.map((r) => {
      const m = r.measurement;
      return [
        r.scenario,
        r.kind === 'baseline' ? 'postgres (bare pg)' : r.store,
        fmt.int(m.ok2xx),
        fmt.pct(m.serverCpuPct),
        fmt.pct(m.loadgenCpuPct),
        m.postgresCpuPct === undefined ? '?' : fmt.pct(m.postgresCpuPct),
        fmt.pct(m.otherCpuPct),
        String(Math.round(m.serverRssMb)),
        m.limiterTakes === undefined ? '–' : fmt.int(m.limiterTakes),
      ];
    }),
    [false, false, true, true, true, true, true, true, true],
  );
  const cores = os.cpus().length;
  const load = (env.loadAverageAtStart as number[])[0] ?? 0;
  const disturbed = report.results.filter((r) => r.measurement.otherCpuPct > OTHER_CPU_WARN_PCT);
  const warnings: string[] = [];
  if (load > cores / 2) warnings.push(`the machine was busy when the run started (1-min load average ${load} on ${cores} cores)`);
  if (disturbed.length) {
    warnings.push(`other processes used more than ${OTHER_CPU_WARN_PCT} % of a core during: ` +
      disturbed.map((r) => `${r.scenario} on ${r.store} (${fmt.pct(r.measurement.otherCpuPct)})`).join('; '));
  }
  const warningBlock = warnings.length
    ? ['', `> **Warning: this run was disturbed** — ${warnings.join('; ')}. The figures are low and not comparable; rerun on a quiet machine.`]
    : [];
  return [
    `# Locations benchmark — ${report.startedAt}`,
    '',
    `autocannon ${String(env.autocannon)}: ${report.load.connections} connections, pipelining 1, ` +
      `${report.load.warmupS} s warm-up (discarded) + ${report.load.durationS} s measured per scenario; ` +
      'every server in its own child process, one at a time, on 127.0.0.1.',
    ...warningBlock,
    '',
    main,
    '',
    'req/s: autocannon\'s average of per-second samples. Latency: 2xx answers only, 1 ms resolution. ' +
      'Ratio: req/s over the baseline\'s req/s for the same operation (GET vs bare GET, POST vs bare POST). ' +
      'A run with any error or non-2xx answer fails instead of printing this table.',
    '',
    '## Resources during the measured runs',
    '',
    side,
    '',
    `CPU in % of one core (the machine has ${cores}). Server: the Node process answering HTTP (PGlite runs inside it). ` +
      'PostgreSQL: every `postgres` process (its backends do the SQL for the postgres rows). ' +
      'Other: the rest of the machine\'s busy time (kernel networking, and anything else running: a high value means the run was disturbed).',
    '',
    '## Environment',
    '',
    `- Node ${String(env.node)}, ${String(env.platform)}, ${String(env.cpu)}, ${String(env.memoryGb)} GB, load average at start ${(env.loadAverageAtStart as number[]).join(' / ')}`,
    `- PostgreSQL ${pg.version} on 127.0.0.1: fsync=${pg.fsync}, synchronous_commit=${pg.synchronous_commit}, ` +
      `wal_sync_method=${pg.wal_sync_method}, shared_buffers=${pg.shared_buffers}`,
    `- PGlite ${String(env.pglite)}, file-backed and durable (fsync on every commit), DATA_DIR under ${path.dirname(String(env.pgliteDataDir))}`,
    `- fastify ${String(env.fastify)}, pg ${String(env.pg)}`,
    '',
  ].join('\n');
}

/** Runs the benchmark, prints the table and the JSON, writes bench/results/locations-<date>.{md,json}. */
export async function main(): Promise<LocationsReport> {
  const report = await runLocationsBench();
  publishReport(RESULTS_DIR, 'locations', report.startedAt, report, locationsMarkdown(report));
  return report;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
    process.exitCode = 1;
  });
}
