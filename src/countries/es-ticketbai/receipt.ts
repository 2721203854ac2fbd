import type { ReceiptFacts, TransactionDraft } from '../types.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { SPANISH_NUMBER_LABEL, SPANISH_QR, spanishCorrection, spanishTaxSummary, spanishTitle, SPANISH_DUPLICATE, spanishIssuerName } from '../es/receipt.ts';

/**
 * TicketBAI on the receipt (FORMATS.md §1.3): the TBAI identifier alone on one line with
 * the QR below it, both at the bottom (the `tbai_id` and `qr` hints, in that order).
 */
// SerieFactura and NumFactura (the stored metadata carries the series, metadata.ts `seriesOf`).
const numberOf = ({ documentNumber, tx }: { documentNumber: string | null; tx: TransactionDraft }): string | null =>
  (documentNumber === null ? null : `${metaString(tx, 'series') ?? ''}${metaString(tx, 'series') ? '-' : ''}${documentNumber}`);

export const TICKETBAI_RECEIPT: ReceiptFacts = {
  language: 'es',
  title: spanishTitle,
  duplicate: SPANISH_DUPLICATE,
  labels: {},
  number: { label: SPANISH_NUMBER_LABEL, value: numberOf },
  singleLine: ['tbai_id'],
  qr: { qr: SPANISH_QR },
  // The annulled invoice as its receipt printed it (AnulaTicketBai names its series and number).
  correction: spanishCorrection(numberOf),
  // Recargo de equivalencia on lines of its own (../es/receipt.ts).
  taxSummary: spanishTaxSummary(),
  // Sujetos/Emisor (an annulment's IDFactura/Emisor) as the record signed it.
  issuerLegalName: spanishIssuerName('Emisor', 'ApellidosNombreRazonSocial'),
};
