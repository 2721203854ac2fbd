/**
 * Greece myDATA transaction rules: the invoice type and the series. Retail documents
 * (AADE invoice types, category 11): 11.1 retail sales receipt (ΑΛΠ), 11.2 service
 * receipt (ΑΠΥ), 11.3 simplified invoice, 11.4 retail credit note.
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationForFiscal, TransactionContext, TransactionDraft } from '../types.ts';
import { baseMetadata, optionalChoice, optionalText, metaString } from '../shared/metadata-fields.ts';
import { configString } from '../shared/config-fields.ts';

const SALE_TYPES = ['11.1', '11.2', '11.3'] as const;
const CREDIT_TYPES = ['11.4'] as const;

export const defaultInvoiceType = (tx: TransactionDraft): string => (tx.type === 'sale' ? '11.1' : '11.4');

/** The series: metadata's, else the location's default_series (unique per AFM, year and branch). */
export const seriesOf = (tx: TransactionDraft, location: LocationForFiscal): string =>
  metaString(tx, 'series') ?? configString(location.config, 'default_series') ?? 'A';

export function validateMyDataTransaction(tx: TransactionDraft, ctx: TransactionContext): Record<string, unknown> {
  const meta = baseMetadata(tx, 'GR');
  const sale = tx.type === 'sale';
  const invoice_type =
    optionalChoice(
      meta,
      'invoice_type',
      sale ? SALE_TYPES : CREDIT_TYPES,
      sale ? 'metadata.invoice_type must be one of 11.1, 11.2, 11.3 for a sale' : 'metadata.invoice_type must be 11.4 for refund and void transactions',
    ) ?? defaultInvoiceType(tx);
  // myDATA `series`: a string of at most 50 characters (Greek letters allowed).
  const series =
    optionalText(meta, 'series', 'metadata.series must be 1-50 characters without spaces', /^\S{1,50}$/u) ??
    configString(ctx.location.config, 'default_series');
  if (series === undefined) throw badRequest('metadata.series is required (the location has no default_series)');
  return { ...meta, invoice_type, series };
}
