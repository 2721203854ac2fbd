/**
 * Greece (AADE myDATA) location config.
 * Fields: spec "Greece country_config" table.
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationConfigInput } from '../types.ts';
import { compact, givenTaxId, oneOf, readConfigObject, rejectUnknownFields, requiredString } from '../shared/config-fields.ts';
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

export function validateMyDataConfig({ config, taxId }: LocationConfigInput): Record<string, unknown> {
  const cfg = readConfigObject(config);
  if (cfg !== undefined) rejectUnknownFields(cfg, KNOWN_FIELDS, 'myDATA');

  const afm = typeof cfg?.afm === 'string' ? cfg.afm.trim() : '';
  if (!isValidAfm(afm)) throw badRequest('country_config.afm must be a valid 9-digit AFM');
  const branch = readBranch(cfg?.branch);
  const legal_name = requiredString(cfg, 'legal_name', 'country_config.legal_name is required for Greek locations');
  const aade_user_id = requiredString(cfg, 'aade_user_id', 'country_config.aade_user_id is required');
  const subscription_key = requiredString(cfg, 'subscription_key', 'country_config.subscription_key is required');
  const env = oneOf(cfg, 'env', ENVS, 'country_config.env must be one of sandbox, production, provider_sandbox, provider_production');
  const document_class = oneOf(cfg, 'document_class', DOCUMENT_CLASSES, 'country_config.document_class must be TypeA or TypeB');
  // myDATA numbers documents per (AFM, year, branch, series); the series is required.
  const default_series = requiredString(cfg, 'default_series', 'country_config.default_series is required');

  // The location tax_id, when given, is the same AFM: two different issuers on one
  // location would make every document's issuer ambiguous.
  const tax = givenTaxId(taxId);
  if (tax !== undefined && tax !== afm) throw badRequest('country_config.afm must equal tax_id');

  return compact({ afm, branch, legal_name, aade_user_id, subscription_key, env, document_class, default_series });
}

/** <issuer><branch>: the establishment number, 0 for the primary establishment. */
function readBranch(raw: unknown): number {
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) {
    throw badRequest('country_config.branch must be an integer >= 0');
  }
  return raw;
}
