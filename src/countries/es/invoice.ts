/**
 * Numbering and invoice type for the Spanish systems that number and type invoices
 * locally (TicketBAI, VERI*FACTU).
 *
 * Invoice types (RD 1619/2012; codes from the VERI*FACTU/TicketBAI schemas, `TipoFactura`):
 * - F1: full invoice (art. 6), which names the customer by tax id;
 * - F2: simplified invoice (art. 7): the retail receipt, no customer tax id needed;
 * - R1-R4: corrective invoices of full invoices (art. 15, the reasons of LIVA art. 80);
 *   R1 (art. 80.1/80.2: returns, discounts, errors founded in law) is the one a refund is;
 * - R5: corrective invoice of a simplified invoice;
 * - F3: full invoice issued in place of simplified ones (./replacement.ts): chosen by
 *   `metadata.replaces_simplified`, never alone.
 */
import { badRequest } from '../../core/errors.ts';
import type { IssuedDocument, TransactionDraft } from '../types.ts';
import { customerTaxId, metaString, optionalText, type Metadata } from '../shared/metadata-fields.ts';
import { REPLACES_FIELD } from './replacement.ts';

/*
 * Series and numbers: TicketBAI `SerieFactura` / `NumFactura` allow 20 characters each,
 * and VERI*FACTU joins them in `NumSerieFactura` (60). AEAT refuses some characters
 * (error 1287: < > " ' =); letters, digits and . _ / - are safe everywhere.
 */
const SAFE = /^[A-Za-z0-9._/-]{1,20}$/;
const SAFE_TEXT = '1-20 characters: letters, digits, ".", "_", "/" or "-"';
export const SERIES_INVALID = `metadata.series must be ${SAFE_TEXT}`;
export const INVOICE_NUMBER_INVALID = `metadata.invoice_number must be ${SAFE_TEXT}`;

export const readSeries = (meta: Metadata, fallback: string): string =>
  optionalText(meta, 'series', SERIES_INVALID, SAFE) ?? fallback;

/**
 * The series a corrective invoice (R1-R5) takes when the request names none: RD 1619/2012
 * art. 6.1.a makes a specific series compulsory for corrective invoices, so a refund never
 * shares the sales' numbering. Ours: `R` before the sales series (A → RA), within the 20
 * characters a series may have. A series the request gives is taken as given.
 */
export const correctiveSeries = (salesSeries: string): string => `R${salesSeries}`.slice(0, 20);

/** The series of an invoice of this type: the request's, else the sales series or its corrective one. */
export const seriesFor = (meta: Metadata, type: SpanishInvoiceType, salesSeries: string): string =>
  readSeries(meta, type.startsWith('R') ? correctiveSeries(salesSeries) : salesSeries);

/** Optional: numbering is normally ours (the chain's sequence number). */
export const readInvoiceNumber = (meta: Metadata): string | undefined =>
  optionalText(meta, 'invoice_number', INVOICE_NUMBER_INVALID, SAFE, true);

const SALE_TYPES = ['F1', 'F2'] as const;
const CORRECTIVE_TYPES = ['R1', 'R2', 'R3', 'R4', 'R5'] as const;
export type SpanishInvoiceType = (typeof SALE_TYPES)[number] | (typeof CORRECTIVE_TYPES)[number] | 'F3';

export const F3_INVOICE_TYPE = `metadata.invoice_type must be F3 or left out when metadata.${REPLACES_FIELD} is given`;
export const F3_ALONE = `metadata.invoice_type F3 needs metadata.${REPLACES_FIELD}: the transaction ids of the simplified invoices it replaces`;
export const F3_NEEDS_CUSTOMER =
  `a full invoice replacing simplified ones (F3, metadata.${REPLACES_FIELD}) names its customer: give the customer's tax id (nif or tax_id) and name in customer_context`;

/** The customer's name as the records read it (`name`, else `legal_name`), when given. */
const customerName = (tx: TransactionDraft): string | undefined => {
  const ctx = tx.customer_context ?? {};
  const named = [ctx.name, ctx.legal_name].find((v): v is string => typeof v === 'string' && v.trim() !== '');
  return named?.trim();
};

/**
 * The invoice type: F2 unless the customer gives a tax id (F1); a refund or void is
 * corrective: R1, or R5 when it corrects a simplified invoice (no customer tax id).
 * `metadata.invoice_type` may choose another type of the same family.
 */
export function readSpanishInvoiceType(tx: TransactionDraft, meta: Metadata): SpanishInvoiceType {
  const type = chosenInvoiceType(tx, meta);
  if (type === 'F2') checkSimplifiedLimit(tx, SIMPLIFIED_TOO_LARGE);
  return type;
}

/**
 * RD 1619/2012 art. 4 (and the Basque Decretos Forales that copy it): a simplified invoice
 * is allowed up to 3,000 EUR, VAT included (400 EUR outside the activities of art. 4.2, which
 * the API cannot tell apart: the merchant's duty). AEAT refuses a VERI*FACTU F2 above it
 * (error 1150: the sum of the bases and quotas of its lines), so the sale is refused here,
 * before anything is chained or numbered, rather than dead at the authority.
 */
export const SIMPLIFIED_LIMIT_MINOR = 300_000;
export const SIMPLIFIED_TOO_LARGE =
  "a simplified invoice (F2) cannot exceed 3,000.00 EUR (RD 1619/2012 art. 4): give the customer's tax id and name in customer_context for a full invoice (F1)";

export function checkSimplifiedLimit(tx: TransactionDraft, message: string): void {
  if (tx.total_amount > SIMPLIFIED_LIMIT_MINOR) throw badRequest(message);
}

function chosenInvoiceType(tx: TransactionDraft, meta: Metadata): SpanishInvoiceType {
  const hasCustomer = customerTaxId(tx) !== undefined;
  const corrective = tx.type !== 'sale';
  const raw = meta.invoice_type;
  const replacing = meta[REPLACES_FIELD] !== undefined && meta[REPLACES_FIELD] !== null;
  // F3 replaces the tickets the request names: a full invoice, which names its customer by
  // tax id and name (RD 1619/2012 art. 6.1.d); the ids' form is readReplacedIds'.
  if (replacing && !corrective) {
    if (raw !== undefined && raw !== null && raw !== '' && !(typeof raw === 'string' && raw.trim() === 'F3')) throw badRequest(F3_INVOICE_TYPE);
    if (!hasCustomer || customerName(tx) === undefined) throw badRequest(F3_NEEDS_CUSTOMER);
    return 'F3';
  }
  if (typeof raw === 'string' && raw.trim() === 'F3' && !corrective) throw badRequest(F3_ALONE);
  if (raw === undefined || raw === null || raw === '') {
    if (corrective) return hasCustomer ? 'R1' : 'R5';
    return hasCustomer ? 'F1' : 'F2';
  }
  const allowed: readonly SpanishInvoiceType[] = corrective ? CORRECTIVE_TYPES : SALE_TYPES;
  const chosen = typeof raw === 'string' ? allowed.find((t) => t === raw.trim()) : undefined;
  if (chosen === undefined) {
    throw badRequest(
      corrective
        ? 'metadata.invoice_type must be one of R1, R2, R3, R4, R5 for refund and void transactions'
        : 'metadata.invoice_type must be F1 or F2 for a sale',
    );
  }
  // F1 and R1-R4 identify the customer (art. 6.1.d); without a tax id AEAT refuses them.
  if (chosen !== 'F2' && chosen !== 'R5' && !hasCustomer) {
    throw badRequest(`metadata.invoice_type ${chosen} needs the customer's tax id in customer_context (nif or tax_id)`);
  }
  return chosen;
}

/**
 * FiscalSystem.issuedDocument for the Spanish systems: a number the client chose is issued
 * once in its series (RD 1619/2012 art. 6.1.a: numbering is correlative within a series,
 * each number used once). AEAT answers a second record under the same number and date
 * "duplicate" (3000), which reads as accepted: the second sale would never be registered.
 * `document` is the number as the authority sees it (series and number). Null when the
 * system numbers the invoice itself (from the series counter, which never repeats itself).
 * `counter`: where the series counter would write this same document (FiscalSystem.
 * issuedDocument), so that the counter and the client never give one number twice.
 */
export function clientInvoiceNumber(
  tx: TransactionDraft, series: string, document: (series: string, number: string) => string, counter?: (document: string) => IssuedDocument['counter'],
): IssuedDocument | null {
  const number = metaString(tx, 'invoice_number');
  if (number === undefined) return null;
  const where = series === '' ? '' : ` in series ${series}`;
  const doc = document(series, number);
  const counted = counter?.(doc);
  return {
    document: doc,
    message: `metadata.invoice_number ${number} was already issued${where}: an invoice number is used once in its series (RD 1619/2012 art. 6.1.a)`,
    ...(counted === undefined ? {} : { counter: counted }),
  };
}

/**
 * A number in the form the series counter writes it (`String(n)`: 1, 2, … without leading
 * zeros), as that number; else undefined (`0042`, `2026-7` are no counter's). At most 15
 * digits: exact in a JavaScript number, and beyond any counter.
 */
export const counterNumber = (text: string): number | undefined => (/^[1-9][0-9]{0,14}$/.test(text) ? Number(text) : undefined);

/** Whether `text` can be a series (what `readSeries` accepts). */
export const isSeries = (text: string): boolean => SAFE.test(text);
