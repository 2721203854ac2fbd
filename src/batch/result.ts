/**
 * The spec's Batch result (service-interface.md "Batch result") from a run's tally. Pure.
 *
 * `failure_rate` is "failures over total": failures are the records refused by the
 * authority plus those that could not be delivered in the run; the total adds the
 * accepted ones. A run with nothing to send has a rate of 0.
 */
import type { BatchCounters } from '../store/repos/batch-runs-repo.ts';
import type { BatchError, BatchRequestSummary, BatchTally } from './types.ts';

/** Default alert threshold: more than one record in five not settled as accepted. */
export const DEFAULT_ALERT_THRESHOLD = 0.2;

export interface BatchResult extends BatchCounters {
  processor: string;
  errors_count: number;
  duration_ms: number;
  failure_rate: number;
  alert_triggered: boolean;
  // Beyond the spec's fields: which run, whether the processor finished, what it sent.
  run_id: string;
  status: 'completed' | 'failed';
  registration_numbers: string[];
  errors: BatchError[];
}

export function failureRate(c: Pick<BatchTally, 'accepted' | 'rejected' | 'failed'>): number {
  const failures = c.rejected + c.failed;
  const total = c.accepted + failures;
  return total === 0 ? 0 : failures / total;
}

/** Strictly above the threshold (a rate equal to it is tolerated). */
export const alertTriggered = (rate: number, threshold: number): boolean => rate > threshold;

export function registrationNumbers(requests: readonly BatchRequestSummary[]): string[] {
  return requests.flatMap((r) => (r.registration_number ? [r.registration_number] : []));
}

export function toBatchResult(
  processor: string,
  runId: string,
  tally: BatchTally,
  o: { durationMs: number; threshold: number; status: 'completed' | 'failed' },
): BatchResult {
  const rate = failureRate(tally);
  return {
    processor,
    batches_created: tally.batches_created,
    batches_retried: tally.batches_retried,
    accepted: tally.accepted,
    rejected: tally.rejected,
    failed: tally.failed,
    errors_count: tally.errors.length,
    duration_ms: Math.max(0, Math.round(o.durationMs)),
    failure_rate: rate,
    alert_triggered: alertTriggered(rate, o.threshold),
    run_id: runId,
    status: o.status,
    registration_numbers: registrationNumbers(tally.requests),
    errors: tally.errors,
  };
}
