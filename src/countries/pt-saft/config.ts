/**
 * Portugal (certified invoicing software, SAF-T PT, Portaria 363/2010) location config.
 * Fields: spec "Portugal country_config" table.
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationConfigInput } from '../types.ts';
import { compact, givenTaxId, optionalString, readConfigObject, rejectUnknownFields } from '../shared/config-fields.ts';
import { isValidPortugueseNif } from './nif.ts';
import { readSeries } from './series.ts';
import { TAX_REGIONS } from './tax.ts';

const KNOWN_FIELDS = ['software_certificate_number', 'at_certificate_id', 'series', 'tax_region', 'retail'] as const;

export function validateSaftConfig({ config, taxId, stored }: LocationConfigInput): Record<string, unknown> {
  const cfg = readConfigObject(config);
  if (cfg !== undefined) rejectUnknownFields(cfg, KNOWN_FIELDS, 'SAF-T PT');

  const series = readSeries(cfg?.series, stored?.series);
  // The number of the software's AT certificate, printed on every document
  // ("Processado por programa certificado n.º <n>/AT"). Optional until going live.
  const software_certificate_number = readCertificateNumber(cfg?.software_certificate_number);
  const at_certificate_id = optionalString(cfg, 'at_certificate_id');
  // The fiscal space of the location's sales (mainland, Azores, Madeira: tax.ts); default PT.
  const tax_region = optionalString(cfg, 'tax_region');
  if (tax_region !== undefined && !(TAX_REGIONS as readonly string[]).includes(tax_region)) throw badRequest('country_config.tax_region must be one of PT, PT-AC, PT-MA');
  // Retail sales (CIVA art. 40: simplified invoices up to 1,000 EUR; 100 EUR otherwise); default true.
  const retail = cfg?.retail;
  if (retail !== undefined && retail !== null && typeof retail !== 'boolean') throw badRequest('country_config.retail must be a boolean');

  const nif = givenTaxId(taxId);
  if (nif !== undefined && !isValidPortugueseNif(nif)) throw badRequest('tax_id must be a valid Portuguese NIF');

  return compact({ software_certificate_number, at_certificate_id, series, tax_region, retail: typeof retail === 'boolean' ? retail : undefined });
}

/** Digits, given as a string or a non-negative integer; stored as a string. */
function readCertificateNumber(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  const value = typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0 ? String(raw) : raw;
  if (typeof value !== 'string') throw badRequest('country_config.software_certificate_number must contain only digits');
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (!/^[0-9]+$/.test(trimmed)) throw badRequest('country_config.software_certificate_number must contain only digits');
  return trimmed;
}
