/**
 * Italy Documento Commerciale (the "documento commerciale online" / RT receipt sent to
 * the Agenzia delle Entrate, D.Lgs. 127/2015 art. 2) location config.
 * Fields: spec "Italy country_config (Documento Commerciale)" table.
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationConfigInput } from '../types.ts';
import { compact, patternString, readConfigObject, rejectUnknownFields, requiredString } from '../shared/config-fields.ts';
import { ITALY_CONFIG_REQUIRED, readCodiceFiscale, resolvePartitaIva } from '../it/common.ts';

const KNOWN_FIELDS = [
  'system',
  'codice_fiscale',
  'legal_name',
  'cau_code',
  'pem_matricola',
  'seal_certificate_id',
  'partita_iva',
] as const;

/** The config field naming the uploaded electronic seal certificate (`certificateFields`). */
export const DC_CERTIFICATE_FIELDS = ['seal_certificate_id'] as const;

/** The register (PEM) serial, "matricola": a 4-character and a 6-character group. */
const PEM_MATRICOLA = /^[A-Za-z0-9]{4}-[A-Za-z0-9]{6}$/;
const CAU_CODE = /^[A-Za-z0-9]{4}$/;

export function validateDcConfig({ config, taxId }: LocationConfigInput): Record<string, unknown> {
  const cfg = readConfigObject(config);
  if (cfg === undefined) throw badRequest(ITALY_CONFIG_REQUIRED);
  rejectUnknownFields(cfg, KNOWN_FIELDS, 'Documento Commerciale');
  if (typeof cfg.system !== 'string' || cfg.system.trim() !== 'dc') throw badRequest(ITALY_CONFIG_REQUIRED);

  const codice_fiscale = readCodiceFiscale(cfg);
  const legal_name = requiredString(cfg, 'legal_name', 'country_config.legal_name is required for Documento Commerciale');
  const cau_code = patternString(cfg, 'cau_code', CAU_CODE, 'country_config.cau_code must be 4 alphanumeric characters');
  const pem_matricola = patternString(
    cfg,
    'pem_matricola',
    PEM_MATRICOLA,
    'country_config.pem_matricola must have the form XXXX-XXXXXX',
  );
  // The reference to the merchant's electronic seal certificate, which seals every
  // document sent. The spec marks it required without qualification (unlike Spain's
  // certificate_id, "required (guide)"), so it stays required at validation.
  const seal_certificate_id = requiredString(
    cfg,
    'seal_certificate_id',
    'country_config.seal_certificate_id is required for Documento Commerciale',
  );
  const partita_iva = resolvePartitaIva(cfg, taxId);

  return compact({ system: 'dc', codice_fiscale, legal_name, cau_code, pem_matricola, seal_certificate_id, partita_iva });
}
