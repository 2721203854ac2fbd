/**
 * A transaction as a ledger entry: what its fiscal system builds on the chain's previous
 * link, the transaction row that goes with the record, its submission job and, for
 * records final at creation, its completion event. The ledger (src/ledger) decides how
 * and when it takes its place; this file only says what it is.
 */
import type { BuildInput, EarlierIssue, FiscalRecord, PrepareInput, FiscalSystem, LocationForFiscal, RecordKey, SigningKey, SoftwareIdentity, TransactionDraft } from '../countries/types.ts';
import type { ChainLink, PendingLink } from '../core/chain-link.ts';
import { newId } from '../core/ids.ts';
import { inEnvironment } from '../countries/shared/chain-key.ts';
import type { BuiltEntry, LedgerEntry } from '../ledger/types.ts';
import type { FiscalRecordRow } from '../store/repos/fiscal-records-repo.ts';
import type { TransactionRow } from '../store/repos/transactions-repo.ts';
import { statuses } from '../countries/registry.ts';
import { conflict } from '../core/errors.ts';
import type { Queryable } from '../store/db.ts';
import { chainDocumentsRepo, type ChainDocumentRole } from '../store/repos/chain-documents-repo.ts';
import type { AuthContext } from './auth-context.ts';
import { cancelOriginalIfAccepted } from './cancellation.ts';
import { refuseWithdrawn, storedSale } from './replacements.ts';
import { refuseCancelWhileCorrected, type CorrectionCheck } from './corrected-sales.ts';
import { transactionsRepo } from '../store/repos/transactions-repo.ts';
import { completionEvent, SUBMIT_JOB, submitJobMaxAttempts } from './transaction-view.ts';
import { issuerOf } from './record-issuer.ts';

/** Everything a transaction needs before it takes its place in its chain. */
export interface TransactionAppend {
  id: string;
  auth: Pick<AuthContext, 'accountId' | 'environment'>;
  system: FiscalSystem;
  location: LocationForFiscal;
  draft: TransactionDraft;
  kind: 'record' | 'cancellation';
  type: TransactionRow['type'];
  idempotencyKey: string;
  hash: string;
  requestPayload: unknown;
  sandboxMode: 'stub' | 'authority';
  original?: TransactionRow | undefined;
  originalRecord?: FiscalRecordRow | undefined;
  signingKey?: SigningKey | undefined;
  /** The location's record-signing key, for systems with `capabilities.recordKey`. */
  recordKey?: RecordKey | undefined;
  /** A correction counted against the sales it corrects (CorrectedSaleLookup.cumulative): weighed again and registered in the append. */
  correctionCheck?: CorrectionCheck | undefined;
  /** The earlier records issued under the number its request chose, all refused (`earlierIssuesOf`; BuildInput.earlierIssues). */
  earlierIssues?: readonly EarlierIssue[] | undefined;
}

export interface EntryDeps {
  software: SoftwareIdentity;
  maxAttempts: number;
  /**
   * Embedded-Local (the engine, the local host): a record signed here and waiting for its
   * submission is `pending_submission` (DECISIONS "Statuses": "signed locally by an
   * Embedded-Local engine, waiting in its local queue"), not `pending`.
   */
  embedded?: boolean;
}

/** The status a record queued for submission takes at creation (see EntryDeps.embedded). */
export const QUEUED_EMBEDDED = 'pending_submission';

/** The legal submission deadline: the system's own rule, else its window in calendar days. */
function deadlineOf(system: FiscalSystem, createdAt: Date, tx: TransactionDraft): Date | null {
  if (system.submissionDeadline) return system.submissionDeadline({ createdAt, tx });
  const days = system.capabilities.submissionWindowDays;
  return days ? new Date(createdAt.getTime() + days * 86_400_000) : null;
}

/** A chain's records reach the authority in chain order: its submit jobs form an ordered queue. */
const isOrdered = (system: FiscalSystem) => system.capabilities.chained && system.capabilities.submission === 'realtime';

/** The chain a record joins: its system's chain, or the side sequence of annulments outside the chain. */
export function chainKeyOf(p: Pick<TransactionAppend, 'system' | 'location' | 'draft' | 'kind' | 'auth'>): string {
  const main = inEnvironment(p.system.chainKey({ location: p.location, tx: p.draft }), p.auth.environment);
  // An annulment that is not a link of the chain (TicketBAI, SII, SDI, myDATA, PT) is
  // numbered in a side sequence of its own, so the chain and its numbering stay whole.
  return p.kind === 'cancellation' && !p.system.capabilities.cancellationJoinsChain ? `${main}#annulments` : main;
}

/** The record's numbering series (systems that number apart from the chain), per environment like the chain. */
function numberingKeyOf(p: TransactionAppend): string | undefined {
  const key = p.system.numberingKey?.({ location: p.location, tx: p.draft });
  return key === undefined ? undefined : inEnvironment(key, p.auth.environment);
}

/** A document the record names once in its scope: what it annuls, the number its request chose. */
interface OnceDocument {
  role: ChainDocumentRole;
  scope: string;
  doc: { document: string; message: string; alias?: string | undefined };
  /** Where a series counter would write the same number (per environment, as the series). */
  counter?: { numberingKey: string; number: number } | undefined;
  /** The statuses of an earlier record in which it no longer holds the document (default: refused by the authority). */
  lapsed?: readonly string[] | undefined;
  /** More to check once the document is locked (in the append's transaction). */
  check?: ((tx: Queryable) => Promise<void>) | undefined;
}

/**
 * A sale no longer replaces its tickets once refused by the authority, or once cancelled
 * (its cancellation accepted: the invoice withdrawn, its tickets are the sale's documents
 * again). Not while its cancellation is only pending: should that be refused, the F3
 * stands again, and a ticket replaced meanwhile by another would stand in two.
 */
const NOT_REPLACING: readonly string[] = [...statuses.refused, 'cancelled'];

/** The spec's 409 for a sale not cancellable. */
const NOT_CANCELLABLE = 'transaction cannot be cancelled';

/**
 * A correction no longer corrects its sale once refused by the authority or cancelled (its
 * cancellation accepted), as a replacement no longer replaces (`NOT_REPLACING`): while its
 * cancellation is pending it may still stand.
 */
const NOT_CORRECTING: readonly string[] = NOT_REPLACING;

/** The scope of the sales a location's records replace (per environment, as its chains). */
const replacedScope = (p: Pick<TransactionAppend, 'location' | 'auth'>) => inEnvironment(`replaced:${p.location.id}`, p.auth.environment);

/**
 * The scope of the refs (`SaleReplacement.corrected`) a replacement and a correction name a
 * sale by: where its numbers are unique, the issuer's (`SaleReplacement.scope`: every
 * location of the account issuing under them), per environment. A refund at one shop may
 * name a ticket of another shop of the same issuer.
 */
const refScope = (p: Pick<TransactionAppend, 'system' | 'location' | 'auth'>) =>
  inEnvironment(`replaced:${p.system.replaces!.scope(p.location)}`, p.auth.environment);

function onceDocumentsOf(p: TransactionAppend, chainKey: string): OnceDocument[] {
  const out: OnceDocument[] = [];
  // A document is annulled once (FiscalSystem.annulledDocument): checked under the chain's lock.
  const annulled = p.system.annulledDocument?.({
    transactionId: p.id, kind: p.kind, tx: p.draft, original: originalOf(p), location: p.location, environment: p.auth.environment,
  }) ?? null;
  if (annulled) out.push({ role: 'annulled', scope: chainKey, doc: annulled });
  // A number the request chose is issued once (FiscalSystem.issuedDocument): a reused client
  // number would reach an authority that keeps the first and answers "duplicate".
  const issued = p.kind === 'record'
    ? p.system.issuedDocument?.({ tx: p.draft, location: p.location }) ?? null
    : null;
  if (issued) {
    out.push({
      role: 'issued',
      scope: issued.scope === undefined ? chainKey : inEnvironment(issued.scope, p.auth.environment),
      doc: issued,
      counter: issued.counter && { numberingKey: inEnvironment(issued.counter.numberingKey, p.auth.environment), number: issued.counter.number },
    });
  }
  // A sale replaces an earlier one once (FiscalSystem.replaces: a Spanish F3's tickets). The
  // scope is the location's (the replaced sales are its own), wider than a chain of series:
  // serialized on the document, as a client number of an issuer's scope is.
  if (p.kind === 'record' && p.system.replaces) {
    const rule = p.system.replaces;
    const scope = replacedScope(p);
    for (const id of rule.named(p.draft)) {
      out.push({
        role: 'replaced', scope, doc: { document: id, message: rule.alreadyReplaced(id) }, lapsed: NOT_REPLACING,
        // Read before, when prepared (replacements.ts); again under the ticket's lock, which
        // its cancellation takes too (`ticketStillStands`).
        check: async (tx) => {
          const ticket = await transactionsRepo.getById(tx, id);
          if (ticket) await refuseWithdrawn(tx, `metadata.${rule.field}`, ticket);
        },
      });
    }
  }
  return out;
}

/**
 * The earlier records issued under the number the request chose (FiscalSystem.issuedDocument)
 * that lapsed (refused by the authority, or out of retries): the new record issues that
 * number again, and `build` gets them (BuildInput.earlierIssues). Read before the append, as
 * the other reads of `prepare`: a refusal is final, so what is read stays true; an earlier
 * record still standing makes the append's check answer 409 anyway.
 */
export async function earlierIssuesOf(q: Queryable, p: Pick<TransactionAppend, 'system' | 'location' | 'draft' | 'auth'>): Promise<EarlierIssue[]> {
  const issued = p.system.issuedDocument?.({ tx: p.draft, location: p.location }) ?? null;
  if (issued === null) return [];
  const scope = issued.scope === undefined ? chainKeyOf({ ...p, kind: 'record' }) : inEnvironment(issued.scope, p.auth.environment);
  const rows = await chainDocumentsRepo.lapsedRegistrations(q, 'issued', scope, issued.document, statuses.refused);
  return rows.map((r) => ({ transactionId: r.transactionId, issuedAt: r.issuedAt.toISOString(), documentNumber: r.documentNumber, status: r.status }));
}

/**
 * A preview's check of what create checks under the chain's lock (`onceInChain`), read
 * only: the same 409 when the document is annulled, or the number issued, already.
 */
export async function checkOnceDocuments(q: Queryable, p: TransactionAppend): Promise<void> {
  for (const { role, scope, doc, counter, lapsed } of onceDocumentsOf(p, chainKeyOf(p))) {
    if (await chainDocumentsRepo.standing(q, role, scope, doc.document, p.id, lapsed ?? statuses.refused)) throw conflict(doc.message);
    if (counter && (await chainDocumentsRepo.counterReached(q, counter)) && !(await chainDocumentsRepo.registeredInSeries(q, counter, p.id))) {
      throw conflict(doc.message);
    }
  }
}

export function transactionEntry(p: TransactionAppend, deps: EntryDeps): LedgerEntry {
  const chainKey = chainKeyOf(p);
  const writes: ((tx: Queryable, built: BuiltEntry, now: Date) => Promise<void>)[] = onceDocumentsOf(p, chainKey).map(
    (once) => (tx, built, now) => onceInScope(tx, chainKey, once, built.transaction!.id, now),
  );
  // A sale replaced by another that stands (a Spanish F3's ticket) is cancelled only with it.
  if (p.original && p.system.replaces) writes.unshift((tx) => ticketStillStands(tx, p, p.original!.id));
  // A sale that corrections count against (a cumulative correction lookup: notes that credit or
  // add to it) is cancelled only once they are.
  if (p.original && p.system.correctedSale?.cumulative) writes.unshift((tx) => refuseCancelWhileCorrected(tx, p.auth, p.system, p.original!.id, true));
  const rule = p.kind === 'record' ? p.system.replaces : undefined;
  // …and corrected only through it: a refund or void naming it is refused while it stands;
  // else it registers the ref it names, for a replacement that comes later (`notCorrected`).
  // After the once documents: locks are taken issued number, replaced sale, its ref.
  const corrected = rule?.corrected(p.draft) ?? null;
  if (corrected) writes.push((tx, built, now) => correctionStillFree(tx, p, corrected, { transactionId: built.transaction!.id, now }));
  // A replacement registers, for each sale it replaces, the ref a correction names it by,
  // unless a standing correction names that sale already (it is corrected: not replaced).
  // Refs in one order (sorted): two replacements sharing refs lock them alike.
  const refs = [...(rule?.replacedRefs(p.draft) ?? [])].sort();
  if (refs.length > 0) {
    writes.push(async (tx, built, now) => {
      const scope = refScope(p);
      for (const ref of refs) {
        await chainDocumentsRepo.lockDocument(tx, 'replaced_ref', scope, ref);
        await notCorrected(tx, p, scope, ref);
        await chainDocumentsRepo.insert(tx, { role: 'replaced_ref', chainKey: scope, document: ref, transactionId: built.transaction!.id, now });
      }
    });
  }
  // A correction that counts against its sales (CorrectedSaleLookup.cumulative) is weighed
  // again under their locks, with the corrections made since it was prepared, and registered.
  const check = p.kind === 'record' ? p.correctionCheck : undefined;
  if (check) writes.push((tx, built, now) => check.underLock(tx, built.transaction!.id, now));
  // A cancellation marks its original, and cancels it at once when it is final at creation.
  if (p.original) writes.push(async (tx, built, now) => void (await cancelOriginalIfAccepted(tx, built.transaction!, now, { linkFirst: true })));
  return {
    chainKey,
    // Only new documents take a number: an annulment names the number of its original.
    numberingKey: p.kind === 'record' ? numberingKeyOf(p) : undefined,
    idempotency: { accountId: p.auth.accountId, environment: p.auth.environment, key: p.idempotencyKey },
    build: (link, now) => entryOf(p, deps, p.system.build(inputOf(p, deps, link, now)), now),
    prepare: p.system.prepare
      ? (link, now) => {
          const prepared = p.system.prepare!(inputOf(p, deps, link, now));
          return prepared === null
            ? null
            : { signing: prepared.signing, fiscalId: prepared.fiscalId, linkData: prepared.linkData ?? null, finish: (signature, previous) => entryOf(p, deps, prepared.finish(signature, previous), now) };
        }
      : undefined,
    afterWrite: writes.length > 0 ? async (tx, built, now) => { for (const w of writes) await w(tx, built, now); } : undefined,
  };
}

/**
 * Records that `transactionId` annuls (or is issued under) `document` of its scope, unless
 * an earlier record of the scope does so in the same role and stands (not refused by the
 * authority): then 409 with the system's message. Runs in the append's transaction, under
 * the chain's lock; a scope wider than the chain (one issuer's locations, each chaining
 * apart) is serialized on the document too: two records of one document and role cannot
 * both pass. A number a request chose where a series counter would write it (`counter`)
 * is registered in that series, so the counter skips it, and refused (the same 409) when
 * the counter gave it already: the counter's numbers are not registered one by one.
 */
async function onceInScope(tx: Queryable, chainKey: string, { role, scope, doc, counter, lapsed, check }: OnceDocument, transactionId: string, now: Date): Promise<void> {
  if (scope !== chainKey) await chainDocumentsRepo.lockDocument(tx, role, scope, doc.document);
  if (await chainDocumentsRepo.standing(tx, role, scope, doc.document, transactionId, lapsed ?? statuses.refused)) throw conflict(doc.message);
  await check?.(tx);
  const { reached } = await chainDocumentsRepo.insert(tx, { role, chainKey: scope, document: doc.document, transactionId, now, counter, alias: doc.alias });
  // Reached by the counter and registered before (by a record the authority refused, or
  // the standing check above would have answered): the counter skipped it, it is free.
  if (reached && counter && !(await chainDocumentsRepo.registeredInSeries(tx, counter, transactionId))) throw conflict(doc.message);
}

/**
 * A sale that another standing sale replaces (an F3's ticket) cannot be cancelled on its
 * own: that sale's amount is invoiced by the replacement now, which names it; cancelling
 * it alone would leave the replacement naming a withdrawn ticket. 409, the spec's "not
 * cancellable". Once the replacement is cancelled or refused, the ticket may be. Under the
 * ticket's `replaced` lock, which a replacement naming it takes too.
 */
async function ticketStillStands(tx: Queryable, p: TransactionAppend, ticketId: string): Promise<void> {
  const scope = replacedScope(p);
  await chainDocumentsRepo.lockDocument(tx, 'replaced', scope, ticketId);
  if (await chainDocumentsRepo.standing(tx, 'replaced', scope, ticketId, p.id, NOT_REPLACING)) throw conflict(NOT_CANCELLABLE);
}

/**
 * A refund or void naming a sale that a standing sale replaces (an F3's ticket) corrects
 * that sale's amount a second time: the replacement invoices it now, and is what a
 * correction corrects (SaleReplacement.corrected). 409 naming the replacement, until it is
 * cancelled or refused (`NOT_REPLACING`, as the ticket's cancel). Looked up in the issuer's
 * scope (`refScope`): the replacement may be another location's. With `register`: under
 * the ref's lock, which a replacement registering it takes too (in the append's
 * transaction), and the correction then registers the ref it names (role `corrected_ref`),
 * which a later replacement reads under the same lock (`notCorrected`); without, the
 * read-only check before it (`checkReplaced`).
 */
async function correctionStillFree(
  q: Queryable, p: Pick<TransactionAppend, 'system' | 'location' | 'auth' | 'draft'>,
  corrected: NonNullable<ReturnType<NonNullable<FiscalSystem['replaces']>['corrected']>>,
  register?: { transactionId: string; now: Date },
): Promise<void> {
  const scope = refScope(p);
  if (register) await chainDocumentsRepo.lockDocument(q, 'replaced_ref', scope, corrected.ref);
  for (const id of await chainDocumentsRepo.standingTransactions(q, 'replaced_ref', scope, corrected.ref, NOT_REPLACING)) {
    const replacement = await transactionsRepo.getById(q, id);
    if (!replacement || !corrected.matches(replacement.normalized)) continue;
    const named = p.system.replaces!.describe(await storedSale(q, replacement));
    const [done, act] = p.draft.type === 'void' ? ['voided', 'void'] : ['refunded', 'refund'];
    throw conflict(`transaction cannot be ${done}: invoice ${named} (transaction ${replacement.id}) replaces it; ${act} that invoice`);
  }
  if (register) await chainDocumentsRepo.insert(q, { role: 'corrected_ref', chainKey: scope, document: corrected.ref, ...register });
}

/**
 * The reverse: a replacement naming a sale that a standing refund or void corrects already
 * (registered under `ref` in the issuer's scope by `correctionStillFree`) would invoice in
 * full an amount already corrected: 409 (SaleReplacement.correctedAlready) until the
 * correction is cancelled or refused (`NOT_CORRECTING`). Under the ref's lock in the
 * append's transaction, or read only before it (`checkReplaced`).
 */
async function notCorrected(q: Queryable, p: Pick<TransactionAppend, 'system' | 'draft'>, scope: string, ref: string): Promise<void> {
  for (const id of await chainDocumentsRepo.standingTransactions(q, 'corrected_ref', scope, ref, NOT_CORRECTING)) {
    const correction = await transactionsRepo.getById(q, id);
    if (!correction) continue;
    const message = p.system.replaces!.correctedAlready(p.draft, await storedSale(q, correction));
    if (message !== null) throw conflict(message);
  }
}

/**
 * Read only, before the append: the 409s its write raises under the locks for a sale a
 * standing sale replaces (its cancel: `ticketStillStands`; a correction naming it:
 * `correctionStillFree`) or a standing correction corrects (a replacement naming it:
 * `notCorrected`), answered here in the common case, before the ledger takes the
 * entry (a 409 inside a group-commit batch has the batch run again entry by entry). The
 * checks under the locks stay the guard for what commits in between.
 */
export async function checkReplaced(q: Queryable, p: TransactionAppend): Promise<void> {
  if (p.original) await refuseCancelWhileCorrected(q, p.auth, p.system, p.original.id, false);
  const rule = p.system.replaces;
  if (rule === undefined) return;
  if (p.original) {
    if (await chainDocumentsRepo.standing(q, 'replaced', replacedScope(p), p.original.id, p.id, NOT_REPLACING)) throw conflict(NOT_CANCELLABLE);
    return;
  }
  if (p.kind !== 'record') return;
  const corrected = rule.corrected(p.draft);
  if (corrected) await correctionStillFree(q, p, corrected);
  const refs = rule.replacedRefs(p.draft);
  if (refs.length > 0) {
    const scope = refScope(p);
    for (const ref of refs) await notCorrected(q, p, scope, ref);
  }
}

/** The original a cancellation names, as `build` gets it. */
function originalOf(p: TransactionAppend): BuildInput['original'] {
  return p.original
    ? {
        transactionId: p.original.id, fiscalId: p.original.fiscal_id, tx: p.original.normalized,
        issuedAt: (p.originalRecord?.created_at ?? p.original.created_at).toISOString(),
        documentNumber: p.originalRecord?.document_number ?? null, upstreamId: p.original.fiscal_id_upstream,
      }
    : undefined;
}

/** What the system builds on: the transaction on its link (for `prepare`, one without the previous fingerprint). */
function inputOf(p: TransactionAppend, deps: EntryDeps, link: ChainLink, now: Date): BuildInput;
function inputOf(p: TransactionAppend, deps: EntryDeps, link: PendingLink, now: Date): PrepareInput;
function inputOf(p: TransactionAppend, deps: EntryDeps, link: PendingLink, now: Date): PrepareInput {
  return {
    transactionId: p.id,
    kind: p.kind,
    tx: p.draft,
    original: originalOf(p),
    location: p.location,
    environment: p.auth.environment,
    now,
    chain: link,
    software: deps.software,
    signingKey: p.signingKey,
    recordKey: p.recordKey,
    ...(p.kind === 'record' && p.earlierIssues !== undefined && p.earlierIssues.length > 0 ? { earlierIssues: p.earlierIssues } : {}),
  };
}

function entryOf(p: TransactionAppend, deps: EntryDeps, record: FiscalRecord, now: Date): BuiltEntry {
  const initial = p.system.initialStatus(p.location);
  const queued = initial === 'pending';
  const status = queued && deps.embedded ? QUEUED_EMBEDDED : initial;
  const final = statuses.isAccepted(status);
  const t: TransactionRow = {
    id: p.id,
    account_id: p.auth.accountId,
    location_id: p.location.id,
    environment: p.auth.environment,
    type: p.type,
    status,
    amount: p.draft.total_amount,
    currency: p.draft.currency,
    country: p.location.country,
    system: p.system.key,
    idempotency_key: p.idempotencyKey,
    request_hash: p.hash,
    request_payload: p.requestPayload,
    normalized: p.draft,
    response_payload: {},
    fiscal_id: record.fiscalId,
    fiscal_id_upstream: null,
    error_message: null,
    render_hints: record.renderHints,
    sandbox_mode: p.sandboxMode,
    cancels_id: p.original?.id ?? null,
    cancelled_by_id: null,
    deadline_at: final ? null : deadlineOf(p.system, now, p.draft),
    offline_until: null,
    submitted_at: null,
    completed_at: final ? now : null,
    created_at: now,
    updated_at: now,
  };
  return {
    transaction: t,
    record: {
      id: newId(), transaction_id: p.id, account_id: p.auth.accountId, system: p.system.key, kind: p.kind,
      fingerprint: record.fingerprint, fiscal_id: record.fiscalId, document_number: record.documentNumber ?? null, qr_data: record.qrData,
      content_type: record.contentType, body: record.body, placeholder: record.placeholder,
      // What its receipts print of the location, as it is now (a reprint after a PATCH prints these).
      issuer: issuerOf(p.location),
    },
    linkData: record.linkData ?? null,
    jobs: queued
      ? [{
          input: { kind: SUBMIT_JOB, accountId: p.auth.accountId, transactionId: p.id, maxAttempts: submitJobMaxAttempts(p.system, deps.maxAttempts), runAt: now },
          inChainOrder: isOrdered(p.system),
        }]
      : [],
    // Fiscalized at creation (FR, PT): the completion event commits with the record.
    events: final ? [completionEvent(t, now)] : [],
  };
}
