/**
 * Applies a batch's verdicts to its transactions, in the caller's database transaction
 * (handed to the processors as `ProcessorDeps.settle`, batch/registry.ts),
 * the way jobs/tasks/submit.ts settles a single submission:
 * - success: `fiscal_id`, the authority's answer, `completed_at`, the completion event
 *   (`fiscalization.completed`); a cancellation's success makes its original `cancelled`
 *   (DECISIONS "Statuses"); a cancellation waiting for it is made due
 *   (`wakeWaitingCancellation`);
 * - rejected: `failed_permanent` with `response_payload.submit_error` {error_code,
 *   raw_message} and `error_message` at once, null only while an AI translation is pending
 *   (services/authority-outcome.ts; spec "Failed submissions"), and the dead-letter event: the authority
 *   refused the record as it is, and no batch sends it again (a `failed` record is one
 *   the spec says is being retried);
 * - retry: back to `pending_batch` for the next run.
 * Every change is a compare-and-set from the in-batch status: a record another run took over
 * (its claim had gone stale) is left to that run.
 */
import { getSystem, statuses } from '../countries/registry.ts';
import type { EventPublisher } from '../services/events.ts';
import { cancelOriginalIfAccepted, wakeWaitingCancellation } from '../services/cancellation.ts';
import { batchDeadLetterEvent, completionEvent } from '../services/transaction-view.ts';
import { acceptedFields, recordFailure, type FailureTranslations } from '../services/authority-outcome.ts';
import type { Queryable } from '../store/db.ts';
import { transactionsRepo } from '../store/repos/transactions-repo.ts';
import type { SettleItem } from './types.ts';

export type { SettleItem } from './types.ts';

/**
 * Records inside a batch that was sent (the in-batch status a system declares: core/status.ts).
 * Read when a record is settled, not at module load: the machine is built from the
 * plug-ins, and this module must not depend on the order they load in.
 */
const inFlight = (): readonly string[] => statuses.inBatch;

/** Returns the statuses the records moved to (the metrics count them): none when another run had taken the record over. */
export async function settleRecord(tx: Queryable, item: SettleItem, events: EventPublisher, translations: FailureTranslations, now: Date): Promise<string[]> {
  const { t, verdict, batch } = item;
  const IN_FLIGHT = inFlight();
  switch (verdict.kind) {
    case 'success': {
      const updated = await transactionsRepo.update(tx, t.id, acceptedFields(t, verdict.outcome, now, { batch }), now, IN_FLIGHT);
      if (!updated) return [];
      const original = await cancelOriginalIfAccepted(tx, updated, now);
      // A cancellation waiting for this record goes now (services/cancellation.ts).
      await wakeWaitingCancellation(tx, getSystem(updated.system), updated, now);
      await events.publish(tx, completionEvent(updated, now), now);
      return original ? [updated.status, original.status] : [updated.status];
    }
    case 'rejected': {
      const updated = await recordFailure(tx, t, { code: verdict.code, message: verdict.message, response: verdict.response }, 'failed_permanent', now, IN_FLIGHT, { translations, payload: { batch } });
      if (!updated) return [];
      // A cancellation waiting for this record learns at once that it never will be sent.
      await wakeWaitingCancellation(tx, getSystem(updated.system), updated, now);
      await events.publish(tx, batchDeadLetterEvent(updated, `${verdict.code}: ${verdict.message}`, now), now);
      return [updated.status];
    }
    case 'retry': {
      const updated = await transactionsRepo.update(tx, t.id, { status: 'pending_batch' }, now, IN_FLIGHT);
      return updated ? [updated.status] : [];
    }
  }
}
