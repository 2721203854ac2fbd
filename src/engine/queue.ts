/**
 * The embedded local queue as `queue_status` reports it (spec "Embedded local queue"):
 * the submission jobs of the engine's store (the same `jobs` rows the service's workers
 * run: pending → processing → completed; a failure is `failed` until its retry, `dead`
 * after `submission.retry_max` attempts), and the deadline alerts of the transactions not
 * yet finally submitted.
 *
 * A transaction's deadline comes from its fiscal system through the plug-in contract,
 * never from its country: the stored `deadline_at` (set at creation from
 * `capabilities.submissionWindowDays` or `submissionDeadline`: ES 4 days, IT 12 days), or
 * for a system with `capabilities.offlineGraceSeconds` (Greece) creation + that grace.
 * The default grace: the engine knows no account tiers (no subscriptions, no AccountTiers),
 * so a tier's longer window (`offlineGraceByTier`) is a cloud matter; its submit task gets
 * no tiers either and uses the same default (services/offline-grace.ts).
 * A system with neither (PT, FR: locally signed records are final) raises no alert.
 */
import type { Clock } from '../core/clock.ts';
import { getSystem, statuses } from '../countries/registry.ts';
import { POLL_JOB, SUBMIT_JOB } from '../services/transaction-view.ts';
import type { Queryable } from '../store/db.ts';
import { jobsRepo } from '../store/repos/jobs-repo.ts';
import { transactionsRepo } from '../store/repos/transactions-repo.ts';

export type AlertLevel = 'warning_75pct' | 'critical_90pct' | 'breached_100pct';

export interface QueueAlert {
  transaction_id: string;
  country: string;
  system: string;
  deadline: string;
  pct_elapsed: number;
  level: AlertLevel;
}

export interface QueueStatus {
  pending: number;
  processing: number;
  completed: number;
  failed: number;
  dead: number;
  total: number;
  alerts: QueueAlert[];
}

/** The level for a share of the window elapsed (percent), or none below 75 %. */
export function alertLevel(pct: number): AlertLevel | null {
  if (pct >= 100) return 'breached_100pct';
  if (pct >= 90) return 'critical_90pct';
  if (pct >= 75) return 'warning_75pct';
  return null;
}

/** Share of [createdAt, deadline] elapsed at `now`, in percent (one decimal). */
export function pctElapsed(createdAt: Date, deadline: Date, now: Date): number {
  const span = deadline.getTime() - createdAt.getTime();
  if (span <= 0) return 100;
  return Math.round(((now.getTime() - createdAt.getTime()) / span) * 1000) / 10;
}

/** The deadline of a transaction, by its system's capabilities (see the module comment). */
export function deadlineOf(row: { system: string; created_at: Date; deadline_at: Date | null }): Date | null {
  if (row.deadline_at) return row.deadline_at;
  let grace: number | undefined;
  try {
    grace = getSystem(row.system).capabilities.offlineGraceSeconds;
  } catch {
    return null; // a system this build no longer knows: no deadline to read
  }
  return grace ? new Date(row.created_at.getTime() + grace * 1000) : null;
}

/**
 * Statuses of a record not accepted by its authority: open to submission, waiting for /
 * inside a batch, or refused for good (out of retries, rejected, Greece's grace expired).
 * The refused ones keep their alert: they are the records that surely miss their window,
 * so they reach `breached_100pct` instead of dropping out of the list.
 */
function unsubmittedStatuses(): string[] {
  // `pending_submission` is open (core/status.ts); `pending_batch` waits for its batch.
  return [...new Set([...statuses.open, ...statuses.inBatch, 'pending_batch', ...statuses.refused])];
}

export async function queueStatus(db: Queryable, clock: Clock, scope: { accountId: string; environment: string }): Promise<QueueStatus> {
  // The session's environment only, as the alerts below (a data_dir may have served both).
  const by = await jobsRepo.countByStatus(db, scope, [SUBMIT_JOB, POLL_JOB]);
  // `waiting`: an ordered queue's entry behind its chain's head; for the integrator it is pending.
  const status = {
    pending: (by.pending ?? 0) + (by.waiting ?? 0),
    processing: by.processing ?? 0,
    completed: by.completed ?? 0,
    failed: by.failed ?? 0,
    dead: by.dead ?? 0,
  };
  const rows = await transactionsRepo.listInStatuses(db, scope, unsubmittedStatuses());
  const now = clock.now();
  const alerts: QueueAlert[] = [];
  for (const r of rows) {
    const deadline = deadlineOf(r);
    if (!deadline) continue;
    const pct = pctElapsed(r.created_at, deadline, now);
    const level = alertLevel(pct);
    if (level) alerts.push({ transaction_id: r.id, country: r.country, system: r.system, deadline: deadline.toISOString(), pct_elapsed: pct, level });
  }
  return { ...status, total: Object.values(status).reduce((a, b) => a + b, 0), alerts };
}
