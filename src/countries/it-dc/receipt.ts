import type { ReceiptFacts } from '../types.ts';

/**
 * The Documento Commerciale (DM 7 dicembre 2016, Agenzia delle Entrate specifiche
 * tecniche): titled "DOCUMENTO COMMERCIALE di vendita o prestazione", its number
 * (`document_number`, "numero progressivo") at the top; a return is "emesso per reso
 * merce", an annulment "emesso per annullamento". The kind is the document's own, from
 * its metadata (`is_return`, `is_cancellation`, which `type` refund/void sets:
 * metadata.ts), not from `type`: a sale whose metadata says is_return is a reso.
 */
export const DC_RECEIPT: ReceiptFacts = {
  language: 'it',
  title: (_hints, tx) => (tx.metadata.is_cancellation === true
    ? { it: 'DOCUMENTO COMMERCIALE emesso per annullamento', en: 'COMMERCIAL DOCUMENT issued for an annulment' }
    : tx.metadata.is_return === true || (tx.type !== 'sale' && tx.metadata.is_return === undefined)
      ? { it: 'DOCUMENTO COMMERCIALE emesso per reso merce', en: 'COMMERCIAL DOCUMENT issued for a return' }
      : { it: 'DOCUMENTO COMMERCIALE di vendita o prestazione', en: 'COMMERCIAL DOCUMENT of sale or service' }),
  labels: { document_number: { it: 'Documento n.', en: 'Document no.' } },
  qr: {},
};
