import { TRANSLATE_JOB } from '../../services/transaction-view.ts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { Db, Queryable } from '../../store/db.ts';
import { translationsRepo } from '../../store/repos/translations-repo.ts';
import type { Translator } from '../../translations/service.ts';
import { retryDelayMs, type BackoffPolicy } from '../backoff.ts';
import type { JobRow } from '../../store/repos/jobs-repo.ts';
import type { AttemptResult, JobHandler } from '../runner.ts';

/** The job kind this handler serves. */
/** The job kind, named once (services/transaction-view.ts) for the enqueuer and the handler. */
export const TRANSLATE_ERROR_KIND = TRANSLATE_JOB;

/** AI failures are retried after 30 s, doubling, at most 15 min apart (±10 % jitter). */
export const TRANSLATE_RETRY: BackoffPolicy = { baseMs: 30_000, capMs: 15 * 60_000 };

export interface TranslateErrorPayload {
  transaction_id: string;
  country: string;
  system: string | null;
  error_code: string;
  raw_message: string | null;
}

export interface TranslateErrorDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  translator: Pick<Translator, 'resolve'>;
  backoff?: BackoffPolicy;
  random?: () => number;
}

function parsePayload(job: JobRow): TranslateErrorPayload | string {
  const p = job.payload as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const transactionId = str(p.transaction_id) ?? job.transaction_id;
  const country = str(p.country);
  const code = str(p.error_code);
  if (!transactionId) return 'payload has no transaction_id';
  if (!country) return 'payload has no country';
  if (!code || code.trim() === '') return 'payload has no error_code';
  return { transaction_id: transactionId, country, system: str(p.system), error_code: code, raw_message: str(p.raw_message) };
}

/**
 * The translate_error task (spec "Failed submissions"): fills a failed transaction's
 * `error_message`, which stays null while this job is pending. It is enqueued only when
 * an AI call is needed (services/authority-outcome.ts writes the catalog text, or the raw
 * message without AI, with the failure); a job from before that still resolves alike.
 *
 * - catalog hit, cached or fresh AI answer, or no AI configured → writes the result's
 *   `translation` (with no AI and no catalog entry that is the raw adapter message);
 * - AI failure (timeout, HTTP error, garbage) → retried later; after the job's last
 *   attempt the raw message is written instead and the job ends `dead` with the cause,
 *   so `error_message` is never left null for good;
 * - the transaction no longer waits for this error (a newer failure, already filled) →
 *   nothing to do. The write itself re-checks that in the commit transaction.
 */
export function createTranslateErrorHandler(deps: TranslateErrorDeps): JobHandler {
  const { db, clock, log, translator } = deps;
  const backoff = deps.backoff ?? TRANSLATE_RETRY;

  const write = (p: TranslateErrorPayload, text: string) => async (tx: Queryable) => {
    await translationsRepo.setTransactionErrorMessage(tx, p.transaction_id, p.error_code, text, clock.now());
  };

  return async (job): Promise<AttemptResult> => {
    const p = parsePayload(job);
    if (typeof p === 'string') return { outcome: 'dead', error: p };
    if (!(await translationsRepo.awaitsErrorMessage(db, p.transaction_id, p.error_code))) return { outcome: 'completed' };

    const { result, aiError } = await translator.resolve({ country: p.country, system: p.system, code: p.error_code, message: p.raw_message });
    if (!aiError) return { outcome: 'completed', commit: write(p, result.translation) };

    const error = `AI translation failed: ${aiError}`;
    if (job.attempt < job.max_attempts) {
      return { outcome: 'retry', error, runAt: new Date(clock.now().getTime() + retryDelayMs(job.attempt, backoff, deps.random)) };
    }
    log.warn({ jobId: job.id, transactionId: p.transaction_id, code: p.error_code }, 'AI translation failed on the last attempt; keeping the raw message');
    // result.translation is the fallback here: the raw message (or the code without one).
    return { outcome: 'dead', error: `${error}; the raw message was kept`, commit: write(p, result.translation) };
  };
}
