import type { Runtime } from '../runtime.ts';
import { jobsRepo } from '../store/repos/jobs-repo.ts';

/**
 * The embedded hosts' catch-up (the local host's POST /v1/admin/process-pending and the
 * engine's `process_pending`): there is no scheduler there, so the integrator asks for it
 * after an outage. Every waiting retry and delivery of the account is made due now (a
 * forced attempt counts like any; dead entries stay dead; an authority's imposed wait is
 * still honoured by the submit task), then the queue is drained. Answers the jobs run.
 */
export async function catchUpQueue(rt: Pick<Runtime, 'deps' | 'worker'>, accountId: string): Promise<{ broughtForward: number; jobsRun: number }> {
  const broughtForward = await jobsRepo.bringForward(rt.deps.db, accountId, rt.deps.clock.now());
  const jobsRun = await rt.worker.drain();
  return { broughtForward, jobsRun };
}
