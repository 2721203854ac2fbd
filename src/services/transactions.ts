import crypto from 'node:crypto';
import { ApiError, badRequest, conflict, forbidden, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { allowsCountry } from '../core/permissions.ts';
import { requestHash, sameRequest, type IncomingRequest } from '../core/request-hash.ts';
import { inGuideForm, normalizeTransactionRequest, undeclaredSurcharges, type NormalizedRequest } from '../core/transaction-request.ts';
import { LINE_FIELDS, getSystem, statuses } from '../countries/registry.ts';
import type { FiscalSystem, LocationForFiscal, SoftwareIdentity } from '../countries/types.ts';
import { readSandboxOutcome } from '../countries/shared/sandbox.ts';
import { environmentMismatch } from '../core/permissions.ts';
import type { TransactionDraft } from '../core/transaction.ts';
import type { Ledger } from '../ledger/types.ts';
import { isUniqueViolation } from '../store/db.ts';
import { fiscalRecordsRepo, type FiscalRecordRow } from '../store/repos/fiscal-records-repo.ts';
import { transactionsRepo, type TransactionFilter, type TransactionRow } from '../store/repos/transactions-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { TransactionObserver } from '../metrics/observers.ts';
import type { Deps } from './deps.ts';
import type { CachedLocation, LocationService } from './locations.ts';
import type { SigningKeyService } from './signing-keys.ts';
import type { ListResult, Page } from './pagination.ts';
import { QUEUED_EMBEDDED, checkOnceDocuments, checkReplaced, earlierIssuesOf, transactionEntry, type TransactionAppend } from './transaction-entry.ts';
import { toTransactionView, type TransactionView } from './transaction-view.ts';
import { previewTransaction, type TransactionPreview } from './transaction-preview.ts';
import { qrPng } from '../receipts/qr.ts';
import { withReplacedSales } from './replacements.ts';
import { withCorrectedSale } from './corrected-sales.ts';
import { issuingLocation } from './issuing-location.ts';
import { createCorrectionService } from './corrections.ts';

/**
 * Transactions: the business steps of a create and a cancel (validate, pick the fiscal
 * system, append the record to its chain through the ledger, settle inline), and reads.
 * How a record takes its place in its chain is the ledger's business (src/ledger).
 */

/** The inline budget a client may ask for with X-Fiscalization-Timeout (seconds). */
const MAX_INLINE_SECONDS = 10;
/** How often an inline wait looks at a submission another worker is running. */
const INLINE_POLL_MS = 50;

export interface Submitter {
  /** Claims and runs this job now, if it is runnable. */
  runNow(jobId: string): Promise<unknown>;
  /** A job was enqueued: a worker in this process should look now. */
  notify(): void;
}

export interface TransactionDeps extends Deps {
  ledger: Ledger;
  locations: LocationService;
  submitter: Submitter | null;
  software: SoftwareIdentity;
  maxAttempts: number;
  signingKeys: SigningKeyService;
  /** Counts each transaction stored (src/metrics); a counter only, nothing awaited. */
  metrics?: TransactionObserver;
}

/** A sale ready to join its chain (create's and preview's `prepare`). */
type Prepared = Pick<TransactionAppend, 'system' | 'location' | 'sandboxMode' | 'draft' | 'signingKey' | 'recordKey' | 'correctionCheck' | 'earlierIssues'>;

/** Statuses an inline create waits on (its submission not decided yet). */
const WAITING_INLINE: readonly string[] = ['pending', 'processing', QUEUED_EMBEDDED];

/** The idempotency keys of cancellations: `cancel:<original id>`, refused from clients. */
const CANCEL_KEY_PREFIX = 'cancel:';

/** A transaction appended (or the earlier one its idempotency key names), and its submit job. */
interface Stored {
  row: TransactionRow;
  jobId: string | null;
  created: boolean;
}

export interface CreateHeaders {
  /** The body's JSON text as received (the HTTP layer's), for the idempotency hash (core/request-hash.ts). */
  bodyText?: string | undefined;
  idempotencyKey?: string | undefined;
  timeout?: string | undefined;
  sandbox?: string | undefined;
}

export function createTransactionService(deps: TransactionDeps) {
  const { db, clock } = deps;
  const entryDeps = { software: deps.software, maxAttempts: deps.maxAttempts, embedded: deps.config.mode === 'local' };

  /**
   * Appends the transaction's record to its chain (the ledger), answering once it is
   * committed and its submission is runnable. The same key again answers the transaction
   * that holds it: the same request gets it back, another request is a 409.
   */
  async function append(p: TransactionAppend, request?: IncomingRequest): Promise<Stored> {
    const appended = await deps.ledger.append(transactionEntry(p, entryDeps));
    if (!appended.created) {
      const same = request ? sameRequest(appended.replayed, request, p.hash) : appended.replayed.request_hash === p.hash;
      if (!same) throw conflict('idempotency key already used with a different request');
      return { row: appended.replayed, jobId: null, created: false };
    }
    await appended.ready;
    const row = appended.built.transaction!;
    deps.metrics?.created({ country: row.country, system: row.system, status: row.status, environment: row.environment, type: row.type });
    await firstRecord(p);
    return { row, jobId: appended.jobIds[0] ?? null, created: true };
  }

  /**
   * Locations (and environments) this process has signed a record for, for `afterFirstRecord`,
   * with what `beforeProcessStop` is handed when the process stops.
   */
  const signedHere = new Map<string, { system: FiscalSystem; input: Parameters<NonNullable<FiscalSystem['afterFirstRecord']>>[1] }>();
  const hookDeps = () => ({ db, clock, log: deps.log, ledger: deps.ledger, software: deps.software });
  /** The system's `afterFirstRecord`, once per process, location and environment; a failure is only logged. */
  async function firstRecord(p: TransactionAppend): Promise<void> {
    const hook = p.system.afterFirstRecord;
    const seen = `${p.location.id}:${p.auth.environment}`;
    if (hook === undefined || signedHere.has(seen)) return;
    if (signedHere.size >= 100_000) signedHere.clear();
    const input = { location: p.location, environment: p.auth.environment, recordKey: p.recordKey };
    signedHere.set(seen, { system: p.system, input });
    try {
      await hook(hookDeps(), input);
    } catch (err) {
      deps.log.error({ err, system: p.system.key, locationId: p.location.id }, 'afterFirstRecord failed (the record is committed)');
    }
  }

  /**
   * The process stops cleanly (cli/server.ts, engine/local-host.ts, after the API closed):
   * each system's `beforeProcessStop` for every location and environment `afterFirstRecord`
   * ran for, once; a failure is only logged. Records signed after it (none: the API is
   * closed) would start anew.
   */
  async function stop(): Promise<void> {
    const started = [...signedHere.values()];
    signedHere.clear();
    for (const { system, input } of started) {
      if (system.beforeProcessStop === undefined) continue;
      try {
        await system.beforeProcessStop(hookDeps(), input);
      } catch (err) {
        deps.log.error({ err, system: system.key, locationId: input.location.id }, 'beforeProcessStop failed');
      }
    }
  }

  /**
   * The key the record is signed with (systems that sign with the issuer's certificate),
   * resolved before the chain lock is taken. The real authority also needs the location's
   * uploaded certificate for its TLS: checked here, so a create fails at once, not in the queue.
   */
  async function signingKeyFor(system: FiscalSystem, location: LocationForFiscal, environment: 'test' | 'live', mode: 'stub' | 'authority') {
    // A system whose locations name no certificate authenticates to its authority otherwise
    // (myDATA: the aade-user-id and subscription key headers): no TLS client certificate.
    if (mode === 'authority' && system.capabilities.submission !== 'none' && system.certificateFields.length > 0) {
      await deps.signingKeys.forAuthority(location);
    }
    const kind = system.capabilities.recordKey;
    return {
      signingKey: !system.capabilities.signsWithCertificate
        ? undefined
        : system.capabilities.certificateOptional
          ? await deps.signingKeys.forRecordIfNamed(location, environment, mode)
          : await deps.signingKeys.forRecord(location, environment, mode),
      recordKey: kind !== undefined ? await deps.signingKeys.recordKey(location, kind) : undefined,
    };
  }

  function usableLocation(auth: AuthContext, found: CachedLocation | undefined): { system: FiscalSystem; location: LocationForFiscal } {
    if (!found) throw badRequest('location not found');
    const row = found.row;
    if (row.status !== 'active') throw badRequest('location is not active');
    if (!allowsCountry(auth.permissions, row.country)) throw forbidden(`API key is not allowed to act in country ${row.country}`);
    // A config that no longer passes its country's checks (spec "Versioning"): fixed by a PATCH.
    if (found.configError !== null || !row.system) throw badRequest(found.configError ?? 'location not found');
    return { system: getSystem(row.system), location: found.fiscal };
  }

  function parseHeaders(auth: AuthContext, h: CreateHeaders) {
    const key = h.idempotencyKey ?? crypto.randomUUID();
    if (key.length < 1 || key.length > 255) throw badRequest('Idempotency-Key must be 1-255 characters');
    // A cancellation is keyed `cancel:<original id>` (cancel below): a sale under such a key
    // would make that transaction impossible to cancel (409 on the key) for good.
    if (key.startsWith(CANCEL_KEY_PREFIX)) throw badRequest(`Idempotency-Key may not start with "${CANCEL_KEY_PREFIX}": the service keys cancellations so`);
    let inline: number | undefined;
    if (h.timeout !== undefined) {
      inline = Number(h.timeout);
      if (h.timeout.trim() === '' || !Number.isFinite(inline) || inline < 0 || inline > MAX_INLINE_SECONDS) {
        throw badRequest('X-Fiscalization-Timeout must be a number of seconds from 0 to 10');
      }
    }
    if (h.sandbox !== undefined && h.sandbox !== 'authority') throw badRequest('X-Svc-Sandbox must be "authority"');
    if (h.sandbox !== undefined && auth.environment !== 'test') throw badRequest('X-Svc-Sandbox is only accepted with test keys');
    return { key, inline, sandbox: h.sandbox };
  }

  /** The same key again: the same request gets the same transaction; another request is a 409. */
  function replay(existing: TransactionRow, request: IncomingRequest, hash: string): TransactionRow {
    if (!sameRequest(existing, request, hash)) throw conflict('idempotency key already used with a different request');
    return existing;
  }

  /** Waits up to the inline budget for the authority, then answers with whatever status was reached. */
  async function settleInline(row: TransactionRow, jobId: string | null, system: FiscalSystem, inline: number | undefined): Promise<TransactionRow> {
    if (!jobId || !deps.submitter) return row;
    const budget = inline ?? system.capabilities.inlineWindowSeconds ?? 0;
    if (budget <= 0) {
      deps.submitter.notify();
      return row;
    }
    const deadline = Date.now() + budget * 1000;
    const run = deps.submitter.runNow(jobId).catch((err) => {
      deps.log.error({ err, jobId }, 'inline submission failed');
      return true;
    });
    let timer: NodeJS.Timeout | undefined;
    const ranHere = await Promise.race([run, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), budget * 1000)))]);
    clearTimeout(timer);
    let current = (await transactionsRepo.getById(db, row.id)) ?? row;
    // A worker of this or another process took the job first: wait for its outcome instead,
    // within the same budget.
    while (ranHere === false && WAITING_INLINE.includes(current.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, INLINE_POLL_MS));
      current = (await transactionsRepo.getById(db, row.id)) ?? current;
    }
    return current;
  }

  /**
   * What a sale needs before it joins its chain: its location (usable, in the key's
   * countries), its system's rules, the keys its record is signed with. Shared by create
   * and preview, so a preview refuses what create refuses, with the same message.
   */
  async function prepare(auth: AuthContext, draft: TransactionDraft, sandbox: string | undefined): Promise<Prepared> {
    const { system, location } = usableLocation(auth, await deps.locations.forTransaction(auth.accountId, draft.location_id));
    const sandboxMode: 'stub' | 'authority' = auth.environment === 'test' && sandbox === undefined ? 'stub' : 'authority';
    // A system that submits nothing (records signed locally are final) has no client to
    // lack: its live records are made here, like its test ones.
    if (sandboxMode === 'authority' && !system.capabilities.authorityTransport && system.capabilities.submission !== 'none') {
      throw new ApiError(400, `the ${system.key} authority client is not available yet: use a test key without X-Svc-Sandbox (the sandbox stub)`);
    }
    // A line surcharge only its own systems take: elsewhere the total would hold an amount the record cannot carry.
    const foreignSurcharge = undeclaredSurcharges(draft, system.lineFields ?? [], LINE_FIELDS, system.key);
    if (foreignSurcharge) throw foreignSurcharge;
    const ctx = { location, environment: auth.environment, now: clock.now(), sandboxMode };
    const metadata = system.validateTransaction(draft, ctx);
    // A refund's or void's sale, found by the number it names (FiscalSystem.correctedSale).
    const corrected = await withCorrectedSale(db, auth, system, ctx, draft, { ...draft, metadata });
    // The earlier sales it replaces (a Spanish F3's tickets), read and checked; their register is the append's.
    const validated = await withReplacedSales(db, auth, system, location, corrected.draft);
    // A number the request chose that earlier records were refused under: issued again.
    const earlierIssues = system.capabilities.readsEarlierIssues === true ? await earlierIssuesOf(db, { system, location, draft: validated, auth }) : [];
    return {
      system, location, sandboxMode, draft: validated, correctionCheck: corrected.check,
      ...(earlierIssues.length > 0 ? { earlierIssues } : {}),
      ...(await signingKeyFor(system, location, auth.environment, sandboxMode)),
    };
  }

  /**
   * Runs what follows a request's normalization; a guide-form request's 400s then name the
   * fields it sent, in its units (the checks after this point read the canonical draft).
   */
  async function inCallersTerms<T>(form: NormalizedRequest['form'], run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw form === 'guide' ? inGuideForm(err) : err;
    }
  }

  async function create(auth: AuthContext, body: unknown, headers: CreateHeaders): Promise<{ transaction: TransactionView; created: boolean }> {
    const h = parseHeaders(auth, headers);
    const { draft, form } = normalizeTransactionRequest(body, clock.now(), LINE_FIELDS);
    return inCallersTerms(form, () => createNormalized(auth, body, headers, h, draft));
  }

  async function createNormalized(
    auth: AuthContext, body: unknown, headers: CreateHeaders, h: ReturnType<typeof parseHeaders>, draft: TransactionDraft,
  ): Promise<{ transaction: TransactionView; created: boolean }> {
    const request: IncomingRequest = { body, text: headers.bodyText, sandbox: h.sandbox };
    const hash = requestHash(request);

    let prepared: Prepared;
    let entry: TransactionAppend;
    try {
      prepared = await prepare(auth, draft, h.sandbox);
      entry = { id: newId(), auth, ...prepared, kind: 'record', type: draft.type, idempotencyKey: h.key, hash, requestPayload: body };
      // The 409 of a correction of a replaced sale, read before the ledger takes the entry.
      await checkReplaced(db, entry);
    } catch (err) {
      // A replay answers what the first request got, even if the location changed since
      // (deactivated, rules tightened): look the key up before reporting the error.
      if (err instanceof ApiError && headers.idempotencyKey !== undefined) {
        const existing = await transactionsRepo.findByIdempotencyKey(db, auth.accountId, auth.environment, h.key);
        if (existing) return { transaction: toTransactionView(replay(existing, request, hash)), created: false };
      }
      throw err;
    }

    let stored: Stored;
    try {
      stored = await append(entry, request);
    } catch (err) {
      // Another node committed the same key first: the unique index waited for it.
      if (isUniqueViolation(err, 'transactions_idempotency_key')) {
        const winner = await transactionsRepo.findByIdempotencyKey(db, auth.accountId, auth.environment, h.key);
        if (winner) return { transaction: toTransactionView(replay(winner, request, hash)), created: false };
      }
      throw err;
    }
    if (!stored.created) return { transaction: toTransactionView(stored.row), created: false };
    const settled = await settleInline(stored.row, stored.jobId, prepared.system, h.inline);
    return { transaction: toTransactionView(settled), created: true };
  }

  /**
   * What create would make of this request, on the location's chain as it stands:
   * the same headers read, the same steps (`prepare`, `transactionEntry`, the ledger's
   * build) and errors, the same signing keys; nothing stored, numbered or sent, no
   * idempotency key taken (docs/decisions.md "Transaction preview").
   */
  async function preview(auth: AuthContext, body: unknown, headers: CreateHeaders): Promise<TransactionPreview> {
    const h = parseHeaders(auth, headers);
    const { draft, form } = normalizeTransactionRequest(body, clock.now(), LINE_FIELDS);
    return inCallersTerms(form, async () => {
      const prepared = await prepare(auth, draft, h.sandbox);
      const append: TransactionAppend = {
        id: newId(), auth, ...prepared, kind: 'record', type: draft.type, idempotencyKey: h.key, hash: requestHash({ body, text: headers.bodyText, sandbox: h.sandbox }), requestPayload: body,
      };
      // The 409 create would answer for a number already issued, or a correction of a replaced sale.
      await checkOnceDocuments(db, append);
      await checkReplaced(db, append);
      return previewTransaction(deps.ledger, append, entryDeps);
    });
  }

  async function get(auth: AuthContext, id: string): Promise<TransactionView> {
    const row = await transactionsRepo.get(db, auth.accountId, id);
    if (!row) throw notFound('transaction not found');
    return toTransactionView(row);
  }

  async function list(auth: AuthContext, filter: TransactionFilter, page: Page): Promise<ListResult<TransactionView>> {
    const { rows, total } = await transactionsRepo.list(db, auth.accountId, filter, page.limit, page.offset);
    return { data: rows.map(toTransactionView), total, ...page };
  }

  /** The fiscal document exactly as signed or sent (DECISIONS "Fiscal record"). */
  async function fiscalRecord(auth: AuthContext, id: string): Promise<FiscalRecordRow> {
    const row = await transactionsRepo.get(db, auth.accountId, id);
    if (!row) throw notFound('transaction not found');
    const record = await fiscalRecordsRepo.getForTransaction(db, row.id);
    if (!record) throw notFound('fiscal record not found');
    return record;
  }

  /**
   * The transaction's QR code as a PNG, from its QR render hint: drawn by its system where it
   * draws its own (Portugal: version 9 at least, its own mask choice), else with the
   * parameters its receipt gives that hint (Spain, Greece: level M). 404 where there is no
   * QR (yet: Greece's arrives with AADE's answer).
   */
  async function qrImage(auth: AuthContext, id: string): Promise<Buffer> {
    const row = await transactionsRepo.get(db, auth.accountId, id);
    if (!row) throw notFound('transaction not found');
    const system = row.system ? getSystem(row.system) : undefined;
    const facts = system?.receipt;
    const hint = system?.qrImage
      ? row.render_hints.find((h) => h.key === system.qrImage!.hintKey)
      : row.render_hints.find((h) => (h.kind === 'qr_url' || h.kind === 'qr_data') && facts?.qr[h.key] !== undefined);
    if (!system || !hint) throw notFound('QR image not found');
    // As the receipt prints it now (a document annulled since: Portugal's field E).
    const content = facts?.qrContent?.(hint.key, hint.value, { cancelled: row.status === 'cancelled' }) ?? hint.value;
    return system.qrImage ? system.qrImage.png(content) : qrPng(content, facts!.qr[hint.key]!);
  }

  /**
   * Cancels through the same pipeline: a new `cancellation` transaction carrying the
   * system's annulment record. Idempotent: a second cancel returns the one that stands (the
   * original's `cancelled_by_id`: services/cancellation.ts `relinkOriginal`); none stands
   * once the last was refused (or ran out of retries): the original was not cancelled, and a
   * new cancellation is issued (its own idempotency key, `cancel:<id>:<attempt>`).
   */
  async function cancel(auth: AuthContext, id: string, reason: string | undefined, sandboxOutcome?: unknown): Promise<{ transaction: TransactionView; created: boolean }> {
    // Checked before anything is looked up: a malformed body is a 400 whatever the id.
    const cancelOutcome = readSandboxOutcome({ sandbox_outcome: sandboxOutcome });
    const original = await transactionsRepo.get(db, auth.accountId, id);
    if (!original) throw notFound('transaction not found');
    const standing = original.cancelled_by_id ? await transactionsRepo.getById(db, original.cancelled_by_id) : undefined;
    // Refused since the original was read: none stands any more.
    if (standing && !statuses.isRefused(standing.status)) return { transaction: toTransactionView(standing), created: false };
    // A key acts in its own environment only: a test key's cancellation is a test record in
    // the test chain, answered by the stub, and it would have marked a live invoice cancelled
    // that the authority still holds (reading across environments stays allowed).
    if (original.environment !== auth.environment) throw forbidden(environmentMismatch(auth.environment, original.environment));
    if (original.type === 'cancellation' || !statuses.cancellable.includes(original.status)) throw conflict('transaction cannot be cancelled');

    // The location as create reads it (one deleted since still annuls what it issued); one
    // moved to another system before the seal (services/locations.ts) cannot annul what it
    // issued under the old one. The annulment is built from its config, as a sale is.
    const { row: locRow, location } = await issuingLocation(deps.locations, db, auth, original, 'transaction cannot be cancelled');
    const system = getSystem(locRow.system);
    const keys = await signingKeyFor(system, location, original.environment, original.sandbox_mode ?? 'stub');
    // The stub's magic value is the cancellation's own (the cancel body's), not the
    // original's: a sale rehearsing a rejection must still be cancellable in the sandbox,
    // and a refused cancellation is rehearsed by asking for one.
    const { sandbox_outcome: _originalOutcome, ...inherited } = original.normalized.metadata;
    const draft: TransactionDraft = {
      ...original.normalized,
      timestamp: clock.now().toISOString(),
      metadata: {
        ...inherited,
        ...(cancelOutcome !== undefined ? { sandbox_outcome: cancelOutcome } : {}),
        ...(reason ? { cancellation_reason: reason } : {}),
      },
    };
    try {
      // The original's record never changes once written: read outside the append.
      const originalRecord = await fiscalRecordsRepo.getForTransaction(db, original.id);
      // The first attempt keeps the key it always had; each later one (after a refusal: the
      // original names none) its number, from the REFUSED cancellations only: two concurrent
      // cancels of one attempt then collide on one key and one wins, also when the other's
      // count runs after the winner committed (counting every cancellation, it would take
      // the next number and issue a second cancellation).
      const attempt = (await transactionsRepo.countCancellations(db, original.id, statuses.refused)) + 1;
      const key = attempt === 1 ? `${CANCEL_KEY_PREFIX}${original.id}` : `${CANCEL_KEY_PREFIX}${original.id}:${attempt}`;
      const entry: TransactionAppend = {
        id: newId(), auth, system, location, draft, kind: 'cancellation', type: 'cancellation',
        idempotencyKey: key, hash: key, requestPayload: { reason: reason ?? null, ...(cancelOutcome !== undefined ? { sandbox_outcome: cancelOutcome } : {}) },
        sandboxMode: original.sandbox_mode ?? 'stub', original, originalRecord, ...keys,
      };
      // A sale a standing sale replaces: the 409 read before the ledger takes the entry.
      await checkReplaced(db, entry);
      const stored = await append(entry);
      if (!stored.created) return { transaction: toTransactionView(stored.row), created: false };
      const settled = await settleInline(stored.row, stored.jobId, system, undefined);
      return { transaction: toTransactionView(settled), created: true };
    } catch (err) {
      if (isUniqueViolation(err)) {
        const winner = await transactionsRepo.findCancellation(db, original.id);
        if (winner) return { transaction: toTransactionView(winner), created: false };
      }
      throw err;
    }
  }

  /** Corrections of accepted records (services/corrections.ts): POST /v1/transactions/{id}/correct. */
  const corrections = createCorrectionService({
    db, clock, ledger: deps.ledger, locations: deps.locations, software: deps.software, maxAttempts: deps.maxAttempts,
    notify: () => deps.submitter?.notify(), keysFor: signingKeyFor,
  });

  return { create, preview, get, list, fiscalRecord, qrImage, cancel, correct: corrections.correct, stop };
}

export type TransactionService = ReturnType<typeof createTransactionService>;
