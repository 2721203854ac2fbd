import type { ReceiptFacts } from '../types.ts';
import { spanishTitle, SPANISH_DUPLICATE } from '../es/receipt.ts';

/** SII invoices carry no QR: the invoice number heads them. */
export const SII_RECEIPT: ReceiptFacts = {
  language: 'es',
  title: spanishTitle,
  duplicate: SPANISH_DUPLICATE,
  labels: {
    invoice_number: { es: 'Factura n.º', en: 'Invoice no.' },
    voided_invoice_number: { es: 'Anula la factura n.º', en: 'Voids invoice no.' },
  },
  qr: {},
};
