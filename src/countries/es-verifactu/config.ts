/**
 * VERI*FACTU (Spain outside the Basque Country and Navarre, RD 1007/2023) location config.
 * Fields: spec "Spain country_config" table.
 */
import type { LocationConfigInput } from '../types.ts';
import { compact, optionalString, rejectUnknownFields, requiredString } from '../shared/config-fields.ts';
import { SPAIN_COMMON_FIELDS, checkSpainTaxId, readSpainCommon, readSpainConfig } from '../es/common.ts';

const KNOWN_FIELDS = [...SPAIN_COMMON_FIELDS, 'software_nif', 'installation_number'] as const;

export function validateVerifactuConfig({ config, taxId }: LocationConfigInput): Record<string, unknown> {
  const cfg = readSpainConfig(config, 'verifactu');
  rejectUnknownFields(cfg, KNOWN_FIELDS, 'verifactu');

  const common = readSpainCommon(cfg, 'verifactu');
  // Every record's <SistemaInformatico> names the software producer by tax id. Not
  // checked as a Spanish NIF: a foreign producer is identified by another tax id.
  const software_nif = requiredString(cfg, 'software_nif', 'country_config.software_nif is required for verifactu');
  // <NumeroInstalacion>: tells apart installations of the same software.
  const installation_number = optionalString(cfg, 'installation_number');
  checkSpainTaxId(taxId);

  return compact({ ...common, software_nif, installation_number });
}
