import { getSystem } from '../../countries/registry.ts';
import { TransportError, type AuthorityOutcome, type FiscalSystem, type StoredRecord, type SubmitContext } from '../../countries/types.ts';
import type { SigningKey } from '../../core/signing-key.ts';
import { ApiError } from '../../core/errors.ts';
import { correctionView } from '../../services/corrections.ts';
import { jobEvent } from '../../services/transaction-view.ts';
import { correctionsRepo, type CorrectionRow } from '../../store/repos/corrections-repo.ts';
import { fiscalRecordsRepo, issuerAsIssued } from '../../store/repos/fiscal-records-repo.ts';
import { locationsRepo } from '../../store/repos/locations-repo.ts';
import { transactionsRepo, type TransactionRow } from '../../store/repos/transactions-repo.ts';
import type { Queryable } from '../../store/db.ts';
import { retryDelayMs } from '../backoff.ts';
import type { AttemptOutcome, JobHandler } from '../runner.ts';
import type { JobRow } from '../../store/repos/jobs-repo.ts';
import { boundedCall, submitContextOf } from './authority-call.ts';
import type { SubmitTaskDeps } from './submit.ts';

/** The error code of a correction the authority answered as a document it already holds (a `duplicate`). */
export const CORRECTION_NOT_APPLIED = 'correction_not_applied';

/**
 * The `submit_correction` job (services/corrections.ts): sends the record of a correction of
 * an accepted transaction, run by the submit worker beside the `submit` jobs (runtime.ts),
 * in its chain's order for a chained system (the job is queued with the chain's records).
 * The transaction keeps its status whatever the answer; its correction, and
 * `response_payload.correction` with it, becomes:
 * - accepted → `accepted`; the answer becomes the
 *   transaction's `response_payload.authority` and `warnings` (none: the warnings are gone),
 *   the earlier answer kept as `correction.replaced`;
 * - refused (a code not retriable, the attempts ran out, or "already registered": a
 *   `duplicate` is no success for a correction, `CORRECTION_NOT_APPLIED`) → `rejected`, with
 *   `error`; the transaction's accepted answer stays;
 * - a transport fault or a retriable code → retried with backoff (flow control: deferred,
 *   not counted), the correction still `pending`.
 * Once settled, the event `transaction.corrected` or `transaction.correction_failed` is
 * published in the same commit (the outbox: announced exactly when it happened).
 */
export function createCorrectionSubmitHandler(deps: SubmitTaskDeps): JobHandler {
  const { db, clock } = deps;
  const systemOf = deps.systems ?? getSystem;

  /**
   * Settles the correction and shows it on the transaction, in the runner's commit: `of`
   * gives the correction's stored answer and the transaction's new `response_payload` (without
   * `correction`), from the transaction as it is then. Announces it in the same commit: the
   * retry-entry shape of the transaction events (the correction's job as the entry) with the
   * transaction's summary and the correction as the transaction shows it.
   */
  const settle = (
    c: CorrectionRow, job: JobRow, status: 'accepted' | 'rejected', lastError: string | null,
    of: (t: TransactionRow) => { response: Record<string, unknown>; payload: Record<string, unknown> },
  ) =>
    async (tx: Queryable) => {
      const now = clock.now();
      const t = await transactionsRepo.getById(tx, c.transaction_id, { forUpdate: true });
      if (!t) return;
      const { response, payload } = of(t);
      if (!(await correctionsRepo.settle(tx, c.id, status, response, now))) return;
      const correction = correctionView({ ...c, status, response, completed_at: now });
      const updated = await transactionsRepo.update(tx, t.id, { response_payload: { ...payload, correction } }, now);
      const event = jobEvent(status === 'accepted' ? 'transaction.corrected' : 'transaction.correction_failed', updated ?? t, job, status === 'accepted' ? 'completed' : 'dead', lastError, now);
      await deps.events.publish(tx, { ...event, data: { ...event.data, correction } }, now);
    };

  return async (job): Promise<AttemptOutcome> => {
    const correctionId = (job.payload as { correction_id?: unknown }).correction_id;
    if (typeof correctionId !== 'string') return { outcome: 'dead', error: 'submit_correction job without a correction' };
    const c = await correctionsRepo.get(db, correctionId);
    if (!c || c.status !== 'pending') return { outcome: 'completed' }; // settled already (a late duplicate job)
    const [t, record, corrected] = await Promise.all([
      transactionsRepo.getById(db, c.transaction_id), fiscalRecordsRepo.getById(db, c.record_id), fiscalRecordsRepo.getForTransaction(db, c.transaction_id),
    ]);
    if (!t || !record || !t.system) return { outcome: 'dead', error: `correction ${c.id}: its transaction or record is missing` };
    const system = systemOf(t.system);
    const locRow = await locationsRepo.getById(db, t.location_id);
    const ctx = locRow ? await submitContextOf(deps, system, t, locRow, job.attempt) : { code: 'location_missing', message: `location ${t.location_id} not found`, retriable: false };
    const issuer = issuerAsIssued(corrected?.issuer);
    const stored: StoredRecord = {
      transactionId: t.id, kind: 'record', body: record.body, contentType: record.content_type, fiscalId: record.fiscal_id, tx: c.draft, upstreamId: t.fiscal_id_upstream,
      correction: true,
      // Sent under the issuer of the record it corrects, as that was issued (the correction's
      // own row keeps none): a PATCH of the location since does not rename the holder.
      ...(issuer ? { issuer } : {}),
    };
    const answer = 'mode' in ctx ? await boundedCall(ctx, () => system.submit(stored, ctx)) : ctx;

    const refuse = (code: string, message: string, retriable: boolean, authority?: Record<string, unknown>, retryAfterSeconds?: number): AttemptOutcome => {
      const error = `${code}: ${message}`;
      if (retriable && job.attempt < job.max_attempts) {
        const delay = retryAfterSeconds !== undefined ? retryAfterSeconds * 1000 : retryDelayMs(job.attempt, deps.backoff, deps.random);
        return {
          outcome: 'retry', error, runAt: new Date(clock.now().getTime() + delay),
          commit: (tx) => correctionsRepo.noteAttempt(tx, c.id, { submit_error: { error_code: code, raw_message: message } }, clock.now()),
        };
      }
      const response = { error: { code, message }, ...(authority ? { authority } : {}) };
      return { outcome: 'dead', error, commit: settle(c, job, 'rejected', error, (t2) => ({ response, payload: t2.response_payload })) };
    };

    if (!('kind' in answer)) return refuse(answer.code, answer.message, answer.retriable);
    switch (answer.kind) {
      case 'duplicate':
        // "Already registered" is the answer to a new registration of a document the authority
        // holds: the correction was taken as one and not applied, what it holds stands. Read as
        // accepted it would report corrected data the authority does not hold (and drop the
        // warnings it still holds). A correction sent again after a lost answer is accepted
        // again by the systems that have corrections (a replacement of what is held).
        return refuse(
          CORRECTION_NOT_APPLIED,
          `the authority answered that it already holds the document as it stands: the correction was not applied${answer.warnings?.length ? ` (${answer.warnings.join('; ')})` : ''}`,
          false, answer.response,
        );
      case 'accepted': {
        const warnings = answer.warnings?.length ? answer.warnings : undefined;
        return {
          outcome: 'completed',
          commit: settle(c, job, 'accepted', null, (t2) => {
            const { authority, warnings: before, duplicate: _dup, ...rest } = t2.response_payload;
            return {
              // The answer it replaces, kept with the correction.
              response: {
                authority: answer.response, ...(warnings ? { warnings } : {}), ...(answer.fiscalId ? { fiscal_id: answer.fiscalId } : {}),
                replaced: { authority: authority ?? null, ...(before !== undefined ? { warnings: before } : {}) },
              },
              payload: { ...rest, authority: answer.response, ...(warnings ? { warnings } : {}) },
            };
          }),
        };
      }
      case 'rejected':
        return refuse(answer.code, answer.message, system.codes[answer.code]?.retriable ?? false, answer.response);
      case 'retry_later':
        if (answer.flowControl) return { outcome: 'defer', runAt: new Date(clock.now().getTime() + (answer.retryAfterSeconds ?? 1) * 1000) };
        return refuse(answer.code, answer.message, true, answer.response, answer.retryAfterSeconds);
      case 'sent':
        // No system with corrections answers later; a notification would find no record to settle.
        return refuse('correction_not_judged', 'the authority took the correction without judging it', false, answer.response);
    }
  };
}
