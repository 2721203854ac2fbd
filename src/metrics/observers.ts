/**
 * What the instrumented code reports, as small interfaces passed in deps (no module
 * singleton: tests build many runtimes in one process, each with its own registry).
 * Every method is synchronous and O(1) (a counter increment, a histogram observation):
 * the create path and the worker never wait on metrics.
 */

/**
 * What became of one authority call, as an operator counts it:
 * - `accepted`: the authority registered the record;
 * - `duplicate`: it had it already (also a success);
 * - `rejected`: it refused the record (an authority code), whether or not the code is retriable;
 * - `retry`: it asked to be called again later (retry_later, flow control);
 * - `sent`: it took the record without judging it yet (SDI, a result to poll);
 * - `error`: no answer (transport fault, timeout) or nothing could be sent (no certificate).
 */
export type SubmissionOutcome = 'accepted' | 'duplicate' | 'rejected' | 'retry' | 'sent' | 'error';

/** `submit`: a record sent alone; `batch`: one request carrying several records; `poll`: a result fetched later. */
export type SubmissionOperation = 'submit' | 'batch' | 'poll';

export interface SubmissionObserver {
  /** One authority call (a batch request is one call) and how long it took. */
  call(system: string, operation: SubmissionOperation, seconds: number): void;
  /** The answer for one record (a batch of n records reports n outcomes). */
  outcome(system: string, operation: SubmissionOperation, outcome: SubmissionOutcome): void;
  /** A transaction moved to `status` (counted once the change is written; see metrics.md). */
  statusChanged(system: string, status: string): void;
}

export interface TransactionObserver {
  /** A transaction (sale, refund, void or cancellation) was stored, with its status at creation. */
  created(t: { country: string; system: string; status: string; environment: string; type: string }): void;
}

/** `succeeded`; `failed` (will be retried); `dead` (the last attempt failed); `cancelled` (webhook deleted or disabled). */
export type WebhookDeliveryOutcome = 'succeeded' | 'failed' | 'dead' | 'cancelled';

export interface WebhookObserver {
  /** One delivery attempt's outcome; `seconds` is the POST's duration when one was made. */
  delivery(outcome: WebhookDeliveryOutcome, seconds?: number): void;
}

export interface RateLimitObserver {
  /** A request refused with 429; `bucket` is the tier (`sandbox`, `starter`, …) or `signup`. */
  rejected(bucket: string): void;
}

export const NO_SUBMISSION_METRICS: SubmissionObserver = { call() {}, outcome() {}, statusChanged() {} };
export const NO_TRANSACTION_METRICS: TransactionObserver = { created() {} };
export const NO_WEBHOOK_METRICS: WebhookObserver = { delivery() {} };
export const NO_RATE_LIMIT_METRICS: RateLimitObserver = { rejected() {} };

/**
 * A recorder of status changes for one job attempt's commit. The runner may run an
 * attempt's commit twice (its group's transaction failed, then alone: jobs/runner.ts), so
 * each change is counted the first time its write succeeds, never twice.
 */
export function statusRecorder(observer: SubmissionObserver, system: string): (row: { id: string; status: string } | null | undefined) => void {
  const seen = new Set<string>();
  return (row) => {
    if (!row) return;
    const key = `${row.id}:${row.status}`;
    if (seen.has(key)) return;
    seen.add(key);
    observer.statusChanged(system, row.status);
  };
}
