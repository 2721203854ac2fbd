import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import pino from 'pino';
import { systemClock } from '../../src/core/clock.ts';
import { deriveKeys } from '../../src/crypto/master-key.ts';
import { buildApp } from '../../src/http/app.ts';
import { createRuntime, type Runtime } from '../../src/runtime.ts';
import { createApiKeyService } from '../../src/services/api-keys.ts';
import type { AuthContext } from '../../src/services/auth-context.ts';
import { checkMasterKey } from '../../src/services/server-secrets.ts';
import type { TransactionService } from '../../src/services/transactions.ts';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { dniNif } from '../../test/support/spain.ts';
import { locationBodies } from '../../test/support/fixtures.ts';
import { saleBody, saleMetadata } from '../../test/support/transactions.ts';
import { cpuBetween, cpuSnapshot } from './proc-cpu.ts';
import { createBenchLimiter } from './unthrottled-limiter.ts';

/**
 * The queue-drain benchmark, in this process: the service's own runtime (createRuntime,
 * as `serve` and `worker` build it) over a store, es-verifactu transactions created
 * through the transaction service (each one enqueues its `submit` job in the same
 * database transaction: the outbox), then `worker.drain()` against the sandbox stub
 * authority. And the floor to compare with: a bare claim + complete loop with the same
 * SQL on a table shaped like `jobs`.
 */

const silent = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

/**
 * The systems drained: es-sii, one record per request and per job, jobs independent of
 * each other (the queue's own cost per job); es-verifactu, chained, one ordered queue per
 * issuer, and a chain's queued records sent together (up to 1,000 per request).
 */
export type QueueSystem = 'es-sii' | 'es-verifactu';

export interface QueueContext {
  system: QueueSystem;
  db: Db;
  rt: Runtime;
  app: FastifyInstance;
  auth: AuthContext;
  transactions: TransactionService;
  locationIds: string[];
  close(): Promise<void>;
}

/**
 * Migrates, wires a runtime like src/main.ts (worker NOT started: the drain is measured on
 * its own), signs up one account through the API (app.inject) and creates `locations`
 * VERI*FACTU locations, each its own hash chain, so creation is not serialized on one chain.
 */
export async function openQueueContext(db: Db, locations: number, system: QueueSystem = 'es-verifactu'): Promise<QueueContext> {
  await migrate(db);
  const keys = deriveKeys(randomBytes(32));
  await checkMasterKey(db, keys);
  const limiter = createBenchLimiter();
  const rt = createRuntime({ db, clock: systemClock, keys, limiter, log: silent, config: { liveEnabled: false, mode: 'cloud' } });
  const app = await buildApp(rt);
  await app.ready();

  const signup = await app.inject({
    method: 'POST', url: '/v1/accounts',
    payload: { name: 'Bench Queue SL', billing_email: `bench-${randomUUID()}@example.com` },
  });
  if (signup.statusCode !== 201) throw new Error(`queue sign-up: ${signup.statusCode} ${signup.body}`);
  const key = (signup.json() as { api_key: { key: string } }).api_key.key;
  const authorization = `Bearer ${key}`;
  const locationIds: string[] = [];
  for (let i = 0; i < locations; i++) {
    const res = await app.inject({
      method: 'POST', url: '/v1/locations', headers: { authorization },
      // Each location its own issuer NIF: VERI*FACTU chains per issuer, and a chain's submit
      // jobs run one after another (ordered queue), so N locations are N parallel chains.
      payload: { ...locationBodies[system], name: `Bar Pepe ${i + 1}`, tax_id: dniNif(10_000_000 + i) },
    });
    if (res.statusCode !== 201) throw new Error(`queue location: ${res.statusCode} ${res.body}`);
    locationIds.push((res.json() as { id: string }).id);
  }
  const auth = await createApiKeyService(rt.deps).authenticate(authorization);
  // The same service the POST route uses (src/http/app.ts), with the runtime's submitter:
  // its notify() is a no-op while the worker is not started.
  const transactions = rt.transactions;
  return {
    system, db, rt, app, auth, transactions, locationIds,
    async close() {
      await app.close();
      await rt.worker.stop();
      await limiter.close();
    },
  };
}

export interface EnqueueResult {
  created: number;
  seconds: number;
  perSecond: number;
}

/**
 * Creates `n` VERI*FACTU sales through TransactionService.create (validation, idempotency
 * lookup, location check, chained record, job enqueue: what POST /v1/transactions does
 * after authentication), `concurrency` at a time, spread round-robin over the locations.
 */
export async function enqueueSubmitJobs(ctx: QueueContext, n: number, concurrency: number): Promise<EnqueueResult> {
  const started = process.hrtime.bigint();
  let next = 0;
  let created = 0;
  const runId = randomUUID().slice(0, 8);
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      const loc = ctx.locationIds[i % ctx.locationIds.length]!;
      const body = saleBody(loc, saleMetadata[ctx.system] ? { metadata: saleMetadata[ctx.system] } : {});
      const res = await ctx.transactions.create(ctx.auth, body, { idempotencyKey: `queue-${runId}-${i}` });
      if (!res.created || res.transaction.status !== 'pending') {
        throw new Error(`queue enqueue #${i}: created ${String(res.created)}, status ${res.transaction.status}`);
      }
      created++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { created, seconds: round2(seconds), perSecond: round2(created / seconds) };
}

export interface DrainResult {
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  /** Per job, ms. Service: handler start (transactions.submitted_at) → commit (completed_at). Baseline: claim answered → complete answered. */
  latencyMs: { p50: number; p99: number; max: number };
  /** This process (the worker; with PGlite, the database too), % of one core. */
  workerCpuPct: number;
  postgresCpuPct: number | undefined;
  otherCpuPct: number;
  /** WAL the server wrote per job (PostgreSQL only: the whole cluster's, over the measured part). */
  walBytesPerJob?: number;
}

/** The server's current WAL position (PostgreSQL), to measure WAL written over a span. */
async function walLsn(db: Db): Promise<string | undefined> {
  if (db.kind !== 'postgres') return undefined;
  return (await db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
}

async function walSince(db: Db, lsn: string | undefined): Promise<number | undefined> {
  if (lsn === undefined) return undefined;
  return Number((await db.query<{ d: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint::text AS d', [lsn])).rows[0]!.d);
}

/** Runs the measured part, with the CPU accounting of the HTTP scenarios. */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number; workerCpuPct: number; postgresCpuPct: number | undefined; otherCpuPct: number }> {
  const cpu0 = process.cpuUsage();
  const m0 = cpuSnapshot();
  const t0 = process.hrtime.bigint();
  const value = await fn();
  const wallUs = Number((process.hrtime.bigint() - t0) / 1000n);
  const cpu = process.cpuUsage(cpu0);
  const machine = cpuBetween(m0, cpuSnapshot(), wallUs / 1000);
  const workerCpuPct = ((cpu.user + cpu.system) / wallUs) * 100;
  return {
    value,
    seconds: wallUs / 1e6,
    workerCpuPct: round2(workerCpuPct),
    postgresCpuPct: machine.postgresPct === undefined ? undefined : round2(machine.postgresPct),
    otherCpuPct: round2(Math.max(0, machine.machinePct - workerCpuPct - (machine.postgresPct ?? 0))),
  };
}

export interface ServiceDrainResult extends DrainResult {
  /** Jobs the worker claimed (a VERI*FACTU batch is claimed through its head: fewer than the jobs). */
  claimed: number;
  check: { completedJobs: number; otherJobs: number; successTransactions: number; attemptsAboveOne: number; events: number };
}

/** `worker.drain()` of the runtime's own worker (up to 100 jobs in flight, as under `serve`), then SQL checks. */
export async function drainService(ctx: QueueContext, expected: number): Promise<ServiceDrainResult> {
  const lsn = await walLsn(ctx.db);
  const t = await timed(() => ctx.rt.worker.drain(1_000_000));
  const wal = await walSince(ctx.db, lsn);
  const q = async (sql: string) => Number((await ctx.db.query<{ n: number | string }>(sql)).rows[0]!.n);
  const check = {
    completedJobs: await q(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'submit' AND status = 'completed'`),
    otherJobs: await q(`SELECT count(*)::int AS n FROM jobs WHERE kind <> 'submit' OR status <> 'completed'`),
    successTransactions: await q(`SELECT count(*)::int AS n FROM transactions WHERE system = '${ctx.system}' AND status = 'success'`),
    attemptsAboveOne: await q(`SELECT count(*)::int AS n FROM jobs WHERE attempt <> 1`),
    events: await q(`SELECT count(*)::int AS n FROM events`),
  };
  // Jobs completed, counted in the table: a VERI*FACTU run completes its adopted jobs too
  // (drain() counts the jobs it claimed, the heads of batches).
  const jobs = check.completedJobs;
  if (check.completedJobs !== expected || check.successTransactions !== expected || check.otherJobs !== 0 || check.attemptsAboveOne !== 0) {
    throw new Error(`queue drain: ${t.value} claimed for ${expected}; checks ${JSON.stringify(check)}`);
  }
  const lat = (await ctx.db.query<{ p50: number; p99: number; max: number }>(
    `SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY d) AS p50, percentile_disc(0.99) WITHIN GROUP (ORDER BY d) AS p99, max(d) AS max
     FROM (SELECT extract(epoch FROM completed_at - submitted_at) * 1000 AS d FROM transactions WHERE system = '${ctx.system}') s`,
  )).rows[0]!;
  return {
    jobs,
    seconds: round2(t.seconds),
    jobsPerSecond: round2(jobs / t.seconds),
    latencyMs: { p50: round2(Number(lat.p50)), p99: round2(Number(lat.p99)), max: round2(Number(lat.max)) },
    workerCpuPct: t.workerCpuPct,
    postgresCpuPct: t.postgresCpuPct,
    otherCpuPct: t.otherCpuPct,
    ...(wal !== undefined ? { walBytesPerJob: Math.round(wal / Math.max(1, jobs)) } : {}),
    claimed: t.value,
    check,
  };
}

/** The claim and finish statements of src/store/repos/jobs-repo.ts, on the bare table. */
const CLAIM_SQL = `WITH due AS (
    SELECT id FROM bench_jobs
    WHERE status IN ('pending', 'failed') AND run_at <= $4 AND kind = ANY($1::text[])
    ORDER BY run_at, id LIMIT $5 FOR UPDATE SKIP LOCKED),
  expired AS (
    SELECT id FROM bench_jobs
    WHERE status = 'processing' AND locked_until < $4 AND kind = ANY($1::text[])
    ORDER BY locked_until LIMIT $5 FOR UPDATE SKIP LOCKED)
  UPDATE bench_jobs SET status = 'processing', attempt = attempt + 1, locked_by = $2, locked_until = $3::timestamptz, updated_at = $4
  WHERE id IN (SELECT id FROM (SELECT id FROM expired UNION ALL SELECT id FROM due) runnable LIMIT $5)
  RETURNING id, kind, account_id, transaction_id, payload, status, attempt, max_attempts, run_at, locked_by, locked_until, last_error, created_at, updated_at`;
const FINISH_SQL = `UPDATE bench_jobs SET status = $3, run_at = COALESCE($4, run_at), last_error = COALESCE($5, last_error),
    locked_by = NULL, locked_until = NULL, updated_at = $6
  WHERE id = $1 AND locked_by = $2 AND status = 'processing'`;

/**
 * The floor: `bench_jobs`, a copy of the `jobs` table's shape (columns, defaults, checks,
 * the four indexes; no foreign key), filled with `n` runnable rows in one statement and
 * analyzed; then the loop `worker.drain()` runs, with nothing else: claim up to 20 with the
 * worker's claim statement, finish each (the worker's finish statement, autocommit, the 20
 * in parallel), until a claim finds nothing.
 */
export async function drainBare(db: Db, n: number, batch = 20): Promise<DrainResult> {
  await db.exec(`DROP TABLE IF EXISTS bench_jobs;
    CREATE TABLE bench_jobs (LIKE jobs INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);`);
  await db.query(
    `INSERT INTO bench_jobs (id, kind, account_id, transaction_id, payload, status, attempt, max_attempts, run_at, created_at, updated_at)
     SELECT gen_random_uuid(), 'submit', gen_random_uuid(), gen_random_uuid(), '{}'::jsonb, 'pending', 0, 50,
            now() - interval '1 minute' + i * interval '1 microsecond', now(), now()
     FROM generate_series(1, $1::int) AS i`,
    [n],
  );
  await db.exec('ANALYZE bench_jobs');
  const workerId = `bench-bare:${process.pid}`;
  const durations: number[] = [];
  const lsn = await walLsn(db);
  const t = await timed(async () => {
    let done = 0;
    for (;;) {
      const now = new Date();
      const claimed = await db.query<{ id: string }>(CLAIM_SQL, [['submit'], workerId, new Date(now.getTime() + 60_000), now, batch]);
      if (claimed.rows.length === 0) break;
      const t0 = performance.now();
      await Promise.all(claimed.rows.map(async (job) => {
        const res = await db.query(FINISH_SQL, [job.id, workerId, 'completed', null, null, new Date()]);
        if (res.rowCount !== 1) throw new Error(`bare queue: lost the lease of ${job.id}`);
        durations.push(performance.now() - t0);
      }));
      done += claimed.rows.length;
    }
    return done;
  });
  const wal = await walSince(db, lsn);
  const left = Number((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM bench_jobs WHERE status <> 'completed' OR attempt <> 1`)).rows[0]!.n);
  if (t.value !== n || left !== 0) throw new Error(`bare queue: drained ${t.value} of ${n}, ${left} rows not completed exactly once`);
  durations.sort((a, b) => a - b);
  const pct = (p: number) => round2(durations[Math.min(durations.length - 1, Math.floor(p * durations.length))] ?? 0);
  return {
    jobs: t.value,
    seconds: round2(t.seconds),
    jobsPerSecond: round2(t.value / t.seconds),
    latencyMs: { p50: pct(0.5), p99: pct(0.99), max: round2(durations[durations.length - 1] ?? 0) },
    workerCpuPct: t.workerCpuPct,
    postgresCpuPct: t.postgresCpuPct,
    otherCpuPct: t.otherCpuPct,
    ...(wal !== undefined ? { walBytesPerJob: Math.round(wal / Math.max(1, t.value)) } : {}),
  };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
