/**
 * Portugal transaction rules: the SAF-T (PT) document type. A retail sale is a
 * simplified invoice (FS, CIVA art. 40), a refund or void a credit note (NC); the
 * client may choose another invoice type (FT, FR, ND), and the location must have a
 * series (with its AT validation code) for the type.
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationForFiscal, TransactionContext, TransactionDraft } from '../types.ts';
import { baseMetadata, optionalChoice, metaString } from '../shared/metadata-fields.ts';
import { isPlainObject } from '../shared/config-fields.ts';
import { DOCUMENT_TYPES, type DocumentType, type SeriesEntry } from './series.ts';

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
  return { ...meta, document_type };
}
