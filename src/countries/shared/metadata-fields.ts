/**
 * Readers for transaction `metadata` fields, shared by every system's
 * `validateTransaction`. Same conventions as the config readers (config-fields.ts):
 * `null`, absent and blank strings are "not given"; strings are stored trimmed; each
 * reader throws a 400 with the exact client-facing message.
 */
import { badRequest } from '../../core/errors.ts';
import type { Country, TransactionDraft } from '../types.ts';
import { requireEur } from './currency.ts';
import { readSandboxOutcome } from './sandbox.ts';

export type Metadata = Record<string, unknown>;

const absent = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/**
 * An optional string; a non-string, or one not matching `pattern`, is a 400 `message`.
 * `allowInteger`: a non-negative integer is taken as its decimal text (an invoice
 * number sent as `42`).
 */
export function optionalText(
  meta: Metadata,
  field: string,
  message: string,
  pattern?: RegExp,
  allowInteger = false,
): string | undefined {
  const raw = meta[field];
  if (absent(raw)) return undefined;
  let value: string;
  if (typeof raw === 'string') value = raw.trim();
  else if (allowInteger && typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0) value = String(raw);
  else throw badRequest(message);
  if (pattern !== undefined && !pattern.test(value)) throw badRequest(message);
  return value;
}

/** An optional value among `allowed` (exact match after trimming). */
export function optionalChoice<T extends string>(meta: Metadata, field: string, allowed: readonly T[], message: string): T | undefined {
  const raw = meta[field];
  if (absent(raw)) return undefined;
  const value = typeof raw === 'string' ? raw.trim() : undefined;
  const found = allowed.find((a) => a === value);
  if (found === undefined) throw badRequest(message);
  return found;
}

export function optionalBoolean(meta: Metadata, field: string): boolean | undefined {
  const raw = meta[field];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'boolean') throw badRequest(`metadata.${field} must be a boolean`);
  return raw;
}

/** An optional amount in integer minor units, >= 0 (like every amount of the request). */
export function optionalAmount(meta: Metadata, field: string): number | undefined {
  const raw = meta[field];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) {
    throw badRequest(`metadata.${field} must be a non-negative integer amount in minor units`);
  }
  return raw;
}

export function optionalCount(meta: Metadata, field: string): number | undefined {
  const raw = meta[field];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) {
    throw badRequest(`metadata.${field} must be a non-negative integer`);
  }
  return raw;
}

/**
 * The rules every system applies first: the currency, and the sandbox magic value.
 * Returns the client's metadata (unknown keys are kept: metadata also carries the
 * integrator's own references) with `sandbox_outcome` normalized.
 */
export function baseMetadata(tx: TransactionDraft, country: Country): Metadata {
  requireEur(tx, country);
  const meta: Metadata = { ...tx.metadata };
  const outcome = readSandboxOutcome(meta);
  if (outcome === undefined) delete meta.sandbox_outcome;
  else meta.sandbox_outcome = outcome;
  return meta;
}

/** The metadata with `undefined` entries removed, so defaults that do not apply leave no key. */
export function withoutUndefined(meta: Metadata): Metadata {
  const out: Metadata = {};
  for (const [k, v] of Object.entries(meta)) if (v !== undefined) out[k] = v;
  return out;
}

/** The customer's tax id from `customer_context` (`nif` or `tax_id`), when given. */
export function customerTaxId(tx: TransactionDraft): string | undefined {
  const ctx = tx.customer_context;
  if (ctx === null) return undefined;
  for (const key of ['nif', 'tax_id']) {
    const v = ctx[key];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return undefined;
}

/** A metadata string (already validated and defaulted by validateTransaction). */
export function metaString(tx: TransactionDraft, field: string): string | undefined {
  const v = tx.metadata[field];
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
}
