import type { Clock } from '../../core/clock.ts';
import type { Mailer } from '../../email/mailer.ts';
import type { Db } from '../../store/db.ts';
import { jobsRepo } from '../../store/repos/jobs-repo.ts';
import type { JobHandler } from '../runner.ts';

/**
 * The outbox sweep: every minute, sends the notification e-mails that are due (queued
 * while SMTP was not configured, or whose send failed). Each run schedules the next one.
 * A node without SMTP_URL sends nothing and leaves the messages waiting. The one job row
 * is deferred to its next run (not completed and enqueued again): a sweep every minute must
 * not leave a completed job row behind every minute.
 */
export const EMAIL_OUTBOX_JOB = 'scheduled:email_outbox';
const EVERY_MS = 60_000;

export async function scheduleEmailOutbox(db: Db, clock: Clock): Promise<void> {
  const now = clock.now();
  await jobsRepo.enqueueScheduled(db, { kind: EMAIL_OUTBOX_JOB, maxAttempts: 5, runAt: now }, now);
}

export function createEmailOutboxHandler(deps: { clock: Clock; mailer: Mailer }): JobHandler {
  return async () => {
    // Send failures are kept on each message (retried with its own backoff), never fail the sweep.
    await deps.mailer.flush({ limit: 200 });
    return { outcome: 'defer', runAt: new Date(deps.clock.now().getTime() + EVERY_MS) };
  };
}
