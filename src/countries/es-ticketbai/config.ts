/**
 * TicketBAI (Basque Country: Araba, Bizkaia, Gipuzkoa) location config.
 * Fields: spec "Spain country_config" table, plus `lroe_epigrafe` (ours: Bizkaia natural
 * persons, see below; docs/decisions.md "Bizkaia LROE batch").
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationConfigInput } from '../types.ts';
import {
  compact,
  givenTaxId,
  optionalHttpsUrl,
  optionalPatternString,
  optionalString,
  rejectUnknownFields,
  requiredString,
} from '../shared/config-fields.ts';
import { SPAIN_COMMON_FIELDS, checkSpainTaxId, readSpainCommon, readSpainConfig } from '../es/common.ts';
import { lroeModelFor } from './lroe/request.ts';
import { readTerritory } from './territory.ts';
import { ARABA_RESERVED_SERIES, checkSpecialRegimeIssuer, isArabaReservedSeries } from './foral-rules.ts';

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
  // Bizkaia, natural persons: the IAE activity heading of every LROE Modelo 140 alta.
  'lroe_epigrafe',
] as const;

/*
 * `Renta/DetalleRenta/Epigrafe` of an LROE Modelo 140 alta (batuz_TiposComplejos.xsd
 * `DetalleRentaIngresosType`, mandatory there) is `stringMax7Digits` in
 * batuz_TiposBasicos.xsd: digits only, at most 7; lroe/request.ts also refuses it empty.
 * IAE headings are often printed with a dot (659.4); that does not fit the pattern, so it
 * is refused here rather than by Batuz.
 */
const EPIGRAFE = /^\d{1,7}$/;
export const EPIGRAFE_INVALID = 'country_config.lroe_epigrafe must be 1 to 7 digits (the IAE activity heading, without dots)';
export const EPIGRAFE_REQUIRED =
  "country_config.lroe_epigrafe is required for a Bizkaia ticketbai location whose tax_id is a natural person's NIF (LROE Modelo 140)";

/*
 * Both go into every record as written: `HuellaTBAI/Software/LicenciaTBAI` and
 * `SerieFactura` are TextMax20Type in ticketbaiv1-2-2.xsd, so a longer value made every
 * invoice of the location schema-invalid (the Diputación refuses it, and the chain stalls
 * behind it). Refused here, at registration, instead. The series takes the characters the
 * metadata series takes (../es/invoice.ts: safe in TicketBAI and AEAT alike).
 */
export const LICENSE = /^[\x21-\x7E]{1,20}$/;
export const LICENSE_INVALID = 'country_config.tbai_license must be 1-20 characters without spaces (TicketBAI LicenciaTBAI)';
export const SERIES = /^[A-Za-z0-9._/-]{1,20}$/;
export const SERIES_INVALID = 'country_config.series must be 1-20 characters: letters, digits, ".", "_", "/" or "-"';

export function validateTicketBaiConfig({ config, taxId }: LocationConfigInput): Record<string, unknown> {
  const cfg = readSpainConfig(config, 'ticketbai');
  rejectUnknownFields(cfg, KNOWN_FIELDS, 'ticketbai');

  const common = readSpainCommon(cfg, 'ticketbai');
  const tsa_url = optionalHttpsUrl(cfg, 'tsa_url');
  const { territory, territory_code } = readTerritory(cfg);
  // The software licence number (TBAI license) registered with the Hacienda Foral; every
  // TicketBAI record names the certified software that produced it.
  const tbai_license = requiredString(cfg, 'tbai_license', 'country_config.tbai_license is required for ticketbai');
  if (!LICENSE.test(tbai_license)) throw badRequest(LICENSE_INVALID);
  const series = optionalString(cfg, 'series');
  if (series !== undefined && !SERIES.test(series)) throw badRequest(SERIES_INVALID);
  if (territory === 'araba' && series !== undefined && isArabaReservedSeries(series)) throw badRequest(ARABA_RESERVED_SERIES);
  checkSpainTaxId(taxId);
  // Keys 51/52 only from a natural person or an E/J entity (Araba 10-132, ./foral-rules.ts).
  checkSpecialRegimeIssuer(common.vat_regime ?? 'general', givenTaxId(taxId));
  const lroe_epigrafe = optionalPatternString(cfg, 'lroe_epigrafe', EPIGRAFE, EPIGRAFE_INVALID);
  // Batuz takes a natural person's invoices only in Modelo 140, whose every alta names the
  // activity (lroe/request.ts `lroeModelFor`: a NIF starting with a digit or K, L, M, X, Y,
  // Z). Asked for here, so the daily batch never holds the records for it.
  const nif = givenTaxId(taxId);
  if (territory === 'bizkaia' && nif !== undefined && lroeModelFor(nif) === '140' && lroe_epigrafe === undefined) {
    throw badRequest(EPIGRAFE_REQUIRED);
  }

  return compact({ ...common, tsa_url, territory, territory_code, tbai_license, series, lroe_epigrafe });
}
