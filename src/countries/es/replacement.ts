/**
 * A full invoice issued in place of simplified ones: TipoFactura F3, "factura emitida en
 * sustitución de facturas simplificadas facturadas y declaradas" (VERI*FACTU and SII
 * ClaveTipoFacturaType, FORMATS.md §2.5 and §3; TicketBAI `FacturaEmitidaSustitucionSimplificada`
 * S). A customer who got a ticket (F2) asks for an invoice with their tax id and name
 * (RD 1619/2012): the merchant issues a full invoice that replaces the ticket(s).
 *
 * The request names the replaced sales by transaction id in `metadata.replaces_simplified`
 * (snake_case as the other Spanish fields; an array: several tickets may go into one
 * invoice). The core reads them (services/replacements.ts: this account's, location's and
 * environment's sales, not refused nor cancelled) and registers each replacement once;
 * here each must be a simplified invoice (F2), and `resolve` stores what the record names
 * of each in `metadata.replaced_invoices` (number, series where the system keeps it apart,
 * issue date DD-MM-YYYY), so the record is built from the stored draft alone.
 */
import { badRequest } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import type { LocationForFiscal, ReplacedSale, SaleReplacement, TransactionDraft } from '../types.ts';
import type { Metadata } from '../shared/metadata-fields.ts';
import { dmyDate, localDate } from '../shared/dates.ts';
import { metaString } from '../shared/metadata-fields.ts';

export const REPLACES_FIELD = 'replaces_simplified';
export const REPLACED_FIELD = 'replaced_invoices';
/** TicketBAI lists at most 100 (FacturasRectificadasSustituidas maxOccurs); the same bound everywhere. */
export const MAX_REPLACED = 100;

export const REPLACES_INVALID = `metadata.${REPLACES_FIELD} must be an array of 1 to ${MAX_REPLACED} distinct transaction ids`;
export const REPLACES_ON_SALE = `metadata.${REPLACES_FIELD} is only allowed on sale transactions`;
export const REPLACED_GIVEN = `metadata.${REPLACED_FIELD} is written by the service from metadata.${REPLACES_FIELD}; leave it out`;
export const notSimplified = (id: string): string =>
  `metadata.${REPLACES_FIELD}: transaction ${id} is not a simplified invoice (F2); only simplified invoices are replaced by a full one (F3)`;
export const alreadyReplaced = (id: string): string =>
  `metadata.${REPLACES_FIELD}: transaction ${id} was already replaced by another invoice`;
/** A ticket a standing refund or void corrects already: `by` names that correction (`invoice <name> (transaction <id>)`). */
export const alreadyCorrected = (id: string, invoice: string, by: string): string =>
  `metadata.${REPLACES_FIELD}: transaction ${id} (invoice ${invoice}) was already corrected by ${by}; an F3 cannot replace it`;

/** One replaced invoice as stored in `metadata.replaced_invoices`. */
export interface ReplacedInvoice {
  transaction_id: string;
  /** The number as the system names the invoice (VERI*FACTU NumSerieFactura, SII NumSerieFacturaEmisor, TicketBAI NumFactura). */
  number: string;
  /** TicketBAI's SerieFactura (kept apart from the number there). */
  series?: string;
  issue_date: string;
}

/**
 * The ids `metadata.replaces_simplified` names (undefined when absent), checked in form: a
 * sale's, 1-100 distinct UUIDs. `replaced_invoices` is the service's: refused when sent.
 */
export function readReplacedIds(tx: TransactionDraft, meta: Metadata): string[] | undefined {
  if (meta[REPLACED_FIELD] !== undefined) throw badRequest(REPLACED_GIVEN);
  const raw = meta[REPLACES_FIELD];
  if (raw === undefined || raw === null) return undefined;
  if (tx.type !== 'sale') throw badRequest(REPLACES_ON_SALE);
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_REPLACED) throw badRequest(REPLACES_INVALID);
  const ids = raw.map((v) => (typeof v === 'string' ? v.trim().toLowerCase() : ''));
  if (ids.some((id) => !isUuid(id)) || new Set(ids).size !== ids.length) throw badRequest(REPLACES_INVALID);
  return ids;
}

/** The ids of the stored (validated) metadata. */
const namedIds = (tx: TransactionDraft): string[] => {
  const raw = tx.metadata[REPLACES_FIELD];
  return Array.isArray(raw) ? raw.filter((v): v is string => typeof v === 'string') : [];
};

/** The replaced invoices of a stored F3 (what `resolve` wrote); [] for any other. */
export function replacedInvoicesOf(tx: TransactionDraft): ReplacedInvoice[] {
  const raw = tx.metadata[REPLACED_FIELD];
  if (!Array.isArray(raw)) return [];
  return raw.filter((r): r is ReplacedInvoice =>
    typeof r === 'object' && r !== null && typeof (r as ReplacedInvoice).number === 'string' && typeof (r as ReplacedInvoice).issue_date === 'string');
}

/** A replaced sale's issue date as its record wrote it: the Madrid day of its record, DD-MM-YYYY. */
export const recordIssueDate = (sale: ReplacedSale): string => dmyDate(localDate(new Date(sale.issuedAt), 'ES'));

/**
 * What a replacement registers, and a correction looks up, for one replaced invoice: its
 * number and issue date. Not its series: a TicketBAI refund may name the invoice it corrects
 * without one (`original_series` is optional), so the series is told apart by `matches`.
 */
const refOf = (number: string, issueDate: string): string => JSON.stringify([number.trim(), issueDate.trim()]);

/**
 * The invoice a refund or void corrects, as its request names it: `original_invoice_number`
 * and `original_issue_date` (both or neither, validated), TicketBAI's optional
 * `original_series`. A replaced invoice matches on number and date, and on the series when
 * both name one: a reference without a series names the number of that date in any series,
 * as the authority would read it.
 */
function namedOriginal(tx: TransactionDraft): { ref: string; names(r: Omit<ReplacedInvoice, 'transaction_id'>): boolean } | null {
  if (tx.type === 'sale') return null;
  const number = metaString(tx, 'original_invoice_number')?.trim();
  const date = metaString(tx, 'original_issue_date')?.trim();
  if (!number || !date) return null;
  const series = metaString(tx, 'original_series')?.trim() || undefined;
  return {
    ref: refOf(number, date),
    names: (r) => r.number.trim() === number && r.issue_date.trim() === date && (series === undefined || r.series === undefined || r.series === series),
  };
}

function correctedInvoice(tx: TransactionDraft): ReturnType<SaleReplacement['corrected']> {
  const named = namedOriginal(tx);
  return named && { ref: named.ref, matches: (replacement) => replacedInvoicesOf(replacement).some(named.names) };
}

/** The message's name of an invoice: `A-7 of 15-01-2026`, TicketBAI's `7 (series A) of 15-01-2026`. */
const invoiceName = (r: Omit<ReplacedInvoice, 'transaction_id'>): string =>
  `${r.number}${r.series === undefined ? '' : ` (series ${r.series})`} of ${r.issue_date}`;

/**
 * The Spanish systems' `FiscalSystem.replaces`: `invoice` names one replaced sale as its
 * system's record does (its number and issue date), or null when its record has none.
 * A refund or void of a replaced ticket (R1-R5, a TicketBAI rectificativa, an SII baja)
 * names it by number and date (`corrected`): while the F3 stands it is refused, as the F3
 * is the invoice of those operations now (RD 1619/2012 arts. 13 and 15): the correction
 * goes against the F3. The reverse (`correctedAlready`): an F3 naming a ticket a standing
 * refund or void corrects already would invoice in full an amount already corrected.
 * `scope`: the issuer whose numbers the tickets are (each system's: NIF, TicketBAI also
 * territory), so a refund at any of its locations meets an F3 at another.
 */
export function spanishReplacement(
  invoice: (sale: ReplacedSale) => Omit<ReplacedInvoice, 'transaction_id'> | null,
  scope: (location: LocationForFiscal) => string,
): SaleReplacement {
  const describe = (sale: ReplacedSale): string => {
    const named = invoice(sale);
    return named === null ? `transaction ${sale.transactionId}` : invoiceName(named);
  };
  return {
    field: REPLACES_FIELD,
    named: namedIds,
    refusal: (sale) => (sale.tx.metadata.invoice_type === 'F2' && invoice(sale) !== null ? null : notSimplified(sale.transactionId)),
    resolve: (tx, sales) => ({
      ...tx.metadata,
      [REPLACED_FIELD]: sales.map((s): ReplacedInvoice => ({ transaction_id: s.transactionId, ...invoice(s)! })),
    }),
    alreadyReplaced,
    corrected: correctedInvoice,
    replacedRefs: (tx) => [...new Set(replacedInvoicesOf(tx).map((r) => refOf(r.number, r.issue_date)))],
    describe,
    scope,
    correctedAlready: (replacement, correction) => {
      const named = namedOriginal(correction.tx);
      const ticket = named && replacedInvoicesOf(replacement).find(named.names);
      if (!ticket) return null;
      const issued = invoice(correction);
      const by = issued === null ? `transaction ${correction.transactionId}` : `invoice ${invoiceName(issued)} (transaction ${correction.transactionId})`;
      return alreadyCorrected(ticket.transaction_id, invoiceName(ticket), by);
    },
  };
}
