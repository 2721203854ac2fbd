import type { Clock } from '../core/clock.ts';
import type { JobHandler } from '../jobs/runner.ts';
import { CLOUD_BACKOFF, retryDelayMs } from '../jobs/backoff.ts';
import type { Queryable } from '../store/db.ts';
import { jobsRepo } from '../store/repos/jobs-repo.ts';

/**
 * HardwareDevice mode bills every active location at least the location floor (spec
 * "Deployment modes": "a per-location pricing floor of 10 EUR per location applies";
 * billing/pricing.ts `quote`). The amount was quoted only when the subscription was created
 * or PATCHed, so a merchant who added locations paid the old amount, and one who closed
 * locations kept paying for them, until the next PATCH. Every change of an account's
 * active locations now enqueues this job in the same commit as the change; the job
 * re-quotes the subscription (services/subscriptions.ts `requoteFloor`), charging or
 * crediting the rest of the period like a PATCH. In the background, so that creating a
 * location never waits on (or fails with) the billing provider: a provider outage is
 * retried with backoff.
 */
export const FLOOR_REQUOTE_JOB = 'billing:floor_requote';
const MAX_ATTEMPTS = 20;

/** Enqueued with the location change, in its transaction. */
export async function enqueueFloorRequote(q: Queryable, accountId: string, now: Date): Promise<void> {
  await jobsRepo.enqueue(q, { kind: FLOOR_REQUOTE_JOB, accountId, maxAttempts: MAX_ATTEMPTS, runAt: now }, now);
}

export function createFloorRequoteHandler(deps: {
  clock: Clock;
  requoteFloor: (accountId: string) => Promise<unknown>;
  random?: () => number;
}): JobHandler {
  return async (job) => {
    if (!job.account_id) return { outcome: 'dead', error: 'a floor re-quote names no account' };
    try {
      // Each run reads the count at that moment: several changes in a row are settled by
      // the first run that sees the last one, and the later runs find nothing to change.
      await deps.requoteFloor(job.account_id);
      return { outcome: 'completed' };
    } catch (err) {
      const runAt = new Date(deps.clock.now().getTime() + retryDelayMs(job.attempt, CLOUD_BACKOFF, deps.random));
      return { outcome: 'retry', error: (err as Error).message, runAt };
    }
  };
}
