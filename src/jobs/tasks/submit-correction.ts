import { getSystem } from '../../countries/registry.ts';
import { TransportError, type AuthorityOutcome, type FiscalSystem, type StoredRecord, type SubmitContext } from '../../countries/types.ts';
import type { SigningKey } from '../../core/signing-key.ts';
import { ApiError } from '../../core/errors.ts';
import { correctionView } from '../../services/corrections.ts';
import { correctionsRepo, type CorrectionRow } from '../../store/repos/corrections-repo.ts';
import { fiscalRecordsRepo } from '../../store/repos/fiscal-records-repo.ts';
import { locationsRepo } from '../../store/repos/locations-repo.ts';
import { transactionsRepo, type TransactionRow } from '../../store/repos/transactions-repo.ts';
import type { Queryable } from '../../store/db.ts';
import { retryDelayMs } from '../backoff.ts';
import type { AttemptOutcome, JobHandler } from '../runner.ts';
import { boundedCall, submitContextOf } from './authority-call.ts';
import type { SubmitTaskDeps } from './submit.ts';

/**
 * The `submit_correction` job (services/corrections.ts): sends the record of a correction of
 * an accepted transaction, run by the submit worker beside the `submit` jobs (runtime.ts),
 * in its chain's order for a chained system (the job is queued with the chain's records).
 * The transaction keeps its status whatever the answer; its correction, and
 * `response_payload.correction` with it, becomes:
 * - accepted (or duplicate: the authority holds it) → `accepted`; the answer becomes the
 *   transaction's `response_payload.authority` and `warnings` (none: the warnings are gone),
 *   the earlier answer kept as `correction.replaced`;
 * - refused (a code not retriable, or the attempts ran out) → `rejected`, with `error`; the
 *   transaction's accepted answer stays;
 * - a transport fault or a retriable code → retried with backoff (flow control: deferred,
 *   not counted), the correction still `pending`.
 */
export function createCorrectionSubmitHandler(deps: SubmitTaskDeps): JobHandler {
  const { db, clock } = deps;
  const systemOf = deps.systems ?? getSystem;

  /**
   * Settles the correction and shows it on the transaction, in the runner's commit: `of`
   * gives the correction's stored answer and the transaction's new `response_payload` (without
   * `correction`), from the transaction as it is then.
   */
  const settle = (c: CorrectionRow, status: 'accepted' | 'rejected', of: (t: TransactionRow) => { response: Record<string, unknown>; payload: Record<string, unknown> }) =>
    async (tx: Queryable) => {
      const now = clock.now();
      const t = await transactionsRepo.getById(tx, c.transaction_id, { forUpdate: true });
      if (!t) return;
      const { response, payload } = of(t);
      if (!(await correctionsRepo.settle(tx, c.id, status, response, now))) return;
      await transactionsRepo.update(tx, t.id, { response_payload: { ...payload, correction: correctionView({ ...c, status, response, completed_at: now }) } }, now);
    };

  return async (job): Promise<AttemptOutcome> => {
    const correctionId = (job.payload as { correction_id?: unknown }).correction_id;
    if (typeof correctionId !== 'string') return { outcome: 'dead', error: 'submit_correction job without a correction' };
    const c = await correctionsRepo.get(db, correctionId);
    if (!c || c.status !== 'pending') return { outcome: 'completed' }; // settled already (a late duplicate job)
    const [t, record] = await Promise.all([transactionsRepo.getById(db, c.transaction_id), fiscalRecordsRepo.getById(db, c.record_id)]);
    if (!t || !record || !t.system) return { outcome: 'dead', error: `correction ${c.id}: its transaction or record is missing` };
    const system = systemOf(t.system);
    const locRow = await locationsRepo.getById(db, t.location_id);
    const ctx = locRow ? await submitContextOf(deps, system, t, locRow, job.attempt) : { code: 'location_missing', message: `location ${t.location_id} not found`, retriable: false };
    const stored: StoredRecord = {
      transactionId: t.id, kind: 'record', body: record.body, contentType: record.content_type, fiscalId: record.fiscal_id, tx: c.draft, upstreamId: t.fiscal_id_upstream,
      correction: true,
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
      return { outcome: 'dead', error, commit: settle(c, 'rejected', (t2) => ({ response, payload: t2.response_payload })) };
    };

    if (!('kind' in answer)) return refuse(answer.code, answer.message, answer.retriable);
    switch (answer.kind) {
      case 'accepted':
      case 'duplicate': {
        const warnings = answer.warnings?.length ? answer.warnings : undefined;
        return {
          outcome: 'completed',
          commit: settle(c, 'accepted', (t2) => {
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
