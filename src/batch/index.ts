/**
 * The batch side of the service core, wired once per runtime (src/runtime.ts): the
 * processors the fiscal systems contribute (registry.ts) behind the service the endpoints
 * and the daily job share.
 */
import { checkProcessors, createBatchProcessors } from './registry.ts';
import { createBatchService, type BatchService } from './service.ts';
import { settleRecord } from './settle.ts';
import type { BatchProcessor, ProcessorDeps } from './types.ts';
import type { SubmissionObserver } from '../metrics/observers.ts';
import type { FailureTranslations } from '../services/authority-outcome.ts';

export interface BatchOptions {
  /** Failure rate above which a run raises the alert (default 0.2, result.ts). */
  alertThreshold?: number;
  /** Per authority request (unset: each processor's default; LROE 60 s). */
  timeoutMs?: number;
  /** Age after which a claim left by a dead run is taken again (unset: each processor's default; LROE 1 h). */
  claimLeaseMs?: number;
  /** Tests only: the list to run instead of the registered one (given the registered one). */
  processors?: (registered: BatchProcessor[]) => BatchProcessor[];
}

/** What the runtime provides; the batch side adds `settle` and the options. */
export type BatchDeps = Omit<ProcessorDeps, 'settle' | 'timeoutMs' | 'claimLeaseMs' | 'claimLimit'> & {
  /** Counts the status changes the verdicts make (src/metrics). */
  metrics?: Pick<SubmissionObserver, 'statusChanged'> | undefined;
  /** A rejected record's `error_message` when no AI call is needed (batch/settle.ts). */
  translations: FailureTranslations;
};

export function createBatch(deps: BatchDeps, o: BatchOptions = {}): BatchService {
  const { translations, ...processorDeps } = deps;
  const registered = createBatchProcessors({
    ...processorDeps,
    // Long work: a month's file, a year's archive, a day's batch are not cut by the API's
    // statement bound (PostgreSQL; store/db.ts `longWork`). Appends still go through the
    // ledger, on the store's own connections and bound.
    db: deps.db.longWork?.() ?? deps.db,
    settle: async (tx, item, now) => {
      for (const status of await settleRecord(tx, item, deps.events, translations, now)) deps.metrics?.statusChanged(item.t.system, status);
    },
    timeoutMs: o.timeoutMs,
    claimLeaseMs: o.claimLeaseMs,
  });
  return createBatchService({
    db: deps.db, clock: deps.clock, log: deps.log, alertThreshold: o.alertThreshold,
    processors: checkProcessors(o.processors?.(registered) ?? registered),
  });
}

export type { BatchService } from './service.ts';
export type { BatchProcessor, ProcessorDeps } from './types.ts';
export { createBatchJobHandlers, scheduleBatchJobs } from './daily-job.ts';
