import type { ReceiptFacts } from '../types.ts';

/**
 * An NF525 ticket (CGI art. 286-I-3° bis; FORMATS.md §8, items as industry summaries of
 * the référentiel give them): its number on the register (`document_number`), the
 * signature extract (`signature_extract`), and the name and version of the cash-register
 * software that made it.
 */
export const NF525_RECEIPT: ReceiptFacts = {
  language: 'fr',
  title: (_hints, tx) => (tx.type === 'sale' ? { fr: 'Ticket de caisse', en: 'Receipt' } : { fr: 'Ticket de remboursement', en: 'Refund receipt' }),
  labels: {
    document_number: { fr: 'Ticket n°', en: 'Receipt no.' },
    signature_extract: { fr: 'Signature', en: 'Signature' },
  },
  qr: {},
  // A reprint of a ticket says so, with its number (BOI-TVA-DECLA-30-10-30: duplicates are
  // identified and counted); the original is the receipt as first drawn.
  duplicate: { label: (copy) => ({ fr: `DUPLICATA n° ${copy}`, en: `DUPLICATE no. ${copy}` }) },
  lines: ({ software }) => [
    { placement: 'footer_bottom', text: { fr: `Logiciel de caisse : ${software.name} ${software.version}`, en: `Cash-register software: ${software.name} ${software.version}` } },
  ],
};
