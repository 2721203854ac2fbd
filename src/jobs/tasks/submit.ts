import { performance } from 'node:perf_hooks';
import DataLoader from 'dataloader';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import { getSystem, statuses } from '../../countries/registry.ts';
import {
  TransportError, type AuthorityOutcome, type AuthorityPacing, type BatchOutcome, type FiscalSystem, type OriginalOfCancellation, type OutcomeError, type StoredRecord, type SubmitContext,
} from '../../countries/types.ts';
import type { RenderHint } from '../../core/render-hint.ts';
import type { SigningKey } from '../../core/signing-key.ts';
import type { TransactionStatus } from '../../core/status.ts';
import { ApiError } from '../../core/errors.ts';
import type { SigningKeyService } from '../../services/signing-keys.ts';
import type { EventPublisher } from '../../services/events.ts';
import type { LocationService } from '../../services/locations.ts';
import { cancelIfCancellationAccepted, cancelOriginalIfAccepted, wakeWaitingCancellation } from '../../services/cancellation.ts';
import { acceptedFields, recordFailure as recordAuthorityFailure, type FailureTranslations } from '../../services/authority-outcome.ts';
import type { AccountTiers } from '../../services/account-tiers.ts';
import { graceTierOf, offlineGraceSeconds } from '../../services/offline-grace.ts';
import { completionEvent, INBOUND_MESSAGE_JOB, jobEvent, POLL_JOB, SUBMIT_JOB } from '../../services/transaction-view.ts';
import { fiscalRecordsRepo, issuerAsIssued } from '../../store/repos/fiscal-records-repo.ts';
import type { Db, Queryable } from '../../store/db.ts';
import type { LocationRow } from '../../store/repos/locations-repo.ts';
import { transactionsRepo, type StartedSubmission, type SubmissionRecord, type TransactionRow } from '../../store/repos/transactions-repo.ts';
import { retryDelayMs, type BackoffPolicy } from '../backoff.ts';
import { boundedCall, submitContextOf } from './authority-call.ts';
import { jobsRepo, type JobRow } from '../../store/repos/jobs-repo.ts';
import type { AttemptOutcome, AttemptResult, FollowerOutcome, JobHandler } from '../runner.ts';
import { NO_SUBMISSION_METRICS, statusRecorder, type SubmissionObserver, type SubmissionOperation, type SubmissionOutcome } from '../../metrics/observers.ts';

/**
 * The submit task: sends a stored fiscal record to its authority and turns the answer
 * into the transaction's next status (spec "States and transitions").
 *
 * - accepted / duplicate → success (or the system's own accepted status, as its outcome says),
 *   `fiscalization.completed`; a cancellation that succeeds makes its original `cancelled`;
 * - sent (SDI) → stays `pending` until the notification arrives;
 * - a retriable failure (transport fault, retry_later, a retriable code) → `failed` with
 *   `response_payload.submit_error`, retried with backoff; after the last attempt →
 *   `failed_permanent`, entry `dead`, `fiscalization.dead_letter`;
 * - a non-retriable rejection → `failed_permanent` at once (no retry can succeed);
 * - systems with an offline fallback (Greece): a timeout or outage → its offline status
 *   with its receipt label, retried until the window closes, then its expired status;
 *   a late success fires its late event (the plug-in's `offline`: Greece).
 * Every failure enqueues a background translation of the error into English.
 *
 * A cancellation of a system whose cancellations wait for their original
 * (`capabilities.cancellationAwaitsOriginal`) is sent only once the authority has accepted
 * its original (`awaitOriginal`): until then each attempt is deferred (not counted, never
 * dead-lettered), and made due at once when the original settles, whatever settles it
 * (services/cancellation.ts `wakeWaitingCancellation`: this task, a batch, a notification); if
 * the original ends refused, the cancellation is never sent and ends `failed_permanent`.
 * Such a system's records are sent one per request (no batch).
 *
 * Batches: when the job belongs to an ordered queue (a chain) and its system has
 * `submitMany`, the job adopts the chain's next waiting jobs (jobs/queue.ts
 * `adoptFollowers`, up to `maxRecordsPerRequest - 1`) and one request carries all their
 * records. Each adopted job and its transaction then get their own outcome, exactly as a
 * lone submission would, in the one commit the runner makes for the head; except:
 * - the authority answered for the request as a whole (flow control, HTTP 429, a SOAP
 *   Fault, a transport fault): the head is handled as a lone record would be, the adopted
 *   jobs go back to `waiting` with their attempt not counted and their transactions to
 *   `pending` (nothing of theirs was decided). A whole-request rejection of a batch says
 *   nothing about the head in particular (any record may have broken the message), so the
 *   head is sent again alone within the same attempt and takes that answer;
 * - the chain order: once a record of the batch will be sent again (a retriable failure,
 *   flow control), every later record of the batch that was not registered goes back to
 *   `waiting` unjudged: sent alone, it would not have left before its predecessor, and a
 *   refusal may only mean that AEAT misses the predecessor (1180); it is judged again
 *   after it. Records the authority registered stay registered.
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
  /**
   * Account tiers (services/account-tiers.ts): the offline grace of a record follows its
   * account's tier (services/offline-grace.ts). Absent (the embedded engine, which knows no
   * tiers): every record gets the system's default grace.
   */
  tiers?: Pick<AccountTiers, 'of'> | undefined;
  /** The authorities' wait-before-sending memory, shared by every worker (services/authority-pacing.ts). */
  pacing: AuthorityPacing;
  random?: () => number;
  /** The plug-in of a system key (default: the registry's; a test may wrap one). */
  systems?: (key: string) => FiscalSystem;
  /** Authority calls, their outcomes and the status changes they make (src/metrics). */
  metrics?: SubmissionObserver;
  /** A failure's `error_message` when no AI call is needed (services/authority-outcome.ts). */
  translations: FailureTranslations;
}

/** Attempts of an `inbound_message` job: only a database failure is retried (jobs/tasks/inbound-message.ts). */
const INBOUND_MESSAGE_ATTEMPTS = 5;

/** Seconds between polls when the system does not say (`sent` without `pollAfterSeconds` from `poll`). */
const DEFAULT_POLL_SECONDS = 30;

/**
 * A cancellation waiting for its original (`awaitOriginal`) looks again just after the
 * original's next attempt (the only time its status may change; its settling also wakes the
 * cancellation); this soon while that attempt is being recorded; at the latest after the
 * longest wait (an original waiting for something else: a notification, a batch, whose
 * settling wakes the cancellation as well: the longest wait is only a safety net).
 */
const AFTER_ORIGINAL_MS = 1_000;
const ORIGINAL_IN_FLIGHT_MS = 5_000;
const LONGEST_WAIT_MS = 3_600_000;

/** The cancellation was never sent: no authority answer and no failed attempt recorded. */
const neverSent = (t: TransactionRow): boolean => t.response_payload.authority === undefined && t.response_payload.submit_error === undefined;

/** The statuses from which a submission may move a transaction to `to` (the status machine). */
const from = (to: TransactionStatus) => statuses.sources(to, 'submission');

interface Failure {
  code: string;
  message: string;
  retriable: boolean;
  retryAfterSeconds?: number | undefined;
  response?: Record<string, unknown> | undefined;
  status?: TransactionStatus | undefined;
  /** The system's classification of the refusal: `response_payload.error`. */
  error?: OutcomeError | undefined;
}

export function createSubmitHandler(deps: SubmitTaskDeps): JobHandler {
  const { db, clock } = deps;
  const systemOf = deps.systems ?? getSystem;
  const metrics = deps.metrics ?? NO_SUBMISSION_METRICS;

  /**
   * A worker starts the jobs of a claim side by side: the transactions they start in the
   * same turn of the event loop become `processing` in one statement (and one commit)
   * instead of one each. A window rather than core/combiner.ts: these calls arrive
   * together, so the window costs nothing and takes them all. No cache: every call reads
   * the row as it is now.
   */
  const begin = new DataLoader<string, StartedSubmission | null>(
    async (ids) => {
      const started = await transactionsRepo.beginSubmissions(db, ids, clock.now(), statuses.open, statuses.keptWhileSubmitting);
      for (const s of started.values()) if (s.t.status === 'processing') metrics.statusChanged(s.t.system, 'processing');
      return ids.map((id) => started.get(id) ?? null);
    },
    { cache: false, batchScheduleFn: (run) => setImmediate(run), maxBatchSize: 200 },
  );

  const submitContext = (system: FiscalSystem, t: TransactionRow, locRow: LocationRow, job: JobRow) => submitContextOf(deps, system, t, locRow, job.attempt);
  const bounded = boundedCall;

  const storedRecord = (t: TransactionRow, record: SubmissionRecord, original?: OriginalOfCancellation): StoredRecord => {
    // The location as the record was issued, where the record kept it (older records did not).
    const issuer = issuerAsIssued(record.issuer);
    // A cancellation's original as it was issued: the holder of the document it withdraws.
    const cancelledIssuer = record.kind === 'cancellation' ? issuerAsIssued(record.cancelled_issuer) : undefined;
    return {
      transactionId: t.id, kind: record.kind, body: record.body, contentType: record.content_type, fiscalId: record.fiscal_id, tx: t.normalized, upstreamId: t.fiscal_id_upstream,
      ...(original ? { original } : {}),
      ...(issuer ? { issuer } : {}),
      ...(cancelledIssuer ? { cancelledIssuer } : {}),
    };
  };

  async function callAuthority(
    system: FiscalSystem, t: TransactionRow, record: SubmissionRecord, locRow: LocationRow, job: JobRow, original?: OriginalOfCancellation,
  ): Promise<AuthorityOutcome | Failure> {
    const operation: SubmissionOperation = job.kind === POLL_JOB ? 'poll' : 'submit';
    const answer = await sendOne(system, t, record, locRow, job, original);
    metrics.outcome(system.key, operation, outcomeOf(answer));
    return answer;
  }

  async function sendOne(
    system: FiscalSystem, t: TransactionRow, record: SubmissionRecord, locRow: LocationRow, job: JobRow, original?: OriginalOfCancellation,
  ): Promise<AuthorityOutcome | Failure> {
    const ctx = await submitContext(system, t, locRow, job);
    if (!('mode' in ctx)) return ctx;
    // A poll job asks for the result of a record sent earlier; any other job sends it.
    if (job.kind === POLL_JOB) {
      if (!system.poll) return { code: 'poll_unsupported', message: `${system.key} has no result to poll`, retriable: false };
      return timed(system, 'poll', () => bounded(ctx, () => system.poll!(storedRecord(t, record, original), ctx)));
    }
    return timed(system, 'submit', () => bounded(ctx, () => system.submit(storedRecord(t, record, original), ctx)));
  }

  /**
   * A cancellation of a system with `cancellationAwaitsOriginal`, before it is sent: its
   * original, when the authority has accepted it (the cancellation goes); else the attempt's
   * outcome: deferred while the original may still get there, or the end of the cancellation
   * when it never will (refused, out of retries or of its offline grace, or cancelled by
   * another). The original and its next attempt are read in one snapshot.
   */
  async function awaitOriginal(
    system: FiscalSystem, t: TransactionRow, job: JobRow, awaits: NonNullable<FiscalSystem['capabilities']['cancellationAwaitsOriginal']>,
  ): Promise<OriginalOfCancellation | AttemptOutcome> {
    const found = await transactionsRepo.getWithLatestJob(db, t.cancels_id!, [SUBMIT_JOB, POLL_JOB]);
    if (!found) throw new Error(`cancellation ${t.id} names an original ${t.cancels_id} that does not exist`);
    const o = found.t;
    if (statuses.isAccepted(o.status)) return { transactionId: o.id, status: o.status, fiscalId: o.fiscal_id, upstreamId: o.fiscal_id_upstream };
    const ref = o.fiscal_id ? `${o.fiscal_id} (transaction ${o.id})` : `transaction ${o.id}`;
    if (statuses.isRefused(o.status)) {
      return notSent(t, job, awaits, `not sent: its original ${ref} never reached ${awaits.authority} (it ended ${o.status}), so there is nothing there to cancel`);
    }
    if (o.status === 'cancelled') return notSent(t, job, awaits, `not sent: its original ${ref} is cancelled already`);

    const now = clock.now();
    const next = found.job;
    let at = now.getTime() + LONGEST_WAIT_MS;
    if (next?.status === 'pending' || next?.status === 'failed') at = Math.max(next.run_at.getTime(), now.getTime()) + AFTER_ORIGINAL_MS;
    else if (next?.status === 'processing') at = now.getTime() + ORIGINAL_IN_FLIGHT_MS;
    at = Math.min(at, now.getTime() + LONGEST_WAIT_MS);
    // Transmitted later for its original's reason: offline with it (its receipt says so).
    const offline = system.offline;
    const withOriginalOffline = offline !== undefined && o.status === offline.status;
    const status = withOriginalOffline ? offline.status : statuses.keptWhileSubmitting.includes(t.status) ? t.status : 'pending';
    const note = statusRecorder(metrics, t.system);
    return {
      outcome: 'defer', runAt: new Date(at),
      commit: async (tx) => {
        note(await transactionsRepo.update(tx, t.id, {
          status,
          response_payload: { ...t.response_payload, awaiting_original: { transaction_id: o.id, status: o.status } },
          // Taken up, not sent: nothing reached the authority yet.
          ...(neverSent(t) ? { submitted_at: null } : {}),
          ...(withOriginalOffline ? { offline_until: o.offline_until, render_hints: mergeHints(t.render_hints, [offline.label]) } : {}),
        }, now, from(status)));
        // The original settled while this attempt ran (its wake found the job in flight): at once.
        const current = await transactionsRepo.getById(tx, o.id);
        if (current && (statuses.isAccepted(current.status) || statuses.isRefused(current.status))) {
          await jobsRepo.bringForwardFor(tx, t.id, [SUBMIT_JOB], now);
        }
      },
    };
  }

  /** A cancellation that will never be sent: its original will never be at the authority (or is cancelled already). */
  function notSent(t: TransactionRow, job: JobRow, awaits: NonNullable<FiscalSystem['capabilities']['cancellationAwaitsOriginal']>, message: string): AttemptOutcome {
    const now = clock.now();
    const f: Failure = { code: 'original_never_accepted', message, retriable: false, error: awaits.error };
    const lastError = `${f.code}: ${f.message}`;
    const note = statusRecorder(metrics, t.system);
    return {
      outcome: 'dead', error: lastError,
      commit: async (tx) => {
        const updated = await recordFailure(tx, t, f, 'failed_permanent', now, neverSent(t) ? { submitted_at: null } : {});
        note(updated);
        if (updated) await deps.events.publish(tx, jobEvent('fiscalization.dead_letter', updated, job, 'dead', lastError, now), now);
      },
    };
  }

  /** Times one authority call (src/metrics: fiscal_submission_duration_seconds). */
  async function timed<T>(system: FiscalSystem, operation: SubmissionOperation, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await call();
    } finally {
      metrics.call(system.key, operation, (performance.now() - started) / 1000);
    }
  }

  function succeed(t: TransactionRow, job: JobRow, outcome: Extract<AuthorityOutcome, { kind: 'accepted' | 'duplicate' }>): AttemptResult {
    const note = statusRecorder(metrics, t.system);
    return {
      outcome: 'completed',
      commit: async (tx) => {
        const now = clock.now();
        const extraHints = outcome.renderHints ?? [];
        const fields = acceptedFields(t, outcome, now);
        const updated = await transactionsRepo.update(tx, t.id, {
          ...fields,
          render_hints: mergeHints(t.render_hints, extraHints),
        }, now, from(fields.status!));
        if (!updated) return;
        note(updated);
        note(await cancelOriginalIfAccepted(tx, updated, now));
        // Cancelled before it was accepted (a status `cancelledOnceAccepted`), its cancellation accepted first.
        note(await cancelIfCancellationAccepted(tx, updated, now));
        // Its cancellation, waiting for it, goes now.
        await wakeWaitingCancellation(tx, systemOf(t.system), updated, now);
        await deps.events.publish(tx, completionEvent(updated, now, job), now);
        const offline = systemOf(t.system).offline;
        if (offline && t.status === offline.status) {
          await deps.events.publish(tx, jobEvent(offline.lateEvent, updated, job, 'completed', null, now), now);
        }
      },
    };
  }

  /**
   * The authority asked us to wait before sending (flow control): nothing was sent, so the
   * transaction goes back to `pending`, the job runs again after the wait, and the attempt
   * does not count against the job's maximum.
   */
  function defer(t: TransactionRow, seconds: number): AttemptOutcome {
    return { outcome: 'defer', runAt: new Date(clock.now().getTime() + seconds * 1000), commit: backToPending(t.id, t.system) };
  }

  /** An adopted job whose record was not judged: back to `waiting` (runner), its transaction to `pending`. */
  function release(transactionId: string | null, system: string): FollowerOutcome {
    return { outcome: 'release', ...(transactionId ? { commit: backToPending(transactionId, system) } : {}) };
  }

  /** Nothing of this attempt was decided for the transaction: from `processing` back to `pending`. */
  const backToPending = (transactionId: string, system: string) => {
    const note = statusRecorder(metrics, system);
    return async (tx: Queryable) => {
      note(await transactionsRepo.update(tx, transactionId, { status: 'pending' }, clock.now(), ['processing']));
    };
  };

  /**
   * The authority took the record without judging it yet. Its result arrives as a
   * notification (SDI: `services/inbound.ts`), or, for a system with `poll` that says when
   * to ask, is fetched by a `poll_result` job: the transaction stays `pending` meanwhile.
   * A poll that answers `sent` again (not ready) asks again later, without recording a
   * failure, until the job's attempts run out (the system's `pollAttempts`, else the send
   * job's); then the result never came: a failure.
   */
  async function sent(t: TransactionRow, job: JobRow, system: FiscalSystem, outcome: Extract<AuthorityOutcome, { kind: 'sent' }>): Promise<AttemptOutcome> {
    const now = clock.now();
    const after = (outcome.pollAfterSeconds ?? DEFAULT_POLL_SECONDS) * 1000;
    if (job.kind === POLL_JOB) {
      if (job.attempt >= job.max_attempts) {
        return fail(t, job, system, { code: 'result_not_available', message: `no result from the authority after ${job.attempt} polls`, retriable: false, response: outcome.response });
      }
      return { outcome: 'retry', error: 'result not ready', runAt: new Date(now.getTime() + after), commit: backToPending(t.id, t.system) };
    }
    const polled = system.poll !== undefined && outcome.pollAfterSeconds !== undefined;
    const channel = system.inbound?.name;
    if (outcome.notifications?.length && channel === undefined) throw new Error(`${system.key} produced notifications but has no inbound channel`);
    const note = statusRecorder(metrics, t.system);
    return {
      outcome: 'completed',
      commit: async (tx) => {
        note(await transactionsRepo.update(tx, t.id, {
          status: 'pending', fiscal_id: t.fiscal_id ?? outcome.reference, fiscal_id_upstream: outcome.upstreamId ?? t.fiscal_id_upstream,
          response_payload: { authority: outcome.response, ...(polled ? { awaiting_result: true } : { awaiting_notification: true }) },
        }, now, from('pending')));
        if (polled) {
          await jobsRepo.enqueue(tx, {
            kind: POLL_JOB, accountId: t.account_id, transactionId: t.id, maxAttempts: system.capabilities.pollAttempts ?? job.max_attempts, runAt: new Date(now.getTime() + after),
          }, now);
        }
        // The stub's notifications, delivered through the inbound channel once this commits.
        await jobsRepo.enqueueMany(tx, (outcome.notifications ?? []).map((n) => ({
          kind: INBOUND_MESSAGE_JOB, accountId: t.account_id, transactionId: t.id, maxAttempts: INBOUND_MESSAGE_ATTEMPTS, runAt: now,
          payload: { channel, body: n.body, content_type: n.contentType },
        })), now);
      },
    };
  }

  /** Records the error and asks for its translation (services/authority-outcome.ts), from where a submission may move it. */
  const recordFailure = (tx: Queryable, t: TransactionRow, f: Failure, status: TransactionStatus, now: Date, fields: Partial<TransactionRow> = {}) =>
    recordAuthorityFailure(tx, t, f, status, now, from(status), { translations: deps.translations, fields });

  /**
   * A record's offline window: the one its first offline attempt fixed, else (it goes
   * offline now) its creation + the grace of its account's tier, read now
   * (services/offline-grace.ts: why then, and why it never moves afterwards). A cancellation
   * waiting for its original shows the original's window until it is sent (awaitOriginal):
   * that one is not its own.
   */
  async function offlineUntil(t: TransactionRow, system: FiscalSystem): Promise<Date> {
    if (t.offline_until && !neverSent(t)) return t.offline_until;
    const grace = offlineGraceSeconds(system.capabilities, await graceTierOf(t, deps.tiers))!;
    return new Date(t.created_at.getTime() + grace * 1000);
  }

  async function fail(t: TransactionRow, job: JobRow, system: FiscalSystem, f: Failure): Promise<Exclude<AttemptOutcome, { outcome: 'defer' }>> {
    const lastError = `${f.code}: ${f.message}`;
    const grace = system.capabilities.offlineGraceSeconds;
    const offline = system.offline;
    const note = statusRecorder(metrics, t.system);

    if (offline && grace !== undefined && f.retriable) {
      const until = await offlineUntil(t, system);
      const now = clock.now();
      if (now.getTime() >= until.getTime()) {
        return {
          outcome: 'dead', error: lastError,
          commit: async (tx) => {
            const updated = await recordFailure(tx, t, f, offline.expiredStatus, now);
            note(updated);
            await wakeWaitingCancellation(tx, system, updated, now);
            if (updated) {
              await deps.events.publish(tx, jobEvent(offline.expiredEvent, updated, job, 'dead', lastError, now), now);
              await deps.events.publish(tx, jobEvent('fiscalization.dead_letter', updated, job, 'dead', lastError, now), now);
            }
          },
        };
      }
      const next = Math.min(now.getTime() + delayMs(job, f), until.getTime());
      return {
        outcome: 'retry', error: lastError, runAt: new Date(next),
        commit: async (tx) => {
          note(await recordFailure(tx, t, f, offline.status, now, { offline_until: until, render_hints: mergeHints(t.render_hints, [offline.label]) }));
        },
      };
    }

    const now = clock.now();
    if (!f.retriable || job.attempt >= job.max_attempts) {
      return {
        outcome: 'dead', error: lastError,
        commit: async (tx) => {
          const updated = await recordFailure(tx, t, f, f.status ?? 'failed_permanent', now);
          note(updated);
          await wakeWaitingCancellation(tx, system, updated, now);
          if (updated) await deps.events.publish(tx, jobEvent('fiscalization.dead_letter', updated, job, 'dead', lastError, now), now);
        },
      };
    }
    return {
      outcome: 'retry', error: lastError, runAt: new Date(now.getTime() + delayMs(job, f)),
      commit: async (tx) => {
        // A status kept while submitting (a queued embedded record) is kept between retries too.
        note(await recordFailure(tx, t, f, statuses.keptWhileSubmitting.includes(t.status) ? t.status : 'failed', now));
      },
    };
  }

  const delayMs = (job: JobRow, f: Failure) => (f.retryAfterSeconds !== undefined ? f.retryAfterSeconds * 1000 : retryDelayMs(job.attempt, deps.backoff, deps.random));

  /** What one record's answer (or failure) does to its job and transaction, as for a lone submission. */
  async function resultOf(t: TransactionRow, job: JobRow, system: FiscalSystem, answer: AuthorityOutcome | Failure): Promise<AttemptOutcome> {
    if (!('kind' in answer)) return fail(t, job, system, answer);
    switch (answer.kind) {
      case 'accepted':
      case 'duplicate':
        return succeed(t, job, answer);
      case 'sent':
        return sent(t, job, system, answer);
      case 'rejected':
        return fail(t, job, system, {
          code: answer.code, message: answer.message, response: answer.response, status: answer.status, error: answer.error,
          retriable: system.codes[answer.code]?.retriable ?? false,
        });
      case 'retry_later':
        if (answer.flowControl) return defer(t, answer.retryAfterSeconds ?? 1);
        return fail(t, job, system, { code: answer.code, message: answer.message, response: answer.response, error: answer.error, retriable: true, retryAfterSeconds: answer.retryAfterSeconds });
    }
  }

  /**
   * An attempt's outcome, unless the authority decided the transaction while the attempt was
   * in flight: an SdI notification about the file a resend was sending again (services/
   * inbound.ts settles the transaction and leaves the entry in flight to its worker). The
   * answer then has nothing left to say about the transaction (its updates, guarded by
   * status, would change nothing; `sent` would queue what a settled record no longer
   * awaits), and the job ends as the transaction did: `dead` with the refusal the
   * transaction records, or `completed`, whatever the answer was (a lost answer left a retry
   * due on a settled record; `sent` completed the entry of a file SdI had discarded).
   * Decided in the commit, after the runner ended the job and holding its row, which the
   * inbound service locks first too: whichever of the message and the answer commits last
   * sees the other, so the entry tells the newest outcome. `t` is the transaction as the
   * attempt began (beginSubmissions): a status other than that one, accepted or refused, is
   * someone else's decision. Only for a system whose authority sends messages (`inbound`):
   * no one else settles another system's transactions, and the read it costs, one a record,
   * made a VERI*FACTU batch of a thousand records a thousand statements slower to commit
   * (bench C, batched per chain: 983 → 640 jobs/s).
   */
  function unlessSettledMeanwhile<R extends AttemptOutcome | FollowerOutcome>(system: FiscalSystem, t: TransactionRow, job: JobRow, result: R): R {
    if (!system.inbound) return result;
    const commit = result.commit;
    return {
      ...result,
      commit: async (tx: Queryable) => {
        const current = await transactionsRepo.getById(tx, t.id, { forUpdate: true });
        const moved = current !== undefined && current.status !== t.status;
        const refused = moved && statuses.isRefused(current.status);
        if (!refused && !(moved && statuses.isAccepted(current.status))) return commit?.(tx);
        const entry = await jobsRepo.get(tx, job.id);
        if (!entry) return;
        const recorded = current.response_payload.submit_error as { error_code?: unknown; raw_message?: unknown } | undefined;
        const error = recorded && typeof recorded.error_code === 'string'
          ? `${recorded.error_code}: ${String(recorded.raw_message ?? '')}`
          : `${current.status} by the authority`;
        await jobsRepo.settle(tx, entry, refused ? { status: 'dead', error } : { status: 'completed' }, clock.now());
      },
    };
  }

  /** `unlessSettledMeanwhile` for a batch's head and each adopted job whose record was in it. */
  function batchUnlessSettledMeanwhile(system: FiscalSystem, r: AttemptResult, members: readonly Member[]): AttemptResult {
    if (!system.inbound) return r;
    const byJob = new Map(members.map((m) => [m.job.id, m]));
    return {
      ...unlessSettledMeanwhile(system, members[0]!.t, members[0]!.job, r),
      ...(r.followers ? {
        followers: r.followers.map((f) => {
          const m = byJob.get(f.job.id);
          return m ? { job: f.job, result: unlessSettledMeanwhile(system, m.t, m.job, f.result) } : f;
        }),
      } : {}),
    };
  }

  /** A batch member: its job, transaction and record. */
  interface Member {
    job: JobRow;
    t: TransactionRow;
    record: SubmissionRecord;
  }

  /**
   * One request for the head and its adopted jobs (see the file comment), and every job's
   * outcome. `followers` are in queue order; those whose transaction is settled already (a
   * late duplicate job) complete without being sent.
   */
  async function submitBatch(head: Member, location: LocationRow, system: FiscalSystem, followers: JobRow[]): Promise<AttemptResult> {
    const members: Member[] = [head];
    return batchUnlessSettledMeanwhile(system, await judgeBatch(head, members, location, system, followers), members);
  }

  /** `submitBatch`'s request and outcomes; `members` receives the jobs whose records it sends. */
  async function judgeBatch(head: Member, members: Member[], location: LocationRow, system: FiscalSystem, followers: JobRow[]): Promise<AttemptResult> {
    const begun = await transactionsRepo.beginSubmissions(db, followers.map((f) => f.transaction_id!).filter(Boolean), clock.now(), statuses.open, statuses.keptWhileSubmitting);
    const settled: { job: JobRow; result: FollowerOutcome }[] = [];
    for (const job of followers) {
      const b = job.transaction_id ? begun.get(job.transaction_id) : undefined;
      if (b) members.push({ job, t: b.t, record: b.record });
      else settled.push({ job, result: { outcome: 'completed' } });
    }
    const adopted = members.slice(1);
    const releaseAll = () => [...adopted.map((m) => ({ job: m.job, result: release(m.t.id, m.t.system) })), ...settled];

    if (adopted.length === 0) {
      return { ...(await resultOf(head.t, head.job, system, await callAuthority(system, head.t, head.record, location, head.job))), followers: settled };
    }
    const ctx = await submitContext(system, head.t, location, head.job);
    const answer: BatchOutcome | Failure = !('mode' in ctx)
      ? ctx
      : await timed(system, 'batch', () => bounded(ctx, () => system.submitMany!(members.map((m) => storedRecord(m.t, m.record)), ctx)));
    // One outcome per record the authority judged; one for a request answered (or failed) as a whole.
    if (!('kind' in answer)) metrics.outcome(system.key, 'batch', 'error');
    else if (answer.kind === 'request') metrics.outcome(system.key, 'batch', outcomeOf(answer.outcome));
    else for (const o of answer.outcomes) metrics.outcome(system.key, 'batch', outcomeOf(o));

    if (!('kind' in answer)) return { ...(await fail(head.t, head.job, system, answer)), followers: releaseAll() };
    if (answer.kind === 'request') {
      let own: AuthorityOutcome | Failure = answer.outcome;
      // A whole-request refusal may be any record's fault: the head learns its own alone.
      if (own.kind === 'rejected') own = await callAuthority(system, head.t, head.record, location, head.job);
      return { ...(await resultOf(head.t, head.job, system, own)), followers: releaseAll() };
    }
    if (answer.outcomes.length !== members.length) {
      throw new Error(`${system.key}.submitMany answered ${answer.outcomes.length} outcomes for ${members.length} records`);
    }

    const headResult = await resultOf(head.t, head.job, system, answer.outcomes[0]!);
    // Chain order: once a record will be sent again, the later unregistered ones wait for it.
    let held = headResult.outcome === 'retry' || headResult.outcome === 'defer';
    const out: { job: JobRow; result: FollowerOutcome }[] = [];
    for (const [i, m] of adopted.entries()) {
      const o = answer.outcomes[i + 1]!;
      let r: FollowerOutcome;
      if (o.kind === 'retry_later' && o.flowControl) r = release(m.t.id, m.t.system);
      else r = (await resultOf(m.t, m.job, system, o)) as FollowerOutcome; // never `defer`: flow control is handled above
      if (held && r.outcome !== 'completed') r = release(m.t.id, m.t.system);
      if (r.outcome === 'retry' || r.outcome === 'release') held = true;
      out.push({ job: m.job, result: r });
    }
    return { ...headResult, followers: [...out, ...settled] };
  }

  return async (job) => {
    if (!job.transaction_id) return { outcome: 'dead', error: 'submit job without a transaction' };
    const started = await begin.load(job.transaction_id);
    if (!started) return { outcome: 'completed' }; // already settled (a late duplicate job)
    const { t, location } = started;
    let { record } = started;
    const system = systemOf(t.system);
    const awaits = system.capabilities.cancellationAwaitsOriginal;
    let original: OriginalOfCancellation | undefined;
    if (awaits && t.cancels_id && job.kind !== POLL_JOB) {
      const ready = await awaitOriginal(system, t, job, awaits);
      if ('outcome' in ready) return unlessSettledMeanwhile(system, t, job, ready);
      original = ready;
      // Issued before its original was accepted, it may now say what it could not then.
      const body = neverSent(t) ? system.completeCancellation?.({ ...storedRecord(t, record), original }) : undefined;
      if (body !== undefined && body !== record.body) {
        await fiscalRecordsRepo.completeUnsentCancellation(db, t.id, record.body, body);
        record = { ...record, body };
      }
    }
    const max = system.capabilities.maxRecordsPerRequest ?? 1;
    if (job.kind === POLL_JOB || !job.queue_key || !system.submitMany || max <= 1 || awaits) {
      return unlessSettledMeanwhile(system, t, job, await resultOf(t, job, system, await callAuthority(system, t, record, location, job, original)));
    }
    const followers = await jobsRepo.adoptFollowers(db, job, {
      environment: t.environment, sandboxMode: t.sandbox_mode ?? 'stub', limit: max - 1, now: clock.now(),
    });
    try {
      return await submitBatch({ job, t, record }, location, system, followers);
    } catch (err) {
      if (followers.length === 0) throw err;
      // A bug, not an authority answer: retry the head later (as the runner would) and hand
      // the adopted jobs back to their queue rather than leave them to their lease.
      deps.log.error({ err, jobId: job.id, followers: followers.length }, 'batch submission failed');
      return {
        outcome: 'retry', error: `internal error: ${(err as Error).message}`, runAt: new Date(clock.now().getTime() + 60_000),
        followers: followers.map((f) => ({ job: f, result: release(f.transaction_id, t.system) })),
      };
    }
  };
}

/** How an operator counts an answer (metrics/observers.ts SubmissionOutcome). */
export function outcomeOf(answer: AuthorityOutcome | { code: string }): SubmissionOutcome {
  if (!('kind' in answer)) return 'error';
  switch (answer.kind) {
    case 'accepted': return 'accepted';
    case 'duplicate': return 'duplicate';
    case 'rejected': return 'rejected';
    case 'retry_later': return 'retry';
    case 'sent': return 'sent';
  }
}

/** Adds hints, replacing any with the same key (no duplicates on repeated attempts). */
function mergeHints(existing: RenderHint[], extra: RenderHint[]): RenderHint[] {
  const keys = new Set(extra.map((h) => h.key));
  return [...existing.filter((h) => !keys.has(h.key)), ...extra];
}
