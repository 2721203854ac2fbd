import type { Clock } from '../../core/clock.ts';
import type { EventPublisher } from '../../services/events.ts';
import type { Db } from '../../store/db.ts';
import { certificatesRepo, type ExpiryNotice } from '../../store/repos/certificates-repo.ts';
import { jobsRepo } from '../../store/repos/jobs-repo.ts';
import type { JobHandler } from '../runner.ts';

/**
 * The daily certificate scan: `certificate.expiring` once when a certificate enters its
 * last 30 days, `certificate.expired` once when it has expired. A merchant whose signing
 * certificate lapses can no longer fiscalize, so the warning comes while there is time
 * to renew. Each run schedules the next one (03:00 UTC the next day).
 */
export const CERTIFICATE_EXPIRY_JOB = 'scheduled:certificate_expiry';
export const EXPIRING_WINDOW_DAYS = 30;
const RUN_HOUR_UTC = 3;

/** The next daily run at `hourUtc` strictly after `now`. */
export function nextDailyRun(now: Date, hourUtc = RUN_HOUR_UTC): Date {
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hourUtc));
  if (next.getTime() <= now.getTime()) next.setUTCDate(next.getUTCDate() + 1);
  return next;
}

/** Makes sure the scan is scheduled (idempotent across nodes and restarts). */
export async function scheduleCertificateExpiry(db: Db, clock: Clock): Promise<void> {
  const now = clock.now();
  await jobsRepo.enqueueScheduled(db, { kind: CERTIFICATE_EXPIRY_JOB, maxAttempts: 5, runAt: now }, now);
}

const notice = (n: ExpiryNotice, now: Date) => ({
  certificate_id: n.certificate_id,
  subject_cn: n.subject_cn,
  nif: n.nif,
  not_after: n.not_after.toISOString(),
  days_left: Math.max(0, Math.floor((n.not_after.getTime() - now.getTime()) / 86_400_000)), // whole days left
  timestamp: now.toISOString(),
});

export function createCertificateExpiryHandler(deps: { db: Db; clock: Clock; events: EventPublisher }): JobHandler {
  return async () => ({
    outcome: 'completed',
    commit: async (tx) => {
      const now = deps.clock.now();
      const until = new Date(now.getTime() + EXPIRING_WINDOW_DAYS * 86_400_000);
      for (const n of await certificatesRepo.takeExpiring(tx, now, until)) {
        await deps.events.publish(tx, { accountId: n.account_id, type: 'certificate.expiring', data: notice(n, now) }, now);
      }
      for (const n of await certificatesRepo.takeExpired(tx, now)) {
        await deps.events.publish(tx, { accountId: n.account_id, type: 'certificate.expired', data: notice(n, now) }, now);
      }
      await jobsRepo.enqueueScheduled(tx, { kind: CERTIFICATE_EXPIRY_JOB, maxAttempts: 5, runAt: nextDailyRun(now) }, now);
    },
  });
}
