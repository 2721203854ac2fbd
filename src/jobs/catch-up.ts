import type { Runtime } from '../runtime.ts';
import { jobsRepo } from '../store/repos/jobs-repo.ts';

/**
 * The local host's catch-up (its POST /v1/admin/process-pending): there is no scheduler
 * there, so the integrator asks for it after an outage. Every waiting retry and delivery
 * of the account is made due now (a forced attempt counts like any; dead entries stay
 * dead; an authority's imposed wait is still honoured by the submit task), then the queue
 * is drained. Answers the jobs run.
 *
 * The library engine's `process_pending` does not bring retries forward: it runs only
 * the due entries (docs/engine.md), so a POS calling it in a loop cannot defeat the
 * backoff the authority is owed; its in-process worker runs entries as they fall due.
 */
export async function catchUpQueue(rt: Pick<Runtime, 'deps' | 'worker'>, accountId: string): Promise<{ broughtForward: number; jobsRun: number }> {
  const broughtForward = await jobsRepo.bringForward(rt.deps.db, accountId, rt.deps.clock.now());
  const jobsRun = await rt.worker.drain();
  return { broughtForward, jobsRun };
}
