/**
 * Portugal transaction rules: the SAF-T (PT) document type. A retail sale is a
 * simplified invoice (FS, CIVA art. 40), a refund or void a credit note (NC); the
 * client may choose another invoice type (FT, FR, ND), and the location must have a
 * series (with its AT validation code) for the type.
 *
 * A credit note names the document it corrects (CIVA art. 29; SAF-T Line/References):
 * `original_invoice_no`, that document's SAF-T InvoiceNo (`FS A2026/35`, the `invoice_no`
 * render hint of its transaction), and optionally `reason` (at most 50 characters;
 * default "Devolução" for a refund, "Anulação da venda" for a void).
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationForFiscal, TransactionContext, TransactionDraft } from '../types.ts';
import { baseMetadata, optionalChoice, optionalText, metaString, withoutUndefined } from '../shared/metadata-fields.ts';
import { isPlainObject } from '../shared/config-fields.ts';
import { DOCUMENT_TYPES, type DocumentType, type SeriesEntry } from './series.ts';

export const ORIGINAL_INVOICE_NO_REQUIRED = 'metadata.original_invoice_no is required for credit notes (NC): the InvoiceNo of the document it corrects';
export const ORIGINAL_INVOICE_NO_INVALID = 'metadata.original_invoice_no must be a SAF-T InvoiceNo "<type> <series>/<number>" of at most 60 characters';
export const ORIGINAL_INVOICE_NO_ON_SALE = 'metadata.original_invoice_no is only allowed on refund and void transactions';
export const REASON_INVALID = 'metadata.reason must be a string of at most 50 characters';

/** SAF-T InvoiceNo (the XSD's pattern, at most 60 characters). */
const INVOICE_NO = /^(?=.{1,60}$)[^ ]+ [^/ ]+\/[0-9]+$/;

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
  const chosen = optionalChoice(meta, 'document_type', DOCUMENT_TYPES, 'metadata.document_type must be one of FT, FS, FR, NC, ND');
  const document_type = chosen ?? defaultDocumentType(tx);
  // A credit note (NC) corrects an earlier document; the other types record a sale.
  if (tx.type === 'sale' && document_type === 'NC') {
    throw badRequest('metadata.document_type NC (credit note) is only for refund and void transactions');
  }
  if (tx.type !== 'sale' && document_type !== 'NC') {
    throw badRequest('metadata.document_type must be NC (credit note) for refund and void transactions');
  }
  if (seriesEntryOf(ctx.location, document_type) === undefined) {
    throw badRequest(`no series configured for document type ${document_type}`);
  }
  const original_invoice_no = optionalText(meta, 'original_invoice_no', ORIGINAL_INVOICE_NO_INVALID, INVOICE_NO);
  const reason = optionalText(meta, 'reason', REASON_INVALID, /^.{1,50}$/s);
  if (tx.type === 'sale' && original_invoice_no !== undefined) throw badRequest(ORIGINAL_INVOICE_NO_ON_SALE);
  if (document_type === 'NC' && original_invoice_no === undefined) throw badRequest(ORIGINAL_INVOICE_NO_REQUIRED);
  return withoutUndefined({ ...meta, document_type, original_invoice_no, reason });
}
