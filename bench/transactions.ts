import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from '../src/store/db.ts';
import { openDb } from '../src/store/open.ts';
import { locationBodies } from '../test/support/fixtures.ts';
import { locationBody as fixtureLocationBody, saleBody, saleLines, saleMetadata } from '../test/support/transactions.ts';
import { call, expectStatus, packageVersion, signup } from './lib/api.ts';
import { type LoadSettings, loadSettingsFromEnv, type Measurement, measure, type RequestSpec, SLOW_MS, tailText } from './lib/cannon.ts';
import { checkWrites, myDataRecordCheck, nf525Fingerprint, saftFingerprint, sdiRecordCheck, ticketBaiFingerprint, type WriteCheck } from './lib/chain-check.ts';
import { type CodeVersion, codeVersion } from './lib/code-version.ts';
import { forkServer, type ServerProcess } from './lib/fork-server.ts';
import { type ActivityProfile, type ActivitySampler, sampleActivity } from './lib/pg-activity.ts';
import { createBenchDatabase, dropBenchDatabase, postgresSettings, settleDatabase } from './lib/pg-admin.ts';
import { drainBare, drainService, type DrainResult, enqueueSubmitJobs, type EnqueueResult, openQueueContext, type QueueSystem, type ServiceDrainResult } from './lib/queue.ts';
import { cleanupStack } from './lib/cleanup.ts';
import { fmt, markdownTable, publishReport } from './lib/report.ts';

/**
 * Transactions benchmark, side by side in one run (see bench/README.md):
 *
 *   A. POST /v1/transactions, France (fr-nf525: signed locally, final at creation), on
 *      PostgreSQL, against the bare insert baseline (bare Fastify + pg, one INSERT);
 *   B. the same POST on PGlite (durable file store);
 *   D. POST /v1/transactions, TicketBAI (XAdES-signed), on PostgreSQL;
 *   E. A's POST spread over 50 locations (50 chains), on PostgreSQL;
 *   F. POST /v1/transactions, Italy SDI (FatturaPA FPR12 XML), on PostgreSQL;
 *   G. POST /v1/transactions, Portugal (SAF-T PT Invoice, RSA-SHA1 hash chain), on PostgreSQL;
 *   H. POST /v1/transactions, Greece (myDATA InvoicesDoc, the MARK awaited inline from the
 *      sandbox AADE, as a test key without `X-Svc-Sandbox: authority` gets it), on PostgreSQL;
 *   C. queue drain: N es-verifactu transactions created through the transaction service
 *      (each enqueues its submit job), then worker.drain() against the sandbox stub,
 *      against a bare claim + complete loop with the worker's own SQL.
 *
 * Every POST carries its own Idempotency-Key, so every request is a new transaction; the
 * keys answered 2xx are kept and checked against the database afterwards, with each
 * location's fiscal record chain.
 */

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVICE = path.join(HERE, 'servers', 'service.ts');
const BASELINE = path.join(HERE, 'servers', 'baseline.ts');
const RESULTS_DIR = path.join(HERE, 'results');

/** "Other" CPU above this, in % of one core, flags a disturbed run (as the locations benchmark). */
const OTHER_CPU_WARN_PCT = 30;
/**
 * BENCH_SCENARIOS=A,D: only these scenarios (letters; the bare POST baseline always runs,
 * the ratios need it). Unset: all of them.
 */
const SCENARIOS = process.env.BENCH_SCENARIOS?.split(',').map((x) => x.trim().toUpperCase()).filter(Boolean);
const wanted = (scenario: string) => !SCENARIOS || SCENARIOS.includes(scenario.charAt(0));
/**
 * BENCH_ROUNDS=3: the bare POST, A and G (France and Portugal, the two figures of issue
 * #14) run in turn this many times (bare, A, G, bare, A, G…), each round on fresh servers,
 * and A and G are judged on the medians of their rounds' ratios. On a shared 2-core
 * machine the bare insert alone varies by ±15 % from one run to the next (its fsync-bound
 * commits), and by more within an hour: one pair can land on either side of a goal by
 * chance. Default 1.
 */
/**
 * E: the same France POST as A spread over this many locations (BENCH_SPREAD_LOCATIONS,
 * default 50), each its own chain: a fleet of tills rather than one busy shop. Judged by
 * A's goal against the median bare POST.
 */
const SPREAD_LOCATIONS = (() => {
  const v = process.env.BENCH_SPREAD_LOCATIONS;
  const n = v === undefined || v === '' ? 50 : Number(v);
  if (!Number.isInteger(n) || n < 2) throw new Error(`BENCH_SPREAD_LOCATIONS must be an integer >= 2 (got "${v}")`);
  return n;
})();
/** The scenarios BENCH_ROUNDS repeats, by letter (the issue's figures: France and Portugal). */
const ROUNDED = ['A', 'G'];
const ROUNDS = (() => {
  const v = process.env.BENCH_ROUNDS;
  const n = v === undefined || v === '' ? 1 : Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_ROUNDS must be an integer >= 1 (got "${v}")`);
  return n;
})();
const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export const GOALS = {
  /**
   * A (and E): France's creates against the bare insert baseline, and tail latency. 0.6×
   * was the figure with placeholder records (issue #12); issue #14 made them real (signed,
   * grand totals) and allows "within 10 % of today's France figure": 0.54×.
   */
  postRatio: 0.54,
  postP99Ms: 50,
  /** B: PGlite, absolute. */
  pglitePostPerSecond: 500,
  /** D: signed TicketBAI creates on PostgreSQL, absolute (Spain issue: ≥ 1,000 a second on one node). */
  ticketBaiPerSecond: 1000,
  /** F: SDI creates (the FatturaPA XML built) on PostgreSQL, absolute: at least as fast as D (issue #13 part 8). */
  sdiPerSecond: 1000,
  /**
   * G: Portugal creates on PostgreSQL, against the same run's bare POST: within 10 % of
   * France's figure before its real records (A, 0.60×, issue #12's note): issue #14.
   */
  ptRatio: 0.54,
  /** C: PostgreSQL queue drain, absolute. */
  drainPerSecond: 1000,
} as const;

export interface QueueSettings {
  /** Submit jobs drained on PostgreSQL. */
  jobs: number;
  /** Submit jobs drained on PGlite (0: skip). */
  jobsPglite: number;
  /** VERI*FACTU locations the transactions are spread over (one hash chain each). */
  locations: number;
  /** Creations in flight at once while filling the queue. */
  concurrency: number;
  /** Systems drained, each on a fresh database. */
  systems: QueueSystem[];
}

export function queueSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): QueueSettings {
  const num = (name: string, fallback: number, min: number) => {
    const v = env[name];
    if (v === undefined || v === '') return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min} (got "${v}")`);
    return n;
  };
  return {
    jobs: num('BENCH_QUEUE_JOBS', 20_000, 1),
    jobsPglite: num('BENCH_QUEUE_JOBS_PGLITE', 5_000, 0),
    locations: num('BENCH_QUEUE_LOCATIONS', 20, 1),
    concurrency: num('BENCH_QUEUE_CONCURRENCY', 40, 1),
    systems: (process.env.BENCH_QUEUE_SYSTEMS ?? 'es-sii,es-verifactu').split(',').map((x) => x.trim()).filter((x): x is QueueSystem => {
      if (x !== 'es-sii' && x !== 'es-verifactu') throw new Error(`BENCH_QUEUE_SYSTEMS: unknown system ${x} (es-sii, es-verifactu)`);
      return true;
    }),
  };
}

type Store = 'pglite' | 'postgres';
type Kind = 'service' | 'baseline';

export interface ResultRow {
  scenario: string;
  kind: Kind;
  store: Store;
  unit: 'req/s' | 'jobs/s';
  rate: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** HTTP rows: connection errors / non-2xx answers. Queue rows: jobs not completed exactly once (always 0 in a report). */
  errors: number;
  non2xx: number;
  /** rate over the baseline's rate (POST rows: the bare POST; drain rows: the bare loop on the same store). */
  ratioVsBaseline: number | null;
  goal: string | null;
  goalMet: boolean | null;
}

export interface HttpDetail {
  scenario: string;
  kind: Kind;
  store: Store;
  measurement: Measurement;
  /** pg_stat_activity of the benchmark database during the measured run (PostgreSQL rows). */
  activity?: ActivityProfile;
  /** The SQL checks after the run (service rows). */
  writes?: WriteCheck;
  /** BENCH_ROUNDS > 1: which round of the alternating bare POST / A pairs. */
  round?: number;
}

export interface QueueDetail {
  store: Store;
  system: QueueSystem;
  enqueue: EnqueueResult;
  service: ServiceDrainResult;
  bare: DrainResult;
}

export interface TransactionsReport {
  benchmark: 'transactions';
  startedAt: string;
  finishedAt: string;
  load: LoadSettings & { pipelining: 1 };
  queue: QueueSettings;
  environment: Record<string, unknown>;
  /** The service code measured (src/ changes between runs: compare reports of the same code). */
  code: CodeVersion;
  /** What one request with and without Idempotency-Key gives (checked at the start). */
  idempotency: Record<string, string>;
  results: ResultRow[];
  http: HttpDetail[];
  queues: QueueDetail[];
}

export const json = { 'content-type': 'application/json' };
const franceLocation = (name: string) =>
  JSON.stringify({ name, country: 'FR', country_config: { legal_name: 'Acme SARL', register_id: '73282932000074' } });

/** The bare POST of `h`'s round (BENCH_ROUNDS > 1), if it has one. */
const sameRound = (baselines: readonly HttpDetail[], h: HttpDetail) => baselines.find((b) => h.round !== undefined && b.round === h.round);

/** CPU `pct` (% of one core over the run) as milliseconds a 2xx answer. */
const msPerRequest = (m: Measurement, pct: number) => pct / 100 / Math.max(1e-9, m.okPerSec) * 1000;

/** The systems the HTTP scenarios create transactions of. */
export const BENCH_SYSTEMS = ['fr-nf525', 'es-ticketbai', 'it-sdi', 'pt-saft', 'gr-mydata'] as const;
export type BenchSystem = (typeof BENCH_SYSTEMS)[number];

/** Tracks the Idempotency-Key of every request sent and of every 2xx answer. */
export interface KeyTracker {
  sent: Set<string>;
  acknowledged: Set<string>;
  statuses: Record<string, number>;
}

/**
 * Two quick checks of what a POST without a key and with a repeated key gives, on a
 * location of their own (so the measured location's chain holds only measured requests).
 */
async function idempotencyCheck(base: string, auth: Record<string, string>, locationId: string, system: BenchSystem): Promise<Record<string, string>> {
  const body = JSON.stringify(saleBody(locationId, system === 'it-sdi' ? { metadata: { ...saleMetadata['it-sdi'], invoice_number: 'CHECK-1' } } : saleLines[system] ?? {}));
  const post = (headers: Record<string, string>) => call(base, 'POST', '/v1/transactions', { ...auth, ...json, ...headers }, body);
  const a = await post({});
  const b = await post({});
  const ja = a.json();
  const jb = b.json();
  if (a.status !== 201 || b.status !== 201 || ja.id === jb.id || ja.idempotency_key === jb.idempotency_key) {
    throw new Error(`the same body twice without Idempotency-Key: ${a.status} ${String(ja.id)}, ${b.status} ${String(jb.id)}; expected two new transactions`);
  }
  const key = `bench-check-${randomUUID()}`;
  const c = await post({ 'idempotency-key': key });
  const d = await post({ 'idempotency-key': key });
  if (c.status !== 201 || d.status !== 200 || c.json().id !== d.json().id) {
    throw new Error(`the same Idempotency-Key twice: ${c.status} ${String(c.json().id)}, ${d.status} ${String(d.json().id)}; expected 201 then 200, same id`);
  }
  return {
    'no key, same body twice': '201 + 201, two transactions (the server generates a UUID key for each)',
    'same key twice': '201 then 200 with the same transaction (a replay: not a new write)',
    'measured requests': 'a unique Idempotency-Key per request (setupRequest), so each one is a new transaction',
  };
}

/**
 * Signs up, creates the France location(s) the POSTs go to (and one more for the
 * idempotency checks), and returns the request to fire. With `locations` > 1 (profiling
 * runs only) the requests go round-robin over that many locations, one hash chain each.
 */
export async function prepareService(
  server: ServerProcess, runId: string, locations = 1, system: BenchSystem = 'fr-nf525',
): Promise<{ spec: RequestSpec; locationId: string; locationIds: string[]; keys: KeyTracker; idempotency: Record<string, string> }> {
  const base = server.baseUrl;
  const key = await signup(base);
  const auth = { authorization: `Bearer ${key}` };
  const locationIds: string[] = [];
  // Several locations (profiling runs, France) are several chains. TicketBAI chains per
  // issuer NIF, so its locations (same fixture NIF) would share one chain: measured with one.
  // Portugal: the fixture location with its simplified-invoice (FS) series too.
  const locationBody = (name: string) => JSON.stringify({ ...(system === 'pt-saft' ? fixtureLocationBody('pt-saft') : locationBodies[system]), name });
  for (let i = 0; i < locations; i++) {
    const loc = await expectStatus(call(base, 'POST', '/v1/locations', { ...auth, ...json }, locationBody(`Shop ${i + 1}`)), 201, `${system} location`);
    locationIds.push(String(loc.id));
  }
  // The idempotency checks go to a location of another account, so the measured chain holds only measured requests.
  const checkKey = await signup(base);
  const checkAuth = { authorization: `Bearer ${checkKey}` };
  const checkLoc = await expectStatus(call(base, 'POST', '/v1/locations', { ...checkAuth, ...json }, locationBody('Check shop')), 201, `${system} location`);
  const idempotency = await idempotencyCheck(base, checkAuth, String(checkLoc.id), system);

  // Greece and France refuse rates they do not have (21 %, and 10 % in Greece): their sales have their own lines (France 20 % and 10 %).
  const bodies = locationIds.map((id) => JSON.stringify(saleBody(id, saleLines[system] ?? {})));
  // it-sdi: the merchant numbers its invoices (metadata.invoice_number, required): a unique
  // number per request, from a counter of its own (autocannon's resets between warm-up and
  // measured run). The body is built per request: the JSON around the number is fixed.
  let invoice = 0;
  const sdiBody = (id: string) => {
    const [head, tail] = JSON.stringify(saleBody(id, { metadata: { ...saleMetadata['it-sdi'], invoice_number: '@INVOICE@' } })).split('"@INVOICE@"');
    return () => `${head}"FT-${++invoice}"${tail}`;
  };
  const sdiBodies = system === 'it-sdi' ? locationIds.map(sdiBody) : [];
  const keys: KeyTracker = { sent: new Set(), acknowledged: new Set(), statuses: {} };
  let n = 0;
  const spec: RequestSpec = {
    method: 'POST',
    path: '/v1/transactions',
    headers: { ...auth, ...json },
    body: system === 'it-sdi' ? (i) => sdiBodies[i % sdiBodies.length]!() : (i) => bodies[i % bodies.length]!,
    perRequest: () => {
      const k = `bench-${runId}-${++n}`;
      keys.sent.add(k);
      return { headers: { 'idempotency-key': k }, tag: k };
    },
    onAnswer: (status, tag) => {
      keys.statuses[status] = (keys.statuses[status] ?? 0) + 1;
      if (status >= 200 && status < 300) keys.acknowledged.add(tag);
    },
  };
  return { spec, locationId: locationIds[0]!, locationIds, keys, idempotency };
}

export async function runTransactionsBench(load: LoadSettings = loadSettingsFromEnv(), qs: QueueSettings = queueSettingsFromEnv()): Promise<TransactionsReport> {
  const startedAt = new Date();
  const runId = randomUUID().slice(0, 8);
  // One MASTER_KEY for every service child of the run: A and D share the PostgreSQL database.
  const masterKeyHex = randomBytes(32).toString('hex');
  const cleanups = cleanupStack('stopping servers, dropping the benchmark databases');
  const log = (s: string) => console.error(`[bench] ${s}`);
  const profDir = process.env.BENCH_CPU_PROF_DIR;
  // BENCH_SERVICE_NODE_ARGS: more node/V8 flags for the service children (experiments: GC, heap).
  const extraArgv = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const serviceArgv = [...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profDir)}`] : []), ...extraArgv];

  try {
    const code = codeVersion();
    const loadAverageAtStart = os.loadavg().map((x) => Math.round(x * 100) / 100);
    const pgSettings = await postgresSettings();
    const database = await createBenchDatabase();
    cleanups.push(() => dropBenchDatabase(database.name));
    const dataRoot = process.env.BENCH_DATA_ROOT ?? os.tmpdir();
    const dataDir = fs.mkdtempSync(path.join(dataRoot, 'bench-pglite-'));
    cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    log(`database ${database.name}, PGlite DATA_DIR ${dataDir}`);
    log(`autocannon: ${load.connections} connections, ${load.warmupS} s warm-up + ${load.durationS} s per scenario`);

    const http: HttpDetail[] = [];
    let idempotency: Record<string, string> = {};
    const logHttp = (m: Measurement) =>
      log(`  ${fmt.int(m.reqPerSec)} req/s, p50 ${m.latencyMs.p50} ms, p99 ${m.latencyMs.p99} ms; CPU: server ${fmt.pct(m.serverCpuPct)}, ` +
        `postgres ${m.postgresCpuPct === undefined ? '?' : fmt.pct(m.postgresCpuPct)}, other ${fmt.pct(m.otherCpuPct)}\n[bench]   tail: ${tailText(m)}`);
    const withActivity = () => {
      let sampler: ActivitySampler | undefined;
      let profile: ActivityProfile | undefined;
      return {
        hooks: {
          beforeMeasured: async () => {
            sampler = await sampleActivity(database.url, database.name);
          },
          afterMeasured: async () => {
            profile = await sampler?.stop();
          },
        },
        result: () => profile,
      };
    };

    /**
     * Before each PostgreSQL run (the baseline's too): the database vacuumed, checkpointed and
     * left by autovacuum (pg-admin.ts `settleDatabase`), so no run pays for the rows of the
     * one before. BENCH_SETTLE=0: not (the order of the scenarios then shows in their figures).
     */
    const settle = async () => {
      if (process.env.BENCH_SETTLE === '0') return;
      log(`  settled the database in ${fmt.int(await settleDatabase(database.url, database.name))} ms (VACUUM ANALYZE, CHECKPOINT)`);
    };

    // ---- A: the bare insert baseline -------------------------------------------------
    const runBaseline = async (round: number | undefined) => {
      const scenario = `A. bare POST (1 row)${round ? ` — round ${round}` : ''}`;
      log(`${scenario} on postgres…`);
      await settle();
      const server = await forkServer(BASELINE, { DATABASE_URL: database.url });
      cleanups.push(() => server.stop());
      const spec: RequestSpec = { method: 'POST', path: '/rows', headers: json, body: (n) => franceLocation(`Shop ${n}`) };
      const act = withActivity();
      const m = await measure(`${scenario} on baseline/postgres`, server, spec, load, act.hooks);
      logHttp(m);
      http.push({ scenario, kind: 'baseline', store: 'postgres', measurement: m, ...(act.result() ? { activity: act.result()! } : {}), ...(round ? { round } : {}) });
      await server.stop();
      cleanups.pop();
    };

    // ---- A and B: the service, PostgreSQL then PGlite ---------------------------------
    const serviceRuns = [
      { store: 'postgres', system: 'fr-nf525', scenario: 'A. POST /v1/transactions (FR)' },
      { store: 'pglite', system: 'fr-nf525', scenario: 'B. POST /v1/transactions (FR)' },
      { store: 'postgres', system: 'es-ticketbai', scenario: 'D. POST /v1/transactions (TicketBAI, XAdES-signed)' },
      { store: 'postgres', system: 'fr-nf525', scenario: `E. POST /v1/transactions (FR), ${SPREAD_LOCATIONS} locations`, locations: SPREAD_LOCATIONS },
      { store: 'postgres', system: 'it-sdi', scenario: 'F. POST /v1/transactions (SDI, FatturaPA FPR12)' },
      { store: 'postgres', system: 'pt-saft', scenario: 'G. POST /v1/transactions (PT, SAF-T Invoice, RSA-SHA1 hash)' },
      { store: 'postgres', system: 'gr-mydata', scenario: 'H. POST /v1/transactions (GR, myDATA InvoicesDoc, MARK inline)' },
    ] as const;
    const runService = async ({ store, system, scenario: named, ...more }: (typeof serviceRuns)[number], round?: number) => {
      const locations = 'locations' in more ? more.locations : 1;
      const scenario = `${named}${round ? ` — round ${round}` : ''}`;
      log(`${scenario} on ${store}…`);
      if (store === 'postgres') await settle();
      const env: Record<string, string> = {
        ...(store === 'postgres' ? { BENCH_STORE: 'postgres', DATABASE_URL: database.url } : { BENCH_STORE: 'pglite', DATA_DIR: dataDir }),
        BENCH_MASTER_KEY: masterKeyHex,
      };
      const server = await forkServer(SERVICE, env, { execArgv: serviceArgv });
      cleanups.push(() => server.stop());
      const prep = await prepareService(server, `${runId}-${store}-${system}-${locations}`, locations, system);
      if (store === 'postgres' && system === 'fr-nf525' && locations === 1) idempotency = prep.idempotency;
      const act = withActivity();
      const m = await measure(`${scenario} on service/${store}`, server, prep.spec, load, store === 'postgres' ? act.hooks : {});
      logHttp(m);
      await server.stop();
      cleanups.pop();

      // The SQL checks, through the store itself (PGlite: reopened from its files here, after the server closed it).
      const db: Db = store === 'postgres' ? await openDb({ databaseUrl: database.url }) : await openDb({ dataDir });
      let writes: WriteCheck;
      try {
        const runs = load.warmupS > 0 ? 2 : 1;
        writes = await checkWrites(db, prep.locationIds, prep.keys.sent, prep.keys.acknowledged, runs * load.connections,
          system === 'es-ticketbai' ? ticketBaiFingerprint : system === 'it-sdi' ? () => sdiRecordCheck('FPR12')
            : system === 'pt-saft' ? saftFingerprint : system === 'gr-mydata' ? myDataRecordCheck : nf525Fingerprint,
          // TicketBAI records go to the (stub) authority after the 201: some are still queued when the server stops.
          // SDI: created pending; the stub's `sent` leaves it pending, its RC (an inbound_message job) moves it to
          // delivered; some are still queued or in between when the server stops. Never rejected or failed.
          system === 'es-ticketbai' ? ['success', 'pending', 'processing']
            : system === 'it-sdi' ? ['pending', 'processing', 'delivered']
              // Greece: the MARK inline, or (a create that outlived the window) still on its way.
              : system === 'gr-mydata' ? ['success', 'pending', 'processing'] : ['success']);
      } finally {
        await db.close();
      }
      const codes = Object.keys(prep.keys.statuses);
      if (codes.some((c) => c !== '201')) writes.problems.push(`answers other than 201: ${JSON.stringify(prep.keys.statuses)}`);
      const expectedOk = m.ok2xx + (m.warmup?.ok2xx ?? 0);
      if (prep.keys.acknowledged.size !== expectedOk) {
        writes.problems.push(`${prep.keys.acknowledged.size} distinct acknowledged keys for ${expectedOk} 2xx answers counted by autocannon`);
      }
      writes.ok = writes.problems.length === 0;
      log(`  checks: ${writes.rows} rows, ${writes.acknowledged} acknowledged (all stored: ${writes.acknowledgedStored === writes.acknowledged}), ` +
        `${writes.storedUnacknowledged} in flight at a stop; chain ${writes.chain.minSeq}..${writes.chain.maxSeq} ${writes.ok ? 'whole' : 'BROKEN'}`);
      if (!writes.ok) throw new Error(`${scenario} on ${store}: write checks failed: ${writes.problems.join('; ')}`);
      http.push({ scenario, kind: 'service', store, measurement: m, writes, ...(act.result() ? { activity: act.result()! } : {}), ...(round ? { round } : {}) });
    };

    // A and G: the bare POST and the services in turn, ROUNDS times; then the others once.
    const rounded = serviceRuns.filter((run) => ROUNDED.includes(run.scenario.charAt(0)));
    for (let round = 1; round <= ROUNDS; round++) {
      const r = ROUNDS > 1 ? round : undefined;
      await runBaseline(r);
      for (const run of rounded) if (wanted(run.scenario)) await runService(run, r);
    }
    for (const run of serviceRuns) if (!rounded.includes(run) && wanted(run.scenario)) await runService(run);

    // ---- C: queue drain, in this process ---------------------------------------------
    const queues: QueueDetail[] = [];
    for (const store of ['postgres', 'pglite'] as const) {
      const jobs = store === 'postgres' ? qs.jobs : qs.jobsPglite;
      if (jobs === 0 || !wanted('C.')) continue;
      let bare: DrainResult | undefined;
      for (const system of qs.systems) {
        // A fresh database per system: the checks count every job of the table.
        let db: Db;
        if (store === 'postgres') {
          const qdb = await createBenchDatabase();
          cleanups.push(() => dropBenchDatabase(qdb.name));
          db = await openDb({ databaseUrl: qdb.url });
        } else {
          const qdir = fs.mkdtempSync(path.join(dataRoot, 'bench-pglite-queue-'));
          cleanups.push(async () => fs.rmSync(qdir, { recursive: true, force: true }));
          db = await openDb({ dataDir: qdir });
        }
        cleanups.push(() => db.close());
        const ctx = await openQueueContext(db, qs.locations, system);
        cleanups.push(() => ctx.close());
        if (!bare) {
          log(`C. bare claim + complete loop on ${store}: ${fmt.int(jobs)} jobs…`);
          bare = await drainBare(db, jobs);
          log(`  ${fmt.int(bare.jobsPerSecond)} jobs/s`);
        }
        log(`C. enqueueing ${fmt.int(jobs)} ${system} transactions on ${store} (${qs.locations} locations, ${qs.concurrency} at a time)…`);
        const enqueue = await enqueueSubmitJobs(ctx, jobs, qs.concurrency);
        log(`  ${fmt.int(enqueue.perSecond)} creations/s; analyzing, then worker.drain()…`);
        await db.exec('ANALYZE jobs; ANALYZE transactions; ANALYZE fiscal_records');
        const service = await drainService(ctx, jobs);
        log(`  ${fmt.int(service.jobsPerSecond)} jobs/s in ${service.seconds} s (${fmt.int(service.claimed)} claimed); CPU: worker ${fmt.pct(service.workerCpuPct)}, ` +
          `postgres ${service.postgresCpuPct === undefined ? '?' : fmt.pct(service.postgresCpuPct)}, other ${fmt.pct(service.otherCpuPct)}`);
        queues.push({ store, system, enqueue, service, bare });
        await cleanups.pop()!(); // ctx
        await cleanups.pop()!(); // db
      }
    }

    // ---- the table ---------------------------------------------------------------------
    const baselines = http.filter((h) => h.kind === 'baseline');
    // A row against the bare POST of its own round; rows of no round against the median bare POST.
    const bareOf = (h: HttpDetail) =>
      sameRound(baselines, h)?.measurement.reqPerSec ?? median(baselines.map((b) => b.measurement.reqPerSec));
    const codeAfter = codeVersion();
    if (codeAfter.srcSha256 !== code.srcSha256) {
      log(`warning: src/ changed during the run (${code.srcSha256} → ${codeAfter.srcSha256}); servers started after the change measured the new code`);
    }
    const results: ResultRow[] = [];
    const round3 = (x: number) => Math.round(x * 1000) / 1000;
    for (const h of http) {
      const m = h.measurement;
      const ratio = h.kind === 'baseline' ? 1 : round3(m.reqPerSec / bareOf(h));
      let goal: string | null = null;
      let goalMet: boolean | null = null;
      if (h.kind === 'service' && h.scenario.startsWith('D.')) {
        goal = `≥ ${fmt.int(GOALS.ticketBaiPerSecond)} tx/s`;
        goalMet = m.reqPerSec >= GOALS.ticketBaiPerSecond;
      } else if (h.kind === 'service' && h.scenario.startsWith('F.')) {
        goal = `≥ ${fmt.int(GOALS.sdiPerSecond)} tx/s`;
        goalMet = m.reqPerSec >= GOALS.sdiPerSecond;
      } else if (h.kind === 'service' && h.scenario.startsWith('G.')) {
        goal = `≥ ${GOALS.ptRatio}× baseline and p99 ≤ ${GOALS.postP99Ms} ms`;
        goalMet = ratio >= GOALS.ptRatio && m.latencyMs.p99 <= GOALS.postP99Ms;
      } else if (h.kind === 'service' && h.scenario.startsWith('H.')) {
        // Issue #15 sets no figure for Greece: stated beside France's.
        goal = 'stated beside A (no figure)';
        goalMet = null;
      } else if (h.kind === 'service' && h.store === 'postgres') {
        goal = `≥ ${GOALS.postRatio}× baseline and p99 ≤ ${GOALS.postP99Ms} ms`;
        goalMet = ratio >= GOALS.postRatio && m.latencyMs.p99 <= GOALS.postP99Ms;
      } else if (h.kind === 'service') {
        goal = `≥ ${GOALS.pglitePostPerSecond} tx/s`;
        goalMet = m.reqPerSec >= GOALS.pglitePostPerSecond;
      }
      results.push({
        scenario: h.scenario, kind: h.kind, store: h.store, unit: 'req/s', rate: m.reqPerSec,
        latencyMs: { p50: m.latencyMs.p50, p99: m.latencyMs.p99, max: m.latencyMs.max },
        errors: m.errors + m.timeouts, non2xx: m.non2xx, ratioVsBaseline: ratio, goal, goalMet,
      });
    }
    const worst = (pick: (h: HttpDetail) => number, of: HttpDetail[]) => Math.max(...of.map(pick));
    if (ROUNDS > 1) {
      results.push({
        scenario: `A. bare POST (1 row) — median of ${ROUNDS} rounds`, kind: 'baseline', store: 'postgres', unit: 'req/s',
        rate: median(baselines.map((b) => b.measurement.reqPerSec)),
        latencyMs: { p50: median(baselines.map((b) => b.measurement.latencyMs.p50)), p99: worst((h) => h.measurement.latencyMs.p99, baselines), max: worst((h) => h.measurement.latencyMs.max, baselines) },
        errors: 0, non2xx: 0, ratioVsBaseline: 1, goal: null, goalMet: null,
      });
    }
    // A and G over the rounds: the medians, the median of the per-round ratios, the worst p99.
    for (const run of ROUNDS > 1 ? rounded : []) {
      const services = http.filter((h) => h.kind === 'service' && h.round !== undefined && h.scenario.startsWith(run.scenario));
      if (services.length === 0) continue;
      const ratio = round3(median(services.map((h) => h.measurement.reqPerSec / bareOf(h))));
      const p99 = worst((h) => h.measurement.latencyMs.p99, services);
      const goalRatio = run.scenario.startsWith('G.') ? GOALS.ptRatio : GOALS.postRatio;
      results.push({
        scenario: `${run.scenario} — median of ${ROUNDS} rounds (ratio: median of the rounds' ratios; p99, max: the worst round)`,
        kind: 'service', store: 'postgres', unit: 'req/s', rate: median(services.map((h) => h.measurement.reqPerSec)),
        latencyMs: { p50: median(services.map((h) => h.measurement.latencyMs.p50)), p99, max: worst((h) => h.measurement.latencyMs.max, services) },
        errors: 0, non2xx: 0, ratioVsBaseline: ratio,
        goal: `≥ ${goalRatio}× baseline and p99 ≤ ${GOALS.postP99Ms} ms`, goalMet: ratio >= goalRatio && p99 <= GOALS.postP99Ms,
      });
    }
    for (const q of queues) {
      const ratio = round3(q.service.jobsPerSecond / q.bare.jobsPerSecond);
      results.push({
        scenario: `C. queue drain: worker.drain() (${q.system} submit${q.system === 'es-verifactu' ? ', batched per chain' : ''})`, kind: 'service', store: q.store, unit: 'jobs/s',
        rate: q.service.jobsPerSecond, latencyMs: q.service.latencyMs, errors: 0, non2xx: 0, ratioVsBaseline: ratio,
        goal: q.store === 'postgres' ? `≥ ${fmt.int(GOALS.drainPerSecond)} jobs/s` : null,
        goalMet: q.store === 'postgres' ? q.service.jobsPerSecond >= GOALS.drainPerSecond : null,
      });
      if (queues.find((o) => o.store === q.store) !== q) continue; // one baseline row per store
      results.push({
        scenario: 'C. bare claim + complete loop', kind: 'baseline', store: q.store, unit: 'jobs/s',
        rate: q.bare.jobsPerSecond, latencyMs: q.bare.latencyMs, errors: 0, non2xx: 0, ratioVsBaseline: 1, goal: null, goalMet: null,
      });
    }

    return {
      benchmark: 'transactions',
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      load: { ...load, pipelining: 1 },
      queue: qs,
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
        ...(profDir ? { cpuProfilesIn: path.resolve(profDir) } : {}),
      },
      code: codeAfter.srcSha256 === code.srcSha256 ? code : { ...code, changedDuringRun: codeAfter },
      idempotency,
      results,
      http,
      queues,
    };
  } finally {
    await cleanups.done();
  }
}

const storeLabel = (kind: Kind, store: Store) =>
  kind === 'baseline' ? `${store === 'postgres' ? 'postgres' : 'pglite'} (bare)` : store === 'pglite' ? 'pglite (durable file)' : 'postgres';

export function transactionsMarkdown(report: TransactionsReport): string {
  const env = report.environment as Record<string, unknown> & { postgres: Record<string, string> };
  const pg = env.postgres;
  const ms = (x: number) => fmt.ms(Math.round(x * 10) / 10);
  const main = markdownTable(
    ['scenario', 'store', 'req/s or jobs/s', 'p50 ms', 'p99 ms', 'max ms', 'errors/non-2xx', 'ratio vs baseline', 'goal', 'goal met?'],
    report.results.map((r) => [
      r.scenario,
      storeLabel(r.kind, r.store),
      `${fmt.int(r.rate)} ${r.unit}`,
      ms(r.latencyMs.p50),
      ms(r.latencyMs.p99),
      ms(r.latencyMs.max),
      `${r.errors}/${r.non2xx}`,
      r.kind === 'baseline' ? '1.00× (baseline)' : r.ratioVsBaseline === null ? '–' : fmt.ratio(r.ratioVsBaseline),
      r.goal ?? '–',
      r.goalMet === null ? '–' : r.goalMet ? '**yes**' : '**NO**',
    ]),
    [false, false, true, true, true, true, true, true, false, false],
  );

  // The whole machine's CPU a request (every process: server, PostgreSQL, autocannon, the
  // rest), and what it bounds: on a machine whose cores are all busy, a scenario cannot
  // reach more than (bare POST's CPU a request ÷ its own) of the bare POST's rate, however
  // short its waits. Its measured ratio over that bound says how much of the gap is waiting.
  const machinePerReq = (m: Measurement) =>
    m.postgresCpuPct === undefined ? undefined : msPerRequest(m, m.serverCpuPct + m.postgresCpuPct + m.loadgenCpuPct + m.otherCpuPct);
  const bares = report.http.filter((h) => h.kind === 'baseline' && h.store === 'postgres');
  const bareCpuOf = (h: HttpDetail) => {
    const b = sameRound(bares, h) ?? bares[0];
    return b ? machinePerReq(b.measurement) : undefined;
  };
  const resources = markdownTable(
    ['scenario', 'store', 'requests (2xx)', 'server CPU', 'server CPU ms/req', 'PostgreSQL CPU', 'PostgreSQL CPU ms/req', 'autocannon CPU', 'other CPU', 'machine CPU ms/req', 'CPU bound vs bare', 'server RSS MB', 'limiter takes'],
    report.http.map((h) => {
      const m = h.measurement;
      const perReq = (pct: number) => msPerRequest(m, pct).toFixed(2);
      const machine = machinePerReq(m);
      const bare = bareCpuOf(h);
      const bound = h.kind === 'baseline' || h.store !== 'postgres' || machine === undefined || bare === undefined ? '–' : `${(bare / machine).toFixed(2)}×`;
      return [
        h.scenario, storeLabel(h.kind, h.store), fmt.int(m.ok2xx), fmt.pct(m.serverCpuPct), perReq(m.serverCpuPct),
        m.postgresCpuPct === undefined ? '?' : fmt.pct(m.postgresCpuPct), m.postgresCpuPct === undefined ? '?' : perReq(m.postgresCpuPct),
        fmt.pct(m.loadgenCpuPct), fmt.pct(m.otherCpuPct), machine === undefined ? '?' : machine.toFixed(2), bound, String(Math.round(m.serverRssMb)),
        m.limiterTakes === undefined ? '–' : fmt.int(m.limiterTakes),
      ];
    }),
    [false, false, true, true, true, true, true, true, true, true, true, true, true],
  );

  // Old reports (before session 24) have no `slow`: their rows are left out.
  const withTail = report.http.filter((h) => h.measurement.slow);
  const tail = markdownTable(
    ['scenario', 'store', 'p99 ms', `answers over ${SLOW_MS} ms`, 'when sent (second of the run: answers)', 'scavenges (ms)', 'mark-compacts (ms)', 'longest GC pause ms'],
    withTail.map((h) => {
      const m = h.measurement;
      const g = m.gc;
      return [
        h.scenario, storeLabel(h.kind, h.store), ms(m.latencyMs.p99), fmt.int(m.slow.count),
        Object.entries(m.slow.bySecond).map(([s, n]) => `${s}: ${n}`).join(', ') || '–',
        g ? `${fmt.int(g.minor)} (${fmt.int(g.minorMs)})` : '?', g ? `${g.major} (${fmt.int(g.majorMs)})` : '?', g ? String(g.maxPauseMs) : '?',
      ];
    }),
    [false, false, true, true, false, true, true, true],
  );

  const withActivity = report.http.filter((h) => h.activity);
  const activity = markdownTable(
    ['scenario', 'store', 'running', 'waiting on a lock', 'waiting on IO', 'LWLock', 'idle in transaction', 'idle', 'WAL bytes/req', 'top waits'],
    withActivity.map((h) => {
      const a = h.activity!;
      return [
        h.scenario, storeLabel(h.kind, h.store), String(a.avg.running), String(a.avg.lockWait), String(a.avg.ioWait), String(a.avg.lwlockWait),
        String(a.avg.idleInTransaction), String(a.avg.idle), fmt.int(a.walBytes / Math.max(1, h.measurement.ok2xx)),
        Object.entries(a.topWaits).map(([k, v]) => `${k} ${v}`).join(', ') || '–',
      ];
    }),
    [false, false, true, true, true, true, true, true, true, false],
  );

  const writes = markdownTable(
    ['scenario', 'store', 'requests sent', '2xx (all 201)', 'rows', 'acknowledged & stored', 'stored, answer cut at a stop', 'chain seq', 'gaps', 'broken links', 'bad fingerprints', 'head', 'row bytes (tx / record)', 'ok'],
    report.http.filter((h) => h.writes).map((h) => {
      const w = h.writes!;
      return [
        h.scenario, h.store, fmt.int(w.sent), fmt.int(w.acknowledged), fmt.int(w.rows), fmt.int(w.acknowledgedStored), String(w.storedUnacknowledged),
        `${w.chain.minSeq}..${fmt.int(w.chain.maxSeq)}`, String(w.chain.seqGaps), String(w.chain.brokenLinks), String(w.chain.badFingerprints),
        w.chain.headMatches ? 'matches' : 'MISMATCH', `${fmt.int(w.avgRowBytes.transaction)} / ${fmt.int(w.avgRowBytes.fiscalRecord)}`, w.ok ? 'yes' : '**NO**',
      ];
    }),
    [false, false, true, true, true, true, true, true, true, true, true, false, true, false],
  );

  const queues = markdownTable(
    ['store', 'system', 'jobs', 'claimed', 'enqueue (creations/s)', 'drain s', 'drain jobs/s', 'worker CPU (ms/job)', 'PostgreSQL CPU (ms/job)', 'WAL bytes/job', 'other CPU', 'bare jobs/s', 'bare worker CPU (ms/job)', 'bare PostgreSQL CPU (ms/job)', 'bare WAL bytes/job', 'checks'],
    report.queues.map((q) => {
      const cpu = (pct: number | undefined, perSecond: number) =>
        pct === undefined ? '?' : `${fmt.pct(pct)} (${(pct / 100 / Math.max(1e-9, perSecond) * 1000).toFixed(2)})`;
      return [
        q.store, q.system, fmt.int(q.service.jobs), fmt.int(q.service.claimed), fmt.int(q.enqueue.perSecond), String(q.service.seconds), fmt.int(q.service.jobsPerSecond),
        cpu(q.service.workerCpuPct, q.service.jobsPerSecond), cpu(q.service.postgresCpuPct, q.service.jobsPerSecond),
        q.service.walBytesPerJob === undefined ? '–' : fmt.int(q.service.walBytesPerJob), fmt.pct(q.service.otherCpuPct),
        fmt.int(q.bare.jobsPerSecond), cpu(q.bare.workerCpuPct, q.bare.jobsPerSecond), cpu(q.bare.postgresCpuPct, q.bare.jobsPerSecond),
        q.bare.walBytesPerJob === undefined ? '–' : fmt.int(q.bare.walBytesPerJob),
        `${fmt.int(q.service.check.completedJobs)} completed, attempt 1 each; ${fmt.int(q.service.check.successTransactions)} success`,
      ];
    }),
    [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, false],
  );

  const cores = os.cpus().length;
  const load = (env.loadAverageAtStart as number[])[0] ?? 0;
  const warnings: string[] = [];
  if (load > cores / 2) warnings.push(`the machine was busy when the run started (1-min load average ${load} on ${cores} cores)`);
  const disturbed = [
    ...report.http.filter((h) => h.measurement.otherCpuPct > OTHER_CPU_WARN_PCT).map((h) => `${h.scenario} on ${h.store} (${fmt.pct(h.measurement.otherCpuPct)})`),
    ...report.queues.filter((q) => q.service.otherCpuPct > OTHER_CPU_WARN_PCT).map((q) => `queue drain on ${q.store} (${fmt.pct(q.service.otherCpuPct)})`),
  ];
  if (disturbed.length) warnings.push(`other processes used more than ${OTHER_CPU_WARN_PCT} % of a core during: ${disturbed.join('; ')}`);
  const warningBlock = warnings.length
    ? ['', `> **Warning: this run may have been disturbed** — ${warnings.join('; ')}. "Other" CPU also holds the kernel's own work ` +
      '(fsync, networking), which is high on its own in write-heavy runs; with a load average this high, rerun on a quiet machine to be sure.']
    : [];

  return [
    `# Transactions benchmark — ${report.startedAt}`,
    '',
    `autocannon ${String(env.autocannon)}: ${report.load.connections} connections, pipelining 1, ` +
      `${report.load.warmupS} s warm-up (discarded) + ${report.load.durationS} s measured per HTTP scenario; every server in its own child process, ` +
      `one at a time, on 127.0.0.1. Queue drain in the benchmark process: ${fmt.int(report.queue.jobs)} jobs on PostgreSQL` +
      `${report.queue.jobsPglite ? `, ${fmt.int(report.queue.jobsPglite)} on PGlite` : ''}.`,
    ...warningBlock,
    '',
    main,
    '',
    'HTTP rows: req/s is autocannon\'s average of per-second samples; latency of 2xx answers, 1 ms resolution; every request a new transaction ' +
      '(its own Idempotency-Key). Ratio: over the bare POST (PGlite too). ' +
      'Queue rows: jobs/s = jobs ÷ wall time of the whole drain; latency per job — service: handler start → commit ' +
      '(transactions.submitted_at → completed_at), bare: claim answered → completion answered; ratio: over the bare loop on the same store.',
    '',
    '## Writes checked afterwards (SQL)',
    '',
    writes,
    '',
    'Every request had its own Idempotency-Key; the keys answered 2xx were kept. "acknowledged & stored" must equal the 2xx count ' +
      '(no acknowledged write lost). "stored, answer cut at a stop": requests in flight when autocannon stopped a run (warm-up, measured) — ' +
      'it destroys its connections, the server still commits them — so rows = 2xx + these (≤ connections per run), and no row has a key ' +
      'that was never sent. The chain of the location: seq 1..N without gaps, each previous_fingerprint the prior record\'s fingerprint, ' +
      'every fingerprint recomputed from its body, chain_heads on the last record. PGlite is checked after its server closed, reopened from its files.',
    '',
    '## Queue drain',
    '',
    queues,
    '',
    'Enqueue: TransactionService.create (what the POST route runs after authentication) for es-verifactu sales over ' +
      `${report.queue.locations} locations, ${report.queue.concurrency} at a time; each commits its submit job with the transaction. ` +
      'Drain: the runtime\'s own worker (createRuntime, up to 100 jobs in flight, claims of up to 50, outcomes committed in groups, lease 60 s), `worker.drain()` against the sandbox stub authority. ' +
      'Bare: the worker\'s claim and finish statements on a copy of the `jobs` table, nothing else. Worker CPU: this process ' +
      '(with PGlite, the database runs in it too).',
    '',
    ...(withTail.length
      ? [
          '## Tail latency: slow answers and the server\'s garbage collection',
          '',
          tail,
          '',
          `Answers over ${SLOW_MS} ms (the p99 goal) counted by the second of the measured run their request was sent in: a p99 made by a burst ` +
            '(the run\'s first second, with its 50 new connections; a mark-compact of the server\'s heap) reads differently from one spread over ' +
            'the run. GC: the server process\'s collections during the measured run (perf_hooks `gc` entries), with their pause time.',
          '',
        ]
      : []),
    '## Resources during the measured HTTP runs',
    '',
    resources,
    '',
    'Machine CPU ms/req: server + PostgreSQL + autocannon + other, ÷ 2xx answers (2 cores = 2,000 ms a second). CPU bound vs bare: the bare POST\'s ' +
      'machine CPU a request (same round) ÷ this row\'s: the ratio this scenario could reach at most on a machine whose cores the bare POST keeps busy; ' +
      'the measured ratio falls short of it by the time requests wait (chain order, the signing thread, the event loop).',
    '',
    ...(withActivity.length
      ? [
          '## What the PostgreSQL backends were doing (pg_stat_activity, sampled every 50 ms)',
          '',
          activity,
          '',
          'Average number of the benchmark database\'s client backends in each state; WAL bytes/req: WAL the server wrote during the run ÷ 2xx answers. ' +
            '"waiting on a lock": blocked on a row lock ' +
            '(Lock:transactionid/tuple: the chain head row); "idle in transaction": inside BEGIN…COMMIT waiting for the next statement ' +
            'from Node (a round trip; while it holds the chain head, every other append waits).',
          '',
        ]
      : []),
    '## Idempotency keys',
    '',
    ...Object.entries(report.idempotency).map(([k, v]) => `- ${k}: ${v}`),
    '',
    '## Environment',
    '',
    `- Node ${String(env.node)}, ${String(env.platform)}, ${String(env.cpu)}, ${String(env.memoryGb)} GB, load average at start ${(env.loadAverageAtStart as number[]).join(' / ')}`,
    `- PostgreSQL ${pg.version} on 127.0.0.1: fsync=${pg.fsync}, synchronous_commit=${pg.synchronous_commit}, ` +
      `wal_sync_method=${pg.wal_sync_method}, shared_buffers=${pg.shared_buffers}`,
    `- PGlite ${String(env.pglite)}, file-backed and durable (fsync on every commit), DATA_DIR under ${path.dirname(String(env.pgliteDataDir))}`,
    `- fastify ${String(env.fastify)}, pg ${String(env.pg)}`,
    `- service code: commit ${report.code.commit} (${report.code.subject}), src/ sha256 ${report.code.srcSha256}` +
      (report.code.uncommittedSrc.length ? `, uncommitted changes in ${report.code.uncommittedSrc.join(', ')}` : ', no uncommitted src/ changes') +
      (report.code.changedDuringRun ? ` — **src/ changed during the run** (now ${report.code.changedDuringRun.srcSha256}): rows measured after the change ran the new code` : ''),
    ...(env.cpuProfilesIn ? [`- service children ran with --cpu-prof: profiles in ${String(env.cpuProfilesIn)}`] : []),
    '',
  ].join('\n');
}

/** Runs the benchmark, prints the tables and the JSON, writes bench/results/transactions-<date>.{md,json}. */
export async function main(): Promise<TransactionsReport> {
  const report = await runTransactionsBench();
  publishReport(RESULTS_DIR, 'transactions', report.startedAt, report, transactionsMarkdown(report));
  return report;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
    process.exitCode = 1;
  });
}
