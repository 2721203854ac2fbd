/**
 * The scheduled batch runs (spec Limits "Batch (Bizkaia) daily at 02:00 UTC"): one
 * singleton scheduled job per processor (`scheduled:batch:<processor>`, like
 * jobs/tasks/certificate-expiry.ts), so any number of nodes schedule it and one instance
 * runs. Each run processes every account with records waiting and schedules the next one
 * at the processor's next cron time. The first run waits for that time too: starting a
 * node must not send a batch.
 *
 * The local host has no scheduler: there the integrator calls POST /v1/admin/process-pending
 * (spec "Deployment modes", Embedded-Local).
 */
import type { Clock } from '../core/clock.ts';
import { jobsRepo } from '../store/repos/jobs-repo.ts';
import type { JobHandler } from '../jobs/runner.ts';
import type { Queryable } from '../store/db.ts';
import { nextRunAt } from './schedule.ts';
import type { BatchService } from './service.ts';
import type { BatchProcessor } from './types.ts';

export const batchJobKind = (processor: string): string => `scheduled:batch:${processor}`;
const MAX_ATTEMPTS = 5;

async function scheduleNext(q: Queryable, p: BatchProcessor, now: Date): Promise<void> {
  await jobsRepo.enqueueScheduled(q, { kind: batchJobKind(p.name), maxAttempts: MAX_ATTEMPTS, runAt: nextRunAt(p.cron, now), payload: { processor: p.name } }, now);
}

/** Makes sure each processor's next run is scheduled (idempotent across nodes and restarts). */
export async function scheduleBatchJobs(q: Queryable, clock: Clock, processors: readonly BatchProcessor[]): Promise<void> {
  const now = clock.now();
  for (const p of processors) await scheduleNext(q, p, now);
}

export function createBatchJobHandlers(deps: { clock: Clock; batch: BatchService }): Record<string, JobHandler> {
  return Object.fromEntries(
    deps.batch.processors.map((p): [string, JobHandler] => [
      batchJobKind(p.name),
      async () => {
        // Per-account failures are recorded as failed runs; only a store failure throws
        // here, and the job is then retried.
        await deps.batch.runScheduled(p.name);
        return { outcome: 'completed', commit: (tx) => scheduleNext(tx, p, deps.clock.now()) };
      },
    ]),
  );
}
