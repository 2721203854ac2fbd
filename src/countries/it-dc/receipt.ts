import type { ReceiptFacts } from '../types.ts';

/**
 * The Documento Commerciale (DM 7 dicembre 2016, Agenzia delle Entrate specifiche
 * tecniche): titled "DOCUMENTO COMMERCIALE di vendita o prestazione", its number
 * (`document_number`, "numero progressivo") at the top; a return is "di reso merce".
 */
export const DC_RECEIPT: ReceiptFacts = {
  language: 'it',
  title: (_hints, tx) => (tx.type === 'sale'
    ? { it: 'DOCUMENTO COMMERCIALE di vendita o prestazione', en: 'COMMERCIAL DOCUMENT of sale or service' }
    : { it: 'DOCUMENTO COMMERCIALE emesso per reso merce', en: 'COMMERCIAL DOCUMENT issued for a return' }),
  labels: { document_number: { it: 'Documento n.', en: 'Document no.' } },
  qr: {},
};
