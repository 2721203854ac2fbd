import type { ReceiptFacts } from '../types.ts';
import { SPANISH_QR, spanishTitle } from '../es/receipt.ts';

/**
 * TicketBAI on the receipt (FORMATS.md §1.3): the TBAI identifier alone on one line with
 * the QR below it, both at the bottom (the `tbai_id` and `qr` hints, in that order).
 */
export const TICKETBAI_RECEIPT: ReceiptFacts = {
  language: 'es',
  title: spanishTitle,
  labels: {},
  singleLine: ['tbai_id'],
  qr: { qr: SPANISH_QR },
};
