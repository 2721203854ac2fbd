/**
 * Portuguese document series: `series` maps a SAF-T (PT) InvoiceType to the series
 * used for it.
 *
 * Since 2023 every document carries an ATCUD (Decreto-Lei 28/2019, Portaria 195/2020):
 * "<validation code>-<sequential number>", where the validation code is the one AT
 * issues when the series is communicated. A series without its code cannot issue a
 * single legal document, so every entry needs one (the spec names FT only as the
 * example).
 */
import { badRequest } from '../../core/errors.ts';
import { KEY_SEPARATORS } from '../shared/chain-key.ts';
import { isPlainObject, rejectUnknownFields, requiredString } from '../shared/config-fields.ts';

/** SAF-T (PT) InvoiceType codes this service issues: invoice, simplified invoice, invoice-receipt, credit note, debit note. */
export const DOCUMENT_TYPES = ['FT', 'FS', 'FR', 'NC', 'ND'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export interface SeriesEntry {
  prefix: string;
  atcud_code: string;
}

/** AT's validation codes are at least 8 characters, letters and digits. */
const ATCUD_CODE = /^[A-Za-z0-9]{8,}$/;

/**
 * The series identifier sits inside the SAF-T InvoiceNo "<type> <series>/<number>"
 * (SAFTPT1.04_01.xsd: pattern `[^ ]+ [^/^ ]+/[0-9]+`, at most 60 characters), so it cannot
 * contain a space, a slash or a caret, and it leaves room for the type, the two separators
 * and a 10-digit number: at most 46 characters. A longer or other one made every document
 * of the series invalid in the month's SAF-T file (the sandbox took it).
 */
const PREFIX_FORBIDDEN = /[\s/^]/;
export const PREFIX_MAX = 46;
/**
 * Allowed by the InvoiceNo pattern, yet refused in a new or changed prefix: `:` and `#`
 * separate the parts of the series' chain key (shared/chain-key.ts `KEY_SEPARATORS`: a test
 * series `B:live` would share the live chain of `B`, a series `B#annulments` the
 * annulments of `B`), and `*` separates the fields of the document's QR code (AT
 * "Especificações Técnicas Código QR", FORMATS.md §7.3: field G is the InvoiceNo). A prefix
 * stored before the rule is kept (`readSeries`'s `stored`): its chain keeps its key.
 */
const PREFIX_SEPARATORS = [...KEY_SEPARATORS, '*'] as const;
export const prefixSeparatorError = (type: DocumentType): string =>
  `country_config.series[${type}].prefix must not contain ":", "#" or "*" (they separate the parts of its chain key and the fields of the QR code)`;
/** The printed ATCUD "<code>-<number>" is at most 70 characters (QR field H): a 10-digit number leaves 59. */
export const ATCUD_CODE_MAX = 59;

/** `stored`: the series the location's stored config holds (on a PATCH), whose prefixes stay allowed as they are. */
export function readSeries(raw: unknown, stored?: unknown): Partial<Record<DocumentType, SeriesEntry>> {
  if (raw === undefined || raw === null) throw badRequest('country_config.series is required');
  if (!isPlainObject(raw)) throw badRequest('country_config.series must be an object');
  const keys = Object.keys(raw);
  if (keys.length === 0) throw badRequest('country_config.series is required');

  const out: Partial<Record<DocumentType, SeriesEntry>> = {};
  for (const key of keys) {
    const type = DOCUMENT_TYPES.find((t) => t === key);
    if (type === undefined) {
      throw badRequest(`country_config.series key ${key} is not a supported document type (FT, FS, FR, NC, ND)`);
    }
    out[type] = readEntry(type, raw[key], storedPrefixOf(stored, type));
  }
  return out;
}

const storedPrefixOf = (stored: unknown, type: DocumentType): unknown => {
  const entry = isPlainObject(stored) ? stored[type] : undefined;
  return isPlainObject(entry) ? entry.prefix : undefined;
};

function readEntry(type: DocumentType, raw: unknown, storedPrefix: unknown): SeriesEntry {
  const path = `country_config.series[${type}]`;
  if (!isPlainObject(raw)) throw badRequest(`${path} must be an object`);
  rejectUnknownFields(raw, ['prefix', 'atcud_code'], 'SAF-T PT', path);

  const prefix = requiredString(raw, 'prefix', `${path}.prefix is required`, path);
  if (PREFIX_FORBIDDEN.test(prefix)) throw badRequest(`${path}.prefix must not contain spaces, "/" or "^"`);
  if (PREFIX_SEPARATORS.some((c) => prefix.includes(c)) && prefix !== storedPrefix) throw badRequest(prefixSeparatorError(type));
  if (Array.from(prefix).length > PREFIX_MAX) throw badRequest(`${path}.prefix must be at most ${PREFIX_MAX} characters (the SAF-T InvoiceNo "<type> <prefix>/<number>" holds 60)`);
  const atcud_code = requiredString(raw, 'atcud_code', `${path}.atcud_code is required`, path);
  if (!ATCUD_CODE.test(atcud_code)) throw badRequest(`${path}.atcud_code must be at least 8 alphanumeric characters`);
  if (atcud_code.length > ATCUD_CODE_MAX) throw badRequest(`${path}.atcud_code must be at most ${ATCUD_CODE_MAX} characters (the printed ATCUD "<code>-<number>" holds 70)`);
  return { prefix, atcud_code };
}
