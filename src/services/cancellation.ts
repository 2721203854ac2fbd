/**
 * "The original becomes `cancelled` when its cancellation transaction reaches `success`
 * (FR/PT: at once)" (DECISIONS "Statuses"), in one place: the ledger's write of a
 * cancellation final at creation, the submit task and the batch processors call this
 * with the cancellation as it now is.
 */
import { statuses } from '../countries/registry.ts';
import type { FiscalSystem } from '../countries/types.ts';
import type { Queryable } from '../store/db.ts';
import { jobsRepo } from '../store/repos/jobs-repo.ts';
import { transactionsRepo, type TransactionRow } from '../store/repos/transactions-repo.ts';
import { SUBMIT_JOB } from './transaction-view.ts';

export async function cancelOriginalIfAccepted(
  tx: Queryable,
  cancellation: Pick<TransactionRow, 'id' | 'status' | 'cancels_id'>,
  now: Date,
  opts: { linkFirst?: boolean } = {},
): Promise<TransactionRow | undefined> {
  if (!cancellation.cancels_id) return undefined;
  // When the cancellation is written: the original names it (a second cancel answers it;
  // the latest issued, not refused: the one that stands).
  if (opts.linkFirst) await transactionsRepo.update(tx, cancellation.cancels_id, { cancelled_by_id: cancellation.id }, now);
  if (!statuses.isAccepted(cancellation.status)) return undefined;
  // The original, now `cancelled` (undefined: it was not in a status that may be cancelled).
  return transactionsRepo.update(tx, cancellation.cancels_id, { status: 'cancelled' }, now, statuses.sources('cancelled', 'cancellation'));
}

/**
 * The other order (statuses `cancelledOnceAccepted`: an offline fallback's): the
 * transaction was cancelled while still on its way to the authority, and its cancellation
 * was accepted before it was. Called with the transaction just accepted: it becomes
 * `cancelled` if its cancellation was accepted meanwhile. The cancellation is read FOR
 * UPDATE: should it be committing its own acceptance right now, this waits for it and sees
 * it (else both would miss each other). Undefined: nothing changed.
 */
export async function cancelIfCancellationAccepted(
  tx: Queryable,
  accepted: Pick<TransactionRow, 'id' | 'status' | 'cancelled_by_id'>,
  now: Date,
): Promise<TransactionRow | undefined> {
  if (!accepted.cancelled_by_id || !statuses.isAccepted(accepted.status)) return undefined;
  const cancellation = await transactionsRepo.getById(tx, accepted.cancelled_by_id, { forUpdate: true });
  if (!cancellation || !statuses.isAccepted(cancellation.status)) return undefined;
  return transactionsRepo.update(tx, accepted.id, { status: 'cancelled' }, now, statuses.sources('cancelled', 'cancellation'));
}

/**
 * An original's `cancelled_by_id` names the cancellation that stands (docs/decisions.md
 * "The cancellation that stands"): its latest cancellation not refused, else none. Called in
 * the database transaction that wrote a cancellation's status, with the status it had: when
 * the cancellation became refused (the authority refused it, its retries ran out, its grace
 * window closed), the original no longer names it, and names an earlier one that stands
 * if any; when it stopped being refused (SdI delivering a file whose retries had run out),
 * the original names it again, unless a later one stands. Every reader (the API, the
 * embedded engine, the cancel route) reads the column as it is. Nothing else changes.
 */
export async function relinkOriginal(
  tx: Queryable,
  before: string,
  cancellation: Pick<TransactionRow, 'cancels_id' | 'status'> | undefined,
  now: Date,
): Promise<void> {
  if (!cancellation?.cancels_id || statuses.isRefused(before) === statuses.isRefused(cancellation.status)) return;
  await transactionsRepo.relinkCancellation(tx, cancellation.cancels_id, statuses.refused, now);
}

/**
 * An original just settled (accepted, or refused for good) in a system whose cancellations
 * wait for their original (`capabilities.cancellationAwaitsOriginal`): its cancellation's
 * next attempt is due now rather than at its next look (jobs/tasks/submit.ts `awaitOriginal`:
 * just after the original's next attempt, or up to an hour later when the original was
 * waiting for something other than its own attempt: a notification, a batch). Called in the
 * database transaction that settled the original, by whatever settled it: the submit task,
 * a batch (batch/settle.ts), a notification (services/inbound.ts). A cancellation in flight
 * is left to its worker: its deferral looks at the original again when it commits. Only the
 * cancellation's job row is touched (no lock on the cancellation itself, whose deferral
 * locks its job row first). Returns whether a job was brought forward.
 */
export async function wakeWaitingCancellation(
  tx: Queryable,
  system: Pick<FiscalSystem, 'capabilities'>,
  settled: Pick<TransactionRow, 'status' | 'cancelled_by_id'> | undefined,
  now: Date,
): Promise<boolean> {
  if (!settled?.cancelled_by_id || !system.capabilities.cancellationAwaitsOriginal) return false;
  if (!statuses.isAccepted(settled.status) && !statuses.isRefused(settled.status)) return false;
  return (await jobsRepo.bringForwardFor(tx, settled.cancelled_by_id, [SUBMIT_JOB], now)) > 0;
}
