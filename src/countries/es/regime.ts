/**
 * The issuer's own VAT regime: `country_config.vat_regime`.
 *
 * Most merchants are in the general regime (`general`, the default: every location stored
 * before the field existed). Two special regimes of Ley 37/1992 change what a shop's own
 * sales declare:
 * - `recargo_equivalencia`: a retailer (comercio minorista, arts. 154-163) that buys with
 *   the surcharge from its suppliers and neither settles nor deducts IVA on what it resells;
 * - `simplified`: the régimen simplificado (arts. 122-123), IVA by modules.
 *
 * Either regime still charges IVA to the customer at the ordinary rates (the invoice states
 * rate and quota: RD 1619/2012 arts. 6 and 7); what changes is the regime key of the records:
 * - TicketBAI: `ClaveRegimenIvaOpTrascendencia` 51 "Operaciones en recargo de equivalencia" or
 *   52 "Operaciones en régimen simplificado" (IdOperacionesTrascendenciaTributariaType,
 *   ticketbaiv1-2-2.xsd), and `OperacionEnRecargoDeEquivalenciaORegimenSimplificado` S on each
 *   DetalleIVA (the TicketBAI documentation: "si se trata de una factura expedida por un o una
 *   contribuyente en régimen simplificado o en régimen de recargo de equivalencia"). The
 *   Haciendas Forales warn (business validation 196) on a key 51 or 52 without a subject,
 *   non-exempt DetalleIVA carrying S, so the two always go together.
 * - VERI*FACTU: `ClaveRegimen` 18 "Recargo de equivalencia" or 20 "Régimen simplificado"
 *   (AEAT list L8A) on each DetalleDesglose.
 * - SII: no key (the issued-invoice list, ClaveRegimenEspecialOTrascendencia 01-17, has
 *   neither regime): refused.
 *
 * Both regimes are IVA's: a location charging IGIC or IPSI (./tax.ts) is refused them (IGIC
 * has its own small-retailer and simplified regimes, L8B keys this service does not write).
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationForFiscal } from '../types.ts';
import { configString, type ConfigObject } from '../shared/config-fields.ts';
import type { SpainSystem } from './common.ts';
import { TAX_NAMES, type SpanishTax } from './tax.ts';

export const SPANISH_VAT_REGIMES = ['general', 'recargo_equivalencia', 'simplified'] as const;
export type SpanishVatRegime = (typeof SPANISH_VAT_REGIMES)[number];

export const VAT_REGIME_INVALID = 'country_config.vat_regime must be "general", "recargo_equivalencia" or "simplified"';

const REGIME_NAMES: Readonly<Record<Exclude<SpanishVatRegime, 'general'>, string>> = {
  recargo_equivalencia: 'recargo de equivalencia (Ley 37/1992 arts. 154-163)',
  simplified: 'the régimen simplificado (Ley 37/1992 arts. 122-123)',
};

/** SII: the issued-invoice regime keys (ClaveRegimenEspecialOTrascendencia) have no key for either regime. */
export const regimeNotInSii = (regime: Exclude<SpanishVatRegime, 'general'>): string =>
  `country_config.vat_regime ${regime} is not available for sii: the SII issued-invoice regime keys (ClaveRegimenEspecialOTrascendencia 01-17) have none for ${REGIME_NAMES[regime]}`;

export const regimeNotWithTax = (regime: Exclude<SpanishVatRegime, 'general'>, tax: SpanishTax): string =>
  `country_config.vat_regime ${regime} is an IVA regime (${REGIME_NAMES[regime]}), and this location charges ${TAX_NAMES[tax]} (country_config.tax)`;

/**
 * `country_config.vat_regime` as a location is registered (or PATCHed): optional (undefined:
 * general, nothing stored, so a location's config is byte-for-byte what it was before the
 * field existed). Exact lower case, trimmed, like `tax`.
 */
export function readVatRegime(config: ConfigObject, system: SpainSystem, tax: SpanishTax | undefined): SpanishVatRegime | undefined {
  const raw = config.vat_regime;
  if (raw === undefined || raw === null) return undefined;
  const regime = typeof raw === 'string' ? SPANISH_VAT_REGIMES.find((r) => r === raw.trim()) : undefined;
  if (regime === undefined) throw badRequest(VAT_REGIME_INVALID);
  if (regime === 'general') return regime;
  if (system === 'sii') throw badRequest(regimeNotInSii(regime));
  if (tax !== undefined && tax !== 'iva') throw badRequest(regimeNotWithTax(regime, tax));
  return regime;
}

/** The issuer's regime at a (validated) location. */
export function vatRegimeOf(location: Pick<LocationForFiscal, 'config'>): SpanishVatRegime {
  const stored = configString(location.config, 'vat_regime');
  return SPANISH_VAT_REGIMES.find((r) => r === stored) ?? 'general';
}

/**
 * Validation of a sale, refund or void at a location in a special regime (TicketBAI,
 * VERI*FACTU): no exemption cause. An exempt operation is not a retail sale under either
 * regime, and no source says how its exempt breakdown is keyed with them: TicketBAI's
 * exempt detail (DetalleExenta) has no regime flag, so an invoice whose lines are all exempt
 * would carry key 51/52 without the flagged DetalleIVA the Haciendas Forales ask for
 * (validation 196); AEAT's validation document says nothing of 18 or 20 with
 * OperacionExenta. Refused rather than guessed.
 */
export function checkIssuerRegime(regime: SpanishVatRegime, exemptionCode: string | undefined): void {
  if (regime === 'general' || exemptionCode === undefined) return;
  throw badRequest(
    `metadata.exemption_code is not taken at a location in ${REGIME_NAMES[regime]} (country_config.vat_regime ${regime}): its records key every line to that regime, and an exempt operation is not one of its sales`,
  );
}
