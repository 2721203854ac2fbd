/**
 * The deterministic sandbox authority (DECISIONS "Sandbox"): with test keys every
 * system's submission is answered in-process, and integrators rehearse failures with
 * metadata `sandbox_outcome`:
 *   accept (default) | reject:<authority code> | timeout | error:<authority code>
 *
 * Everything an answer carries (CSV, MARK, IdentificativoSdI…) is derived from the
 * transaction id by hashing, so the same transaction always gets the same answer:
 * tests and retried jobs see stable ids, and nothing depends on a clock or randomness.
 */
import { createHash } from 'node:crypto';
import { badRequest } from '../../core/errors.ts';
import {
  TransportError,
  type AuthorityCode,
  type AuthorityOutcome,
  type BatchOutcome,
  type RenderHint,
  type StoredRecord,
  type SubmitContext,
  type SystemKey,
  type TransactionStatus,
} from '../types.ts';

export type SandboxOutcome =
  | { kind: 'accept' }
  | { kind: 'reject'; code: string }
  | { kind: 'timeout' }
  | { kind: 'error'; code: string };

export const SANDBOX_OUTCOME_INVALID = 'metadata.sandbox_outcome must be accept, reject:<code>, timeout or error:<code>';

/** Authority codes are short tokens: 3000, 00404, 0429, B4_2000003… */
const CODE = /^[A-Za-z0-9._-]{1,40}$/;

/** The parsed magic value, or null when `value` is not one. */
export function parseSandboxOutcome(value: string): SandboxOutcome | null {
  const v = value.trim();
  if (v === 'accept') return { kind: 'accept' };
  if (v === 'timeout') return { kind: 'timeout' };
  const m = /^(reject|error):(.*)$/.exec(v);
  if (m === null || !CODE.test(m[2] ?? '')) return null;
  return m[1] === 'reject' ? { kind: 'reject', code: m[2]! } : { kind: 'error', code: m[2]! };
}

/** Validates `metadata.sandbox_outcome` (absent → undefined), returning it trimmed. */
export function readSandboxOutcome(meta: Record<string, unknown>): string | undefined {
  const raw = meta.sandbox_outcome;
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string' || parseSandboxOutcome(raw) === null) throw badRequest(SANDBOX_OUTCOME_INVALID);
  return raw.trim();
}

/** The outcome a stored record asks for; a missing or unreadable value means accept. */
export function outcomeOf(record: StoredRecord): SandboxOutcome {
  const raw = record.tx.metadata.sandbox_outcome;
  return (typeof raw === 'string' ? parseSandboxOutcome(raw) : null) ?? { kind: 'accept' };
}

// ---- deterministic ids ------------------------------------------------------------

/** 32+ bytes derived from a transaction id and a label (one label per kind of id). */
function digest(seed: string, label: string, bytes: number): Buffer {
  const chunks: Buffer[] = [];
  for (let i = 0; chunks.length * 32 < bytes; i++) {
    chunks.push(createHash('sha256').update(`${label}:${i}:${seed}`, 'utf8').digest());
  }
  return Buffer.concat(chunks).subarray(0, bytes);
}

/** `length` decimal digits, the first one not zero (MARK, IdentificativoSdI). */
export function derivedDigits(seed: string, label: string, length: number): string {
  const bytes = digest(seed, label, length);
  return [...bytes].map((b, i) => (i === 0 ? 1 + (b % 9) : b % 10)).join('');
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** `length` uppercase letters and digits (AEAT CSV). */
export function derivedAlnum(seed: string, label: string, length: number): string {
  return [...digest(seed, label, length)].map((b) => ALNUM[b % ALNUM.length]).join('');
}

/** `length` uppercase hexadecimal characters (myDATA uid, authentication code). */
export function derivedHex(seed: string, label: string, length: number): string {
  return digest(seed, label, Math.ceil(length / 2)).toString('hex').slice(0, length).toUpperCase();
}

// ---- the stub authority -------------------------------------------------------------

/** What an accepting authority returns for one record. */
export interface Acceptance {
  fiscalId?: string | undefined;
  upstreamId?: string | undefined;
  status?: TransactionStatus | undefined;
  response: Record<string, unknown>;
  renderHints?: RenderHint[] | undefined;
}

export interface SandboxSpec {
  system: SystemKey;
  /** The authority's name, for messages ("AEAT", "SdI"). */
  authority: string;
  codes: Readonly<Record<string, AuthorityCode>>;
  accept(record: StoredRecord, ctx: SubmitContext): Acceptance;
  /** Status of a rejected record when the system has its own (Italy SDI: `rejected`, an NS). */
  rejectedStatus?: TransactionStatus | undefined;
}

const unknownCodeMessage = (authority: string, code: string) =>
  `${authority} rejected the record with code ${code} (no description is known for this code)`;

/** Answers a submission as the stub authority of `spec.system`. */
export function runSandbox(record: StoredRecord, ctx: SubmitContext, spec: SandboxSpec): AuthorityOutcome {
  const outcome = outcomeOf(record);
  const base = { sandbox: true, system: spec.system, environment: ctx.environment, kind: record.kind };
  switch (outcome.kind) {
    case 'accept': {
      const a = spec.accept(record, ctx);
      return {
        kind: 'accepted',
        fiscalId: a.fiscalId,
        upstreamId: a.upstreamId,
        status: a.status,
        response: { ...base, outcome: 'accept', ...a.response },
        renderHints: a.renderHints,
      };
    }
    case 'reject': {
      const known = spec.codes[outcome.code];
      // A correction (`StoredRecord.correction`) changes a document the authority holds: an
      // "already registered" code is not its success but a refusal (what the authority holds
      // stands uncorrected), so a client rehearsing one on a correction gets a refused correction.
      if (known?.duplicate === true && record.correction !== true) {
        // The authority already holds this record: what it accepted before stands.
        const a = spec.accept(record, ctx);
        return {
          kind: 'duplicate',
          fiscalId: a.fiscalId,
          upstreamId: a.upstreamId,
          response: { ...base, outcome: 'duplicate', code: outcome.code, message: known.message, ...a.response },
        };
      }
      const message = known?.message ?? unknownCodeMessage(spec.authority, outcome.code);
      return {
        kind: 'rejected',
        code: outcome.code,
        message,
        status: spec.rejectedStatus,
        response: { ...base, outcome: 'reject', code: outcome.code, message },
      };
    }
    case 'timeout':
      throw new TransportError('timeout', `sandbox: ${spec.authority} did not answer in time (sandbox_outcome timeout)`);
    case 'error': {
      const message = spec.codes[outcome.code]?.message ?? `${spec.authority} is temporarily unavailable (code ${outcome.code})`;
      return {
        kind: 'retry_later',
        code: outcome.code,
        message,
        response: { ...base, outcome: 'error', code: outcome.code, message },
      };
    }
  }
}

/**
 * Answers a multi-record request (`submitMany`) as the stub authority: each record as
 * `runSandbox` answers it alone, so a record's ids and outcome do not depend on the
 * company it travels in. A record that asks for `timeout` is a retriable failure of its
 * own (code `timeout`, the same code and message a lone transport fault records) rather
 * than a fault of the whole request: one rehearsed timeout must not hold back the records
 * sent beside it, and the records after it wait for it anyway (the core's ordering rule).
 */
export function runSandboxMany(records: readonly StoredRecord[], ctx: SubmitContext, spec: SandboxSpec): BatchOutcome {
  return {
    kind: 'records',
    outcomes: records.map((record): AuthorityOutcome => {
      try {
        return runSandbox(record, ctx, spec);
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        return {
          kind: 'retry_later', code: err.code, message: err.message,
          response: { sandbox: true, system: spec.system, environment: ctx.environment, kind: record.kind, outcome: 'timeout' },
        };
      }
    }),
  };
}

/**
 * `submit` for a system whose protocol client is not written yet: the stub answers in
 * `stub` mode; `authority` mode is a transport fault (the core does not offer it while
 * `capabilities.authorityTransport` is false).
 */
export function stubOnlySubmit(
  spec: SandboxSpec,
): (record: StoredRecord, ctx: SubmitContext) => Promise<AuthorityOutcome> {
  return async (record, ctx) => {
    if (ctx.mode === 'stub') return runSandbox(record, ctx, spec);
    throw new TransportError('not_implemented', `${spec.system}: the ${spec.authority} protocol client is not implemented yet`);
  };
}
