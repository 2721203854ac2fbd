/**
 * Applies a batch's verdicts to its transactions, in the caller's database transaction,
 * the way jobs/tasks/submit.ts settles a single submission:
 * - success: `fiscal_id`, the authority's answer, `completed_at`, the completion event
 *   (`fiscalization.completed`); a cancellation's success makes its original `cancelled`
 *   (DECISIONS "Statuses");
 * - rejected: `failed` with `response_payload.submit_error` {error_code, raw_message} at
 *   once and `error_message` null until the background translation fills it (spec
 *   "Errors", failed submissions);
 * - retry: back to `pending_batch` for the next run.
 * Every change is a compare-and-set from `pending_lroe`: a record another run took over
 * (its claim had gone stale) is left to that run.
 */
import type { TransactionStatus } from '../core/status.ts';
import type { EventPublisher } from '../services/events.ts';
import { CANCELLABLE } from '../services/transactions.ts';
import { completionEvent } from '../services/transaction-view.ts';
import { acceptedFields, recordFailure } from '../services/authority-outcome.ts';
import type { Queryable } from '../store/db.ts';
import { transactionsRepo, type TransactionRow } from '../store/repos/transactions-repo.ts';
import type { RecordVerdict } from './verdict.ts';

const IN_FLIGHT: readonly TransactionStatus[] = ['pending_lroe'];

export interface SettleItem {
  t: TransactionRow;
  verdict: RecordVerdict;
  /** Which run and authority request carried the record (kept in `response_payload.batch`). */
  batch: { processor: string; run_id: string; registration_number: string | null };
}

export async function settleRecord(tx: Queryable, item: SettleItem, events: EventPublisher, now: Date): Promise<void> {
  const { t, verdict, batch } = item;
  switch (verdict.kind) {
    case 'success': {
      const updated = await transactionsRepo.update(tx, t.id, acceptedFields(t, verdict.outcome, now, { batch }), now, IN_FLIGHT);
      if (!updated) return;
      if (t.cancels_id) await transactionsRepo.update(tx, t.cancels_id, { status: 'cancelled' }, now, CANCELLABLE);
      await events.publish(tx, completionEvent(updated, now), now);
      return;
    }
    case 'rejected': {
      await recordFailure(tx, t, { code: verdict.code, message: verdict.message, response: verdict.response }, 'failed', now, IN_FLIGHT, { payload: { batch } });
      return;
    }
    case 'retry':
      await transactionsRepo.update(tx, t.id, { status: 'pending_batch' }, now, IN_FLIGHT);
      return;
  }
}
