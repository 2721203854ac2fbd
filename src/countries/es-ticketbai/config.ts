/**
 * TicketBAI (Basque Country: Araba, Bizkaia, Gipuzkoa) location config.
 * Fields: spec "Spain country_config" table.
 */
import type { LocationConfigInput } from '../types.ts';
import {
  compact,
  optionalHttpsUrl,
  optionalString,
  rejectUnknownFields,
  requiredString,
} from '../shared/config-fields.ts';
import { SPAIN_COMMON_FIELDS, checkSpainTaxId, readSpainCommon, readSpainConfig } from '../es/common.ts';
import { readTerritory } from './territory.ts';

const KNOWN_FIELDS = [
  ...SPAIN_COMMON_FIELDS,
  // TicketBAI invoices carry an XAdES signature; a TSA adds a trusted timestamp to it.
  'tsa_url',
  'territory',
  'territory_code',
  'tbai_license',
  // The spec marks `series` "embedded config only"; the cloud accepts it too, so one
  // config works in both hosts.
  'series',
] as const;

export function validateTicketBaiConfig({ config, taxId }: LocationConfigInput): Record<string, unknown> {
  const cfg = readSpainConfig(config, 'ticketbai');
  rejectUnknownFields(cfg, KNOWN_FIELDS, 'ticketbai');

  const common = readSpainCommon(cfg, 'ticketbai');
  const tsa_url = optionalHttpsUrl(cfg, 'tsa_url');
  const { territory, territory_code } = readTerritory(cfg);
  // The software licence number (TBAI license) registered with the Hacienda Foral; every
  // TicketBAI record names the certified software that produced it.
  const tbai_license = requiredString(cfg, 'tbai_license', 'country_config.tbai_license is required for ticketbai');
  const series = optionalString(cfg, 'series');
  checkSpainTaxId(taxId);

  return compact({ ...common, tsa_url, territory, territory_code, tbai_license, series });
}
