/**
 * TicketBAI transaction rules: series, optional invoice number and the invoice type
 * (F1/F2, R1-R5; see ../es/invoice.ts).
 */
import type { LocationForFiscal, TransactionContext, TransactionDraft } from '../types.ts';
import { baseMetadata, withoutUndefined } from '../shared/metadata-fields.ts';
import { configString, metaString } from '../shared/placeholder.ts';
import { readInvoiceNumber, readSeries, readSpanishInvoiceType } from '../es/invoice.ts';

/** The series when metadata gives none: the location's configured one, else `A`. */
export const defaultSeries = (location: LocationForFiscal): string => configString(location.config, 'series') ?? 'A';

/** The series of a validated transaction (the stored metadata carries the default). */
export const seriesOf = (tx: TransactionDraft, location: LocationForFiscal): string =>
  metaString(tx, 'series') ?? defaultSeries(location);

export function validateTicketBaiTransaction(tx: TransactionDraft, ctx: TransactionContext): Record<string, unknown> {
  const meta = baseMetadata(tx, 'ES');
  const series = readSeries(meta, defaultSeries(ctx.location));
  const invoice_number = readInvoiceNumber(meta);
  const invoice_type = readSpanishInvoiceType(tx, meta);
  return withoutUndefined({ ...meta, series, invoice_number, invoice_type });
}
