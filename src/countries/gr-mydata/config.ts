/**
 * Greece (AADE myDATA) location config.
 * Fields: spec "Greece country_config" table.
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationConfigInput } from '../types.ts';
import { compact, givenTaxId, oneOf, readConfigObject, rejectUnknownFields, requiredString } from '../shared/config-fields.ts';
import { keyPartAllowed } from '../shared/chain-key.ts';
import { isValidAfm } from './afm.ts';

const KNOWN_FIELDS = [
  'afm',
  'branch',
  'legal_name',
  'aade_user_id',
  'subscription_key',
  'env',
  'document_class',
  'default_series',
] as const;

/** The myDATA API key (Ocp-Apim-Subscription-Key header): sealed at rest, masked on read. */
export const GREECE_SECRET_FIELDS = ['subscription_key'] as const;

/**
 * myDATA endpoints: AADE's own (sandbox/production) for an entity sending its own
 * documents, or the e-invoicing provider channel (provider_*).
 */
const ENVS = ['sandbox', 'production', 'provider_sandbox', 'provider_production'] as const;
const DOCUMENT_CLASSES = ['TypeA', 'TypeB'] as const;

/** InvoicesDoc `PartyType/branch` is xs:int. */
export const BRANCH_MAX = 2_147_483_647;
export const BRANCH_TOO_LARGE = `country_config.branch must be at most ${BRANCH_MAX} (myDATA's branch is a 32-bit integer)`;
/** InvoicesDoc `InvoiceHeaderType/series`: at most 50 characters; no spaces, as metadata.series. */
const DEFAULT_SERIES = /^\S{1,50}$/u;
export const DEFAULT_SERIES_INVALID = 'country_config.default_series must be 1-50 characters without spaces';
/**
 * The series is the last part of its chain key (index.ts chainKey), so a new one holds no
 * `:` or `#` (shared/chain-key.ts `KEY_SEPARATORS`: a test series `A:live` would number
 * in the live chain of `A`, `A#annulments` among the cancellations of `A`); one stored
 * before the rule is kept, so its numbering (aa) goes on in its chain.
 */
export const SERIES_SEPARATOR_INVALID = (field: string): string =>
  `${field} must not contain ":" or "#" (they separate the parts of the series' chain key)`;
const HEADER_SAFE = /^[\x20-\x7E]+$/;

export function validateMyDataConfig({ config, taxId, stored }: LocationConfigInput): Record<string, unknown> {
  const cfg = readConfigObject(config);
  if (cfg !== undefined) rejectUnknownFields(cfg, KNOWN_FIELDS, 'myDATA');

  const afm = typeof cfg?.afm === 'string' ? cfg.afm.trim() : '';
  if (!isValidAfm(afm)) throw badRequest('country_config.afm must be a valid 9-digit AFM');
  const branch = readBranch(cfg?.branch);
  const legal_name = requiredString(cfg, 'legal_name', 'country_config.legal_name is required for Greek locations');
  const aade_user_id = headerValue(cfg, 'aade_user_id');
  const subscription_key = headerValue(cfg, 'subscription_key');
  const env = oneOf(cfg, 'env', ENVS, 'country_config.env must be one of sandbox, production, provider_sandbox, provider_production');
  const document_class = oneOf(cfg, 'document_class', DOCUMENT_CLASSES, 'country_config.document_class must be TypeA or TypeB');
  // myDATA numbers documents per (AFM, year, branch, series); the series is required.
  // It goes into every document as <invoiceHeader><series> (InvoicesDoc xsd: at most 50
  // characters), so it follows the rule of metadata.series (metadata.ts), which overrides it.
  const default_series = requiredString(cfg, 'default_series', 'country_config.default_series is required');
  if (!DEFAULT_SERIES.test(default_series)) throw badRequest(DEFAULT_SERIES_INVALID);
  if (!keyPartAllowed(default_series, stored?.default_series)) throw badRequest(SERIES_SEPARATOR_INVALID('country_config.default_series'));

  // The location tax_id, when given, is the same AFM: two different issuers on one
  // location would make every document's issuer ambiguous.
  const tax = givenTaxId(taxId);
  if (tax !== undefined && tax !== afm) throw badRequest('country_config.afm must equal tax_id');

  return compact({ afm, branch, legal_name, aade_user_id, subscription_key, env, document_class, default_series });
}

/** <issuer><branch>: the establishment number, 0 for the primary establishment (xs:int). */
function readBranch(raw: unknown): number {
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) {
    throw badRequest('country_config.branch must be an integer >= 0');
  }
  if (raw > BRANCH_MAX) throw badRequest(BRANCH_TOO_LARGE);
  return raw;
}

/**
 * `aade_user_id` and `subscription_key` are sent as they are in the `aade-user-id` and
 * `Ocp-Apim-Subscription-Key` headers of every call (client.ts). A character an HTTP
 * header cannot carry (a control character, a letter outside ASCII) made every submission
 * fail as a transport error ("could not reach …"), retried until it died; refused here.
 */
function headerValue(cfg: Record<string, unknown> | undefined, field: 'aade_user_id' | 'subscription_key'): string {
  const value = requiredString(cfg, field, `country_config.${field} is required`);
  if (!HEADER_SAFE.test(value)) throw badRequest(`country_config.${field} must be printable ASCII characters (it is sent as an HTTP header)`);
  return value;
}
