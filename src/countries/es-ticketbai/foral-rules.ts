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
import { foreignPartyId, givenCountry } from '../es/party.ts';
import { isValidSpanishNif } from '../es/nif.ts';
import { hasSurcharge } from '../es/surcharge.ts';
import type { SpanishInvoiceType } from '../es/invoice.ts';
import type { ExemptionCode } from '../es/exemption.ts';
import type { SpanishVatRegime } from '../es/regime.ts';
import { customerAddressOf } from '../es/customer-address.ts';

/**
 * How the record will identify the customer (xml.ts `customerOf`): `nif` (IDDestinatario/NIF,
 * a Spanish customer), `eu` (IDOtro 02, a VAT number of another EU member state), `other`
 * (IDOtro 04), or null (no customer: nothing written).
 */
export type CustomerKind = 'nif' | 'eu' | 'other' | null;

export function customerKindOf(tx: TransactionDraft, nifShape: RegExp): CustomerKind {
  const taxId = customerTaxId(tx);
  if (taxId === undefined) return null;
  if (customerNifOf(tx, nifShape) !== undefined) return 'nif';
  return foreignPartyId(taxId, givenCountry(tx.customer_context))?.idType === '02' ? 'eu' : 'other';
}

/**
 * The customer's NIF as the record writes it in `IDDestinatario/NIF` (xml.ts `customerOf`:
 * the id without separators or `ES` prefix, when no other country is given and it has the
 * NIFType shape), or undefined when the record names the customer otherwise, or not at all.
 */
export function customerNifOf(tx: TransactionDraft, nifShape: RegExp): string | undefined {
  const taxId = customerTaxId(tx);
  if (taxId === undefined) return undefined;
  const compact = taxId.toUpperCase().replace(/[\s.-]/g, '');
  const country = givenCountry(tx.customer_context);
  const nif = compact.startsWith('ES') && nifShape.test(compact.slice(2)) ? compact.slice(2) : compact;
  return (country === null || country === 'ES') && nifShape.test(nif) ? nif : undefined;
}

export const CUSTOMER_NIF_INVALID =
  "the customer's tax id (customer_context nif or tax_id) is not a valid Spanish NIF: its control character does not match (the Haciendas Forales refuse a recipient NIF that is not a correct one); give customer_context.country for a foreign tax id";
export const CUSTOMER_IS_ISSUER =
  "the customer's tax id is the issuer's own NIF (the location tax_id): an invoice names as its recipient someone other than its issuer";

/**
 * The recipient the record names by NIF:
 * - is a correct Spanish NIF (../es/nif.ts, the control character checked): Araba 10-68 ("si
 *   el NIF del destinatario es nacional se valida que sea correcto", v13, as the Araba
 *   integrator's validator `TbaiValidation` quotes it), Gipuzkoa 1153 / 1104 ("the recipient's
 *   NIF has the wrong format": MewsSystems/fiscalizations `ErrorCode.cs`; a TicketBAI JS
 *   library's `tbai_validations.ts` lists "g1104/g1153 + a10-68 + B4_2000011" for it), Bizkaia
 *   B4_2000011 ("El NIF tiene un formato erróneo", a record refusal). Until now only the
 *   NIFType shape was checked, so a mistyped NIF was numbered, chained and signed;
 * - is not the issuer's own NIF: an invoice documents an operation between its issuer and
 *   its recipient (RD 1619/2012 art. 6.1.c-d, repeated by the three territories' invoicing
 *   regulations), and AEAT refuses it in VERI*FACTU (1193, es-verifactu party-id.ts). No
 *   Hacienda Foral code for it was found (.scratch decisions, Left), so the fake does not
 *   apply it.
 */
export function checkCustomerNif(tx: TransactionDraft, nifShape: RegExp, issuerNif: string | null): void {
  const nif = customerNifOf(tx, nifShape);
  if (nif === undefined) return;
  if (!isValidSpanishNif(nif)) throw badRequest(CUSTOMER_NIF_INVALID);
  const issuer = issuerNif?.trim().toUpperCase().replace(/[\s.-]/g, '').replace(/^ES/, '');
  if (nif === issuer) throw badRequest(CUSTOMER_IS_ISSUER);
}

export const specialRegimeNotForEntity = (regime: 'recargo_equivalencia' | 'simplified'): string =>
  `country_config.vat_regime ${regime} is only for a natural person or an entity in attribution of income (a tax_id starting with a digit, K, L, M, X, Y, Z, E or J): ${
    regime === 'simplified' ? 'the régimen simplificado (Ley 37/1992 art. 122)' : 'recargo de equivalencia (Ley 37/1992 art. 154)'
  } is not open to a company, and the Haciendas Forales refuse its key ${regime === 'simplified' ? '52' : '51'} from one`;

/**
 * Keys 51 and 52 (xml.ts `regimeKeysOf`) only from an issuer who can be in those regimes:
 * Araba 10-132 ("las claves 51 y 52 solo pueden utilizarse cuando el emisor es una persona
 * física o una persona jurídica cuyo NIF empieza por E o por J", v13 as `TbaiValidation`
 * quotes it). The law behind it: recargo de equivalencia is for retailers that are natural
 * persons or entities in attribution of income (Ley 37/1992 art. 154.1; the Normas Forales
 * del IVA repeat it), and so is the régimen simplificado (art. 122.1); E (comunidades de
 * bienes) and J (sociedades civiles) are the NIF letters of such entities. A natural
 * person's NIF starts with a digit (DNI) or K, L, M, X, Y, Z. Checked at registration and
 * PATCH (config.ts) and, for a location stored before, at create.
 */
export function checkSpecialRegimeIssuer(regime: SpanishVatRegime, taxId: string | null | undefined): void {
  if (regime === 'general') return;
  const first = taxId?.trim().toUpperCase().replace(/^ES/, '').charAt(0);
  if (first === undefined || first === '') return;
  if (!/[0-9KLMXYZEJ]/.test(first)) throw badRequest(specialRegimeNotForEntity(regime));
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

// Araba 10-70 (the corrected invoice's FechaExpedicionFactura not later than the current
// date) is Spain's shared rule: ../es/corrected-invoice.ts `checkOriginalNotLater`.
export { ORIGINAL_DATE_FUTURE } from '../es/corrected-invoice.ts';

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

/**
 * The customer's address and postal code (`IDDestinatario/Direccion` TextMax250Type,
 * `CodigoPostal` TextMax20Type), read by ../es/customer-address.ts: refused when too long or
 * not text, rather than cut or dropped by the record.
 *
 * Not required (a decision, docs/decisions.md "The customer's address"): Araba asks for both
 * whenever the record names a recipient (016-024 / 016-025, "si hay destinatarios es
 * obligatorio indicar el domicilio y el código postal", v13 as the Araba integrator's
 * validator quotes it), but as a consolidation validation: the invoice is "received with
 * errors" (refused outright only for an SII filer). invopop/gobl.ticketbai refuses a
 * customer without an address for Gipuzkoa and Araba (`doc/validations.go`); no Gipuzkoa or
 * Batuz code was found. The law behind it is RD 1619/2012 art. 6.1.e (a full invoice states
 * the recipient's domicile). Requiring it would change every F1 request of every client.
 */
export const CUSTOMER_ADDRESS_INVALID =
  'customer_context.address must be a string of at most 250 characters without control characters, or an object with street, city, province and postal_code';
export const CUSTOMER_POSTAL_CODE_INVALID = 'customer_context.postal_code must be a string of at most 20 characters without control characters';

const ADDRESS_TEXT = /^[^\u0000-\u001F\u007F\uFFFE\uFFFF]{1,250}$/u;
const POSTAL_TEXT = /^[^\u0000-\u001F\u007F\uFFFE\uFFFF]{1,20}$/u;

export function checkCustomerAddress(tx: TransactionDraft): void {
  if (customerTaxId(tx) === undefined) return;
  const ctx = tx.customer_context ?? {};
  const raw = ctx.address;
  if (raw !== undefined && raw !== null && typeof raw !== 'string' && (typeof raw !== 'object' || Array.isArray(raw))) throw badRequest(CUSTOMER_ADDRESS_INVALID);
  const { address, postalCode } = customerAddressOf(ctx);
  if (address !== null && !ADDRESS_TEXT.test(address)) throw badRequest(CUSTOMER_ADDRESS_INVALID);
  if (postalCode !== null && !POSTAL_TEXT.test(postalCode)) throw badRequest(CUSTOMER_POSTAL_CODE_INVALID);
}
