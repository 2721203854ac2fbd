/**
 * VERI*FACTU transaction rules: as TicketBAI (../es/invoice.ts), with series `A` by
 * default (the VERI*FACTU config has no series field).
 */
import type { TransactionContext, TransactionDraft } from '../types.ts';
import { baseMetadata, withoutUndefined } from '../shared/metadata-fields.ts';
import { metaString } from '../shared/placeholder.ts';
import { readInvoiceNumber, readSeries, readSpanishInvoiceType } from '../es/invoice.ts';

export const DEFAULT_SERIES = 'A';

export const seriesOf = (tx: TransactionDraft): string => metaString(tx, 'series') ?? DEFAULT_SERIES;

export function validateVerifactuTransaction(tx: TransactionDraft, _ctx: TransactionContext): Record<string, unknown> {
  const meta = baseMetadata(tx, 'ES');
  const series = readSeries(meta, DEFAULT_SERIES);
  const invoice_number = readInvoiceNumber(meta);
  const invoice_type = readSpanishInvoiceType(tx, meta);
  return withoutUndefined({ ...meta, series, invoice_number, invoice_type });
}
