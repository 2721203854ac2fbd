/**
 * France (NF 525 certified POS, CGI art. 286-I-3° bis) location config.
 * The spec: "Required: legal_name and register_id. Other France fields: not shown."
 * So those two are the only fields; the records are signed locally with the key from
 * the certificates store, not from anything in this config.
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationConfigInput } from '../types.ts';
import { compact, readConfigObject, rejectUnknownFields, requiredString } from '../shared/config-fields.ts';
import { isValidSirenOrSiret } from './register-id.ts';

const KNOWN_FIELDS = ['legal_name', 'register_id'] as const;

export function validateNf525Config({ config }: LocationConfigInput): Record<string, unknown> {
  const cfg = readConfigObject(config);
  if (cfg !== undefined) rejectUnknownFields(cfg, KNOWN_FIELDS, 'NF525');

  // A location with no config at all gets the legal_name message first.
  const legal_name = requiredString(cfg, 'legal_name', 'country_config.legal_name is required for France locations');
  const raw = requiredString(cfg, 'register_id', 'country_config.register_id is required for France locations');
  // SIRET numbers are commonly printed in groups ("732 829 320 00074"); the groups are
  // dropped so the stored value is the number itself.
  const register_id = raw.replace(/ /g, '');
  if (!isValidSirenOrSiret(register_id)) {
    throw badRequest('country_config.register_id must be a 9-digit SIREN or 14-digit SIRET');
  }
  return compact({ legal_name, register_id });
}
