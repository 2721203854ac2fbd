/**
 * What the Haciendas Forales refuse in a TicketBAI invoice that ticketbaiv1-2-2.xsd lets
 * through: their business validations, checked at creation so the merchant gets a 400
 * instead of a record that is numbered, chained and signed, then refused (or "received
 * with errors", which the Diputación asks to correct through Zuzendu).
 *
 * Sources: the Diputación Foral de Álava "Listado de validaciones y errores del fichero de
 * ALTA TicketBAI" (v13; codes 004 and 10-nnn below, as an Araba integrator's validator
 * quotes them); Gipuzkoa's alta document as MewsSystems/fiscalizations `ErrorCode.cs` quotes
 * it (011 "corrected invoice not indicated"); Batuz "Validaciones y errores LROE"
 * (B4_2000045, ./codes.ts). Each rule names its own.
 */
import { badRequest } from '../../core/errors.ts';
import type { TransactionDraft } from '../types.ts';
import { customerTaxId } from '../shared/metadata-fields.ts';
import { localDate, parseDmy } from '../shared/dates.ts';
import { foreignPartyId, givenCountry } from '../es/party.ts';
import { hasSurcharge } from '../es/surcharge.ts';
import type { SpanishInvoiceType } from '../es/invoice.ts';
import type { ExemptionCode } from '../es/exemption.ts';
import type { SpanishVatRegime } from '../es/regime.ts';

/**
 * How the record will identify the customer (xml.ts `customerOf`): `nif` (IDDestinatario/NIF,
 * a Spanish customer), `eu` (IDOtro 02, a VAT number of another EU member state), `other`
 * (IDOtro 04), or null (no customer: nothing written).
 */
export type CustomerKind = 'nif' | 'eu' | 'other' | null;

export function customerKindOf(tx: TransactionDraft, nifShape: RegExp): CustomerKind {
  const taxId = customerTaxId(tx);
  if (taxId === undefined) return null;
  const compact = taxId.toUpperCase().replace(/[\s.-]/g, '');
  const country = givenCountry(tx.customer_context);
  const nif = compact.startsWith('ES') && nifShape.test(compact.slice(2)) ? compact.slice(2) : compact;
  if ((country === null || country === 'ES') && nifShape.test(nif)) return 'nif';
  return foreignPartyId(taxId, country)?.idType === '02' ? 'eu' : 'other';
}

export const correctiveNeedsOriginal = (type: SpanishInvoiceType): string =>
  `metadata.original_invoice_number and metadata.original_issue_date (DD-MM-YYYY) are required for a TicketBAI corrective invoice (${type}): it names the invoice it corrects, and the Haciendas Forales refuse one that does not`;

/**
 * A corrective invoice (R1-R5: every refund and void) names the invoice(s) it corrects:
 * Araba 10-235 ("cuando se emite factura rectificativa deben indicarse las facturas
 * rectificadas"), Gipuzkoa 011 (corrected invoice not indicated), Bizkaia B4_2000045. The XSD
 * makes `FacturasRectificadasSustituidas` optional, so until now a refund naming nothing was
 * accepted and written without it.
 */
export function checkCorrectiveNamesOriginal(tx: TransactionDraft, type: SpanishInvoiceType, originalNumber: string | undefined): void {
  if (tx.type !== 'sale' && originalNumber === undefined) throw badRequest(correctiveNeedsOriginal(type));
}

export const ORIGINAL_DATE_FUTURE =
  'metadata.original_issue_date must not be later than today: the corrected invoice was issued before its correction';

/**
 * Araba 10-70: the corrected invoice's `FechaExpedicionFactura` must be a valid date not later
 * than the current one. "Today" is the correction's own issue date (Madrid, as xml.ts dates it).
 */
export function checkOriginalDate(originalDate: string | undefined, now: Date): void {
  if (originalDate === undefined) return;
  const d = parseDmy(originalDate);
  const today = localDate(now, 'ES');
  if (`${d.year}${d.month}${d.day}` > `${today.year}${today.month}${today.day}`) throw badRequest(ORIGINAL_DATE_FUTURE);
}

export const SURCHARGE_NEEDS_NIF =
  'recargo de equivalencia (items[].surcharge_rate) is charged to a retailer identified by its Spanish NIF: give customer_context nif and name (the Haciendas Forales refuse a surcharge without a Spanish customer)';
export const SURCHARGE_AT_RETAILER =
  'recargo de equivalencia (items[].surcharge_rate) is not charged at a location in recargo de equivalencia (country_config.vat_regime recargo_equivalencia): its invoices are keyed 51, which carries no surcharge';

/**
 * Recargo de equivalencia is charged by a supplier to a retailer in that regime (Ley 37/1992
 * art. 156), so the invoice names a Spanish customer: Araba 10-167 ("si la cuota de recargo
 * de equivalencia tiene valor tiene que haber un destinatario nacional"). An issuer that is
 * itself in the regime writes key 51 alone (xml.ts), with which the surcharge must be absent
 * (Araba 10-209, 10-210; 10-285: a surcharge only with keys 01, 07, 52).
 */
export function checkSurchargeParties(tx: TransactionDraft, customer: CustomerKind, regime: SpanishVatRegime): void {
  if (!hasSurcharge(tx)) return;
  if (regime === 'recargo_equivalencia') throw badRequest(SURCHARGE_AT_RETAILER);
  if (customer !== 'nif') throw badRequest(SURCHARGE_NEEDS_NIF);
}

export const E5_NEEDS_EU_CUSTOMER =
  "metadata.exemption_code E5 (intra-EU supply, art. 25) needs the customer's VAT number of another EU member state in customer_context (tax_id with its country prefix, or with customer_context.country) and the customer's name";

/**
 * An exempt intra-EU supply (E5) is made to a customer identified for VAT in another member
 * state (Ley 37/1992 art. 25; RD 1619/2012 art. 4.3 allows no simplified invoice for it):
 * Araba 10-168 ("si la causa de exención es E5 el destinatario tiene que ser
 * intracomunitario"). Before, an E5 sale without a customer went out as a simplified invoice.
 */
export function checkIntraEuExemption(exemption: ExemptionCode | undefined, customer: CustomerKind): void {
  if (exemption === 'E5' && customer !== 'eu') throw badRequest(E5_NEEDS_EU_CUSTOMER);
}

export const ARABA_RESERVED_SERIES =
  'a series starting with DFA_ (metadata.series or country_config.series) is not taken at an Araba location: the Diputación Foral de Álava reserves those series for its own FakturAraba program';

/**
 * Araba 004: `SerieFactura` must not start with `DFA_`, the series of the invoices made with
 * the Diputación's free FakturAraba program; a reception error (the file is refused).
 */
export const isArabaReservedSeries = (series: string): boolean => /^DFA_/i.test(series);
