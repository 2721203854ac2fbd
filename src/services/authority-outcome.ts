/**
 * How an authority's answer lands on a transaction, whoever sent the record: the per-record
 * submit task (jobs/tasks/submit.ts) and the batch processors (src/batch) record accepted
 * answers and failures the same way.
 */
import type { AuthorityOutcome, OutcomeError } from '../countries/types.ts';
import type { TransactionStatus } from '../core/status.ts';
import { jobsRepo } from '../store/repos/jobs-repo.ts';
import type { Queryable } from '../store/db.ts';
import { transactionsRepo, type TransactionRow } from '../store/repos/transactions-repo.ts';
import type { Translator } from '../translations/service.ts';
import { relinkOriginal } from './cancellation.ts';
import { TRANSLATE_JOB } from './transaction-view.ts';

/**
 * The fields an accepted (or already registered) answer sets; `extra` joins response_payload.
 * The answer replaces `response_payload`, so an earlier attempt's `submit_error` goes, and
 * `error_message` with it.
 */
export function acceptedFields(
  t: TransactionRow,
  outcome: Extract<AuthorityOutcome, { kind: 'accepted' | 'duplicate' }>,
  now: Date,
  extra: Record<string, unknown> = {},
): Partial<TransactionRow> {
  return {
    status: (outcome.kind === 'accepted' && outcome.status) || 'success',
    fiscal_id: outcome.fiscalId ?? t.fiscal_id,
    fiscal_id_upstream: outcome.upstreamId ?? t.fiscal_id_upstream,
    response_payload: {
      authority: outcome.response,
      ...(outcome.kind === 'duplicate' ? { duplicate: true } : {}),
      ...(outcome.warnings?.length ? { warnings: outcome.warnings } : {}),
      ...extra,
    },
    completed_at: now,
    // An earlier attempt's translated error no longer describes the transaction (the
    // inbound channel drops it on acceptance too: services/inbound.ts).
    error_message: null,
  };
}

export interface RecordedFailure {
  code: string;
  message: string;
  response?: Record<string, unknown> | undefined;
  /** The system's classification of the refusal (`OutcomeError`): `response_payload.error`. */
  error?: OutcomeError | undefined;
}

/** What a failure's `error_message` is read from when no AI call is needed (translations/service.ts). */
export type FailureTranslations = Pick<Translator, 'resolveWithoutAi'>;

/**
 * Records a failed submission: the status, `response_payload.submit_error` (and the system's
 * `error` classification, when its outcome gives one) and `error_message`, at once.
 * `error_message` is what the translate_error job would write when no AI call is needed (a
 * catalog hit's English text; without AI, the raw message), so it is null only while an AI
 * translation is pending (spec "Failed submissions"): then the job is enqueued and fills
 * it. The same error again keeps the AI translation it has. Only from the statuses in `from`.
 */
export async function recordFailure(
  tx: Queryable,
  t: TransactionRow,
  f: RecordedFailure,
  status: TransactionStatus,
  now: Date,
  from: readonly TransactionStatus[],
  opts: { translations: FailureTranslations; fields?: Partial<TransactionRow>; payload?: Record<string, unknown> },
): Promise<TransactionRow | undefined> {
  const previousCode = (t.response_payload.submit_error as { error_code?: string } | undefined)?.error_code;
  const sameError = previousCode === f.code && t.error_message !== null;
  const known = opts.translations.resolveWithoutAi({ country: t.country, system: t.system, code: f.code, message: f.message })?.translation;
  const updated = await transactionsRepo.update(tx, t.id, {
    status,
    response_payload: { ...(f.response ? { authority: f.response } : {}), submit_error: { error_code: f.code, raw_message: f.message }, ...(f.error ? { error: f.error } : {}), ...opts.payload },
    error_message: known ?? (sameError ? t.error_message : null),
    ...opts.fields,
  }, now, from);
  // A cancellation refused: its original names the cancellation that stands, if any.
  await relinkOriginal(tx, t.status, updated, now);
  if (updated && known === undefined && !sameError) {
    await jobsRepo.enqueue(tx, {
      kind: TRANSLATE_JOB, accountId: t.account_id, transactionId: t.id, maxAttempts: 5, runAt: now,
      payload: { transaction_id: t.id, country: t.country, system: t.system, error_code: f.code, raw_message: f.message },
    }, now);
  }
  return updated;
}
