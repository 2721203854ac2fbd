import type { Localized, ReceiptFacts } from '../types.ts';
import { documentTypeOf } from './metadata.ts';
import { QR_MIN_VERSION } from './qr-image.ts';
import { withQrStatus } from './qr.ts';

const TITLES: Readonly<Record<string, Localized>> = {
  FS: { pt: 'Fatura simplificada', en: 'Simplified invoice' },
  FT: { pt: 'Fatura', en: 'Invoice' },
  FR: { pt: 'Fatura-recibo', en: 'Invoice-receipt' },
  NC: { pt: 'Nota de crédito', en: 'Credit note' },
};

/**
 * A Portuguese document on paper (FORMATS.md §7): `ATCUD:<code>-<number>` immediately
 * above the QR (Portaria 195/2020; the `atcud` hint comes before `qr`), the QR at level
 * M, version 9 at least, 30 mm at least (AT QR spec v1.0), and the 4 hash characters
 * with "Processado por programa certificado n.º <n>/AT" (the `software_certificate` hint).
 */
export const SAFT_RECEIPT: ReceiptFacts = {
  language: 'pt',
  title: (_hints, tx) => TITLES[documentTypeOf(tx)] ?? { pt: documentTypeOf(tx), en: documentTypeOf(tx) },
  labels: {
    invoice_no: { pt: 'Documento', en: 'Document' },
    atcud: { pt: 'ATCUD:', en: 'ATCUD:' },
  },
  qr: { qr: { errorCorrectionLevel: 'M', minVersion: QR_MIN_VERSION, sizeMm: 30 } },
  // Field E is the document's status (AT QR spec v1.0, the SAF-T InvoiceStatus: N normal,
  // A anulado): a print made after the annulment (its 2.ª via) says A, as the SAF-T does.
  qrContent: (key, content, { cancelled }) => (key === 'qr' && cancelled ? withQrStatus(content, 'A') : undefined),
  // A reprint is marked "2.ª via" (second copy), as Portuguese certified software prints
  // reprints (the AT's FAQs on annulled documents speak of the "2.ª via" printed
  // afterwards); it is the same wording for every reprint, the number is in X-Receipt-Copy.
  // The SAF-T document is unchanged and the file has no place for reprints: nothing is journaled.
  duplicate: {
    label: () => ({ pt: '2.ª via', en: 'Reprint (2.ª via)' }),
  },
};
