/**
 * The plug-in contract shared by every fiscal system (see docs/architecture.md).
 *
 * A fiscal system is a plain object. Its functions are pure except `submit`, which
 * talks to the authority (or the deterministic sandbox stub), and the batch `processors`
 * it may contribute. Plug-ins never read env vars or the clock, nor the database outside
 * their processors: everything arrives in the context objects. Shared
 * code branches on `capabilities`, never on the country.
 */
import type { KeyObject } from 'node:crypto';
import type { BatchProcessor, ProcessorDeps } from '../batch/types.ts';
import type { ChainLink, PendingLink } from '../core/chain-link.ts';
import type { ChainSigning } from '../signing/chain-signer.ts';
import type { EventType } from '../core/events.ts';
import type { StatusContribution } from '../core/status.ts';
import type { Country } from '../core/country.ts';
import type { RenderHint, RenderPlacement } from '../core/render-hint.ts';
import type { SigningKey } from '../core/signing-key.ts';
import type { Signer } from '../signing/signer.ts';
import type { RecordKey, RecordKeyKind } from '../core/record-key.ts';
import type { TransactionStatus } from '../core/status.ts';
import type { LineField, TransactionDraft, TransactionType } from '../core/transaction.ts';
import type { SYSTEMS } from './registry.ts';
import type { RateLimitTier as AccountTier } from '../ratelimit/tiers.ts';
import type { Queryable } from '../store/db.ts';

export type { ChainLink, PreviousLink } from '../core/chain-link.ts';

// Domain types the contract uses, defined in core/ (shared code imports them from there);
// re-exported so the plug-ins keep taking their whole vocabulary from this file.
export type { Country } from '../core/country.ts';
export type { RenderHint, RenderPlacement } from '../core/render-hint.ts';
export type { SigningKey } from '../core/signing-key.ts';
export type { RecordKey, RecordKeyKind } from '../core/record-key.ts';
export type { TransactionStatus } from '../core/status.ts';
export type { LineField, PaymentMethod, TransactionDraft, TransactionType, TxLine } from '../core/transaction.ts';
// The batch side of the contract (`processors`), defined with the batch code that runs it.
export type { BatchError, BatchProcessor, BatchRunContext, BatchScope, BatchTally, ProcessorDeps, SettleItem } from '../batch/types.ts';

/**
 * A registered system's key: the keys of the plug-ins listed in countries/registry.ts
 * `SYSTEMS` (at run time `SYSTEM_KEYS` there). Each plug-in declares its own key as the
 * first type argument of `FiscalSystem`, so this type is the registry's list and nothing
 * else names the systems.
 */
export type SystemKey = (typeof SYSTEMS)[number]['key'];

/**
 * A system's short name: its key without the country (`es-verifactu` → `verifactu`), the
 * name clients give on POST /v1/translations/errors.
 */
export type SystemName = SystemKey extends infer K ? (K extends `${string}-${infer Name}` ? Name : never) : never;
export const systemName = (key: SystemKey): SystemName => key.slice(key.indexOf('-') + 1) as SystemName;

/**
 * How a location in a country served by several systems picks one (Spain: `system`;
 * Italy: `system` or `formato_trasmissione`). The rule lives in the country's shared
 * folder (countries/es, countries/it) and the registry lists it; a country with one
 * system needs none. `route` reads the raw config (an object, or undefined when none was
 * given) and answers the key of one of that country's systems, or throws the country's
 * 400 (ValidationError) when the config selects none. It validates nothing else.
 */
export interface CountryRouting {
  country: Country;
  route(config: Readonly<Record<string, unknown>> | undefined): string;
}

/** What the location service hands a plug-in to validate. */
export interface LocationConfigInput {
  /** The raw `country_config` from the request (may be undefined or any JSON value). */
  config: unknown;
  /** The location's `tax_id`, if given (immutable after creation). */
  taxId: string | null;
  /**
   * On a change (PATCH) and when a stored config is checked again before a transaction, the
   * config the location holds, when it is of this system (secret fields possibly sealed): a
   * value a newer rule refuses in new configs may stay as it is stored (a series its chain
   * key is made of keeps that key, so its chain goes on). Absent on a create.
   */
  stored?: Readonly<Record<string, unknown>> | undefined;
}

/** An earlier sale a new one names as replaced (`SaleReplacement`), as the core read it. */
export interface ReplacedSale {
  transactionId: string;
  /** Its stored draft (the metadata its system validated). */
  tx: TransactionDraft;
  /** Its record's number (`FiscalRecord.documentNumber`); null where it has none. */
  documentNumber: string | null;
  /** When its record was made (ISO instant): its issue time. */
  issuedAt: string;
}

/**
 * How a sale replaces earlier sales of its location (`FiscalSystem.replaces`; Spain: a full
 * invoice, F3, in place of simplified ones, RD 1619/2012). The core (services/replacements.ts)
 * reads each transaction `named` gives: of the caller's account (else the 404 of an unknown
 * id: another account's is never told apart), of the same location and environment, a sale
 * neither refused by its authority nor cancelled or being cancelled; then asks `refusal`.
 * Under the append's lock it registers that the new sale replaces each (chain_documents,
 * role `replaced`): a sale is replaced once while its replacement stands (409).
 */
export interface SaleReplacement {
  /** The metadata field that names them, for the core's messages (`replaces_simplified`). */
  field: string;
  /** The ids the request names, as `validateTransaction` checked them (the stored metadata); [] for none. */
  named(tx: TransactionDraft): string[];
  /** Why this sale cannot be replaced (a 400's message), or null. Pure. */
  refusal(sale: ReplacedSale): string | null;
  /** The metadata to store once the sales are read, in the order named: what the record names of each. Pure. */
  resolve(tx: TransactionDraft, sales: ReplacedSale[]): Record<string, unknown>;
  /** The 409's message when `transactionId` is replaced already by a sale that stands. */
  alreadyReplaced(transactionId: string): string;
  /**
   * The sale a refund or void names as the one it corrects (by its number: a correction
   * names no transaction id), in the terms a replacement names the sales it replaces; null
   * when it names none. `ref`: what a replacement registers for each sale it replaces
   * (`replacedRefs`) and what the core looks up and locks; `matches`: whether a stored
   * replacement registered under `ref` replaces that very sale (a ref may be shared by
   * sales the correction tells apart). While a replacement that stands replaces it, the
   * correction is refused (409): it corrects the replacement instead. Pure.
   */
  corrected(tx: TransactionDraft): { ref: string; matches(replacement: TransactionDraft): boolean } | null;
  /** The refs (`corrected`) of the sales a stored replacement replaces, each once; [] for a sale replacing none. Pure. */
  replacedRefs(tx: TransactionDraft): string[];
  /** How the 409 of `corrected` names the replacement to correct instead, as a correction would name it (its number and date). Pure. */
  describe(replacement: ReplacedSale): string;
  /**
   * Where the refs (`corrected`, `replacedRefs`) of `location`'s sales are unique: its
   * issuer's numbers (every location of the account issuing under the same tax id and, where
   * the system numbers apart, territory). A correction issued at any location of that scope
   * may name a sale another one issued, so the core registers and looks refs up there (per
   * environment). Pure.
   */
  scope(location: LocationForFiscal): string;
  /**
   * The reverse of `corrected`: the 409's message when `correction` (a stored refund or
   * void, registered under one of `replacedRefs(replacement)`) corrects one of the sales
   * `replacement` replaces; null when it corrects none of them. While that correction stands
   * (not refused by its authority, not cancelled) the sale's amount is corrected already and
   * cannot be invoiced again in full by a replacement. Pure.
   */
  correctedAlready(replacement: TransactionDraft, correction: ReplacedSale): string | null;
}

/**
 * The sale a refund or void corrects, found by the number it was issued under
 * (`FiscalSystem.correctedSale`), as the core read it: the same facts as a replaced sale,
 * and, when the lookup is `cumulative`, the corrections that stand against it already.
 */
export interface CorrectedSale extends ReplacedSale {
  /** The sale was cancelled (POST …/cancel; its status `cancelled`): a system may refuse to correct it again. */
  cancelled?: boolean | undefined;
  /**
   * The earlier refunds and voids registered against this sale (`CorrectedSaleLookup.
   * cumulative`) that stand: not refused by their authority, not cancelled. Read only for a
   * cumulative lookup (absent otherwise); oldest first.
   */
  corrections?: ReplacedSale[] | undefined;
}

/** A place in one of the location's chains (its key as `FiscalSystem.chainKey` gives it, and the record's sequence there). */
export interface ChainPosition {
  chainKey: string;
  seq: number;
}

/**
 * How a refund or void finds the sale it corrects when its request names that sale only by
 * the number the sale was issued under (`issuedDocument`), not by id (`FiscalSystem.
 * correctedSale`): the correction may then take the form the sale's document asks for. The
 * core (services/corrected-sales.ts) reads the transactions registered as issued under
 * `named`'s documents (or its `alias`) in its scope (the register of `issuedDocument`, per
 * environment): the scope is where the system's numbers are unique, the issuer (all of its
 * locations), so a sale registered there by any location of the account is a candidate; and
 * the records at `named`'s `positions` (a number that is a place in the location's chain).
 * It keeps those of the caller's account (another account's reads as none: never told apart
 * from a number never issued) and environment, not refused by their authority, and hands
 * them to `resolve` ([] when none: `resolve` may refuse a number that names no sale). Runs
 * after `validateTransaction`.
 */
export interface CorrectedSaleLookup {
  /**
   * The documents, in `issuedDocument`'s form and scope, that may be the sale the request
   * names, and/or the `alias` (`IssuedDocument.alias`) they were registered with (when the
   * request names less than a document: every sale registered with that alias is read);
   * null when it names none, or the request already decided what the lookup would.
   * `request`: the draft as the client sent it (before `validateTransaction`), to tell a
   * value the client chose from a default. Pure.
   */
  named(input: { tx: TransactionDraft; request: TransactionDraft; location: LocationForFiscal }): {
    scope: string;
    documents: string[];
    alias?: string | undefined;
    /**
     * For a system that numbers its documents by their place in a chain (the number is the
     * record's sequence): the places the named sale would be at, in the caller's location's
     * chains (per environment, as the core keys chains). The record there is a candidate as
     * a registered document is.
     */
    positions?: ChainPosition[] | undefined;
  } | null;
  /** The metadata to store given the sales found. Throws ValidationError as `validateTransaction` does. Pure. */
  resolve(input: { tx: TransactionDraft; request: TransactionDraft; ctx: TransactionContext }, sales: CorrectedSale[]): Record<string, unknown>;
  /**
   * Optional: each correction counts against the sale it corrects (what a sale may still be
   * credited is what earlier corrections left of it). The core then hands `resolve` each
   * sale's standing corrections (`CorrectedSale.corrections`), registers the correction
   * against the sales found, and asks `resolve` again in the append's transaction under
   * those sales' locks: two corrections of one sale made at once are weighed one after the
   * other.
   */
  cumulative?: boolean | undefined;
  /**
   * Optional: a sale may name a document too (a document that adds to an earlier one, e.g.
   * a debit note): the core then asks `named` and `resolve` for sales as well (absent: only
   * for refunds and voids). A sale never counts against what it names (`corrections` holds
   * refunds and voids only); with `cumulative` it is registered against it all the same,
   * asked again under its lock, and while it stands the document cannot be cancelled, as
   * while corrections stand.
   */
  sales?: boolean | undefined;
}

/**
 * How a system corrects a record its authority accepted (`FiscalSystem.correct`), e.g. a
 * record answered "accepted with errors": a second record of the same document (the same
 * number, date, type and amounts) carrying what the first got wrong. The core
 * (services/corrections.ts) lets a request change only the transaction's `customer_context`
 * and the metadata fields named here: anything else (amounts, lines, dates, the number)
 * needs a refund or a cancellation. It appends the record through the ledger (joining the
 * transaction's chain when the system is `chained`, else a side sequence) and the submit
 * worker sends it; the transaction keeps its record, number and status.
 */
export interface RecordCorrection {
  /** The metadata fields a correction may change (besides `customer_context`), e.g. `description`. */
  metadataFields: readonly string[];
  /**
   * Validates the corrected draft (`tx`: the transaction's stored draft with the request's
   * changes; `ctx.now`: the original's issue time, the time the document speaks of) and
   * returns the metadata to store, as `validateTransaction` does. `original`: the draft the
   * correction starts from (the last accepted one). Throws ValidationError (400) with a clear
   * message for a change the document cannot take. Pure.
   */
  validate(tx: TransactionDraft, original: TransactionDraft, ctx: TransactionContext): Record<string, unknown>;
  /** Builds the correction's record. Pure. */
  build(input: CorrectionBuildInput): FiscalRecord;
}

/** What `RecordCorrection.build` is given: `BuildInput` with the record it corrects. */
export interface CorrectionBuildInput extends Omit<BuildInput, 'kind' | 'original' | 'earlierIssues'> {
  /** The corrected draft (`RecordCorrection.validate`'s metadata stored). */
  tx: TransactionDraft;
  /** The record being corrected: the transaction's own record, as stored. */
  original: {
    transactionId: string;
    /** Its `FiscalRecord.documentNumber`. */
    documentNumber: string | null;
    /** When it was made (ISO instant): the document's issue time. */
    issuedAt: string;
    fiscalId: string | null;
    upstreamId: string | null;
    /** Its body as stored. */
    body: string;
  };
  /**
   * An earlier correction of this record was refused by the authority (or ran out of
   * retries), none accepted since: VERI*FACTU marks the next one RechazoPrevio S.
   */
  earlierRefused: boolean;
}

/** A number a request chose, as `FiscalSystem.issuedDocument` names it. */
export interface IssuedDocument {
  document: string;
  message: string;
  scope?: string | undefined;
  counter?: { numberingKey: string; number: number } | undefined;
  /**
   * A shorter name registered with the document, not unique (the number without what makes
   * it unique, e.g. its year): what a correction naming the sale by less than the document
   * looks up (`CorrectedSaleLookup.named` `alias`, an indexed read). Absent: none.
   */
  alias?: string | undefined;
}

/**
 * A fiscal system's plug-in. `Key` and `C` are its own key and country, as literal types
 * (`FiscalSystem<'es-verifactu', 'ES'>`), from which the registry derives `SystemKey` and
 * `Country`; shared code uses the plain `FiscalSystem` (any registered system).
 */
export interface FiscalSystem<Key extends string = SystemKey, C extends string = Country> {
  key: Key;
  country: C;
  /** Semantic version of this adapter's record format (reported in telemetry and records). */
  version: string;
  capabilities: Capabilities;
  /**
   * Validates a location's `country_config` and returns the normalized config to
   * store. Throws `ValidationError` with the spec's exact message on bad input.
   * Pure: no I/O, no clock, no env.
   */
  validateConfig(input: LocationConfigInput): Record<string, unknown>;
  /**
   * Config fields that are secrets: the location service seals them at rest with
   * MASTER_KEY and masks them when a location is read (e.g. Greek `subscription_key`).
   */
  secretConfigFields: readonly string[];
  /**
   * Config fields that name one of the account's uploaded certificates (POST
   * /v1/certificates) by its `certificate_id`, in order of preference: the location's
   * `cert_expiry` follows the first one set, a certificate's upload and deletion update the
   * locations that name it, and a location whose certificate belongs to another tax id is
   * warned (e.g. Spain `certificate_id`). Empty when the system uses none.
   */
  certificateFields: readonly string[];
  /**
   * Optional: config fields that name where the location's records went, fixed once it has
   * transactions (a PATCH changing one is a 400): a later cancel is sent where its
   * original was (TicketBAI `territory`: the Diputación that holds the invoices). The
   * system itself is always fixed then (services/locations.ts).
   */
  sealedConfigFields?: readonly string[];
  /**
   * Optional: fields this system adds to each line of the transaction request, read at the
   * edge as declared (`LineField`) and stored on the line under their names; the system
   * validates their values in `validateTransaction`. The request accepts the fields of
   * every registered system, whatever the location's.
   */
  lineFields?: readonly LineField[] | undefined;

  /**
   * Validates the transaction against this system's rules and returns the metadata to
   * store, with the system's defaults applied (e.g. Italy SDI `codice_destinatario`
   * `0000000`, SII `regime_key` `01`). Throws ValidationError with the spec's message.
   */
  validateTransaction(tx: TransactionDraft, ctx: TransactionContext): Record<string, unknown>;

  /**
   * Which chain a record joins (records of one chain are numbered and linked in order).
   * Live records join the `:live` twin of this key (shared/chain-key.ts `inEnvironment`).
   */
  chainKey(input: { location: LocationForFiscal; tx: TransactionDraft }): string;

  /**
   * Optional: the series a new document is numbered in, when that is not its chain
   * (VERI*FACTU chains per issuer across series, numbers per series). The core then
   * passes `chain.number` from a gapless counter of that key. Undefined: this document
   * takes no number from a counter (its request chose its number, `issuedDocument`): a
   * number taken and not used would leave a gap in the series.
   */
  numberingKey?(input: { location: LocationForFiscal; tx: TransactionDraft }): string | undefined;

  /** Status right after the record is built and stored (before any submission). */
  initialStatus(location: LocationForFiscal): 'pending' | 'success' | 'pending_batch';

  /** Builds the fiscal record (or, for kind `cancellation`, the annulment record). Pure. */
  build(input: BuildInput): FiscalRecord;
  /**
   * Optional: the document of the chain this record annuls, when the system can tell (Italy
   * DC: a cancellation's original, or a document of the register named by the request's
   * annulment metadata): a document is annulled once, whichever way. The core refuses a
   * second record of the chain naming the same `document` while an earlier one stands (is
   * not refused by the authority) with 409 `message`. Pure; null: it annuls nothing the
   * system can name. Given the input `build` gets, without the chain link.
   */
  annulledDocument?(input: Omit<BuildInput, 'chain' | 'now' | 'software' | 'signingKey' | 'recordKey'>): { document: string; message: string } | null;
  /**
   * Optional: the number a new document is issued under when the request chose it (a
   * client's own invoice number), in the form that identifies it in its chain (series and
   * number; with the year where numbering restarts yearly). The core refuses a second record
   * of the chain issued under the same `document` while an earlier one stands (is not
   * refused by the authority) with 409 `message`: an authority that already holds the number
   * answers "duplicate", which reads as accepted, and the second sale would never be
   * registered. Null: the system numbers the document itself. Pure.
   *
   * `scope`: where the number must be unique when that is wider than the chain (an issuer
   * whose locations chain apart, SII and SDI: the authority keys duplicates by issuer); the
   * core keeps it per environment as it does chains, and serializes the appends of one
   * scope's chains on the document (two locations writing the same number at once).
   *
   * `counter`: where a numbering series' counter (`numberingKey`, as that function gives
   * it for the series) would give this very document, as its `number` (the number the
   * counter writes as `String(number)`): the counter skips it when it gets there, and a
   * number the counter gave already is refused with `message`. Absent: no counter writes
   * this document (a number not in the counter's form).
   */
  issuedDocument?(input: { tx: TransactionDraft; location: LocationForFiscal }): IssuedDocument | null;
  /**
   * Optional: a sale may replace earlier sales of its location (Spain: a full invoice, F3,
   * issued in place of simplified ones: `SaleReplacement`). Absent: a sale replaces nothing.
   */
  replaces?: SaleReplacement | undefined;
  /**
   * Optional: a refund or void may find the sale it corrects by the number the request names
   * (`CorrectedSaleLookup`). Absent: a correction is built from its request alone.
   */
  correctedSale?: CorrectedSaleLookup | undefined;
  /**
   * Optional: a record the authority accepted may be corrected, without a rectifying
   * document, by a second record of the same document (POST /v1/transactions/{id}/correct:
   * VERI*FACTU's subsanación, SII's A1). Absent: the system corrects no accepted record (409).
   */
  correct?: RecordCorrection | undefined;
  /**
   * Optional, for systems whose record signs the previous record's signature at the very
   * end of its signed message (NF525, SAF-T PT): the record built up to that signature,
   * without the previous record's fingerprint (`PrepareInput`). The ledger then signs a
   * batch's run of such records together off the event loop (signing/chain-signer.ts)
   * and completes each with `finish`. Null: this record is not signed that way (a SAF-T
   * annulment): the ledger calls `build`. What `finish` gives must equal what `build`
   * gives for the same input and signature (`buildPrepared` builds one from the other).
   */
  prepare?(input: PrepareInput): PreparedRecord | null;
  /**
   * The system's QR code as a PNG, drawn with the symbol parameters its law fixes (error
   * correction, minimum version, quiet zone), from the value of its `hintKey` render hint:
   * served at GET /v1/transactions/{id}/qr.png, on demand (not at creation: see the
   * `image_url` render hint kind).
   */
  qrImage?: { hintKey: string; png(content: string): Buffer } | undefined;

  /**
   * Optional: what the rendered receipt (GET /v1/transactions/{id}/receipt, src/receipts)
   * needs to know of this system beyond its render hints: its language, the document's
   * title, how each hint is introduced, the QR symbols' parameters. Country text lives
   * here; the shared renderer reads it (`ReceiptFacts`). Absent: English only, hints
   * printed as they are, QR at level M.
   */
  receipt?: ReceiptFacts | undefined;

  /**
   * Optional: the legal submission deadline of a record created at `createdAt`, when it is
   * not `submissionWindowDays` calendar days (SII: 4 days without Saturdays, Sundays and
   * national holidays, counted from the invoice's issue date, which metadata may set
   * earlier than the creation). Pure.
   */
  submissionDeadline?(input: { createdAt: Date; tx: TransactionDraft }): Date;

  /**
   * Sends a stored record to the authority. Authority answers are values; only transport
   * faults (timeouts, connection errors, 5xx without a parsable answer) throw
   * `TransportError`. In `stub` mode the deterministic sandbox answers instead.
   */
  submit(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome>;

  /**
   * Optional, with `capabilities.cancellationAwaitsOriginal`: the body a cancellation's
   * record is sent with now that its original is accepted (`record.original`), when the
   * record can now say what it could not when it was issued (myDATA: a reversing 11.4 names
   * the original's MARK in `correlatedInvoices` instead of "correlation difficulty"); the
   * document keeps its number, type and fingerprint. Undefined: sent as stored. The core
   * stores the body as the record (GET …/fiscal-record is what is sent) before sending it,
   * only while the cancellation has never been sent. Pure; given the same record again
   * (already completed), undefined.
   */
  completeCancellation?(record: StoredRecord & { original: OriginalOfCancellation }): string | undefined;

  /**
   * Optional: sends several stored records of ONE chain in one request, in the order given
   * (chain order), when the authority takes them together (VERI*FACTU: up to 1,000
   * `RegistroFactura` per `RegFactuSistemaFacturacion`, SuministroLR.xsd maxOccurs 1000,
   * FORMATS.md §2.5). Without it a busy issuer sends one record per flow-control wait
   * (`TiempoEsperaEnvio`, 60 s as AEAT usually answers). The core calls it only with
   * records of one ordered queue (one chain, so one issuer: one request header fits all),
   * of one environment and sandbox mode, never more than `maxRecordsPerRequest`; `ctx` is
   * the first record's (its location's certificate authenticates the request).
   *
   * The answer is either one outcome per record, in the order given (each matched to its
   * record by the authority's own identifier, never by position), or one outcome for the
   * request as a whole when the authority decided nothing per record (flow control, a
   * rate limit, a SOAP Fault): see `BatchOutcome`. A transport fault of the request (no
   * answer at all) throws `TransportError`, as `submit` does. In `stub` mode the
   * deterministic sandbox answers each record as `submit` would.
   */
  submitMany?(records: StoredRecord[], ctx: SubmitContext): Promise<BatchOutcome>;

  /**
   * Authority error codes: English text, category, retriable; those with a `translation`
   * are the static catalog of POST /v1/translations/errors when the system has
   * `errorTranslations`.
   */
  codes: Readonly<Record<string, AuthorityCode>>;

  /**
   * Optional: fetches the result of a record the authority took without judging it yet
   * (`submit` answered `sent` with `pollAfterSeconds`; Italy Documento Commerciale). The
   * core runs it from a `poll_result` job of its own, again after `pollAfterSeconds` while
   * it answers `sent` (not ready), until the job's attempts run out. Answers as `submit`.
   */
  poll?(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome>;

  /**
   * Optional: messages the authority sends us later about records it holds (Italy SDI
   * notifications), received at `POST /v1/inbound/<channel name>` (services/inbound.ts).
   */
  inbound?: InboundChannel | undefined;

  /**
   * Optional: the periodic work this system contributes (spec "Batch": the registered
   * processors): sending the records that wait for a batch (TicketBAI `spain/lroe`, Bizkaia's
   * `pending_batch` records through the Batuz LROE), closing a period through the ledger
   * (France), exporting a file (Portugal). Called once per runtime with the deps the core
   * hands every plug-in (src/batch/types.ts `ProcessorDeps`); src/batch runs the processors
   * on their cron and on POST /v1/admin/process-pending, and keeps their results. Unlike
   * the rest of the contract a processor does I/O: it reads and writes the store (through
   * store/repos and the deps), never env vars or its own clock. Names are unique across
   * systems.
   */
  processors?: ((deps: ProcessorDeps) => BatchProcessor[]) | undefined;

  /**
   * Optional: the files an inspector may ask for about one location (DECISIONS "Files an
   * inspector asks for"): Italy's daily `corrispettivi`, later France's closures and
   * Portugal's SAF-T. Each is served at `GET /v1/locations/{id}/<path>?<param>=` (one generic
   * route for every system: src/http/routes/v1/location-files.ts), account-scoped, with
   * permission `locations:read`.
   */
  locationFiles?: readonly LocationFile[] | undefined;

  /**
   * Optional: called once per process, location and environment, after the first record
   * this process signed for that location is committed (France: the JET journals the
   * software's start). Its failure is logged, never the transaction's: the record is
   * committed already.
   */
  afterFirstRecord?: ((deps: FirstRecordDeps, input: { location: LocationForFiscal; environment: 'test' | 'live'; recordKey: RecordKey | undefined }) => Promise<void>) | undefined;

  /**
   * Optional: the process stops cleanly (SIGINT/SIGTERM on `serve`, the local host's close),
   * once for each location and environment `afterFirstRecord` was called for in this process,
   * after the API stopped taking requests and before the store closes (France: the JET
   * journals the software's stop, the counterpart of its start). Its failure is logged. A
   * process that dies runs nothing: a start with no stop before it is the trace of that.
   */
  beforeProcessStop?: ((deps: FirstRecordDeps, input: { location: LocationForFiscal; environment: 'test' | 'live'; recordKey: RecordKey | undefined }) => Promise<void>) | undefined;

  /**
   * Optional: a change to one of this system's locations that the system's own journal must
   * trace (France: the JET records parameter changes, BOI-TVA-DECLA-30-10-30). The locations
   * service calls it once the request is validated (a refused PATCH never gets here), for a
   * PATCH that changes `country_config` fields or the status, and for a DELETE. The hook
   * commits the change: it calls `commit` once, with the database transaction its own
   * writes use, so the change and what it journals commit together or not at all (no
   * change without its trace, no trace of a change that did not happen), and resolves once
   * committed. `commit` throws (404: the location is gone meanwhile) to roll both back; the
   * hook may call it again only after such a rollback (a retried transaction). Secret
   * fields (`secretConfigFields`) are named, never valued (`LocationChange`). Without the
   * hook the service commits the change itself.
   */
  onLocationChanged?: ((deps: LocationChangeDeps, change: LocationChange, commit: (q: Queryable) => Promise<void>) => Promise<void>) | undefined;

  /**
   * Optional: the event names this system announces beyond the core's (core/events.ts), in
   * the spec's vocabulary: webhooks may subscribe to them (countries/registry.ts `EVENT_TYPES`).
   */
  events?: readonly string[] | undefined;

  /**
   * Optional: other names the spec gives some of those events, each → the event it names
   * (Greece: the spec's "a webhook on `failed_offline_grace_expired`" names the status, our
   * event is `transaction.failed_offline_grace_expired`). A webhook may subscribe under
   * either name; like the core's two vocabularies (core/events.ts), a subscription that
   * asked for one gets the event under that name.
   */
  eventAliases?: Readonly<Record<string, string>> | undefined;

  /** Optional: the statuses this system adds to the core's, with their transitions (core/status.ts). */
  statuses?: StatusContribution | undefined;

  /**
   * Optional: what becomes of a record whose submission cannot reach the authority within
   * `capabilities.offlineGraceSeconds` of its creation (Greece): instead of `failed`, it
   * takes `status` with `label` on its receipt and is retried until the window closes,
   * then takes `expiredStatus`; a late success fires `lateEvent`.
   */
  offline?: OfflineFallback | undefined;

  /**
   * POST /v1/translations/errors serves this system: clients name it by `systemName`
   * (`verifactu`), its country is accepted, and its codes' translations are the static
   * catalog (src/translations/catalog.ts). The spec serves Spain, Italy and France only.
   */
  errorTranslations?: boolean | undefined;

  /**
   * Optional: checks one stored record of a chain the way an auditor would, from the
   * record alone, its predecessor and public keys (the operator's `verify-chain`,
   * src/cli/verify-chain.ts): the fingerprint recomputed from the body, the signature
   * verified, the link the body carries to the previous record. The shared verifier has
   * checked the sequence and the stored link columns already. Null when sound, else the
   * first fault. Pure: no I/O, no clock.
   */
  verifyRecord?: ((input: VerifyRecordInput) => RecordFault | null) | undefined;
}

/** A stored record of a chain, as `verifyRecord` sees it. */
export interface ChainedRecord {
  chainKey: string;
  seq: number;
  kind: 'record' | 'cancellation' | 'closure' | 'journal' | 'correction';
  transactionId: string | null;
  body: string;
  contentType: string;
  /** The stored fingerprint (what the next record links to). */
  fingerprint: string | null;
  /** The stored link to the previous record. */
  previousFingerprint: string | null;
  fiscalId: string | null;
  documentNumber: string | null;
}

export interface VerifyRecordInput {
  record: ChainedRecord;
  /** The record before it in its chain; null for the first. */
  previous: ChainedRecord | null;
  location: LocationForFiscal;
  environment: 'test' | 'live';
  software: SoftwareIdentity;
  /** The public key of the location's record key, when the system declares `capabilities.recordKey` and one exists. */
  recordPublicKey?: KeyObject | undefined;
  /** The key the location's records are signed with when it names an uploaded certificate (its public part is what verifies). */
  signingKey?: SigningKey | undefined;
}

/**
 * What broke (verify-chain's vocabulary): `body_changed`, the body no longer gives the
 * stored fingerprint; `link_broken`, the record does not name its predecessor;
 * `signature_invalid`, the signature does not verify; `seq_gap`, a number is missing or
 * out of order (found by the shared verifier).
 */
export type RecordFaultKind = 'body_changed' | 'link_broken' | 'signature_invalid' | 'seq_gap';

export interface RecordFault {
  kind: RecordFaultKind;
  /** One line for the operator. */
  reason: string;
}

/**
 * A file about one location that a system produces on request (`FiscalSystem.locationFiles`).
 * The core checks the caller, the location (the caller's account, not deleted, of this
 * system) and the parameter's form before calling `produce`.
 */
export interface LocationFile {
  /**
   * The path segment after `/v1/locations/{id}/`, e.g. `corrispettivi`. Systems may share a
   * path (a location has one system: its own file answers); a path one system has not is a 404.
   */
  path: string;
  /**
   * The query parameter that selects the file: `date` (YYYY-MM-DD, a real calendar date) or
   * `month` (YYYY-MM), required (a missing or malformed one is a 400 naming the form); or
   * `page`: the file is a paged list (JSON), with the optional `limit` (1-100, default 20)
   * and `offset` (0-10000, default 0) of the spec's other lists, handed to `produce` as `page`.
   */
  param: { name: string; kind: 'date' | 'month' } | { kind: 'page' };
  /** The response's content type, e.g. `application/xml; charset=utf-8`. */
  contentType: string;
  /** One line for the API reference. */
  summary: string;
  /**
   * The file. Throws `ApiError` (e.g. a 404 when there is nothing for that value). May read
   * the store and sign with the location's key (deps); never the clock but `deps.clock`.
   */
  produce(deps: LocationFileDeps, input: LocationFileInput): Promise<LocationFileBody>;
  /**
   * One item of a listed file, downloaded by its id: `GET /v1/locations/{id}/<path>/{<idName>}`
   * (e.g. France's `archives/{archive_id}`). `produce` throws a 404 `ApiError` for an
   * unknown id; the body may be binary, with its own headers (`Content-Disposition`).
   */
  item?: LocationFileItem | undefined;
}

/** A listed file's item, downloaded by its id (`LocationFile.item`). */
export interface LocationFileItem {
  /** The path parameter's name, e.g. `archive_id` (`/v1/locations/{id}/archives/{archive_id}`); systems sharing a path share it. */
  idName: string;
  /** The item's content type, e.g. `application/json` (headers may refine it per item). */
  contentType: string;
  /** One line for the API reference. */
  summary: string;
  produce(deps: LocationFileDeps, input: LocationFileInput & { itemId: string }): Promise<LocationFileBody>;
}

/** What `LocationFile.produce` is asked for. */
export interface LocationFileInput {
  location: LocationForFiscal;
  /** The `date`/`month` parameter's value; empty for a paged list. */
  value: string;
  /** A paged list's page (`param.kind` `page`). */
  page?: { limit: number; offset: number } | undefined;
  environment: 'test' | 'live';
}

/** What `LocationFile.produce` answers: the body, and headers of its own (e.g. a status). */
export interface LocationFileBody {
  body: string | Buffer;
  headers?: Record<string, string> | undefined;
}

/** What the core hands `afterFirstRecord` and `beforeProcessStop`: a subset of the processors' deps. */
export type FirstRecordDeps = Pick<ProcessorDeps, 'db' | 'clock' | 'log' | 'ledger' | 'software'>;

/** What the core hands `onLocationChanged`: a subset of the processors' deps. */
export type LocationChangeDeps = Pick<ProcessorDeps, 'db' | 'clock' | 'log' | 'ledger' | 'signingKeys' | 'software'>;

/** A config field a location change touches: its values, unless the field is a secret. */
export interface LocationConfigChange {
  field: string;
  /** The field is one of the system's `secretConfigFields`: `before` and `after` are never given. */
  secret: boolean;
  /** The stored value before (undefined: not set, or secret). */
  before?: unknown;
  /** The value after (undefined: removed, or secret). */
  after?: unknown;
}

/** What `onLocationChanged` is told (the locations service, after validation). */
export type LocationChange =
  | {
      kind: 'updated';
      /** The location as it will be once committed (secrets unsealed: never journal them). */
      location: LocationForFiscal;
      /** `country_config` fields whose stored value changes, in field order; empty when none. */
      config: readonly LocationConfigChange[];
      /**
       * The location's own fields that change and that its documents print (`name`,
       * `address`; `field` is the field's name, never secret); empty when none. Optional:
       * absent is none.
       */
      fields?: readonly LocationConfigChange[] | undefined;
      /** The status change, when the status changes. */
      status?: { before: 'active' | 'inactive'; after: 'active' | 'inactive' } | undefined;
      /** The environment of the API key that asked. */
      environment: 'test' | 'live';
    }
  | {
      kind: 'deleted';
      /** The location being deleted (its records stay: a deletion is soft). */
      location: LocationForFiscal;
      /** Its status when deleted. */
      status: 'active' | 'inactive';
      environment: 'test' | 'live';
    };

/** What the core hands `LocationFile.produce`: a subset of the processors' deps. */
export type LocationFileDeps = Pick<ProcessorDeps, 'db' | 'clock' | 'log' | 'signingKeys' | 'software'> & {
  /** The chain ledger: a file read may be journaled (France's JET records an export). */
  ledger?: ProcessorDeps['ledger'] | undefined;
};

/** An inbound channel: where an authority's later messages arrive, and how to read them. */
export interface InboundChannel {
  /** The path segment of `POST /v1/inbound/<name>` (DECISIONS "Italy SDI inbound receiver": `sdi`). */
  name: string;
  /**
   * The header that carries the channel's shared secret (DECISIONS: `X-SDI-Secret`); the
   * secret itself is the setting `<NAME>_INBOUND_SECRET` (config.ts).
   */
  secretHeader: string;
  /**
   * Reads one message: which record it is about, and what happened. Pure. Throws
   * `ValidationError` (a 400 with its message) on a message it cannot read, or whose
   * signature does not verify.
   */
  read(message: InboundRead): InboundMessage;
}

/** A message handed to a channel's `read`. */
export interface InboundRead {
  body: string;
  contentType: string | undefined;
  /**
   * `posted`: received at `POST /v1/inbound/<name>` (a signature on it is verified);
   * `internal`: made inside the service (the sandbox stub's notifications), not verified.
   * Absent: `posted`.
   */
  origin?: 'posted' | 'internal' | undefined;
  /**
   * The certificates (PEM) the channel's signed messages must chain to
   * (`<NAME>_NOTIFICATION_CA_FILE`, config.ts); when set, an unsigned posted message is refused.
   */
  trustedCa?: string | undefined;
  /** When the message is read (certificate validity). */
  now?: Date | undefined;
}

export interface InboundMessage {
  /**
   * How to find the record, among records sent to the authority only (a submission was
   * attempted; a posted message: records sent to the real authority, an internal one: the
   * stub's): the id the authority gave it (`fiscal_id_upstream`), else its fiscal id while
   * the authority may still move it (pending, or its attempt's answer unknown or failed).
   * When both are given and the id finds a record of another fiscal id, the message is
   * refused (409). `history` (a field name, e.g. `IdentificativoSdI`): also a record with
   * this fiscal id, in any status, preferring one that once carried `upstreamId` under that
   * name (in its `response_payload.authority` answer or a recorded notification): for
   * messages about another copy of the record only.
   */
  match: { upstreamId?: string | undefined; fiscalId?: string | undefined; history?: string | undefined };
  /**
   * The transaction's next status: one the status machine lets the `authority` reach from
   * its current one. Undefined: the message changes no status (it is still recorded).
   */
  status?: TransactionStatus | undefined;
  /** The authority's id of the record, when the message is the first to give it. */
  upstreamId?: string | undefined;
  /** What the authority said, kept in `response_payload.notifications`. */
  response: Record<string, unknown>;
  /** The event announcing the change (DECISIONS: `transaction.sdi_status_changed`). */
  event?: EventType | undefined;
  /**
   * The authority refused the record (Italy SDI: an NS): its first error's code and our
   * text of it. The core records it as a failed submission's error (`submit_error`, the
   * translated `error_message`) and announces the dead letter, as for a refused submission.
   */
  failure?: { code: string; message: string } | undefined;
  /**
   * When the effect depends on the record found (its status and stored answers): the
   * status, event and failure to apply, in place of `status`, `event` and `failure`. Pure.
   */
  resolve?: ((found: { status: TransactionStatus; response_payload: Record<string, unknown> }) => {
    status?: TransactionStatus | undefined; event?: EventType | undefined; failure?: { code: string; message: string } | undefined;
  }) | undefined;
}

export interface OfflineFallback {
  status: string;
  expiredStatus: string;
  label: RenderHint;
  lateEvent: EventType;
  expiredEvent: EventType;
}

export interface Capabilities {
  /** The record is signed (or sealed) by us before it leaves. */
  signsLocally: boolean;
  /** Records are linked to the previous one of their chain (hash chain). */
  chained: boolean;
  /**
   * realtime: each record is submitted after creation; batch: records wait for a batch
   * processor (Bizkaia LROE); none: locally signed records are final (FR, PT);
   * notification: submitted, then the outcome arrives later (Italy SDI).
   * A system may decide per location (TicketBAI: Bizkaia batches, the others do not):
   * `initialStatus` is the per-location answer.
   */
  submission: 'realtime' | 'batch' | 'none' | 'notification';
  /** Seconds the create call waits for the authority by default (Greece: 5). */
  inlineWindowSeconds?: number;
  /**
   * When set, a submission that times out or meets an outage makes the transaction
   * `offline_pending` (not `failed`) and is retried until this many seconds after
   * creation; then `failed_offline_grace_expired` (Greece: 7 days). The default window:
   * an account's tier may lengthen it (`offlineGraceByTier`).
   */
  offlineGraceSeconds?: number;
  /**
   * Optional, with `offlineGraceSeconds`: the window of an account of each tier, where it
   * differs from the default (Greece: growth 14 days … enterprise 30, "up to 1 month by
   * tier"). A tier not listed, and a store that knows no tiers (the embedded engine), take
   * the default. Read by services/offline-grace.ts when a record first goes offline.
   */
  offlineGraceByTier?: Readonly<Partial<Record<AccountTier, number>>> | undefined;
  /** Legal submission window in days, for deadline alerts (ES 4, IT 12). */
  submissionWindowDays?: number;
  /**
   * How many times a `poll_result` job asks for a record's result (`poll`) before it gives up
   * (`result_not_available`, `failed_permanent`): the system's polling horizon, with the
   * waits its `poll` answers (`pollAfterSeconds`). Unset: the send job's max attempts.
   */
  pollAttempts?: number | undefined;
  /**
   * The real authority protocol client exists (`submit` in `authority` mode works).
   * While false, `submit` only answers in `stub` mode and the core refuses
   * `X-Svc-Sandbox: authority`.
   */
  authorityTransport: boolean;
  /**
   * True: a cancellation record takes the next link of its chain, and the next sequence
   * number, like any record (VERI*FACTU RegistroAnulacion, an NF525 cancellation, an
   * Italian DC annullo, which is a new numbered document). False: the cancellation is
   * built outside the chain (its `chain` input is ignored, its fingerprint is null) and
   * must not move the chain head or consume a number (TicketBAI AnulaTicketBai, a SAF-T
   * PT status change, SII baja, myDATA cancel, the SDI credit note numbered from the
   * original).
   */
  cancellationJoinsChain: boolean;
  /**
   * Optional: `build` reads `BuildInput.earlierIssues` (a number issued again after its
   * earlier records were refused: VERI*FACTU's alta por rechazo). Only then does the core
   * read them, one query more per create that chooses its number. Absent: not read.
   */
  readsEarlierIssues?: boolean | undefined;
  /**
   * A cancellation is sent only once the authority has accepted its original: it reverses a
   * document the authority must hold first (myDATA's reversing credit note of a document
   * still offline: sent before its original, it would stand alone at the authority if the
   * original never arrived). The submit task (jobs/tasks/submit.ts) reads the original
   * before each attempt of such a cancellation:
   * - accepted: the cancellation is sent (completed first by `completeCancellation`, if any);
   * - refused (the authority refused it, its retries or its offline grace ran out): the
   *   cancellation is never sent; it ends `failed_permanent`, code `original_never_accepted`,
   *   its message naming `authority` ("… never reached <authority> …") and `error` as its
   *   `response_payload.error` (the system's classification, when it has one);
   * - anything else: the attempt is deferred (not counted, never dead-lettered) until just
   *   after the original's next attempt, and made due at once when the original settles.
   *   Meanwhile the cancellation takes the offline fallback's status and label when its
   *   original is in it (it is transmitted later, for the same reason), else stays as it was.
   * Unset: a cancellation is sent as soon as it is stored.
   */
  cancellationAwaitsOriginal?: { authority: string; error?: OutcomeError | undefined } | undefined;
  /**
   * The record is signed with the issuer's X.509 certificate (TicketBAI XAdES-EPES): the
   * core hands `build` a `signingKey`: the location's uploaded certificate
   * (`country_config.certificate_id`) or, on test keys without one, the account's
   * sandbox certificate.
   */
  signsWithCertificate?: boolean | undefined;
  /**
   * With `signsWithCertificate`: the certificate is optional. A location that names none
   * is not refused in live (nor with the real authority): `build` then gets no
   * `signingKey` and signs with the software producer's own key
   * (`SoftwareIdentity.producerKeys`), refusing the record itself when none is configured.
   * For schemes where the signing key belongs to the certified program, not to the issuer.
   */
  certificateOptional?: boolean | undefined;
  /**
   * The record is signed by the installation with a key of this kind, not with an X.509
   * certificate (NF525: ECDSA P-256): the core hands `build` a `recordKey`, the location's
   * key of that kind, generated on first use and kept sealed with MASTER_KEY
   * (services/signing-keys.ts `recordKey`; one per location, never replaced).
   */
  recordKey?: RecordKeyKind | undefined;
  /**
   * The most records one `submitMany` request may carry (VERI*FACTU: 1,000, the
   * `RegistroFactura maxOccurs` of SuministroLR.xsd). Unset or 1: one record per request.
   */
  maxRecordsPerRequest?: number | undefined;
}

/** What a plug-in may know of a location: secrets unsealed, for building and submitting. */
export interface LocationForFiscal {
  id: string;
  account_id: string;
  name: string;
  country: Country;
  tax_id: string | null;
  address: string | null;
  config: Record<string, unknown>;
  /**
   * The uploaded certificate the location's config names through its system's
   * `certificateFields` (Spain `certificate_id`, Italy DC `seal_certificate_id`): the one
   * that signs its records and authenticates its authority channel. Set by the core from
   * the stored location; undefined where a caller built the location by hand.
   */
  certificateRef?: string | null | undefined;
}

export interface TransactionContext {
  location: LocationForFiscal;
  environment: 'test' | 'live';
  now: Date;
  /**
   * Where the record goes (TransactionAppend.sandboxMode): `authority` for a live key, and
   * for a test key with `X-Svc-Sandbox: authority` (the authority's own test service);
   * `stub` for the sandbox stub. Absent: not known to the caller (a plug-in then reads
   * `environment` alone). A system may refuse in `authority` what the authority's test
   * service would refuse for certain, and keep the sandbox stub lenient.
   */
  sandboxMode?: 'stub' | 'authority' | undefined;
}

/** Identity of this software, as fiscal formats require (TicketBAI licence, VERI*FACTU SIF id…). */
export interface SoftwareIdentity {
  name: string;
  version: string;
  vendorTaxId: string;
  /**
   * The software producer's own signing keys, by country (ISO 3166-1 alpha-2), for schemes
   * that certify the program and its key pair rather than the issuer (one key per
   * certified program). Configured by setting (config.ts `producerKeys`); absent: none.
   */
  producerKeys?: Readonly<Record<string, ProducerKey>> | undefined;
}

/** A certified program's signing key (SoftwareIdentity.producerKeys). */
export interface ProducerKey {
  /** The private key when held in this process (`<CC>_SOFTWARE_KEY_FILE`). */
  privateKey?: KeyObject | undefined;
  /** Signs with the key: set for a key in the PKCS#11 token (HardwareDevice mode); absent: the in-process `privateKey`. */
  signer?: Signer | undefined;
  /** The key's version as the authority numbers it (1 for the first key pair it received). */
  version: string;
  /** The program's certificate number the authority gave, when configured. */
  certificateNumber?: string | undefined;
}

export interface BuildInput {
  transactionId: string;
  kind: 'record' | 'cancellation';
  tx: TransactionDraft;
  /**
   * For a cancellation: the record being cancelled. `documentNumber` and `upstreamId` are
   * the original record's `FiscalRecord.documentNumber` and authority id (Greece: MARK)
   * when the core has them; the annulment names the original by them.
   */
  original?:
    | {
        transactionId: string;
        fiscalId: string | null;
        tx: TransactionDraft;
        issuedAt: string;
        documentNumber?: string | null | undefined;
        upstreamId?: string | null | undefined;
      }
    | undefined;
  location: LocationForFiscal;
  environment: 'test' | 'live';
  /** Issue time: the record's own timestamp (fixed in golden tests). */
  now: Date;
  chain: ChainLink;
  software: SoftwareIdentity;
  /** Present when the system `signsWithCertificate`. */
  signingKey?: SigningKey | undefined;
  /** Present when the system declares `capabilities.recordKey`: the location's key of that kind. */
  recordKey?: RecordKey | undefined;
  /**
   * A record whose request chose its number (`issuedDocument`): the earlier records of its
   * scope issued under that same document, oldest first. None of them stands (the core
   * answers 409 otherwise): each was refused by its authority or ran out of retries, so the
   * number was not issued and is issued now again. Some authorities ask such a record to say
   * so. Absent or empty: the number's first issue (or no number chosen).
   */
  earlierIssues?: readonly EarlierIssue[] | undefined;
}

/** An earlier record issued under the number a new record is issued under again (`BuildInput.earlierIssues`). */
export interface EarlierIssue {
  transactionId: string;
  /** Its record's issue time (ISO 8601), as `build` got it as `now`. */
  issuedAt: string;
  /** Its record's `FiscalRecord.documentNumber`, when stored. */
  documentNumber: string | null;
  /** Its transaction's status (one of the refused statuses). */
  status: string;
}

/** `BuildInput` without the previous record's fingerprint, which `PreparedRecord.finish` receives. */
export type PrepareInput = Omit<BuildInput, 'chain'> & { chain: PendingLink };

/** A record built up to its chained signature (`FiscalSystem.prepare`). */
export interface PreparedRecord {
  /** Its signing: the message's head, to which the previous record's signature text ('' for none) is appended. */
  signing: ChainSigning;
  /** The facts the next record is built on that do not depend on the signature. */
  fiscalId: string | null;
  linkData?: Record<string, string> | null | undefined;
  /**
   * The record, given its signature's text and the previous record's (null: the chain's
   * first). Its `fingerprint` is the signature text: the next record signs it.
   */
  finish(signature: string, previous: string | null): FiscalRecord;
}

export interface FiscalRecord {
  body: string;
  contentType: 'application/xml' | 'application/json';
  /** Known locally (TBAI id, ATCUD, NF525 number); null when the authority assigns it. */
  fiscalId: string | null;
  /**
   * The number the document was issued under, in the system's own form (TicketBAI
   * NumFactura, VERI*FACTU NumSerieFactura, SAF-T InvoiceNo, myDATA aa…); null when the
   * record has none of its own. Store it: a later cancellation names the original by it.
   */
  documentNumber?: string | null | undefined;
  /** This record's link in its chain (what the next record points back to). */
  fingerprint: string | null;
  /**
   * Facts the next record of the chain must repeat about this one, beyond the
   * fingerprint (TicketBAI `EncadenamientoFacturaAnterior`: series, number, issue date).
   * The core keeps them with the chain head and hands them back as `chain.previous.linkData`.
   */
  linkData?: Record<string, string> | null | undefined;
  qrData: string | null;
  /**
   * True while the system's real format is not implemented: the record is a minimal
   * document that says so, and the API marks it. Never presented as the real format.
   */
  placeholder: boolean;
  renderHints: RenderHint[];
}

/** A record as stored, handed to `submit`. */
export interface StoredRecord {
  transactionId: string;
  kind: 'record' | 'cancellation';
  body: string;
  contentType: string;
  fiscalId: string | null;
  tx: TransactionDraft;
  /** The authority's id of the record once an earlier answer gave one (`fiscal_id_upstream`): what `poll` asks about. */
  upstreamId?: string | null | undefined;
  /**
   * A cancellation's original as it stood when this attempt began: given for a system with
   * `capabilities.cancellationAwaitsOriginal` (then always accepted by the authority).
   */
  original?: OriginalOfCancellation | undefined;
  /**
   * The record corrects one the authority accepted (`FiscalSystem.correct`; sent by the
   * `submit_correction` job), for a system whose message rather than its record says so
   * (e.g. a header naming the communication a modification). Absent for every other record.
   * A `duplicate` answer to such a record reads as a refusal (the authority kept what it held:
   * the document uncorrected), and the sandbox stub answers a rehearsed "already registered"
   * code on it as a refusal; an authority that answers a correction sent twice as already
   * held must have its plug-in answer `accepted` for it.
   */
  correction?: boolean | undefined;
  /**
   * The location as the record was issued (its name, address and legal name when the record
   * was built, kept beside it): what a message that names the issuer outside the record (a
   * request header) takes, so that a PATCH of the location before the record is sent (or
   * retried) does not change it. A correction (`correction`) carries the issuer of the
   * record it corrects (its own record keeps none). Absent for records stored before it was
   * kept: the plug-in then reads `ctx.location`. A sender of several records in one message
   * (`submitMany`, a batch processor) must not put records of different issuers under one
   * header.
   */
  issuer?: IssuerAsIssued | undefined;
  /**
   * For a cancellation (`kind` 'cancellation'): the issuer the record it cancels was issued
   * under (that record's kept issuer), given by the submit worker. `issuer` stays the
   * cancellation's own (the location when the cancellation was made). A message that names
   * the holder of the cancelled document outside the record (a header naming the books it
   * is withdrawn from) takes this one. Absent for every other record and when the cancelled
   * record kept none (stored before it was kept).
   */
  cancelledIssuer?: IssuerAsIssued | undefined;
}

/** `StoredRecord.issuer`: the location's name, address and legal name (`country_config.legal_name`, null when none) as the record was built. */
export interface IssuerAsIssued {
  name: string;
  address: string | null;
  legalName: string | null;
}

/** The original of a cancellation, as the submit task read it (`StoredRecord.original`). */
export interface OriginalOfCancellation {
  transactionId: string;
  status: TransactionStatus;
  fiscalId: string | null;
  /** The authority's id of the original (`fiscal_id_upstream`: myDATA's MARK). */
  upstreamId: string | null;
}

/**
 * The authority's "do not send before T" memory, shared by every worker of the service
 * (the core keeps it in the database: services/authority-pacing.ts), so that a wait one
 * worker was told about holds back every other worker too. Any plug-in whose authority
 * paces its clients may use it (VERI*FACTU: `TiempoEsperaEnvio`, FORMATS.md §2.5).
 *
 * Keys are the plug-in's own and must name their system and scope, e.g.
 * `es-verifactu:<issuer NIF>:<environment>`: the memory is one namespace for all systems.
 * Times are compared by the plug-in with `SubmitContext.now`, never with a clock of its own.
 */
export interface AuthorityPacing {
  /** The time before which nothing may be sent for `key`, or null when none was ever set (it may be past). */
  notBefore(key: string): Promise<Date | null>;
  /**
   * The authority asked to wait until `until` for `key`. Only ever moves the time forward:
   * a later wait already recorded (told to another worker meanwhile) is kept.
   */
  hold(key: string, until: Date): Promise<void>;
}

export interface SubmitContext {
  environment: 'test' | 'live';
  /** stub: the deterministic in-process sandbox; authority: the real protocol client. */
  mode: 'stub' | 'authority';
  location: LocationForFiscal;
  now: Date;
  /** Base URL of the authority endpoint for this environment (configurable for fake servers). */
  authorityBaseUrl?: string | undefined;
  timeoutMs: number;
  /** Attempt number, 1-based. */
  attempt: number;
  /** The TLS client certificate for the authority (mutual TLS), in `authority` mode. */
  clientKey?: SigningKey | undefined;
  /**
   * Extra trusted CA certificates (PEM) for the authority's server certificate: tests
   * point the clients at fake authorities on 127.0.0.1 with their own CA.
   */
  authorityCa?: string | undefined;
  /** The authority's wait-before-sending memory, shared by every worker (see `AuthorityPacing`). */
  pacing: AuthorityPacing;
}

/**
 * How a system classifies its authority's refusal, in the spec's words (Errors: Greece
 * "`error.category`: transient, regulatory_reject (with `error.authority_code`), permanent,
 * duplicate_as_success"). The core writes it as the failed transaction's
 * `response_payload.error`, beside `submit_error`; a system without such a vocabulary
 * leaves it out.
 */
export interface OutcomeError {
  category: string;
  authority_code?: string | undefined;
}

export type AuthorityOutcome =
  | {
      kind: 'accepted';
      /** Authority-assigned id (SII CSV, myDATA series-number…), if any. */
      fiscalId?: string | undefined;
      /** Second authority id (Greece: MARK). */
      upstreamId?: string | undefined;
      /** A system-specific status instead of `success` (Italy SDI: `delivered`). */
      status?: TransactionStatus | undefined;
      response: Record<string, unknown>;
      renderHints?: RenderHint[] | undefined;
      warnings?: string[] | undefined;
    }
  | { kind: 'rejected'; code: string; message: string; status?: TransactionStatus | undefined; response: Record<string, unknown>; error?: OutcomeError | undefined }
  | {
      kind: 'retry_later'; code: string; message: string; response: Record<string, unknown>; retryAfterSeconds?: number | undefined;
      error?: OutcomeError | undefined;
      /**
       * Not a failure: the authority asked us to wait before sending (VERI*FACTU
       * TiempoEsperaEnvio) and nothing was sent. The record stays `pending`, the attempt
       * does not count, no error is recorded.
       */
      flowControl?: boolean | undefined;
    }
  | {
      kind: 'duplicate'; fiscalId?: string | undefined; upstreamId?: string | undefined; response: Record<string, unknown>;
      /** The receipt items the authority's duplicate answer gives back (myDATA: the original MARK). */
      renderHints?: RenderHint[] | undefined;
      /** What the merchant should know about it (VERI*FACTU: why it sets no fiscal id): `response_payload.warnings`. */
      warnings?: string[] | undefined;
    }
  /**
   * Sent; the outcome arrives later: as a notification (Italy SDI), or, with
   * `pollAfterSeconds`, by the system's `poll` after that many seconds (Italy DC).
   * `upstreamId`: the authority's own id of the record (SdI IdentificativoSdI), kept as `fiscal_id_upstream`.
   */
  | {
    kind: 'sent'; reference: string; response: Record<string, unknown>; pollAfterSeconds?: number | undefined;
    /** The authority's id of the record, when its answer gives one (SdI: IdentificativoSdI): kept as `fiscal_id_upstream`. */
    upstreamId?: string | undefined;
    /**
     * Messages the authority will send about this record later: the sandbox stub produces
     * them (Italy SDI: the RC or NS a real SdI would send), and the core delivers them
     * through the system's inbound channel (services/inbound.ts `receiveTrusted`, an
     * `inbound_message` job each) after this outcome commits.
     */
    notifications?: { body: string; contentType: string }[] | undefined;
  };

/**
 * The answer to a `submitMany` request.
 * - `records`: the authority answered for every record: `outcomes[i]` is the outcome of
 *   `records[i]`, exactly what `submit` would have returned for it alone (a record the
 *   answer says nothing about is a failure of its own, never another record's answer).
 * - `request`: the authority answered for the request as a whole and decided nothing for
 *   any record: flow control (`retry_later` with `flowControl`: nothing was sent), a rate
 *   limit (HTTP 429), a SOAP Fault (the whole message refused, e.g. AEAT 4102), a refused
 *   client certificate. `outcome` is what the FIRST record gets, as if sent alone; the
 *   others were not judged and go back to wait their turn. A single shape for "whole
 *   request" rather than the same outcome copied per record: the core must not count an
 *   attempt, or a rejection, against records the authority never looked at.
 */
export type BatchOutcome =
  | { kind: 'records'; outcomes: AuthorityOutcome[] }
  | { kind: 'request'; outcome: Extract<AuthorityOutcome, { kind: 'retry_later' | 'rejected' }> };

export interface AuthorityCode {
  /** English text: the outcome's `message` when the authority answers with this code. */
  message: string;
  category: 'validation' | 'auth' | 'submission' | 'network' | 'configuration' | 'unknown';
  retriable: boolean;
  /**
   * The code means "already registered" (VERI*FACTU/SII 3000, SDI 00404, myDATA 233):
   * the authority holds the record, so the answer is a `duplicate` outcome, not a
   * rejection (spec, Greece `duplicate_as_success`).
   */
  duplicate?: boolean | undefined;
  /**
   * How the translation endpoint explains the code to a merchant (its static catalog, with
   * `category` and `retriable` above). Absent: the code is not in the catalog, and the AI
   * translator (when configured) or the raw message answers.
   */
  translation?: CodeTranslation | undefined;
}

/** A code's entry in the translation catalog: what `AuthorityCode` does not already say. */
export interface CodeTranslation {
  /** The answer's `user_message`: a short sentence the merchant can act on. */
  userMessage: string;
  /**
   * `error`: not accepted; `warning`: accepted with remarks, already registered, or
   * retried automatically; `info`: nothing to do.
   */
  severity: 'error' | 'warning' | 'info';
  /**
   * The answer's `translation` where it is worded otherwise than `message` (which keeps
   * the authority's field names, for support); absent: `message`.
   */
  english?: string | undefined;
}

/** A transport fault: no authority answer (timeout, refused connection, unparsable 5xx). Retried. */
export class TransportError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransportError';
    this.code = code;
  }
}

/** A receipt language: the country's own (ISO 639-1) or English. */
export type ReceiptLanguage = 'en' | 'es' | 'it' | 'fr' | 'pt' | 'el';
/** A text in English and in the country's language. */
export type Localized = { readonly en: string } & { readonly [L in ReceiptLanguage]?: string };

/** A QR symbol's parameters as the country's law fixes them (FORMATS.md §1.3, §2.6, §7.3). */
export interface ReceiptQrSpec {
  errorCorrectionLevel: 'L' | 'M' | 'Q' | 'H';
  /** The smallest symbol version allowed (Portugal: 9); unset: the smallest that holds the content. */
  minVersion?: number | undefined;
  /** Printed side of the symbol in millimetres, quiet zone excluded (TicketBAI, VERI*FACTU, AT: 30 to 40). */
  sizeMm: number;
}

/** What the rendered receipt knows of a system (`FiscalSystem.receipt`). */
export interface ReceiptFacts {
  /**
   * Reprints the law wants marked and numbered (France: "duplicata" and its number,
   * BOI-TVA-DECLA-30-10-30): the line printed under the title of copy `n` (from 1). A system
   * without it has no numbered duplicates (POST …/receipt/duplicate answers 400).
   */
  duplicate?: {
    label(copy: number): Localized;
    /**
     * Journals the duplicate where the law wants reprints traced (France: a JET event), after
     * its number is taken; a failure undoes the number and fails the request.
     */
    journal?(deps: FirstRecordDeps, input: {
      location: LocationForFiscal; environment: 'test' | 'live'; recordKey: RecordKey | undefined;
      transactionId: string; documentNumber: string | null; copy: number;
    }): Promise<void>;
  } | undefined;
  /** The country's language: the receipt's default (`lang=` may ask for `en` instead). */
  language: Exclude<ReceiptLanguage, 'en'>;
  /**
   * How the location's tax id is introduced, where one country label would misname some
   * values (France: a SIRET is not a VAT number); absent, the language's generic word.
   */
  taxIdLabel?(taxId: string): Localized | undefined;
  /** The document's title, from its render hints (Portugal: by document type). */
  title(hints: readonly RenderHint[], tx: TransactionDraft): Localized;
  /**
   * How a text hint is introduced (`ATCUD:`, `MARK`), by hint key. A key not listed is
   * printed as its value alone (the TicketBAI identifier, the VERI*FACTU legend).
   */
  labels: Readonly<Record<string, Localized>>;
  /**
   * Optional: how a text hint is introduced where that depends on the document built, not
   * only on the hint's key (Italy SDI: the number of a credit note is not an invoice's;
   * the TipoDocumento decides). Undefined: `labels`. Pure.
   */
  labelFor?(key: string, input: ReceiptCorrectionInput): Localized | undefined;
  /**
   * Optional: the document's own date (YYYY-MM-DD) where its record carries a day other than
   * the transaction's creation (an invoice dated by the request, as the record writes it):
   * printed as the receipt's date, without a time. Undefined: the creation date and time. Pure.
   */
  documentDate?(input: ReceiptCorrectionInput): string | undefined;
  /**
   * Optional: the VAT breakdown as the record carries it, where that is not the lines' sums
   * per rate (rows told apart by an exemption code at the same rate; a summary tax the record
   * recomputed, with the rounding it declares). Undefined: the lines' sums per rate. Pure.
   */
  taxSummary?(input: ReceiptCorrectionInput): ReceiptTaxSummary | undefined;
  /**
   * Optional: the amounts paid as the record carries them (one row per means of payment, as
   * the law asks them printed), printed after the total instead of the payment method.
   * Undefined: the payment method. Pure.
   */
  payments?(input: ReceiptCorrectionInput): { label: Localized; amount: number }[] | undefined;
  /**
   * Optional: what a document since cancelled prints under its title, where the law has no
   * annulment of it and CANCELLED would misstate it (a document only a later one offsets:
   * it names that one, `ReceiptCorrectionInput.cancelledBy`). Undefined: the generic
   * CANCELLED. Pure.
   */
  cancelledNotice?(input: ReceiptCorrectionInput): Localized | undefined;
  /**
   * Optional: the issuer's tax id as the document names it (its record), printed instead of
   * the location's `tax_id`: the location may have none, or one given since (Greece: the AFM
   * the record was sent with). Undefined: the location's `tax_id`. Pure.
   */
  issuerTaxId?(input: ReceiptCorrectionInput): string | undefined;
  /**
   * Optional: the issuer's legal name as the document names it (its signed record), printed
   * instead of the location's `country_config.legal_name`: a receipt printed again after
   * the name changed (a duplicate above all) must show what the document says. Undefined:
   * the location's. Pure.
   */
  issuerLegalName?(input: ReceiptCorrectionInput): string | undefined;
  /**
   * Optional: the location's `name` and `address` as the document recorded them when it was
   * issued (its stored record), printed instead of the location's current ones: a reprint
   * after the location was renamed or moved (a duplicate above all) shows the document as
   * issued. `address` null: the document printed none. Undefined (a record that keeps no such
   * thing, e.g. one stored before its system kept them): the location's. Pure.
   */
  issuerLocation?(input: ReceiptCorrectionInput): { name: string; address: string | null } | undefined;
  /**
   * Optional: a note printed under each line, by the line's index in `tx.items`, where the
   * law wants something of that line printed that its amounts do not say (Greece: a 0 %
   * line's VAT exemption cause, as the record carries it). Undefined, or undefined for a
   * line: nothing more. Pure.
   */
  itemNotes?(input: ReceiptCorrectionInput): readonly (Localized | undefined)[] | undefined;
  /**
   * The document's number, printed at the top, where no render hint carries it
   * (VERI*FACTU `NumSerieFactura`, TicketBAI series and number, myDATA series and aa):
   * made from the stored record's `documentNumber` and the transaction's `fiscal_id`.
   */
  number?: {
    label: Localized;
    value(input: { documentNumber: string | null; fiscalId: string | null; tx: TransactionDraft }): string | null;
  } | undefined;
  /**
   * Text hints the law wants on one line (TicketBAI: the identifier): printed in the
   * printer's condensed font where the normal one is too wide (39 characters on 58 mm paper).
   */
  singleLine?: readonly string[] | undefined;
  /** The QR symbols' parameters, by hint key; a QR hint not listed is drawn at level M, 30 mm. */
  qr: Readonly<Record<string, ReceiptQrSpec>>;
  /**
   * Optional: a QR hint's content as it is printed now, when the document's state changes
   * it after the record was built (Portugal: field E, the document's status, is `A` once
   * the document is annulled). Absent or undefined: the hint as built. Pure.
   */
  qrContent?(key: string, content: string, now: { cancelled: boolean }): string | undefined;
  /**
   * Lines the law asks for that are not render hints (France: the software's name and
   * version; a document's recipient as its record names it), each with its placement;
   * pure. `record`: the transaction's own fiscal record's body, as `ReceiptCorrectionInput.record`.
   */
  lines?: ((input: {
    software: SoftwareIdentity; location: Pick<LocationForFiscal, 'name' | 'country' | 'tax_id' | 'address'>; tx: TransactionDraft; record?: string | null | undefined;
  }) => { placement: RenderPlacement; text: Localized }[]) | undefined;
  /**
   * Optional: how a correction prints (a refund, a void, a cancellation): its own title,
   * the lines naming the document it corrects, its amounts' sign. Absent: the title of
   * `title`, a generic CANCELLATION line under it for a cancellation, amounts unsigned.
   */
  correction?: ReceiptCorrection | undefined;
}

/** What a correction's print is made from (`ReceiptCorrection`; `ReceiptFacts.labelFor` reads it for any document). */
export interface ReceiptCorrectionInput {
  /** `cancellation` for a cancellation transaction (POST …/cancel), else the transaction's type. */
  kind: TransactionType | 'cancellation';
  /** The transaction's draft (a cancellation's: the original's, with `cancellation_reason`). */
  tx: TransactionDraft;
  /**
   * The transaction a cancellation cancels, as stored: its record's document number, its
   * `fiscal_id`, its render hints, its draft and its creation time. Null for a refund or a
   * void (their metadata names what they correct) or when the original is not found.
   */
  original: {
    documentNumber: string | null; fiscalId: string | null; hints: readonly RenderHint[]; tx: TransactionDraft; createdAt: Date;
    /** The original's fiscal record's body; null or absent where there is none or the caller does not know it. */
    record?: string | null | undefined;
  } | null;
  /** The transaction's own render hints. */
  hints: readonly RenderHint[];
  /**
   * The transaction's own `fiscal_id`: a cancellation that issued a document of its own (a
   * reversing credit note) has one; one that only withdrew its original at the authority
   * has none. Absent where the caller does not know it.
   */
  fiscalId?: string | null | undefined;
  /** The transaction's own fiscal record as stored (its body: the document built); null or absent where there is none or the caller does not know it. */
  record?: string | null | undefined;
  /**
   * For a document since cancelled: the cancellation that stands (the transaction's
   * `cancelled_by_id`), as stored: its record's document number, its `fiscal_id`, its render
   * hints, its creation time and its record's body. Null or absent otherwise.
   */
  cancelledBy?: {
    documentNumber: string | null; fiscalId: string | null; hints: readonly RenderHint[]; createdAt: Date; record: string | null;
  } | null | undefined;
}

/** A VAT breakdown as a record carries it (`ReceiptFacts.taxSummary`); amounts in minor units. */
export interface ReceiptTaxSummary {
  /** In the record's order: the rate, the code that tells the row apart at its rate (an exemption's), the taxable base and the tax. */
  rows: { rate: number; code?: string | undefined; base: number; tax: number }[];
  /** What the record's total differs from its rows' bases and taxes by (a rounding it declares); printed on its own line when not 0. */
  rounding?: number | undefined;
  /**
   * The subtotal (taxable amount before tax) the record states, where its bases are not the
   * lines' net amounts summed (a record that splits what was paid again into base and tax).
   * Absent: the transaction's pretax amount.
   */
  subtotal?: number | undefined;
  /**
   * The tax's name where the document's tax is not the one the language calls VAT (Spain:
   * IGIC in the Canary Islands, IPSI in Ceuta and Melilla): printed instead of it on the
   * lines and the rows. Absent: the language's word.
   */
  taxName?: string | undefined;
  /**
   * Levies charged beside the tax and part of the total (Spain: recargo de equivalencia),
   * each on its own line after the rows: its label, rate, base and amount (minor units).
   */
  surcharges?: { label: Localized; rate: number; base: number; amount: number }[] | undefined;
}

/** A correction on paper, by system (`ReceiptFacts.correction`); every member pure. */
export interface ReceiptCorrection {
  /**
   * The title of a correction where it is not the document's usual one (France: a
   * cancellation is its own "Ticket d'annulation"; Portugal: a cancellation is no new
   * document). Undefined: `ReceiptFacts.title`. A title given here replaces the generic
   * CANCELLATION line too.
   */
  title?(input: ReceiptCorrectionInput): Localized | undefined;
  /** The lines naming the corrected document (and the law's notices), printed in the header, after its number. */
  references?(input: ReceiptCorrectionInput): Localized[];
  /** True: the amounts print negative, as the record carries them (France, Spain's corrective invoices by differences). */
  negative?(input: ReceiptCorrectionInput): boolean;
}
