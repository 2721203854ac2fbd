/**
 * Italy SDI (Sistema di Interscambio, FatturaPA e-invoicing) location config.
 * Fields: spec "Italy country_config (SDI invoicing)" table.
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationConfigInput } from '../types.ts';
import {
  compact,
  oneOf,
  optionalPatternString,
  optionalString,
  patternString,
  readConfigObject,
  rejectUnknownFields,
} from '../shared/config-fields.ts';
import { ITALY_CONFIG_REQUIRED, readCodiceFiscale, resolvePartitaIva } from '../it/common.ts';

const KNOWN_FIELDS = [
  'system', // optional, `sdi` (see routeItaly)
  'codice_fiscale',
  'formato_trasmissione',
  'regime_fiscale',
  'api_credential_id',
  // The uploaded certificate of the SdICoop channel (mutual TLS, sdicoop.ts).
  'certificate_id',
  'progressivo_invio',
  'partita_iva',
  // The seller's name and Sede in the FatturaPA (CedentePrestatore, docs/decisions.md "Italy").
  'legal_name',
  'indirizzo',
  'cap',
  'comune',
  'provincia',
] as const;

/** FatturaPA <FormatoTrasmissione>: FPA12 to public administrations, FPR12 between private parties. */
const FORMATI = ['FPA12', 'FPR12'] as const;

/**
 * <RegimeFiscale> codes RF01 to RF19 (FatturaPA schema 1.2.x). The spec's pattern is
 * the whole range; which codes the Agenzia still accepts is the SDI's to decide.
 */
const REGIME_FISCALE = /^RF(0[1-9]|1[0-9])$/;

/**
 * ProgressivoInvio: the file's sequence part of the SDI file name
 * (IT<partita IVA>_<progressivo>.xml), at most 5 alphanumeric characters.
 */
const PROGRESSIVO = /^[A-Za-z0-9]{1,5}$/;

export function validateSdiConfig({ config, taxId }: LocationConfigInput): Record<string, unknown> {
  const cfg = readConfigObject(config);
  if (cfg === undefined) throw badRequest(ITALY_CONFIG_REQUIRED);
  rejectUnknownFields(cfg, KNOWN_FIELDS, 'SDI');
  const system = optionalString(cfg, 'system');
  if (system !== undefined && system !== 'sdi') throw badRequest(ITALY_CONFIG_REQUIRED);

  const codice_fiscale = readCodiceFiscale(cfg);
  const formato_trasmissione = oneOf(cfg, 'formato_trasmissione', FORMATI, 'formato_trasmissione must be FPA12 or FPR12');
  const regime_fiscale = patternString(cfg, 'regime_fiscale', REGIME_FISCALE, 'country_config.regime_fiscale must be RF01 to RF19');
  const api_credential_id = optionalString(cfg, 'api_credential_id');
  const certificate_id = optionalString(cfg, 'certificate_id');
  const progressivo_invio = optionalPatternString(
    cfg,
    'progressivo_invio',
    PROGRESSIVO,
    'country_config.progressivo_invio must be 1-5 alphanumeric characters',
  );
  const partita_iva = resolvePartitaIva(cfg, taxId);
  // Anagrafica/Denominazione (String80Latin) and Sede (IndirizzoType): Indirizzo and
  // Comune String60Latin, CAP 5 digits, Provincia 2 capital letters.
  const latin = (n: number) => new RegExp(`^[\\x20-\\x7E\\u00A0-\\u00FF]{1,${n}}$`);
  const legal_name = optionalPatternString(cfg, 'legal_name', latin(80), 'country_config.legal_name must be 1-80 Latin characters');
  const indirizzo = optionalPatternString(cfg, 'indirizzo', latin(60), 'country_config.indirizzo must be 1-60 Latin characters');
  const cap = optionalPatternString(cfg, 'cap', /^[0-9]{5}$/, 'country_config.cap must be 5 digits');
  const comune = optionalPatternString(cfg, 'comune', latin(60), 'country_config.comune must be 1-60 Latin characters');
  const provincia = optionalPatternString(cfg, 'provincia', /^[A-Z]{2}$/, 'country_config.provincia must be 2 capital letters (e.g. RM)');

  return compact({
    codice_fiscale,
    formato_trasmissione,
    regime_fiscale,
    api_credential_id,
    certificate_id,
    progressivo_invio,
    partita_iva,
    legal_name,
    indirizzo,
    cap,
    comune,
    provincia,
  });
}
