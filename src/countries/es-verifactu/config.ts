/**
 * VERI*FACTU (Spain outside the Basque Country and Navarre, RD 1007/2023) location config.
 * Fields: spec "Spain country_config" table.
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationConfigInput } from '../types.ts';
import { isValidSpanishNif } from '../es/nif.ts';
import { foreignPartyId } from '../es/party.ts';
import { compact, optionalString, rejectUnknownFields, requiredString } from '../shared/config-fields.ts';
import { SPAIN_COMMON_FIELDS, checkSpainTaxId, readSpainCommon, readSpainConfig } from '../es/common.ts';

export const SOFTWARE_NIF_INVALID =
  "country_config.software_nif must be the software producer's Spanish NIF or EU VAT number (e.g. B12345674, FR12345678901)";
export const INSTALLATION_NUMBER_INVALID = 'country_config.installation_number must be at most 100 characters';

/** A valid Spanish NIF (an `ES` prefix allowed) or an EU VAT number: letters of a VIES prefix, then 2-13 letters or digits. */
export function isProducerTaxId(raw: string): boolean {
  const id = raw.toUpperCase().replace(/[\s.-]/g, '');
  if (isValidSpanishNif(id) || (id.startsWith('ES') && isValidSpanishNif(id.slice(2)))) return true;
  const foreign = /^[A-Z]{2}[0-9A-Z+*]{2,13}$/.test(id) && id.slice(0, 2) !== 'ES' ? foreignPartyId(id, null) : undefined;
  return foreign?.idType === '02';
}

const KNOWN_FIELDS = [...SPAIN_COMMON_FIELDS, 'software_nif', 'installation_number'] as const;

export function validateVerifactuConfig({ config, taxId }: LocationConfigInput): Record<string, unknown> {
  const cfg = readSpainConfig(config, 'verifactu');
  rejectUnknownFields(cfg, KNOWN_FIELDS, 'verifactu');

  const common = readSpainCommon(cfg, 'verifactu');
  // Every record's <SistemaInformatico> names the software producer by tax id: a Spanish
  // NIF (sf:NIF), or a foreign producer's EU VAT number (IDOtro 02, build.ts `partyId`).
  // Anything else went out as a "NIF-IVA" AEAT cannot identify, in every record of the
  // location (session-18 document audit), so it is refused here.
  const software_nif = requiredString(cfg, 'software_nif', 'country_config.software_nif is required for verifactu');
  if (!isProducerTaxId(software_nif)) throw badRequest(SOFTWARE_NIF_INVALID);
  // <NumeroInstalacion>: tells apart installations of the same software (TextMax100Type:
  // a longer one was cut silently).
  const installation_number = optionalString(cfg, 'installation_number');
  if (installation_number !== undefined && Array.from(installation_number).length > 100) throw badRequest(INSTALLATION_NUMBER_INVALID);
  checkSpainTaxId(taxId);

  return compact({ ...common, software_nif, installation_number });
}
