/**
 * Small readers shared by every fiscal system's `country_config` validator.
 *
 * Each reader checks one field and throws a 400 with the exact client-facing message.
 * Conventions (the same for every system, so clients meet one set of rules):
 * - `null` and absent are the same thing; a string that is empty after trimming is
 *   "missing" too, so a required field gets its "is required" message;
 * - strings are stored trimmed;
 * - a field that is not in the system's table is refused, never dropped: a typo in a
 *   fiscal config (e.g. `teritory`) must not pass silently and surface months later as
 *   a rejected invoice.
 */
import { badRequest } from '../../core/errors.ts';

/** A JSON object as the validators see it. */
export type ConfigObject = Record<string, unknown>;

/** Longest string we accept in any config field; the authorities' own limits are lower. */
export const MAX_FIELD_LENGTH = 255;

export const isPlainObject = (value: unknown): value is ConfigObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The raw `country_config` as an object: `undefined` when absent (or null), a 400 when it
 * is some other JSON value (array, string, number...).
 */
export function readConfigObject(config: unknown): ConfigObject | undefined {
  if (config === undefined || config === null) return undefined;
  if (!isPlainObject(config)) throw badRequest('country_config must be an object');
  return config;
}

/**
 * Refuses the first field of `obj` that is not in `known`.
 * `path` is the message prefix (`country_config`, or `country_config.series[FT]` for a
 * nested object); `system` names the fiscal system in the message.
 */
export function rejectUnknownFields(obj: ConfigObject, known: readonly string[], system: string, path = 'country_config'): void {
  for (const field of Object.keys(obj)) {
    if (!known.includes(field)) throw badRequest(`${path}.${field} is not a known field for ${system}`);
  }
}

/**
 * An optional string field, trimmed; `undefined` when absent, null or blank.
 * A non-string value is a 400 (`<path>.<field> must be a string`).
 */
export function optionalString(obj: ConfigObject | undefined, field: string, path = 'country_config'): string | undefined {
  const value = obj?.[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${path}.${field} must be a string`);
  const trimmed = value.trim();
  if (trimmed.length > MAX_FIELD_LENGTH) {
    throw badRequest(`${path}.${field} must be at most ${MAX_FIELD_LENGTH} characters`);
  }
  return trimmed === '' ? undefined : trimmed;
}

/** A required string field, trimmed; absent, null or blank → 400 `missingMessage`. */
export function requiredString(obj: ConfigObject | undefined, field: string, missingMessage: string, path = 'country_config'): string {
  const value = optionalString(obj, field, path);
  if (value === undefined) throw badRequest(missingMessage);
  return value;
}

/**
 * A required field whose only message is a format message (e.g. the Italian
 * `codice_fiscale`): absent, blank, a non-string or a value not matching `pattern`
 * all give `message`.
 */
export function patternString(obj: ConfigObject | undefined, field: string, pattern: RegExp, message: string): string {
  const value = obj?.[field];
  if (typeof value !== 'string') throw badRequest(message);
  const trimmed = value.trim();
  if (!pattern.test(trimmed)) throw badRequest(message);
  return trimmed;
}

/** An optional field that, when present and not blank, must match `pattern`. */
export function optionalPatternString(obj: ConfigObject | undefined, field: string, pattern: RegExp, message: string): string | undefined {
  const value = obj?.[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(message);
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (!pattern.test(trimmed)) throw badRequest(message);
  return trimmed;
}

/** A required string that must be one of `allowed` (exact match after trimming). */
export function oneOf<T extends string>(obj: ConfigObject | undefined, field: string, allowed: readonly T[], message: string): T {
  const value = obj?.[field];
  const trimmed = typeof value === 'string' ? value.trim() : undefined;
  const found = allowed.find((a) => a === trimmed);
  if (found === undefined) throw badRequest(message);
  return found;
}

/** An optional `https://` URL (a timestamp authority, say): anything else is a 400. */
export function optionalHttpsUrl(obj: ConfigObject | undefined, field: string): string | undefined {
  const value = optionalString(obj, field);
  if (value === undefined) return undefined;
  const message = `country_config.${field} must be an https URL`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(message);
  }
  if (url.protocol !== 'https:' || url.hostname === '') throw badRequest(message);
  return value;
}

/**
 * The normalized config: the given entries with `undefined` values left out, so an
 * optional field the client did not send is not stored as a key.
 */
export function compact(entries: Record<string, unknown>): ConfigObject {
  const out: ConfigObject = {};
  for (const [key, value] of Object.entries(entries)) {
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** A location `tax_id` that counts as given: null, undefined and blank do not. */
export const givenTaxId = (taxId: string | null | undefined): string | undefined =>
  taxId === null || taxId === undefined || taxId.trim() === '' ? undefined : taxId;

/** A string config field, or undefined. */
export function configString(config: Record<string, unknown>, field: string): string | undefined {
  const v = config[field];
  return typeof v === 'string' && v !== '' ? v : undefined;
}
