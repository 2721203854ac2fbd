import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import type { Db, DbStats } from '../store/db.ts';
import { queueMetricsRepo, type QueueDepthRow } from '../store/repos/queue-metrics-repo.ts';
import type {
  RateLimitObserver, SubmissionObserver, SubmissionOperation, SubmissionOutcome, TransactionObserver, WebhookDeliveryOutcome, WebhookObserver,
} from './observers.ts';

/**
 * The Prometheus metrics of one runtime (docs/metrics.md lists them). One registry per
 * runtime, never prom-client's global one: tests build many apps in one process, and two
 * runtimes must not share (or collide on) a series.
 *
 * Two kinds of numbers, which matter with several nodes on one PostgreSQL:
 * - counters and histograms (requests, creates, submissions, webhooks, 429s) count what
 *   THIS process did: Prometheus sums them over the nodes (`sum by (…) (rate(…))`);
 * - the queue gauges are read from the database at scrape time: every node reports the
 *   same, global, numbers, so dashboards take `max` over the nodes, never `sum`.
 */
export interface Metrics {
  readonly registry: Registry;
  readonly contentType: string;
  readonly submissions: SubmissionObserver;
  readonly transactions: TransactionObserver;
  readonly webhooks: WebhookObserver;
  readonly rateLimits: RateLimitObserver;
  /** One answered HTTP request: the route pattern (never the raw URL), its status and duration. */
  httpRequest(method: string, route: string, statusCode: number, seconds: number): void;
  /** Reads the database-derived gauges, then renders every metric in the text format. */
  scrape(): Promise<string>;
}

export interface MetricsDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  /**
   * prom-client's default process metrics (CPU, memory, handles, GC, event-loop lag):
   * started at the first scrape, so runtimes that are never scraped (most tests, the
   * `worker` command) start no event-loop monitor or GC observer.
   */
  defaultMetrics?: boolean;
}

/** Seconds; HTTP answers are mostly milliseconds, an inline create waits up to 10 s. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds; authorities answer in tens of milliseconds to tens of seconds (timeout 30 s). */
const SUBMISSION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds; a webhook attempt times out at 10 s. */
const WEBHOOK_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Jobs that belong to no transaction (webhook deliveries, batches) carry this `system` label. */
export const NO_SYSTEM = 'none';

export function createMetrics(deps: MetricsDeps): Metrics {
  const registry = new Registry();
  const registers = [registry];

  const httpRequests = new Counter({
    name: 'svc_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const, registers,
  });
  const httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds', help: 'Time to answer an HTTP request, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const, buckets: HTTP_BUCKETS, registers,
  });
  const created = new Counter({
    name: 'fiscal_transactions_created_total', help: 'Transactions stored, by country, fiscal system, status at creation, environment and type (sale, refund, void, cancellation).',
    labelNames: ['country', 'system', 'status', 'environment', 'type'] as const, registers,
  });
  const statusChanges = new Counter({
    name: 'fiscal_transaction_status_changes_total', help: 'Transaction status changes made by the submission worker, by fiscal system and new status.',
    labelNames: ['system', 'status'] as const, registers,
  });
  const submissionDuration = new Histogram({
    name: 'fiscal_submission_duration_seconds', help: 'Duration of one call to a tax authority (or its sandbox stub), by fiscal system and operation.',
    labelNames: ['system', 'operation'] as const, buckets: SUBMISSION_BUCKETS, registers,
  });
  const submissionOutcomes = new Counter({
    name: 'fiscal_submissions_total', help: 'Authority answers per record, by fiscal system, operation and outcome (accepted, duplicate, rejected, retry, sent, error).',
    labelNames: ['system', 'operation', 'outcome'] as const, registers,
  });
  const webhookDeliveries = new Counter({
    name: 'svc_webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome (succeeded, failed, dead, cancelled).',
    labelNames: ['outcome'] as const, registers,
  });
  const webhookDuration = new Histogram({
    name: 'svc_webhook_delivery_duration_seconds', help: 'Duration of one webhook POST.', buckets: WEBHOOK_BUCKETS, registers,
  });
  const rateLimited = new Counter({
    name: 'svc_rate_limit_rejections_total', help: 'Requests refused with 429, by bucket (the rate-limit tier, or signup).',
    labelNames: ['bucket'] as const, registers,
  });
  const queueJobs = new Gauge({
    name: 'fiscal_queue_jobs', help: 'Unfinished and dead jobs in the queue (database-wide), by status, job kind and fiscal system.',
    labelNames: ['status', 'kind', 'system'] as const, registers,
  });
  const queueOldest = new Gauge({
    name: 'fiscal_queue_oldest_pending_age_seconds', help: 'How long the oldest due job has waited for a worker (database-wide), by job kind and fiscal system.',
    labelNames: ['kind', 'system'] as const, registers,
  });
  const queueUp = new Gauge({
    name: 'fiscal_queue_scrape_success', help: '1 when the queue gauges were read from the database at this scrape, 0 when the query failed.', registers,
  });

  // The store's connections, read at scrape time (Db.stats: the pg pool, or PGlite's queue).
  const stats = (): DbStats | undefined => deps.db.stats?.();
  const storeLabel = { store: deps.db.kind };
  new Gauge({
    name: 'svc_db_pool_connections', help: 'Database connections open (PostgreSQL pool; 1 for the embedded store), by store.',
    labelNames: ['store'] as const, registers,
    collect() { const s = stats(); if (s) this.set(storeLabel, s.total); },
  });
  new Gauge({
    name: 'svc_db_pool_idle_connections', help: 'Database connections open and idle, by store.',
    labelNames: ['store'] as const, registers,
    collect() { const s = stats(); if (s) this.set(storeLabel, s.idle); },
  });
  new Gauge({
    name: 'svc_db_pool_waiting', help: 'Operations waiting for a database connection (PostgreSQL: for a pool client; embedded store: behind the one running statement or transaction), by store.',
    labelNames: ['store'] as const, registers,
    collect() { const s = stats(); if (s) this.set(storeLabel, s.waiting); },
  });
  new Gauge({
    name: 'svc_db_pool_max_connections', help: 'The most database connections the pool opens, by store.',
    labelNames: ['store'] as const, registers,
    collect() { const s = stats(); if (s) this.set(storeLabel, s.max); },
  });

  let defaultsStarted = false;
  function startDefaults(): void {
    if (defaultsStarted || deps.defaultMetrics === false) return;
    defaultsStarted = true;
    collectDefaultMetrics({ register: registry });
  }

  /**
   * Reads the queue, then replaces the gauges' series in one synchronous step: a scrape
   * running at the same time sees the old series or the new ones, never an empty set.
   */
  async function readQueue(): Promise<void> {
    const now = deps.clock.now();
    let rows: QueueDepthRow[];
    try {
      rows = await queueMetricsRepo.depth(deps.db, now);
    } catch (err) {
      // A scrape still answers (the process metrics are worth having while the store is down).
      deps.log.warn({ err }, 'metrics: reading the queue failed');
      queueJobs.reset();
      queueOldest.reset();
      queueUp.set(0);
      return;
    }
    // Several statuses of one kind and system: the oldest of them.
    const oldest = new Map<string, { kind: string; system: string; age: number }>();
    queueJobs.reset();
    queueOldest.reset();
    for (const row of rows) {
      const system = row.system ?? NO_SYSTEM;
      queueJobs.set({ status: row.status, kind: row.kind, system }, row.jobs);
      if (row.oldest_due === null) continue;
      const age = Math.max(0, (now.getTime() - row.oldest_due.getTime()) / 1000);
      const key = `${row.kind}\n${system}`;
      if (age >= (oldest.get(key)?.age ?? 0)) oldest.set(key, { kind: row.kind, system, age });
    }
    for (const o of oldest.values()) queueOldest.set({ kind: o.kind, system: o.system }, o.age);
    queueUp.set(1);
  }

  const submissions: SubmissionObserver = {
    call(system: string, operation: SubmissionOperation, seconds: number) {
      submissionDuration.observe({ system, operation }, seconds);
    },
    outcome(system: string, operation: SubmissionOperation, outcome: SubmissionOutcome) {
      submissionOutcomes.inc({ system, operation, outcome });
    },
    statusChanged(system: string, status: string) {
      statusChanges.inc({ system, status });
    },
  };

  return {
    registry,
    contentType: registry.contentType,
    submissions,
    transactions: {
      created({ country, system, status, environment, type }) {
        created.inc({ country, system, status, environment, type });
      },
    },
    webhooks: {
      delivery(outcome: WebhookDeliveryOutcome, seconds?: number) {
        webhookDeliveries.inc({ outcome });
        if (seconds !== undefined) webhookDuration.observe(seconds);
      },
    },
    rateLimits: {
      rejected(bucket: string) {
        rateLimited.inc({ bucket });
      },
    },
    httpRequest(method, route, statusCode, seconds) {
      const labels = { method, route, status_code: String(statusCode) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    async scrape() {
      startDefaults();
      await readQueue();
      return registry.metrics();
    },
  };
}
