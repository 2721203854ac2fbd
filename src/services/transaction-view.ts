import type { FiscalSystem } from '../countries/types.ts';
import type { RenderHint } from '../core/render-hint.ts';
import type { JobRow } from '../store/repos/jobs-repo.ts';
import type { TransactionRow } from '../store/repos/transactions-repo.ts';
import type { EventInput } from './events.ts';
import { longestOfflineGraceSeconds } from './offline-grace.ts';

export const SUBMIT_JOB = 'submit';
/** Fetches the result of a record sent earlier (a system with `poll`): jobs/tasks/submit.ts. */
export const POLL_JOB = 'poll_result';
export const TRANSLATE_JOB = 'translate_error';
/** Sends the record of a correction of an accepted transaction (services/corrections.ts): jobs/tasks/submit-correction.ts. */
export const CORRECTION_JOB = 'submit_correction';
/** Delivers a message the sandbox stub produced through the system's inbound channel: jobs/tasks/inbound-message.ts. */
export const INBOUND_MESSAGE_JOB = 'inbound_message';

/** The Transaction object as the API shows it (the spec's fields, plus a few marked extras). */
export interface TransactionView {
  id: string;
  account_id: string;
  location_id: string;
  idempotency_key: string;
  type: string;
  status: string;
  amount: number;
  currency: string;
  country: string;
  system: string;
  environment: string;
  request_payload: unknown;
  response_payload: Record<string, unknown>;
  fiscal_id: string | null;
  fiscal_id_upstream: string | null;
  error_message: string | null;
  render_hints: RenderHint[];
  cancels_transaction_id: string | null;
  cancellation_transaction_id: string | null;
  deadline_at: Date | null;
  /** Offline (Greece): when its grace window closes, fixed when it first went offline (services/offline-grace.ts). */
  offline_until: Date | null;
  submitted_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function toTransactionView(r: TransactionRow): TransactionView {
  return {
    id: r.id,
    account_id: r.account_id,
    location_id: r.location_id,
    idempotency_key: r.idempotency_key,
    type: r.type,
    status: r.status,
    amount: r.amount,
    currency: r.currency,
    country: r.country,
    system: r.system,
    environment: r.environment,
    request_payload: r.request_payload,
    response_payload: r.response_payload,
    fiscal_id: r.fiscal_id,
    fiscal_id_upstream: r.fiscal_id_upstream,
    error_message: r.error_message,
    render_hints: r.render_hints,
    cancels_transaction_id: r.cancels_id,
    cancellation_transaction_id: r.cancelled_by_id,
    deadline_at: r.deadline_at,
    offline_until: r.offline_until,
    submitted_at: r.submitted_at,
    completed_at: r.completed_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/**
 * Attempts for a submission. Systems with an offline grace window (Greece) retry until
 * the window closes rather than after a count: enough attempts to cover the window at
 * the backoff cap (1 h), plus the ramp-up. The longest window any tier gets: the job is
 * created before the record goes offline, when its window is fixed (services/offline-grace.ts).
 */
export function submitJobMaxAttempts(system: FiscalSystem, configured: number): number {
  const grace = longestOfflineGraceSeconds(system.capabilities);
  return grace ? Math.max(configured, Math.ceil(grace / 3600) + 16) : configured;
}

const summary = (t: TransactionRow) => ({ id: t.id, status: t.status, fiscal_id: t.fiscal_id, type: t.type, amount: t.amount, currency: t.currency });

/**
 * An event about a transaction in the spec's retry-entry shape (`entry_id`, `status`,
 * `attempt`, `max_attempts`, `last_error`, `timestamp`) plus a summary of the transaction.
 * `entry`: the entry status to report, with the job the event is about when there is one
 * (without: entry_id null, attempts 0); no entry: the transaction's own status is reported.
 */
function transactionEventOf(
  type: EventInput['type'], t: TransactionRow, now: Date,
  entry?: { job?: JobRow | undefined; status: string; lastError: string | null },
): EventInput {
  return {
    accountId: t.account_id,
    type,
    data: {
      entry_id: entry?.job?.id ?? null,
      transaction_id: t.id,
      account_id: t.account_id,
      status: entry ? entry.status : t.status,
      attempt: entry?.job?.attempt ?? 0,
      max_attempts: entry?.job?.max_attempts ?? 0,
      last_error: entry?.lastError ?? null,
      timestamp: now.toISOString(),
      transaction: summary(t),
    },
  };
}

/**
 * `fiscalization.completed` (≡ transaction.fiscalized): by a job, or with none behind it (final
 * at creation, accepted by a notification or a batch). Its `status` is the entry's, `completed`,
 * either way: the payload is "retry entry shaped" (spec Events, Delivery), and a
 * transaction's status is no entry's; the transaction's own is in `transaction.status`.
 */
export function completionEvent(t: TransactionRow, now: Date, job?: JobRow): EventInput {
  return transactionEventOf('fiscalization.completed', t, now, { job, status: 'completed', lastError: null });
}

/** An event about a failed or late transaction, same shape. */
export function jobEvent(type: EventInput['type'], t: TransactionRow, job: JobRow, entryStatus: string, lastError: string | null, now: Date): EventInput {
  return transactionEventOf(type, t, now, { job, status: entryStatus, lastError });
}

/**
 * The dead letter of a record a batch sent and the authority refused (no job behind it: a
 * batch is not retried record by record): the retry-entry shape with no entry, `dead`,
 * one attempt of one.
 */
export function batchDeadLetterEvent(t: TransactionRow, lastError: string, now: Date): EventInput {
  const event = transactionEventOf('fiscalization.dead_letter', t, now);
  return { ...event, data: { ...event.data, status: 'dead', attempt: 1, max_attempts: 1, last_error: lastError } };
}

/** An event about a transaction's change that no job caused (an authority's later message), same shape. */
export function transactionEvent(type: EventInput['type'], t: TransactionRow, now: Date): EventInput {
  return transactionEventOf(type, t, now);
}
