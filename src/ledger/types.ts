/**
 * The ledger's contract: what a caller appends to a chain, and what it gets back.
 *
 * A chain is a sequence of fiscal records under one key (a location's TicketBAI chain,
 * an issuer's VERI*FACTU chain, a French register's sales, its closures, its technical
 * event journal). Each entry is built on the link the previous one left and committed,
 * with the rows, jobs and events it brings, before `append` returns. Whoever appends (an
 * HTTP create, a cancellation, a scheduled closure) says only what the entry is; how it
 * takes its place (locks, guarded statements, batching, caches) is the ledger's business.
 */
import type { ChainLink, PendingLink } from '../core/chain-link.ts';
import type { ChainSigning } from '../signing/chain-signer.ts';
import type { EventInput } from '../core/events.ts';
import type { Queryable } from '../store/db.ts';
import type { EnqueueInput } from '../store/repos/jobs-repo.ts';
import type { FiscalRecordRow } from '../store/repos/fiscal-records-repo.ts';
import type { TransactionRow } from '../store/repos/transactions-repo.ts';

/** An entry to append: which chain, how to build it on the previous link, what else to write. */
export interface LedgerEntry {
  chainKey: string;
  /**
   * The series its document number is taken from, when that is not the chain (VERI*FACTU
   * numbers per series, chains per issuer). The ledger hands `link.number` from a gapless
   * counter of this key.
   */
  numberingKey?: string | undefined;
  /**
   * The idempotency key of the transaction the entry carries: if a stored transaction
   * holds it already (or an earlier entry of the same batch), the entry is not written and
   * the append answers that transaction (`replayed`).
   */
  idempotency?: { accountId: string; environment: string; key: string } | undefined;
  /** Builds the entry on its link, at `now` (the issue time). Pure: the ledger may call it again. */
  build(link: ChainLink, now: Date): BuiltEntry;
  /**
   * Optional: the entry built up to its chained signature, on a link whose previous
   * fingerprint is not known yet (FiscalSystem.prepare). The ledger signs a batch's run
   * of such entries together, off the event loop (signing/chain-signer.ts), and finishes
   * each. Null: this entry is not signed that way; the ledger calls `build`.
   */
  prepare?: ((link: PendingLink, now: Date) => PreparedEntry | null) | undefined;
  /**
   * More writes that must commit with the entry (a cancellation marks its original). An
   * entry with such writes takes the locking path (a database transaction).
   */
  afterWrite?: ((tx: Queryable, built: BuiltEntry, now: Date) => Promise<void>) | undefined;
  /**
   * Its `build` may refuse the entry on what the previous link says (a JET event journaled
   * once, a closure made once per period): it is built only on a head already committed,
   * never on one a batch still in flight predicts. A refusal decided on a prediction would
   * stand if that batch then failed (the event never journaled, or journaled late).
   */
  refusesOnHead?: boolean | undefined;
}

/** An entry up to its chained signature (`LedgerEntry.prepare`). */
export interface PreparedEntry {
  /** Its signing: the message's head, completed by the previous entry's signature text. */
  signing: ChainSigning;
  /** What the next entry is built on, known before the signature. */
  fiscalId: string | null;
  linkData: Record<string, string> | null;
  /** The entry, given its signature text and the previous entry's; its record's fingerprint is the signature text. */
  finish(signature: string, previous: string | null): BuiltEntry;
}

/** The record as its builder gives it; the ledger adds its place (chain key, seq, previous link, time). */
export type EntryRecord = Omit<FiscalRecordRow, 'chain_key' | 'seq' | 'previous_fingerprint' | 'created_at'>;

export interface BuiltEntry {
  record: EntryRecord;
  /** Facts the next record must repeat about this one, beyond the fingerprint (TicketBAI: series, number, date). */
  linkData?: Record<string, string> | null | undefined;
  /** The transaction the record belongs to, written with it (none for closures and journal entries). */
  transaction?: TransactionRow | undefined;
  /** Jobs committed with the entry. `inChainOrder`: runs only after the chain's earlier ones (submissions). */
  jobs?: readonly { input: EnqueueInput; inChainOrder?: boolean }[] | undefined;
  /** Events committed with the entry; their webhook deliveries follow by ordinary fan-out. */
  events?: readonly EventInput[] | undefined;
}

/** What `append` answers. */
export type Appended =
  | {
      created: true;
      built: BuiltEntry;
      /** The entry's place in its chain. */
      seq: number;
      /** The ids of `built.jobs`, in order. */
      jobIds: string[];
      /** Settles once the entry's in-chain-order jobs are runnable (promoted after the commit). */
      ready: Promise<void>;
    }
  | { created: false; replayed: TransactionRow };

/** What `preview` answers: the entry as it would be built now on the chain's committed head. */
export interface Previewed {
  built: BuiltEntry;
  /** The place it would take in its chain. */
  seq: number;
  /** The document number it would take in its series (entries with a `numberingKey`). */
  number: number | undefined;
  /** The fingerprint of the head it was built on (null: the chain's first record). */
  previousFingerprint: string | null;
  /** When that head was written (null: the chain has no record yet). */
  headAt: Date | null;
  /** The issue time it was built at. */
  at: Date;
}

export interface Ledger {
  /** Appends one entry; resolves once it is committed (or replayed). Rejects with the entry's own error. */
  append(entry: LedgerEntry): Promise<Appended>;
  /**
   * Builds the entry exactly as `append` would on the chain's committed head and its
   * series' next number, both read without a lock, and writes nothing: no head moved, no
   * number taken, no row, job or event. A snapshot: an append made meanwhile (or one of
   * this node's still in flight) moves the head under it. Rejects with the entry's own
   * build error, as `append` would.
   */
  preview(entry: LedgerEntry): Promise<Previewed>;
}

/** The event side the ledger needs: event rows to insert, and the job that fans them out. */
export interface LedgerEvents {
  /** The events' rows (ids, time) and the type names subscriptions are matched on. */
  rows(events: readonly EventInput[], now: Date): { rows: { id: string; account_id: string; type: string; data: Record<string, unknown>; created_at: Date }[]; types: string[] };
  /** The job that writes the webhook deliveries of these events (enqueued only when a subscription wants one). */
  fanOutJob(accountId: string, eventIds: readonly string[], now: Date): EnqueueInput;
  /** A fan-out job was committed: wake a worker of this process. */
  enqueued(): void;
}
