import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { call, expectStatus } from './lib/api.ts';
import { cleanupStack } from './lib/cleanup.ts';
import { forkServer } from './lib/fork-server.ts';
import { createBenchDatabase, dropBenchDatabase, postgresSettings } from './lib/pg-admin.ts';
import { fmt, markdownTable, publishReport } from './lib/report.ts';

/**
 * Fleet benchmark (`npm run bench -- fleet`), on PostgreSQL, the service in a child process.
 *
 *   1. Ingestion: BENCH_FLEET_CONCURRENCY clients, each its own agent, POST
 *      /v1/agents/{id}/telemetry with batches of 100 data points for BENCH_FLEET_SECONDS:
 *      points per second, and the latency of a batch. The service stores each point,
 *      adds it to its hour, updates the agent's state and runs anomaly detection.
 *   2. Its baseline, in the same run and database: the bare multi-row INSERT of the same
 *      100 rows into a copy of fleet_points (same columns, key and index), same clients,
 *      same duration, through a pg Pool: what storing the points alone costs.
 *   3. Metrics: an account seeded with BENCH_FLEET_AGENTS agents over BENCH_FLEET_DAYS days
 *      (hourly sums for every agent and hour, and per account; raw points every minute for the last hour
 *      and every BENCH_FLEET_RAW_MINUTES before; agent states; one alert per agent and day),
 *      then GET /v1/fleet/metrics for every range, BENCH_FLEET_REPEAT times each (after one
 *      warm-up): median and max.
 *   4. Its baselines: the 30-day daily series the service computes from the account's hourly
 *      sums, computed instead from the agents' hourly sums and from the raw points (the
 *      queries the rollup tables save), straight through pg.
 *
 * Defaults run in about a minute on a 2-core machine.
 */

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVICE = path.join(HERE, 'servers', 'service.ts');
const RESULTS_DIR = path.join(HERE, 'results');

const env = (name: string, dflt: number) => {
  const v = process.env[name];
  const n = v === undefined ? dflt : Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
};

const SETTINGS = {
  seconds: env('BENCH_FLEET_SECONDS', 10),
  concurrency: env('BENCH_FLEET_CONCURRENCY', 8),
  batch: Math.min(env('BENCH_FLEET_BATCH', 100), 100),
  agents: env('BENCH_FLEET_AGENTS', 1000),
  days: env('BENCH_FLEET_DAYS', 30),
  rawMinutes: env('BENCH_FLEET_RAW_MINUTES', 60),
  repeat: env('BENCH_FLEET_REPEAT', 5),
};

const RANGES = ['1h', '6h', '24h', '7d', '30d'] as const;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : 0;
};
const pctl = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : 0;
};

interface IngestResult { points: number; requests: number; seconds: number; pointsPerSecond: number; p50ms: number; p99ms: number }

/** Point n of a client: one second apart going back from `start`, so none repeats. */
function makePoint(start: number, n: number) {
  return {
    timestamp: new Date(start - n * 1000).toISOString(), transactions_total: 20, transactions_failed: n % 7 === 0 ? 1 : 0,
    queue_pending: n % 5, queue_dead: 0, storage_used_bytes: 1_000_000 + n, storage_total_bytes: 64_000_000_000,
    adapter_versions: { alpha: '1.4.2', beta: '2.0.1' },
  };
}

async function runClients(seconds: number, concurrency: number, send: (client: number, round: number) => Promise<number>): Promise<IngestResult> {
  const latencies: number[] = [];
  let points = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async (_, c) => {
    for (let round = 0; performance.now() < deadline; round++) {
      const t0 = performance.now();
      points += await send(c, round);
      latencies.push(performance.now() - t0);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  return { points, requests: latencies.length, seconds: elapsed, pointsPerSecond: points / elapsed, p50ms: pctl(latencies, 0.5), p99ms: pctl(latencies, 0.99) };
}

async function signupAccount(base: string): Promise<{ key: string; accountId: string }> {
  const body = JSON.stringify({ name: 'Bench Fleet SL', billing_email: `bench-${randomUUID()}@example.com` });
  const res = await expectStatus(call(base, 'POST', '/v1/accounts', { 'content-type': 'application/json' }, body), 201, 'sign-up');
  return { key: (res.api_key as { key: string }).key, accountId: (res.account as { id: string }).id };
}

/** Seeds `accountId`'s test fleet in SQL (generate_series): the volume a month of a large fleet leaves. */
async function seed(pool: pg.Pool, accountId: string, now: Date): Promise<Record<string, number>> {
  const { agents, days, rawMinutes } = SETTINGS;
  const hourNow = new Date(Math.floor(now.getTime() / 3600_000) * 3600_000);
  const from = new Date(hourNow.getTime() - days * 24 * 3600_000);
  const lastHour = new Date(now.getTime() - 3600_000);
  const q = (sql: string, params: unknown[]) => pool.query(sql, params);
  await q(`INSERT INTO fleet_hourly (account_id, environment, hour, agent_id, points, transactions_total, transactions_failed)
    SELECT $1, 'test', h, 'agent-' || a, 60, 600 + (a % 50), (a + extract(hour FROM h)::int) % 9
    FROM generate_series(1, $2::int) a, generate_series($3::timestamptz, $4::timestamptz, interval '1 hour') h`, [accountId, agents, from, hourNow]);
  await q(`INSERT INTO fleet_account_hourly (account_id, environment, hour, points, transactions_total, transactions_failed, agents)
    SELECT account_id, environment, hour, sum(points), sum(transactions_total), sum(transactions_failed), count(*)
    FROM fleet_hourly WHERE account_id = $1 GROUP BY account_id, environment, hour`, [accountId]);
  await q(`INSERT INTO fleet_points (account_id, environment, agent_id, ts, transactions_total, transactions_failed, queue_pending, queue_dead,
      storage_used_bytes, storage_total_bytes, adapter_versions, received_at)
    SELECT $1, 'test', 'agent-' || a, t, 10, (a + extract(minute FROM t)::int) % 3, a % 4, 0, 1000000, 64000000000, '{"alpha":"1.4.2"}', t
    FROM generate_series(1, $2::int) a,
         (SELECT generate_series($3::timestamptz, $4::timestamptz, make_interval(mins => $6::int)) AS t
          UNION ALL SELECT generate_series($4::timestamptz + interval '1 minute', $5::timestamptz, interval '1 minute')) ts`,
  [accountId, agents, from, lastHour, now, Math.max(1, rawMinutes)]);
  await q(`INSERT INTO fleet_agents (account_id, environment, agent_id, first_seen_at, last_seen_at, queue_pending, queue_dead,
      storage_used_bytes, storage_total_bytes, adapter_versions)
    SELECT $1, 'test', 'agent-' || a, $3, $4, a % 4, (a % 10 = 0)::int, 1000000 * (a % 100), 100000000, '{"alpha":"1.4.2"}'
    FROM generate_series(1, $2::int) a`, [accountId, agents, from, now]);
  await q(`INSERT INTO fleet_alerts (id, account_id, environment, agent_id, type, message, value, threshold, observed_at, created_at)
    SELECT gen_random_uuid(), $1, 'test', 'agent-' || a, 'storage_high', 'storage 95.0 % used', 0.95, 0.9, d, d
    FROM generate_series(1, $2::int) a, generate_series($3::timestamptz, $4::timestamptz, interval '1 day') d`, [accountId, agents, from, now]);
  await pool.query('ANALYZE fleet_hourly; ANALYZE fleet_points; ANALYZE fleet_agents; ANALYZE fleet_alerts');
  const count = async (table: string) => Number((await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`, [accountId])).rows[0].n);
  return { fleet_hourly: await count('fleet_hourly'), fleet_points: await count('fleet_points'), fleet_agents: await count('fleet_agents'), fleet_alerts: await count('fleet_alerts') };
}

async function timeIt(repeat: number, fn: () => Promise<void>): Promise<{ medianMs: number; maxMs: number }> {
  await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return { medianMs: median(times), maxMs: Math.max(...times) };
}

export async function main() {
  const startedAt = new Date().toISOString();
  const cleanup = cleanupStack('dropping the fleet benchmark database');
  try {
    const database = await createBenchDatabase();
    cleanup.push(() => dropBenchDatabase(database.name));
    console.error(`[fleet] database ${database.name}`);
    const server = await forkServer(SERVICE, { BENCH_STORE: 'postgres', DATABASE_URL: database.url });
    cleanup.push(() => server.stop());
    const pool = new pg.Pool({ connectionString: database.url, max: Math.max(2, SETTINGS.concurrency) });
    cleanup.push(() => pool.end());
    const base = server.baseUrl;

    // 1. Ingestion through the API.
    const ingestAccount = await signupAccount(base);
    const start = Date.now();
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${ingestAccount.key}` };
    const bodyOf = (client: number, round: number) =>
      Array.from({ length: SETTINGS.batch }, (_, i) => makePoint(start, round * SETTINGS.batch + i + client * 10_000_000));
    console.error(`[fleet] ingestion: ${SETTINGS.concurrency} clients × ${SETTINGS.seconds} s, batches of ${SETTINGS.batch}`);
    const service = await runClients(SETTINGS.seconds, SETTINGS.concurrency, async (client, round) => {
      const res = await expectStatus(call(base, 'POST', `/v1/agents/bench-agent-${client}/telemetry`, headers, JSON.stringify({ data_points: bodyOf(client, round) })), 202, 'telemetry');
      return Number(res.accepted);
    });

    // 2. The bare INSERT of the same rows.
    await pool.query('CREATE TABLE fleet_points_bare (LIKE fleet_points INCLUDING ALL)');
    const cols = 12;
    console.error('[fleet] baseline: bare INSERT of the same rows');
    const bare = await runClients(SETTINGS.seconds, SETTINGS.concurrency, async (client, round) => {
      const pts = bodyOf(client, round);
      const params: unknown[] = [];
      const values = pts.map((p, i) => {
        params.push(ingestAccount.accountId, 'test', `bench-agent-${client}`, p.timestamp, p.transactions_total, p.transactions_failed, p.queue_pending,
          p.queue_dead, p.storage_used_bytes, p.storage_total_bytes, JSON.stringify(p.adapter_versions), new Date());
        return `(${Array.from({ length: cols }, (_, j) => `$${i * cols + j + 1}`).join(', ')})`;
      });
      await pool.query(`INSERT INTO fleet_points_bare (account_id, environment, agent_id, ts, transactions_total, transactions_failed, queue_pending, queue_dead,
        storage_used_bytes, storage_total_bytes, adapter_versions, received_at) VALUES ${values.join(', ')}`, params);
      return pts.length;
    });

    // 3. Metrics over a month of a large fleet.
    const metricsAccount = await signupAccount(base);
    console.error(`[fleet] seeding ${SETTINGS.agents} agents × ${SETTINGS.days} days`);
    const seedStarted = performance.now();
    const seeded = await seed(pool, metricsAccount.accountId, new Date());
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const mHeaders = { authorization: `Bearer ${metricsAccount.key}` };
    const metrics: Array<{ range: string; medianMs: number; maxMs: number; total: number; buckets: number }> = [];
    for (const range of RANGES) {
      let last: Record<string, unknown> = {};
      const t = await timeIt(SETTINGS.repeat, async () => {
        last = await expectStatus(call(base, 'GET', `/v1/fleet/metrics?account_id=${metricsAccount.accountId}&range=${range}`, mHeaders), 200, `metrics ${range}`);
      });
      metrics.push({ range, ...t, total: Number((last.transactions as { total: number }).total), buckets: (last.series as unknown[]).length });
    }

    // 4. The 30-day series from the raw points (what the hourly sums save).
    const from30 = new Date(Date.now() - 30 * 24 * 3600_000);
    const raw30 = await timeIt(SETTINGS.repeat, async () => {
      await pool.query(`SELECT floor(extract(epoch FROM ts) / 86400) AS b, sum(transactions_total), sum(transactions_failed), count(DISTINCT agent_id)
        FROM fleet_points WHERE account_id = $1 AND environment = 'test' AND ts >= $2 GROUP BY 1`, [metricsAccount.accountId, from30]);
    });
    const hourly30 = await timeIt(SETTINGS.repeat, async () => {
      await pool.query(`SELECT floor(extract(epoch FROM hour) / 86400) AS b, sum(transactions_total), sum(transactions_failed), count(DISTINCT agent_id)
        FROM fleet_hourly WHERE account_id = $1 AND environment = 'test' AND hour >= $2 GROUP BY 1`, [metricsAccount.accountId, from30]);
    });
    const account30 = await timeIt(SETTINGS.repeat, async () => {
      await pool.query(`SELECT floor(extract(epoch FROM hour) / 86400) AS b, sum(transactions_total), sum(transactions_failed), max(agents)
        FROM fleet_account_hourly WHERE account_id = $1 AND environment = 'test' AND hour >= $2 GROUP BY 1`, [metricsAccount.accountId, from30]);
    });

    const report = {
      benchmark: 'fleet', startedAt, finishedAt: new Date().toISOString(), settings: SETTINGS,
      environment: { node: process.version, postgres: await postgresSettings() },
      ingestion: { service, bareInsert: bare, ratioVsBaseline: service.pointsPerSecond / bare.pointsPerSecond },
      seeded: { ...seeded, seconds: seedSeconds },
      metrics, series30dQuery: { fromAccountHourlySums: account30, fromAgentHourlySums: hourly30, fromRawPoints: raw30 },
    };
    const md = [
      `# Fleet benchmark (${startedAt})`, '',
      `Ingestion: ${SETTINGS.concurrency} clients, batches of ${SETTINGS.batch}, ${SETTINGS.seconds} s each, PostgreSQL ${report.environment.postgres.version}.`, '',
      markdownTable(['scenario', 'points/s', 'batches', 'p50 ms', 'p99 ms'], [
        ['POST /v1/agents/{id}/telemetry', fmt.int(service.pointsPerSecond), fmt.int(service.requests), fmt.ms(service.p50ms), fmt.ms(service.p99ms)],
        ['baseline: bare INSERT of the same rows', fmt.int(bare.pointsPerSecond), fmt.int(bare.requests), fmt.ms(bare.p50ms), fmt.ms(bare.p99ms)],
      ], [false, true, true, true, true]), '',
      `Service / baseline: ${fmt.ratio(report.ingestion.ratioVsBaseline)}`, '',
      `Metrics: ${SETTINGS.agents} agents × ${SETTINGS.days} days seeded in ${seedSeconds.toFixed(1)} s (${Object.entries(seeded).map(([k, v]) => `${k} ${fmt.int(v)}`).join(', ')}); ${SETTINGS.repeat} runs each after a warm-up.`, '',
      markdownTable(['GET /v1/fleet/metrics', 'median ms', 'max ms', 'buckets', 'transactions'],
        metrics.map((m) => [`range=${m.range}`, fmt.ms(m.medianMs), fmt.ms(m.maxMs), String(m.buckets), fmt.int(m.total)]), [false, true, true, true, true]), '',
      markdownTable(['30-day daily series, SQL only', 'median ms', 'max ms'], [
        ['from the account\'s hourly sums (what the service reads)', fmt.ms(account30.medianMs), fmt.ms(account30.maxMs)],
        ['from the agents\' hourly sums', fmt.ms(hourly30.medianMs), fmt.ms(hourly30.maxMs)],
        ['baseline: from the raw points', fmt.ms(raw30.medianMs), fmt.ms(raw30.maxMs)],
      ], [false, true, true]), '',
    ].join('\n');
    publishReport(RESULTS_DIR, 'fleet', startedAt, report, md);
  } finally {
    await cleanup.done();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
