/**
 * Batch processors (spec "Batch" endpoints, "Batch result"; DECISIONS "Batch"): the
 * periodic work a fiscal system contributes (`FiscalSystem.processors`): send the records
 * that wait for a periodic submission (Bizkaia TicketBAI: LROE, daily at 02:00 UTC),
 * close a period (France), export a file (Portugal). Each run reports what happened as
 * the spec's Batch result.
 *
 * Shared code: the plug-ins import these types (through countries/types.ts) and nothing
 * at run time from the rest of src/batch but the pure helpers (verdict.ts, `emptyTally`).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import type { Country } from '../core/country.ts';
import type { AuthorityPacing, SoftwareIdentity } from '../countries/types.ts';
import type { Ledger } from '../ledger/types.ts';
import type { EventPublisher } from '../services/events.ts';
import type { LocationService } from '../services/locations.ts';
import type { SigningKeyService } from '../services/signing-keys.ts';
import type { Db, Queryable } from '../store/db.ts';
import type { TransactionRow } from '../store/repos/transactions-repo.ts';
import type { RecordVerdict } from './verdict.ts';

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
 * What a run did, counted as it goes (kept when the processor stops on an error). In the
 * words of a processor that sends records (the spec's); one that produces records of its
 * own counts them the same way (a closure or an export written: a batch created, its
 * records accepted; one that could not be produced: failed, with its error).
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

/**
 * What the core hands every plug-in to build its processors (`FiscalSystem.processors`),
 * the same for all: the store, time, logs, the core's services and the authority settings.
 * A processor keeps what it needs; nothing here is specific to one system.
 */
export interface ProcessorDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  /** Events (and their webhook deliveries) committed with the caller's database transaction. */
  events: EventPublisher;
  /** The chain ledger: how a processor appends a chained record of its own (France's closures). */
  ledger: Ledger;
  /**
   * Applies one record's verdict to its transaction, in the caller's database transaction
   * (batch/settle.ts: status, fiscal id, completion event, the original of an accepted
   * cancellation, the failure and its translation). A processor that sends records settles
   * them with this; the record must be in an in-batch status (core/status.ts `inBatch`).
   */
  settle(tx: Queryable, item: SettleItem, now: Date): Promise<void>;
  /** Unseals a stored location for the authority (`LocationForFiscal`). */
  locations: Pick<LocationService, 'toFiscal'>;
  /**
   * The location's TLS client certificate for the authority (`forAuthority`), the key a
   * document of the processor's own is sealed with (`forRecord`: Italy's daily
   * corrispettivi), and its record-signing key (`recordKey`: a closure signed like the
   * records it closes, France).
   */
  signingKeys: Pick<SigningKeyService, 'forAuthority' | 'forRecord' | 'recordKey'>;
  /** The authorities' wait-before-sending memory (countries/types.ts `AuthorityPacing`). */
  pacing: AuthorityPacing;
  /** This software's identity, as records name it (a closure is a record too). */
  software: SoftwareIdentity;
  /** Keyed `${system}:${environment}` (runtime option `authorityBaseUrls`; tests: fake authorities). */
  authorityBaseUrls?: Record<string, string> | undefined;
  /** Extra trusted CA certificates (PEM) for the authorities' servers. */
  authorityCa?: string | undefined;
  /** Per authority request; unset: the processor's own default (LROE: 60 s). */
  timeoutMs?: number | undefined;
  /** Age after which records claimed by a run that died are taken again; unset: the processor's default (1 h). */
  claimLeaseMs?: number | undefined;
  /** Records per claim round; unset: the processor's default. */
  claimLimit?: number | undefined;
}

/** One record and what becomes of it (`ProcessorDeps.settle`). */
export interface SettleItem {
  t: TransactionRow;
  verdict: RecordVerdict;
  /** Which run and authority request carried the record (kept in `response_payload.batch`). */
  batch: { processor: string; run_id: string; registration_number: string | null };
}

export interface BatchProcessor {
  /** `<country>/<name>`, e.g. `spain/lroe`, `france/closures`, `portugal/saft`: unique across systems. */
  readonly name: string;
  /** Keys with country scopes run only the processors of their countries. */
  readonly country: Country;
  /**
   * Five-field cron, UTC (schedule.ts): at most daily. A processor with several periods
   * (France: daily, monthly, annual closures) runs daily and decides which are due.
   */
  readonly cron: string;
  /** The scopes with work (records waiting, a period to close): the scheduled run visits only these. */
  scopesWithWork(q: Queryable, now: Date): Promise<BatchScope[]>;
  /**
   * Does the scope's work, adding to `ctx.tally` as it goes. POST /v1/admin/process-pending
   * calls it for the caller's scope whether or not `scopesWithWork` names that scope.
   */
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
