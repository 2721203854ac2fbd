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
import type { TransactionStatus } from '../countries/types.ts';
import { jobsRepo } from '../jobs/queue.ts';
import type { EventPublisher } from '../services/events.ts';
import { CANCELLABLE } from '../services/transactions.ts';
import { TRANSLATE_JOB, completionEvent } from '../services/transaction-view.ts';
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
      const o = verdict.outcome;
      const updated = await transactionsRepo.update(tx, t.id, {
        status: (o.kind === 'accepted' && o.status) || 'success',
        fiscal_id: o.fiscalId ?? t.fiscal_id,
        fiscal_id_upstream: o.upstreamId ?? t.fiscal_id_upstream,
        response_payload: {
          authority: o.response,
          ...(o.kind === 'duplicate' ? { duplicate: true } : {}),
          ...(o.kind === 'accepted' && o.warnings?.length ? { warnings: o.warnings } : {}),
          batch,
        },
        completed_at: now,
      }, now, IN_FLIGHT);
      if (!updated) return;
      if (t.cancels_id) await transactionsRepo.update(tx, t.cancels_id, { status: 'cancelled' }, now, CANCELLABLE);
      await events.publish(tx, completionEvent(updated, now), now);
      return;
    }
    case 'rejected': {
      const previousCode = (t.response_payload.submit_error as { error_code?: string } | undefined)?.error_code;
      const sameError = previousCode === verdict.code && t.error_message !== null;
      const updated = await transactionsRepo.update(tx, t.id, {
        status: 'failed',
        response_payload: { authority: verdict.response, submit_error: { error_code: verdict.code, raw_message: verdict.message }, batch },
        error_message: sameError ? t.error_message : null,
      }, now, IN_FLIGHT);
      if (updated && !sameError) {
        await jobsRepo.enqueue(tx, {
          kind: TRANSLATE_JOB, accountId: t.account_id, transactionId: t.id, maxAttempts: 5, runAt: now,
          payload: { transaction_id: t.id, country: t.country, system: t.system, error_code: verdict.code, raw_message: verdict.message },
        }, now);
      }
      return;
    }
    case 'retry':
      await transactionsRepo.update(tx, t.id, { status: 'pending_batch' }, now, IN_FLIGHT);
      return;
  }
}
