import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import { getSystem } from '../../countries/registry.ts';
import { TransportError, type AuthorityOutcome, type FiscalSystem, type RenderHint, type SigningKey, type TransactionStatus } from '../../countries/types.ts';
import { ApiError } from '../../core/errors.ts';
import type { SigningKeyService } from '../../services/signing-keys.ts';
import type { EventPublisher } from '../../services/events.ts';
import type { LocationService } from '../../services/locations.ts';
import { CANCELLABLE } from '../../services/transactions.ts';
import { acceptedFields, recordFailure as recordAuthorityFailure } from '../../services/authority-outcome.ts';
import { completionEvent, jobEvent } from '../../services/transaction-view.ts';
import type { Db, Queryable } from '../../store/db.ts';
import type { LocationRow } from '../../store/repos/locations-repo.ts';
import { transactionsRepo, type SubmissionRecord, type TransactionRow } from '../../store/repos/transactions-repo.ts';
import { retryDelayMs, type BackoffPolicy } from '../backoff.ts';
import type { JobRow } from '../queue.ts';
import type { AttemptResult, JobHandler } from '../runner.ts';

/**
 * The submit task: sends a stored fiscal record to its authority and turns the answer
 * into the transaction's next status (spec "States and transitions").
 *
 * - accepted / duplicate → success (or the system's own status, e.g. SDI `delivered`),
 *   `fiscalization.completed`; a cancellation that succeeds makes its original `cancelled`;
 * - sent (SDI) → stays `pending` until the notification arrives;
 * - a retriable failure (transport fault, retry_later, a retriable code) → `failed` with
 *   `response_payload.submit_error`, retried with backoff; after the last attempt →
 *   `failed_permanent`, entry `dead`, `fiscalization.dead_letter`;
 * - a non-retriable rejection → `failed_permanent` at once (no retry can succeed);
 * - systems with an offline grace window (Greece): a timeout or outage → `offline_pending`
 *   with the late-transmission label, retried until the window closes, then
 *   `failed_offline_grace_expired`; a late success → `transaction.late_authority_confirmed`.
 * Every failure enqueues a background translation of the error into English.
 */
export interface SubmitTaskDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  events: EventPublisher;
  locations: LocationService;
  backoff: BackoffPolicy;
  /** Per-attempt authority timeout (Greece uses its 5 s inline window instead). */
  timeoutMs?: number;
  authorityBaseUrls?: Record<string, string>;
  /** Extra CA certificates (PEM) trusted for authority servers (the tests' fake authorities). */
  authorityCa?: string | undefined;
  signingKeys: Pick<SigningKeyService, 'forAuthority'>;
  random?: () => number;
}

/** Statuses a submission may still change. */
const OPEN: readonly TransactionStatus[] = ['pending', 'processing', 'failed', 'offline_pending'];

interface Failure {
  code: string;
  message: string;
  retriable: boolean;
  retryAfterSeconds?: number | undefined;
  response?: Record<string, unknown> | undefined;
  status?: TransactionStatus | undefined;
}

export function createSubmitHandler(deps: SubmitTaskDeps): JobHandler {
  const { db, clock } = deps;

  async function callAuthority(system: FiscalSystem, t: TransactionRow, record: SubmissionRecord, locRow: LocationRow, job: JobRow): Promise<AuthorityOutcome | Failure> {
    const inlineMs = (system.capabilities.inlineWindowSeconds ?? 0) * 1000;
    const timeoutMs = inlineMs || (deps.timeoutMs ?? 30_000);
    const location = deps.locations.toFiscal(locRow);
    const mode = t.sandbox_mode ?? 'stub';
    let clientKey: SigningKey | undefined;
    if (mode === 'authority') {
      try {
        clientKey = await deps.signingKeys.forAuthority(location);
      } catch (err) {
        // The location lost its certificate after the record was stored: nothing to retry with.
        if (err instanceof ApiError) return { code: 'certificate_missing', message: err.message, retriable: false };
        throw err;
      }
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        system.submit(
          { transactionId: t.id, kind: record.kind, body: record.body, contentType: record.content_type, fiscalId: record.fiscal_id, tx: t.normalized },
          {
            environment: t.environment, mode, location, now: clock.now(),
            authorityBaseUrl: deps.authorityBaseUrls?.[`${system.key}:${t.environment}`], timeoutMs, attempt: job.attempt,
            clientKey, authorityCa: deps.authorityCa,
          },
        ),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new TransportError('timeout', `no answer from the authority within ${timeoutMs / 1000} s`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      if (err instanceof TransportError) return { code: err.code, message: err.message, retriable: true };
      throw err; // a bug, not an authority answer: the runner logs it and retries
    } finally {
      clearTimeout(timer);
    }
  }

  function succeed(t: TransactionRow, job: JobRow, outcome: Extract<AuthorityOutcome, { kind: 'accepted' | 'duplicate' }>): AttemptResult {
    return {
      outcome: 'completed',
      commit: async (tx) => {
        const now = clock.now();
        const extraHints = outcome.kind === 'accepted' ? outcome.renderHints ?? [] : [];
        const updated = await transactionsRepo.update(tx, t.id, {
          ...acceptedFields(t, outcome, now),
          render_hints: mergeHints(t.render_hints, extraHints),
        }, now, OPEN);
        if (!updated) return;
        if (t.cancels_id) await transactionsRepo.update(tx, t.cancels_id, { status: 'cancelled' }, now, CANCELLABLE);
        await deps.events.publish(tx, completionEvent(updated, now, job), now);
        if (t.status === 'offline_pending') {
          await deps.events.publish(tx, jobEvent('transaction.late_authority_confirmed', updated, job, 'completed', null, now), now);
        }
      },
    };
  }

  /**
   * The authority asked us to wait before sending (flow control): nothing was sent, so the
   * transaction goes back to `pending`, the job runs again after the wait, and the attempt
   * does not count against the job's maximum.
   */
  function defer(t: TransactionRow, seconds: number): AttemptResult {
    return {
      outcome: 'defer',
      runAt: new Date(clock.now().getTime() + seconds * 1000),
      commit: async (tx) => {
        await transactionsRepo.update(tx, t.id, { status: 'pending' }, clock.now(), ['processing']);
      },
    };
  }

  function sent(t: TransactionRow, outcome: Extract<AuthorityOutcome, { kind: 'sent' }>): AttemptResult {
    return {
      outcome: 'completed',
      commit: async (tx) => {
        const now = clock.now();
        await transactionsRepo.update(tx, t.id, { status: 'pending', fiscal_id: t.fiscal_id ?? outcome.reference, response_payload: { authority: outcome.response, awaiting_notification: true } }, now, OPEN);
      },
    };
  }

  /** Records the error and asks for its translation (services/authority-outcome.ts), from the open statuses. */
  const recordFailure = (tx: Queryable, t: TransactionRow, f: Failure, status: TransactionStatus, now: Date, fields: Partial<TransactionRow> = {}) =>
    recordAuthorityFailure(tx, t, f, status, now, OPEN, { fields });

  function fail(t: TransactionRow, job: JobRow, system: FiscalSystem, f: Failure): AttemptResult {
    const now = clock.now();
    const lastError = `${f.code}: ${f.message}`;
    const grace = system.capabilities.offlineGraceSeconds;

    if (grace !== undefined && f.retriable) {
      const until = new Date(t.created_at.getTime() + grace * 1000);
      if (now.getTime() >= until.getTime()) {
        return {
          outcome: 'dead', error: lastError,
          commit: async (tx) => {
            const updated = await recordFailure(tx, t, f, 'failed_offline_grace_expired', now);
            if (updated) {
              await deps.events.publish(tx, jobEvent('transaction.failed_offline_grace_expired', updated, job, 'dead', lastError, now), now);
              await deps.events.publish(tx, jobEvent('fiscalization.dead_letter', updated, job, 'dead', lastError, now), now);
            }
          },
        };
      }
      const next = Math.min(now.getTime() + delayMs(job, f), until.getTime());
      return {
        outcome: 'retry', error: lastError, runAt: new Date(next),
        commit: async (tx) => {
          await recordFailure(tx, t, f, 'offline_pending', now, { offline_until: until, render_hints: mergeHints(t.render_hints, [LATE_LABEL]) });
        },
      };
    }

    if (!f.retriable || job.attempt >= job.max_attempts) {
      return {
        outcome: 'dead', error: lastError,
        commit: async (tx) => {
          const updated = await recordFailure(tx, t, f, f.status ?? 'failed_permanent', now);
          if (updated) await deps.events.publish(tx, jobEvent('fiscalization.dead_letter', updated, job, 'dead', lastError, now), now);
        },
      };
    }
    return {
      outcome: 'retry', error: lastError, runAt: new Date(now.getTime() + delayMs(job, f)),
      commit: async (tx) => {
        await recordFailure(tx, t, f, 'failed', now);
      },
    };
  }

  const delayMs = (job: JobRow, f: Failure) => (f.retryAfterSeconds !== undefined ? f.retryAfterSeconds * 1000 : retryDelayMs(job.attempt, deps.backoff, deps.random));

  return async (job) => {
    if (!job.transaction_id) return { outcome: 'dead', error: 'submit job without a transaction' };
    const started = await transactionsRepo.beginSubmission(db, job.transaction_id, clock.now());
    if (!started) return { outcome: 'completed' }; // already settled (a late duplicate job)
    const { t, record, location } = started;
    const system = getSystem(t.system);
    const answer = await callAuthority(system, t, record, location, job);
    if (!('kind' in answer)) return fail(t, job, system, answer);
    switch (answer.kind) {
      case 'accepted':
      case 'duplicate':
        return succeed(t, job, answer);
      case 'sent':
        return sent(t, answer);
      case 'rejected':
        return fail(t, job, system, {
          code: answer.code, message: answer.message, response: answer.response, status: answer.status,
          retriable: system.codes[answer.code]?.retriable ?? false,
        });
      case 'retry_later':
        if (answer.flowControl) return defer(t, answer.retryAfterSeconds ?? 1);
        return fail(t, job, system, { code: answer.code, message: answer.message, response: answer.response, retriable: true, retryAfterSeconds: answer.retryAfterSeconds });
    }
  };
}

/** The receipt label Greece requires for a receipt issued while the authority was unreachable. */
const LATE_LABEL: RenderHint = {
  key: 'late_transmission_label', placement: 'footer_top', mandatory: true, kind: 'text',
  // Our wording: the legally mandated text is to be confirmed in the Greece issue (not in FORMATS.md).
  value: 'Εκδόθηκε χωρίς σύνδεση με την ΑΑΔΕ / Issued while the tax authority was unreachable: transmitted later',
};

/** Adds hints, replacing any with the same key (no duplicates on repeated attempts). */
function mergeHints(existing: RenderHint[], extra: RenderHint[]): RenderHint[] {
  const keys = new Set(extra.map((h) => h.key));
  return [...existing.filter((h) => !keys.has(h.key)), ...extra];
}
