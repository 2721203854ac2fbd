import type { ReceiptFacts } from '../types.ts';

/** An SDI invoice's courtesy copy: the FatturaPA is the legal document, this prints its number. */
export const SDI_RECEIPT: ReceiptFacts = {
  language: 'it',
  title: (_hints, tx) => (tx.type === 'sale' ? { it: 'Copia di cortesia della fattura elettronica', en: 'Courtesy copy of the e-invoice' } : { it: 'Copia di cortesia della nota di credito', en: 'Courtesy copy of the credit note' }),
  labels: { invoice_number: { it: 'Fattura n.', en: 'Invoice no.' } },
  qr: {},
};
