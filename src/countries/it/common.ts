/**
 * What both Italian systems (SDI e-invoicing and Documento Commerciale) share:
 * the codice fiscale, the partita IVA resolution and the routing between them.
 */
import { badRequest } from '../../core/errors.ts';
import type { CountryRouting } from '../types.ts';
import { givenTaxId, patternString, type ConfigObject } from '../shared/config-fields.ts';
import { isPartitaIvaShape, partitaIvaCheckDigitValid } from './partita-iva.ts';

export const ITALY_CONFIG_REQUIRED =
  'Italian locations require country_config with formato_trasmissione (SDI) or system "dc" (Documento Commerciale)';

/**
 * Routing (spec "Italy country_config (Documento Commerciale)"): `system` = `dc` uses
 * Documento Commerciale; a config with `formato_trasmissione` uses SDI. `system` = `sdi`
 * is accepted as the explicit form of the latter. Anything else selects no system.
 */
export function routeItaly(config: Readonly<ConfigObject> | undefined): 'it-sdi' | 'it-dc' {
  const system = typeof config?.system === 'string' ? config.system.trim() : config?.system;
  if (system === 'dc') return 'it-dc';
  if (system === 'sdi') return 'it-sdi';
  if (system === undefined || system === null || system === '') {
    if (config !== undefined && config.formato_trasmissione !== undefined && config.formato_trasmissione !== null) {
      return 'it-sdi';
    }
  }
  throw badRequest(ITALY_CONFIG_REQUIRED);
}

/**
 * Codice fiscale of the issuer: 11 digits for a company (same as its partita IVA) or
 * 16 characters for a natural person. The spec pattern is uppercase alphanumeric,
 * which is how the Agenzia delle Entrate writes it, so lowercase is refused rather
 * than silently changed.
 */
export const readCodiceFiscale = (config: ConfigObject | undefined): string =>
  patternString(config, 'codice_fiscale', /^[A-Z0-9]{11,16}$/, 'country_config.codice_fiscale must be 11-16 alphanumeric characters');

/**
 * The merchant's partita IVA. It is the location `tax_id`; the config may repeat it as
 * `partita_iva` (the Documento Commerciale sample does). At least one is needed, and
 * both must agree. The resolved value is always stored in the config so that building
 * a record needs to look in one place only.
 */
export function resolvePartitaIva(config: ConfigObject | undefined, taxId: string | null): string {
  const fromTaxId = givenTaxId(taxId);
  const rawConfig = config?.partita_iva;
  let fromConfig: string | undefined;
  if (rawConfig !== undefined && rawConfig !== null) {
    if (typeof rawConfig !== 'string') throw badRequest('partita_iva must be exactly 11 digits');
    fromConfig = rawConfig.trim() === '' ? undefined : rawConfig.trim();
  }
  const value = fromTaxId ?? fromConfig;
  if (value === undefined) throw badRequest('partita_iva is required');
  for (const candidate of [fromTaxId, fromConfig]) {
    if (candidate !== undefined && !isPartitaIvaShape(candidate)) throw badRequest('partita_iva must be exactly 11 digits');
  }
  if (fromTaxId !== undefined && fromConfig !== undefined && fromTaxId !== fromConfig) {
    throw badRequest('country_config.partita_iva must equal tax_id');
  }
  if (!partitaIvaCheckDigitValid(value)) throw badRequest('partita_iva check digit is invalid');
  return value;
}

/** Italy's routing (registry.ts): `routeItaly`. */
export const ITALY_ROUTING: CountryRouting = { country: 'IT', route: routeItaly };
