/**
 * What the three Spanish systems (TicketBAI, VERI*FACTU, SII) share: the `system`
 * selector, the common fields and the tax_id check.
 */
import { badRequest } from '../../core/errors.ts';
import type { CountryRouting, TransactionContext } from '../types.ts';
import { givenTaxId, optionalString, readConfigObject, requiredString, type ConfigObject } from '../shared/config-fields.ts';
import { isValidSpanishNif } from './nif.ts';
import { readVatRegime } from './regime.ts';
import { readSpanishTax } from './tax.ts';

export const SPAIN_SYSTEMS = ['ticketbai', 'verifactu', 'sii'] as const;
export type SpainSystem = (typeof SPAIN_SYSTEMS)[number];

/*
 * The spec's verbatim strings name only ticketbai and verifactu, but `sii` is a valid
 * system (spec Spain table), so those strings would be false; they are extended with sii.
 */
export const SPAIN_CONFIG_REQUIRED =
  'Spain locations require country_config with system field (ticketbai, verifactu or sii)';
export const SPAIN_SYSTEM_INVALID = 'Spain country_config.system must be "ticketbai", "verifactu" or "sii"';

/** The Spanish system a config selects; throws the spec's messages when it selects none. */
export function readSpainSystem(config: ConfigObject | undefined): SpainSystem {
  const raw = config?.system;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    throw badRequest(SPAIN_CONFIG_REQUIRED);
  }
  const system = typeof raw === 'string' ? SPAIN_SYSTEMS.find((s) => s === raw.trim()) : undefined;
  if (system === undefined) throw badRequest(SPAIN_SYSTEM_INVALID);
  return system;
}

/** Spain's routing (registry.ts): `system` names the location's system, `es-<system>`. */
export const SPAIN_ROUTING: CountryRouting = {
  country: 'ES',
  route: (config) => `es-${readSpainSystem(config)}`,
};

export const LEGAL_NAME_MAX = 120;
export const LEGAL_NAME_TOO_LONG = 'country_config.legal_name must be at most 120 characters for Spain locations (the records name the issuer in 120)';

/**
 * Fields every Spanish system takes. `tax` (./tax.ts): the indirect tax the location
 * charges, `iva` unless given; TicketBAI takes only `iva`. `vat_regime`
 * (./regime.ts): the issuer's own VAT regime, `general` unless given; SII takes only `general`.
 */
export const SPAIN_COMMON_FIELDS = ['system', 'legal_name', 'certificate_id', 'tax', 'vat_regime'] as const;

/** The config field naming the uploaded certificate every Spanish system signs with (`certificateFields`). */
export const SPAIN_CERTIFICATE_FIELDS = ['certificate_id'] as const;

/**
 * The raw config as an object whose `system` is `expected`. A missing or invalid system
 * is reported before any other field, as the spec's Spain messages come first.
 */
export function readSpainConfig(config: unknown, expected: SpainSystem): ConfigObject {
  const obj = readConfigObject(config);
  if (obj === undefined) throw badRequest(SPAIN_CONFIG_REQUIRED);
  if (readSpainSystem(obj) !== expected) throw badRequest(SPAIN_SYSTEM_INVALID);
  return obj;
}

/** The fields every Spanish system takes, normalized (call after readSpainConfig). */
export function readSpainCommon(config: ConfigObject, system: SpainSystem) {
  const legal_name = requiredString(config, 'legal_name', 'country_config.legal_name is required for Spain locations');
  // Every record names the issuer in 120 characters (VERI*FACTU NombreRazonEmisor and the
  // header's NombreRazon, TicketBAI ApellidosNombreRazonSocial, SII and LROE NombreRazon:
  // TextMax120Type). A longer name was cut silently in the records; refused here instead.
  if (Array.from(legal_name).length > LEGAL_NAME_MAX) throw badRequest(LEGAL_NAME_TOO_LONG);
  const certificate_id = optionalString(config, 'certificate_id');
  const tax = readSpanishTax(config, system);
  return {
    system,
    legal_name,
    /*
     * The spec's table marks certificate_id required, but validation accepts a location
     * without one: with test keys the sandbox signs with a generated sandbox certificate
     * (no upload needed, DECISIONS.md "Sandbox"), so a merchant can integrate before
     * owning a certificate. A live transaction at a location without a certificate is
     * refused when it is signed, which is where the certificate is actually needed.
     */
    certificate_id,
    // After the certificate in the stored config, so an IVA location (no `tax`) stores what it always did.
    tax,
    // Last, and only when given, for the same reason.
    vat_regime: readVatRegime(config, system, tax),
  };
}

/** The location tax_id, when given, is the merchant's NIF and must be a valid one. */
export function checkSpainTaxId(taxId: string | null): void {
  const nif = givenTaxId(taxId);
  if (nif !== undefined && !isValidSpanishNif(nif)) throw badRequest('tax_id must be a valid Spanish NIF');
}

/** The 400 of a live AEAT transaction (VERI*FACTU, SII) at a location without a tax_id. */
export const liveTaxIdRequired = (system: 'verifactu' | 'sii'): string =>
  `location tax_id is required for live ${system} transactions: AEAT identifies the issuer by its NIF`;

/**
 * AEAT's records name the issuer by NIF (VERI*FACTU `IDEmisorFactura`, SII `Titular` and
 * `IDEmisorFactura`). A location may exist without a tax_id to try the sandbox, whose
 * records carry the placeholder `000000000` (shared/placeholder.ts); on a live key that
 * would be a false declaration, so the transaction is refused before anything is stored.
 */
export function requireLiveTaxId(ctx: TransactionContext, system: 'verifactu' | 'sii'): void {
  if (ctx.environment === 'live' && givenTaxId(ctx.location.tax_id) === undefined) throw badRequest(liveTaxIdRequired(system));
}
