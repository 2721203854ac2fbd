/**
 * Runs the registered batch processors and reports on them (spec "Batch" endpoints):
 * - `processPending`: every processor in sequence for the caller's account and
 *   environment (the key prefix decides where records go, spec "Authentication" 2);
 * - `runScheduled`: one processor for every account with records waiting (the daily job);
 * - `stats`: counters of the last 24 hours per processor (spec Limits "Batch stats window");
 * - `schedule`: the next run of each processor.
 * Every run leaves a `batch_runs` row with its Batch result. A failure rate above the
 * alert threshold is logged as an error: the spec defines no event for it, so nothing is
 * published.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { newId } from '../core/ids.ts';
import { allowsCountry } from '../core/permissions.ts';
import type { AuthContext } from '../services/auth-context.ts';
import type { Db } from '../store/db.ts';
import { batchRunsRepo, type BatchCounters } from '../store/repos/batch-runs-repo.ts';
import { DEFAULT_ALERT_THRESHOLD, failureRate, toBatchResult, type BatchResult } from './result.ts';
import { BATCH_TIMEZONE, nextRunAt } from './schedule.ts';
import { emptyTally, type BatchProcessor, type BatchScope } from './types.ts';

/** Spec Limits: "Batch stats window: last 24 hours". */
export const STATS_WINDOW_MS = 24 * 3600_000;

export interface BatchServiceDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  processors: readonly BatchProcessor[];
  /** Failure rate above which a run raises the alert (default 0.2). */
  alertThreshold?: number | undefined;
}

export interface BatchStatsEntry extends BatchCounters {
  processor: string;
  failure_rate: number;
  since: Date;
}

export interface BatchScheduleEntry {
  processor: string;
  cron: string;
  timezone: string;
  /** The next scheduled run; null where nothing schedules runs (the local host). */
  next_run_at: Date | null;
  /** What starts a run: the schedule, or only `POST /v1/admin/process-pending` (the local host). */
  runs_on: 'schedule' | 'process_pending';
}

export function createBatchService(deps: BatchServiceDeps) {
  const { db, clock, log, processors } = deps;
  const threshold = deps.alertThreshold ?? DEFAULT_ALERT_THRESHOLD;
  if (!Number.isFinite(threshold) || threshold < 0 || threshold > 1) throw new Error(`batch alert threshold must be between 0 and 1, got ${threshold}`);

  async function runOne(p: BatchProcessor, scope: BatchScope, trigger: 'manual' | 'scheduled'): Promise<BatchResult> {
    const runId = newId();
    const tally = emptyTally();
    const startedAt = clock.now();
    // Elapsed real time (the app clock may be a test's manual one).
    const t0 = performance.now();
    let status: 'completed' | 'failed' = 'completed';
    try {
      await p.run(scope, { runId, tally });
    } catch (err) {
      status = 'failed';
      log.error({ err, processor: p.name, runId, accountId: scope.accountId }, 'batch processor failed');
      tally.errors.push({ code: 'internal_error', message: 'the processor stopped on an internal error', issuer_tax_id: null, kind: null, records: 0 });
    }
    const result = toBatchResult(p.name, runId, tally, { durationMs: performance.now() - t0, threshold, status });
    if (result.alert_triggered) {
      log.error(
        { processor: p.name, runId, accountId: scope.accountId, environment: scope.environment, failure_rate: result.failure_rate, threshold, accepted: result.accepted, rejected: result.rejected, failed: result.failed },
        'batch failure rate above the alert threshold',
      );
    }
    await batchRunsRepo.insert(db, {
      id: runId, processor: p.name, account_id: scope.accountId, environment: scope.environment, trigger, status,
      batches_created: result.batches_created, batches_retried: result.batches_retried, accepted: result.accepted,
      rejected: result.rejected, failed: result.failed, errors_count: result.errors_count, duration_ms: result.duration_ms,
      failure_rate: result.failure_rate, alert_triggered: result.alert_triggered, requests: tally.requests, errors: tally.errors,
      started_at: startedAt, finished_at: clock.now(),
    });
    return result;
  }

  /**
   * The processors a key may run: those of the countries it may act in. A key whose
   * countries have no processor (e.g. one scoped to a country without periodic work) has
   * nothing to run and nothing to report: an empty list, not a 403. The key is allowed to
   * act where it acts; refusing it named a country it never asked about, and broke an
   * Embedded-Local integrator's process-pending loop (platform audit).
   */
  function allowed(auth: AuthContext): BatchProcessor[] {
    return processors.filter((p) => allowsCountry(auth.permissions, p.country));
  }

  return {
    /** In sequence, as the spec says; one processor's failure does not stop the next. */
    async processPending(auth: AuthContext): Promise<BatchResult[]> {
      const results: BatchResult[] = [];
      for (const p of allowed(auth)) results.push(await runOne(p, { accountId: auth.accountId, environment: auth.environment }, 'manual'));
      return results;
    },

    /** The daily run of one processor: every scope with records waiting, one after the other. */
    async runScheduled(name: string): Promise<BatchResult[]> {
      const p = processors.find((x) => x.name === name);
      if (!p) throw new Error(`no batch processor ${name}`);
      const results: BatchResult[] = [];
      for (const scope of await p.scopesWithWork(db, clock.now())) results.push(await runOne(p, scope, 'scheduled'));
      return results;
    },

    async stats(auth: AuthContext): Promise<BatchStatsEntry[]> {
      const since = new Date(clock.now().getTime() - STATS_WINDOW_MS);
      const totals = new Map((await batchRunsRepo.totals(db, auth.accountId, auth.environment, since)).map((r) => [r.processor, r]));
      return allowed(auth).map((p) => {
        const t = totals.get(p.name) ?? { batches_created: 0, batches_retried: 0, accepted: 0, rejected: 0, failed: 0 };
        return {
          processor: p.name,
          batches_created: t.batches_created,
          batches_retried: t.batches_retried,
          accepted: t.accepted,
          rejected: t.rejected,
          failed: t.failed,
          failure_rate: failureRate(t),
          since,
        };
      });
    },

    /**
     * Each processor's cron and next run. `scheduled` false (the local host: spec, Embedded-
     * Local "no scheduler"): no run comes by itself, so none is announced; the integrator
     * runs them with POST /v1/admin/process-pending.
     */
    schedule(scheduled = true): BatchScheduleEntry[] {
      const now = clock.now();
      return processors.map((p) => ({
        processor: p.name, cron: p.cron, timezone: BATCH_TIMEZONE,
        next_run_at: scheduled ? nextRunAt(p.cron, now) : null,
        runs_on: scheduled ? 'schedule' : 'process_pending',
      }));
    },

    processors,
  };
}

export type BatchService = ReturnType<typeof createBatchService>;
