/**
 * Batch processors (spec "Batch" endpoints, "Batch result"; DECISIONS "Batch"): a
 * processor sends the records that wait for a periodic submission (Bizkaia TicketBAI:
 * LROE, daily at 02:00 UTC) and reports what happened as the spec's Batch result.
 */
import type { Country } from '../core/country.ts';
import type { Queryable } from '../store/db.ts';

/** Whose records a run handles: one account, one environment (the key prefix decides routing). */
export interface BatchScope {
  accountId: string;
  environment: 'test' | 'live';
}

/** A batch-level problem: records held back for the next run, or a configuration error. */
export interface BatchError {
  code: string;
  message: string;
  issuer_tax_id: string | null;
  kind: string | null;
  /** Records the error concerns. */
  records: number;
}

/** One request to the authority (its registration number is what the authority files it under). */
export interface BatchRequestSummary {
  issuer_tax_id: string;
  kind: string;
  year: number | null;
  records: number;
  registration_number: string | null;
  answer: string | null;
}

/**
 * What a run did, counted as it goes (kept when the processor stops on an error).
 * - a batch: the records of one issuer and kind sent together in this run;
 * - batches_retried: batches with records sent back to wait for the next run (transport
 *   fault, the authority asking to retry later, a configuration error);
 * - accepted: records the authority holds (accepted, or already registered);
 * - rejected: records the authority refused (the transaction is `failed`);
 * - failed: records that could not be delivered in this run (back in `pending_batch`).
 */
export interface BatchTally {
  batches_created: number;
  batches_retried: number;
  accepted: number;
  rejected: number;
  failed: number;
  errors: BatchError[];
  requests: BatchRequestSummary[];
}

export interface BatchRunContext {
  runId: string;
  tally: BatchTally;
}

export interface BatchProcessor {
  /** `<country>/<name>`, e.g. `spain/lroe`. */
  readonly name: string;
  /** Keys with country scopes run only the processors of their countries. */
  readonly country: Country;
  /** Five-field cron, UTC (schedule.ts). */
  readonly cron: string;
  /** The scopes with records waiting: the daily run visits only these. */
  scopesWithWork(q: Queryable, now: Date): Promise<BatchScope[]>;
  /** Processes the scope's waiting records, adding to `ctx.tally` as it goes. */
  run(scope: BatchScope, ctx: BatchRunContext): Promise<void>;
}

export const emptyTally = (): BatchTally => ({
  batches_created: 0,
  batches_retried: 0,
  accepted: 0,
  rejected: 0,
  failed: 0,
  errors: [],
  requests: [],
});
