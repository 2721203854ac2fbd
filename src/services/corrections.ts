/**
 * Corrections of accepted records (POST /v1/transactions/{id}/correct; beyond the spec, see
 * the es-correct decisions): a transaction its authority accepted (VERI*FACTU: "accepted with
 * errors" above all) is corrected by a second record of the same document, built by its
 * system (`FiscalSystem.correct`), appended through the ledger (a link of the transaction's
 * chain for a chained system, a side sequence otherwise) and sent by the submit worker (a
 * `submit_correction` job: jobs/tasks/submit-correction.ts). The transaction keeps its
 * record, number, amount and status; `response_payload.correction` follows the correction,
 * and once the authority accepts it `response_payload.authority` / `warnings` are its answer.
 *
 * Only what a document may be corrected in without a rectifying one changes: the customer
 * and the descriptive metadata the system names. Amounts, lines, dates and the number need
 * a refund (or a cancellation and a new sale): 400.
 */
import crypto from 'node:crypto';
import { badRequest, conflict, forbidden, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { environmentMismatch } from '../core/permissions.ts';
import { requestHash, sameRequest, type LegacyHash } from '../core/request-hash.ts';
import { stableHash } from '../core/stable-json.ts';
import type { TransactionDraft } from '../core/transaction.ts';
import { getSystem, statuses } from '../countries/registry.ts';
import { readSandboxOutcome } from '../countries/shared/sandbox.ts';
import type { FiscalSystem, LocationForFiscal, RecordKey, SigningKey, SoftwareIdentity } from '../countries/types.ts';
import type { Ledger, LedgerEntry } from '../ledger/types.ts';
import { isUniqueViolation, type Db, type Queryable } from '../store/db.ts';
import { correctionsRepo, lastAcceptedCorrection, type CorrectionRow } from '../store/repos/corrections-repo.ts';
import { fiscalRecordsRepo } from '../store/repos/fiscal-records-repo.ts';
import { transactionsRepo, type TransactionRow } from '../store/repos/transactions-repo.ts';
import type { Clock } from '../core/clock.ts';
import type { AuthContext } from './auth-context.ts';
import type { LocationService } from './locations.ts';
import { issuingLocation } from './issuing-location.ts';
import { CORRECTION_JOB, submitJobMaxAttempts, toTransactionView, type TransactionView } from './transaction-view.ts';

/** The body's fields: what a correction may change, and the sandbox's rehearsal value. */
const BODY_FIELDS = ['customer_context', 'metadata', 'sandbox_outcome'];

export const NOT_CORRECTABLE_FIELD = (field: string): string =>
  `${field} cannot be corrected: a correction changes only customer_context and descriptive metadata; ` +
  'amounts, lines, dates and the invoice number need a refund (or a cancellation and a new sale)';
export const NOTHING_TO_CORRECT = 'nothing to correct: give customer_context and/or metadata';
export const CORRECTION_PENDING = 'transaction cannot be corrected: an earlier correction of it is still waiting for the authority\'s answer';

export interface CorrectionDeps {
  db: Db;
  clock: Clock;
  ledger: Ledger;
  locations: LocationService;
  software: SoftwareIdentity;
  maxAttempts: number;
  /** A job was enqueued: a worker of this process should look now. */
  notify?: (() => void) | undefined;
  /** The keys the record is signed with (services/transactions.ts `signingKeyFor`). */
  keysFor(system: FiscalSystem, location: LocationForFiscal, environment: 'test' | 'live', mode: 'stub' | 'authority'): Promise<{ signingKey?: SigningKey | undefined; recordKey?: RecordKey | undefined }>;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How the transaction shows a correction (`response_payload.correction`). */
export function correctionView(c: Pick<CorrectionRow, 'id' | 'status' | 'changes' | 'created_at' | 'completed_at' | 'response'>): Record<string, unknown> {
  return {
    id: c.id, status: c.status, changes: c.changes,
    requested_at: c.created_at.toISOString(), completed_at: c.completed_at ? c.completed_at.toISOString() : null,
    ...c.response,
  };
}

/** The body read before anything is looked up: a malformed body is a 400 whatever the id. */
function readBody(body: unknown): { changes: Record<string, unknown>; sandboxOutcome: string | undefined } {
  if (!isObj(body)) throw badRequest('request body must be a JSON object');
  const foreign = Object.keys(body).find((k) => !BODY_FIELDS.includes(k));
  if (foreign !== undefined) throw badRequest(NOT_CORRECTABLE_FIELD(foreign));
  const changes: Record<string, unknown> = {};
  if (body.customer_context !== undefined) {
    if (body.customer_context !== null && !isObj(body.customer_context)) throw badRequest('customer_context must be an object');
    changes.customer_context = body.customer_context;
  }
  if (body.metadata !== undefined) {
    if (!isObj(body.metadata)) throw badRequest('metadata must be an object');
    if ('sandbox_outcome' in body.metadata) throw badRequest('metadata.sandbox_outcome cannot be corrected: give sandbox_outcome at the top level of the body');
    if (Object.keys(body.metadata).length > 0) changes.metadata = body.metadata;
  }
  if (Object.keys(changes).length === 0) throw badRequest(NOTHING_TO_CORRECT);
  return { changes, sandboxOutcome: readSandboxOutcome({ sandbox_outcome: body.sandbox_outcome }) };
}

/**
 * A correction request as its idempotency compares it: the hash kept with it
 * (`request_hash`, core/request-hash.ts `r1:`: the body's text as received) and the request
 * as read, the JSON value compared when a retry's text differs. The value is the request as
 * read (the changes, the sandbox outcome, the transaction) rather than the body as sent:
 * it is what a correction keeps (`changes`, its draft's sandbox outcome; no column holds the
 * body), and what the hash before `r1:` covered, so a retry that differs only in what
 * reading drops (an empty `metadata` beside a customer, spaces around the sandbox outcome)
 * is the same request, as it was.
 */
interface CorrectionRequest {
  hash: string;
  read: { transaction: string; changes: Record<string, unknown>; sandbox_outcome: string | null };
}

/** A correction's hash before `r1:` (corrections stored until then): the stable hash of the request as read. */
const correctionLegacyHash: LegacyHash = (r) => stableHash(r.body);

/** What a stored correction keeps of its request as read (`CorrectionRequest.read`). */
function readRequestOf(c: CorrectionRow): CorrectionRequest['read'] {
  const outcome = c.draft.metadata.sandbox_outcome;
  return { transaction: c.transaction_id, changes: c.changes, sandbox_outcome: typeof outcome === 'string' ? outcome : null };
}

export function createCorrectionService(deps: CorrectionDeps) {
  const { db, clock } = deps;

  /** The transaction as it is now, for an answer. */
  async function current(id: string): Promise<TransactionView> {
    return toTransactionView((await transactionsRepo.getById(db, id))!);
  }

  /**
   * The same key again: the same request gets the transaction; another request (another
   * body, or the same body for another transaction) is a 409. Compared as a create's
   * (core/request-hash.ts): the body's text as received (`r1:`), else the JSON value; hashes
   * stored before `r1:` as they were made.
   */
  function replayOf(existing: CorrectionRow, id: string, request: CorrectionRequest): string {
    const stored = { request_hash: existing.request_hash, request_payload: readRequestOf(existing) };
    const same = existing.transaction_id === id && sameRequest(stored, { body: request.read, sandbox: undefined }, request.hash, correctionLegacyHash);
    if (!same) throw conflict('idempotency key already used with a different request');
    return existing.transaction_id;
  }

  /** Why this transaction cannot be corrected now (409), or null. */
  function refusal(t: TransactionRow): string | null {
    if (t.type === 'cancellation') return 'a cancellation cannot be corrected: correct the transaction it cancels, or cancel that one again';
    if (t.cancelled_by_id !== null || t.status === 'cancelled') return 'transaction cannot be corrected: it is cancelled (or being cancelled)';
    if (!statuses.isAccepted(t.status)) {
      return `transaction cannot be corrected: its status is ${t.status}; only a transaction its authority accepted (success) can be corrected`;
    }
    return null;
  }

  async function correct(
    auth: AuthContext, id: string, body: unknown, headers: { idempotencyKey?: string | undefined; bodyText?: string | undefined },
  ): Promise<{ transaction: TransactionView; created: boolean }> {
    const { changes, sandboxOutcome } = readBody(body);
    const key = headers.idempotencyKey ?? crypto.randomUUID();
    if (key.length < 1 || key.length > 255) throw badRequest('Idempotency-Key must be 1-255 characters');
    // The endpoint reads no sandbox header (a correction is sent as its transaction was).
    const request: CorrectionRequest = {
      hash: requestHash({ body, text: headers.bodyText, sandbox: undefined }),
      read: { transaction: id, changes, sandbox_outcome: sandboxOutcome ?? null },
    };
    if (headers.idempotencyKey !== undefined) {
      const existing = await correctionsRepo.findByIdempotencyKey(db, auth.accountId, auth.environment, key);
      if (existing) return { transaction: await current(replayOf(existing, id, request)), created: false };
    }

    const t = await transactionsRepo.get(db, auth.accountId, id);
    if (!t) throw notFound('transaction not found');
    if (t.environment !== auth.environment) throw forbidden(environmentMismatch(auth.environment, t.environment));
    const system = t.system ? getSystem(t.system) : undefined;
    const rule = system?.correct;
    // A system without corrections: the transaction's kind, not the request, is what cannot be (409).
    if (!system || !rule) throw conflict(`transaction cannot be corrected: ${t.system ?? 'its'} records cannot be corrected after acceptance; issue a refund or cancel it`);
    const refused = refusal(t);
    if (refused) throw conflict(refused);
    const foreignMeta = Object.keys((changes.metadata ?? {}) as Record<string, unknown>).find((k) => !rule.metadataFields.includes(k));
    if (foreignMeta !== undefined) {
      throw badRequest(`${NOT_CORRECTABLE_FIELD(`metadata.${foreignMeta}`)}; the metadata a correction may change: ${rule.metadataFields.join(', ') || 'none'}`);
    }

    const earlier = await correctionsRepo.ofTransaction(db, t.id);
    if (earlier.some((c) => c.status === 'pending')) throw conflict(CORRECTION_PENDING);
    // Built on what the authority holds: the last accepted correction, else the original.
    const lastAccepted = lastAcceptedCorrection(earlier);
    const base: TransactionDraft = lastAccepted?.draft ?? t.normalized;
    const earlierRefused = earlier.slice(lastAccepted ? earlier.indexOf(lastAccepted) + 1 : 0).some((c) => c.status === 'rejected');

    // The location as a cancel reads it: one deleted since still corrects what it issued.
    const { location } = await issuingLocation(deps.locations, db, auth, t, 'transaction cannot be corrected: its location no longer uses the system that issued it');
    const original = await fiscalRecordsRepo.getForTransaction(db, t.id);
    if (!original || original.kind !== 'record') throw conflict('transaction cannot be corrected: it has no record of its own');

    // The stub's rehearsal value is the correction's own, never the original's (as for a cancel).
    const { sandbox_outcome: _inherited, ...baseMeta } = base.metadata;
    const merged: TransactionDraft = {
      ...base,
      customer_context: 'customer_context' in changes ? (changes.customer_context as TransactionDraft['customer_context']) : base.customer_context,
      metadata: { ...baseMeta, ...((changes.metadata ?? {}) as Record<string, unknown>) },
    };
    const mode = t.sandbox_mode ?? 'stub';
    // Validated as of the document's issue time: the correction speaks of that invoice.
    const metadata = rule.validate(merged, base, { location, environment: t.environment, now: original.created_at, sandboxMode: mode });
    const draft: TransactionDraft = { ...merged, metadata: { ...metadata, ...(sandboxOutcome !== undefined ? { sandbox_outcome: sandboxOutcome } : {}) } };
    const keys = await deps.keysFor(system, location, t.environment, mode);

    const correctionId = newId();
    const recordId = newId();
    // A chained system's correction is a link of the transaction's own chain (VERI*FACTU: a
    // RegistroAlta chained like any other); otherwise a side sequence, so the chain stays whole.
    const chainKey = system.capabilities.chained ? original.chain_key : `${original.chain_key}#corrections`;
    const ordered = system.capabilities.chained && system.capabilities.submission === 'realtime';
    const entry: LedgerEntry = {
      chainKey,
      build: (link, now) => {
        const record = rule.build({
          transactionId: t.id, tx: draft, location, environment: t.environment, now, chain: link, software: deps.software,
          signingKey: keys.signingKey, recordKey: keys.recordKey, earlierRefused,
          original: {
            transactionId: t.id, documentNumber: original.document_number, issuedAt: original.created_at.toISOString(),
            fiscalId: t.fiscal_id, upstreamId: t.fiscal_id_upstream, body: original.body,
          },
        });
        return {
          record: {
            id: recordId, transaction_id: null, account_id: t.account_id, system: system.key, kind: 'correction',
            fingerprint: record.fingerprint, fiscal_id: record.fiscalId, document_number: record.documentNumber ?? null, qr_data: record.qrData,
            content_type: record.contentType, body: record.body, placeholder: record.placeholder,
          },
          linkData: record.linkData ?? null,
          jobs: [{
            input: {
              kind: CORRECTION_JOB, accountId: t.account_id, transactionId: t.id, maxAttempts: submitJobMaxAttempts(system, deps.maxAttempts), runAt: now,
              payload: { correction_id: correctionId },
            },
            inChainOrder: ordered,
          }],
        };
      },
      afterWrite: async (q: Queryable, _built, now) => {
        // Under the transaction's lock: a cancel or another correction committed meanwhile wins.
        const locked = await transactionsRepo.getById(q, t.id, { forUpdate: true });
        const late = locked ? refusal(locked) : 'transaction not found';
        if (late) throw conflict(late);
        const row: CorrectionRow = {
          id: correctionId, transaction_id: t.id, account_id: t.account_id, environment: t.environment, idempotency_key: key, request_hash: request.hash,
          record_id: recordId, status: 'pending', changes, draft, response: {}, created_at: now, updated_at: now, completed_at: null,
        };
        await correctionsRepo.insert(q, row);
        await transactionsRepo.update(q, t.id, { response_payload: { ...locked!.response_payload, correction: correctionView(row) } }, now);
      },
    };

    try {
      const appended = await deps.ledger.append(entry);
      if (appended.created) await appended.ready;
    } catch (err) {
      if (isUniqueViolation(err, 'transaction_corrections_idempotency')) {
        const winner = await correctionsRepo.findByIdempotencyKey(db, auth.accountId, auth.environment, key);
        if (winner) return { transaction: await current(replayOf(winner, id, request)), created: false };
      }
      if (isUniqueViolation(err, 'transaction_corrections_one_pending')) throw conflict(CORRECTION_PENDING);
      throw err;
    }
    deps.notify?.();
    return { transaction: await current(t.id), created: true };
  }

  return { correct };
}
