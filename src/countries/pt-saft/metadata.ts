/**
 * Portugal transaction rules: the SAF-T (PT) document type. A retail sale is a
 * simplified invoice (FS, CIVA art. 40), a refund or void a credit note (NC); the
 * client may choose another invoice type (FT, FR, ND), and the location must have a
 * series (with its AT validation code) for the type.
 *
 * A credit note names the document it corrects (CIVA art. 29; SAF-T Line/References):
 * `original_invoice_no`, that document's SAF-T InvoiceNo (`FS A2026/35`, the `invoice_no`
 * render hint of its transaction), and optionally `reason` (at most 50 characters;
 * default "Devolução" for a refund, "Anulação da venda" for a void). A debit note (ND, a
 * sale that adds to an earlier document) names it the same way. Both must name a document
 * of their own location that is not cancelled (credit-note.ts, looked up by the core).
 *
 * Simplified invoices (FS) are limited by CIVA art. 40: 1,000 EUR for retail sales to a
 * buyer that is not a taxable person, 100 EUR otherwise (location config `retail`, default
 * true: a POS; a buyer with a business tax id is a taxable person). A sale that names no
 * type and is above the limit is issued as an invoice-receipt (FR), or an invoice (FT)
 * where the location has no FR series; a sale that asks for FS above it is refused.
 *
 * The customer (`customer_context`): its country one of SAF-T's, a Portuguese NIF valid,
 * and a business buyer of an invoice (FT, FR, ND) named (`checkCustomer`).
 *
 * VAT: `metadata.tax_region` (PT, PT-AC, PT-MA; default the location's `tax_region`, else
 * PT) and the exemption codes of 0 % lines (`items[].tax_exemption_code`, or
 * `metadata.tax_exemption_code` for all of them; tax.ts).
 */
import { badRequest } from '../../core/errors.ts';
import type { LineField, LocationForFiscal, TransactionContext, TransactionDraft } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { EXEMPTION_CODES, TAX_REGIONS, type TaxRegion } from './tax.ts';
import { baseMetadata, customerTaxId, optionalChoice, optionalText, metaString, withoutUndefined } from '../shared/metadata-fields.ts';
import { isPlainObject } from '../shared/config-fields.ts';
import { DOCUMENT_TYPES, type DocumentType, type SeriesEntry } from './series.ts';
import { FINAL_CONSUMER_NIF, UNKNOWN, buyerIsTaxablePerson, customerOf, givenCountryOf } from './document.ts';
import { SAFT_COUNTRIES } from './countries.ts';
import { isValidPortugueseNif } from './nif.ts';

export const ORIGINAL_INVOICE_NO_REQUIRED = 'metadata.original_invoice_no is required for credit notes (NC): the InvoiceNo of the document it corrects';
export const ORIGINAL_INVOICE_NO_INVALID = 'metadata.original_invoice_no must be a SAF-T InvoiceNo "<type> <series>/<number>" of at most 60 characters';
export const ORIGINAL_INVOICE_NO_ON_SALE = 'metadata.original_invoice_no is only allowed on refund and void transactions';
export const ORIGINAL_INVOICE_NO_IS_CREDIT_NOTE =
  'metadata.original_invoice_no names a credit note (NC): a credit or debit note corrects an invoice (FT, FS, FR) or a debit note (ND), not a credit note';
export const REASON_INVALID = 'metadata.reason must be a string of at most 50 characters';
export const ORIGINAL_INVOICE_NO_ND_REQUIRED = 'metadata.original_invoice_no is required for debit notes (ND): the InvoiceNo of the document it adds to';
export const TAX_REGION_INVALID = 'metadata.tax_region must be one of PT, PT-AC, PT-MA';
export const EXEMPTION_CODE_INVALID = 'metadata.tax_exemption_code must be an AT exemption code (M01-M99)';
export const fsLimitMessage = (limit: number, business = false) =>
  `metadata.document_type FS (simplified invoice) is limited to ${decimal(limit)} EUR${business ? ' for a business customer (a taxable person\'s tax id)' : ''} (CIVA art. 40): issue an FR or FT`;
export const CUSTOMER_COUNTRY_INVALID =
  'customer_context.country must be an ISO 3166-1 alpha-2 country code (e.g. PT, ES, GB): the SAF-T (PT) Customer table accepts no other';
export const customerNifInvalid = (nif: string) =>
  `customer_context tax id ${nif} is not a valid Portuguese NIF (9 digits, mod 11 check digit); for a foreign customer give customer_context.country`;
export const CUSTOMER_NAME_REQUIRED =
  'customer_context.name is required on an invoice (FT, FR, ND) to a business customer: CIVA art. 36 n.º 5 a) asks for the buyer\'s name';
export const NO_SERIES_ABOVE_FS_LIMIT = (limit: number) =>
  `the sale is above the simplified invoice limit of ${decimal(limit)} EUR (CIVA art. 40) and the location has no FR or FT series`;

/**
 * The QR code's money fields (I2-I8, N, O: AT "Especificações Técnicas Código QR" v1.0,
 * FORMATS.md §7.3) hold at most 16 characters: 9999999999999.99 EUR. Every one of them is
 * at most the gross total, so a larger total would give a QR AT's readers refuse.
 */
export const QR_MAX_AMOUNT = 999_999_999_999_999;
export const QR_AMOUNT_TOO_LARGE =
  'total_amount must be at most 9999999999999.99 EUR (999999999999999 minor units): the document\'s QR code holds amounts of at most 16 characters';

/** The line field naming a 0 % line's exemption (FiscalSystem.lineFields). */
export const EXEMPTION_LINE_FIELD: LineField = { name: 'tax_exemption_code', type: 'string', upperCase: true };

/** CIVA art. 40 limits of a simplified invoice, in cents: retail sales, and the others. */
export const FS_LIMIT_RETAIL = 100_000;
export const FS_LIMIT_OTHER = 10_000;

/**
 * The FS limit of a sale (CIVA art. 40 n.º 1): 1,000 EUR for a retailer's sale to a buyer
 * that is not a taxable person (a), 100 EUR for every other sale (b). A retailer is the
 * location's config `retail` (default true: a POS); a buyer with a business tax id
 * (document.ts `buyerIsTaxablePerson`) is a taxable person, so its FS stops at 100 EUR.
 */
export const fsLimitOf = (location: LocationForFiscal, tx?: TransactionDraft): number =>
  location.config.retail === false || (tx !== undefined && buyerIsTaxablePerson(tx)) ? FS_LIMIT_OTHER : FS_LIMIT_RETAIL;

/** The fiscal space of a validated transaction: its metadata's, else its location's, else the mainland. */
export function taxRegionOf(tx: TransactionDraft, location: LocationForFiscal): TaxRegion {
  const given = metaString(tx, 'tax_region') ?? (typeof location.config.tax_region === 'string' ? location.config.tax_region : undefined);
  return TAX_REGIONS.find((r) => r === given) ?? 'PT';
}

/** SAF-T InvoiceNo (the XSD's pattern `[^ ]+ [^/^ ]+/[0-9]+`: no "/", "^" or space in the series; at most 60 characters). */
const INVOICE_NO = /^(?=.{1,60}$)[^ ]+ [^/^ ]+\/[0-9]+$/;

export const defaultDocumentType = (tx: TransactionDraft): DocumentType => (tx.type === 'sale' ? 'FS' : 'NC');

/** The document type of a validated transaction. */
export function documentTypeOf(tx: TransactionDraft): DocumentType {
  const t = metaString(tx, 'document_type');
  return DOCUMENT_TYPES.find((d) => d === t) ?? defaultDocumentType(tx);
}

/** The location's series for a document type (validated config), if any. */
export function seriesEntryOf(location: LocationForFiscal, type: DocumentType): SeriesEntry | undefined {
  const series = location.config.series;
  if (!isPlainObject(series)) return undefined;
  const entry = series[type];
  if (!isPlainObject(entry) || typeof entry.prefix !== 'string' || typeof entry.atcud_code !== 'string') return undefined;
  return { prefix: entry.prefix, atcud_code: entry.atcud_code };
}

export function validateSaftTransaction(tx: TransactionDraft, ctx: TransactionContext): Record<string, unknown> {
  const meta = baseMetadata(tx, 'PT');
  if (tx.total_amount > QR_MAX_AMOUNT) throw badRequest(QR_AMOUNT_TOO_LARGE);
  const chosen = optionalChoice(meta, 'document_type', DOCUMENT_TYPES, 'metadata.document_type must be one of FT, FS, FR, NC, ND');
  checkCustomer(tx);
  const limit = fsLimitOf(ctx.location, tx);
  const document_type = chosen ?? defaultTypeWithin(tx, ctx.location, limit);
  // A credit note (NC) corrects an earlier document; the other types record a sale.
  if (tx.type === 'sale' && document_type === 'NC') {
    throw badRequest('metadata.document_type NC (credit note) is only for refund and void transactions');
  }
  if (tx.type !== 'sale' && document_type !== 'NC') {
    throw badRequest('metadata.document_type must be NC (credit note) for refund and void transactions');
  }
  if (document_type === 'FS' && tx.total_amount > limit) throw badRequest(fsLimitMessage(limit, limit === FS_LIMIT_OTHER && ctx.location.config.retail !== false));
  // An invoice names a business buyer (CIVA art. 36 n.º 5 a): "Desconhecido" is no name.
  // (A simplified invoice needs only its tax id, art. 40 n.º 2; a credit note follows the
  // document it corrects, which the request does not show.)
  if ((document_type === 'FT' || document_type === 'FR' || document_type === 'ND') && buyerIsTaxablePerson(tx) && customerOf(tx).name === UNKNOWN) {
    throw badRequest(CUSTOMER_NAME_REQUIRED);
  }
  if (seriesEntryOf(ctx.location, document_type) === undefined) {
    throw badRequest(`no series configured for document type ${document_type}`);
  }
  const original_invoice_no = optionalText(meta, 'original_invoice_no', ORIGINAL_INVOICE_NO_INVALID, INVOICE_NO);
  const reason = optionalText(meta, 'reason', REASON_INVALID, /^.{1,50}$/s);
  if (tx.type === 'sale' && document_type !== 'ND' && original_invoice_no !== undefined) throw badRequest(ORIGINAL_INVOICE_NO_ON_SALE);
  if (document_type === 'NC' && original_invoice_no === undefined) throw badRequest(ORIGINAL_INVOICE_NO_REQUIRED);
  if (document_type === 'ND' && original_invoice_no === undefined) throw badRequest(ORIGINAL_INVOICE_NO_ND_REQUIRED);
  // A credit or debit note corrects an invoice (CIVA art. 29 n.º 1 c, art. 78): never a
  // credit note. Only our own NC code is refused: an earlier program's internal codes
  // (the InvoiceNo's first part) are its own and may be anything.
  if (original_invoice_no?.startsWith('NC ')) throw badRequest(ORIGINAL_INVOICE_NO_IS_CREDIT_NOTE);
  const tax_region = optionalChoice(meta, 'tax_region', TAX_REGIONS, TAX_REGION_INVALID);
  const tax_exemption_code = optionalChoice(meta, 'tax_exemption_code', EXEMPTION_CODES, EXEMPTION_CODE_INVALID);
  checkExemptionCodes(tx);
  return withoutUndefined({ ...meta, document_type, original_invoice_no, reason, tax_region, tax_exemption_code });
}

/**
 * A sale's type when the request names none: FS within the limit; above it FR (a POS sale
 * is paid at once), or FT where the location has no FR series. A refund or void: NC.
 */
function defaultTypeWithin(tx: TransactionDraft, location: LocationForFiscal, limit: number): DocumentType {
  const type = defaultDocumentType(tx);
  if (type !== 'FS' || tx.total_amount <= limit) return type;
  const above = (['FR', 'FT'] as const).find((t) => seriesEntryOf(location, t) !== undefined);
  if (above === undefined) throw badRequest(NO_SERIES_ABOVE_FS_LIMIT(limit));
  return above;
}

/**
 * The customer as SAF-T (PT) writes it must be one the file and AT accept:
 * - its country (`customer_context.country` or `address.country`) one of the schema's
 *   (countries.ts): another value made the whole month's SAF-T file fail the XSD;
 * - a Portuguese NIF (the customer's country PT, from the field, a `PT` prefix or a bare
 *   9-digit id) valid: 9 digits and the mod 11 check digit (nif.ts), as AT checks every
 *   acquirer NIF of the SAF-T and e-fatura. The final consumer's 999999990 is valid.
 */
function checkCustomer(tx: TransactionDraft): void {
  const given = givenCountryOf(tx);
  if (given !== undefined && !SAFT_COUNTRIES.has(given)) throw badRequest(CUSTOMER_COUNTRY_INVALID);
  const raw = customerTaxId(tx);
  if (raw === undefined) return;
  const c = customerOf(tx);
  if (c.taxId === FINAL_CONSUMER_NIF) return;
  if (c.country === 'PT' && !isValidPortugueseNif(c.taxId)) throw badRequest(customerNifInvalid(raw));
}

/** `items[].tax_exemption_code`: an AT code, on 0 % lines only. */
function checkExemptionCodes(tx: TransactionDraft): void {
  tx.items.forEach((line, i) => {
    const code: unknown = line.tax_exemption_code;
    if (code === undefined || code === null || code === '') return;
    if (line.tax_rate !== 0) throw badRequest(`items[${i}].tax_exemption_code is only allowed when tax_rate is 0`);
    if (typeof code !== 'string' || !EXEMPTION_CODES.includes(code)) throw badRequest(`items[${i}].tax_exemption_code must be an AT exemption code (M01-M99)`);
  });
}
