import type { ReceiptFacts } from '../types.ts';

/**
 * A Greek receipt once myDATA answered (spec, Greek render hints): MARK, UID and
 * authentication code at the bottom, the AADE QR (`qrUrl`) on the right; while the
 * authority was unreachable, the offline label at the top of the footer (offline.ts).
 * AADE fixes no error-correction level for the QR: M, as Spain and Portugal.
 */
export const MYDATA_RECEIPT: ReceiptFacts = {
  language: 'el',
  title: (_hints, tx) => (tx.type === 'sale' ? { el: 'ΑΠΟΔΕΙΞΗ ΛΙΑΝΙΚΗΣ ΠΩΛΗΣΗΣ', en: 'RETAIL SALES RECEIPT' } : { el: 'ΠΙΣΤΩΤΙΚΟ ΣΤΟΙΧΕΙΟ ΛΙΑΝΙΚΗΣ', en: 'RETAIL CREDIT NOTE' }),
  // Series and aa: the transaction's fiscal_id (`<series>-<aa>`, build.ts).
  number: { label: { el: 'Σειρά-Α/Α', en: 'Series-No.' }, value: ({ fiscalId }) => fiscalId },
  labels: {
    mark: { el: 'ΜΑΡΚ', en: 'MARK' },
    uid: { el: 'UID', en: 'UID' },
    auth_code: { el: 'Κωδικός αυθεντικοποίησης', en: 'Authentication code' },
  },
  qr: { qr: { errorCorrectionLevel: 'M', sizeMm: 30 } },
};
