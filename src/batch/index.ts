/**
 * The batch side of the service core, wired once per runtime (src/runtime.ts): the
 * registered processors (registry.ts) behind the service the endpoints and the daily
 * job share.
 */
import { checkProcessors, createBatchProcessors, type BatchProcessorDeps } from './registry.ts';
import { createBatchService, type BatchService } from './service.ts';
import type { BatchProcessor } from './types.ts';

export interface BatchOptions {
  /** Failure rate above which a run raises the alert (default 0.2, result.ts). */
  alertThreshold?: number;
  /** Per LROE request (default 60 s). */
  timeoutMs?: number;
  /** Age after which a claim left by a dead run is taken again (default 1 h). */
  claimLeaseMs?: number;
  /** Tests only: the list to run instead of the registered one (given the registered one). */
  processors?: (registered: BatchProcessor[]) => BatchProcessor[];
}

export function createBatch(deps: Omit<BatchProcessorDeps, 'timeoutMs' | 'claimLeaseMs'>, o: BatchOptions = {}): BatchService {
  const registered = createBatchProcessors({ ...deps, timeoutMs: o.timeoutMs, claimLeaseMs: o.claimLeaseMs });
  return createBatchService({
    db: deps.db, clock: deps.clock, log: deps.log, alertThreshold: o.alertThreshold,
    processors: checkProcessors(o.processors?.(registered) ?? registered),
  });
}

export type { BatchService } from './service.ts';
export { createBatchJobHandlers, scheduleBatchJobs } from './daily-job.ts';
