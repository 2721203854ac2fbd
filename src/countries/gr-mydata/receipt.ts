import type { Localized, ReceiptFacts } from '../types.ts';
import { metaString } from '../shared/metadata-fields.ts';

const RECEIPT: Localized = { el: 'ΑΠΟΔΕΙΞΗ ΛΙΑΝΙΚΗΣ ΠΩΛΗΣΗΣ', en: 'RETAIL SALES RECEIPT' };
const CREDIT: Localized = { el: 'ΠΙΣΤΩΤΙΚΟ ΣΤΟΙΧΕΙΟ ΛΙΑΝΙΚΗΣ', en: 'RETAIL CREDIT NOTE' };
const CANCELLATION: Localized = { el: 'ΑΚΥΡΩΣΗ ΠΑΡΑΣΤΑΤΙΚΟΥ', en: 'DOCUMENT CANCELLATION' };

/**
 * A Greek receipt once myDATA answered (spec, Greek render hints): MARK, UID and
 * authentication code at the bottom, the AADE QR (`qrUrl`) on the right; while the
 * authority was unreachable, the offline label at the top of the footer (offline.ts).
 * AADE fixes no error-correction level for the QR: M, as Spain and Portugal.
 */
export const MYDATA_RECEIPT: ReceiptFacts = {
  language: 'el',
  title: (_hints, tx) => (tx.type === 'sale' ? RECEIPT : CREDIT),
  // Series and aa: the transaction's fiscal_id (`<series>-<aa>`, build.ts).
  number: { label: { el: 'Σειρά-Α/Α', en: 'Series-No.' }, value: ({ fiscalId }) => fiscalId },
  labels: {
    mark: { el: 'ΜΑΡΚ', en: 'MARK' },
    uid: { el: 'UID', en: 'UID' },
    auth_code: { el: 'Κωδικός αυθεντικοποίησης', en: 'Authentication code' },
  },
  qr: { qr: { errorCorrectionLevel: 'M', sizeMm: 30 } },
  // A cancellation of a document AADE holds (its MARK) is a CancelInvoice: no new document,
  // so it is titled as the cancellation it is and names the cancelled document by series-aa
  // and MARK. One of a document without a MARK is a reversing credit note (build.ts), titled
  // as one. A credit note 5.1 names its correlated invoice's MARK. Amounts print positive:
  // myDATA carries them so, the invoice type says the rest.
  correction: {
    title: ({ kind, tx, original }) => {
      if (kind !== 'cancellation') return undefined;
      if (original?.hints.some((h) => h.key === 'mark')) return CANCELLATION;
      return tx.type === 'sale' ? CREDIT : RECEIPT;
    },
    references: ({ kind, tx, original }) => {
      if (kind !== 'cancellation') {
        const mark = metaString(tx, 'correlated_mark');
        return mark === undefined ? [] : [{ el: `Συσχετιζόμενο παραστατικό ΜΑΡΚ ${mark}`, en: `Correlated document MARK ${mark}` }];
      }
      if (!original) return [];
      const number = original.fiscalId;
      const mark = original.hints.find((h) => h.key === 'mark')?.value;
      const out: Localized[] = [];
      if (mark === undefined) {
        if (number) out.push({ el: `Αντιλογισμός του παραστατικού ${number}`, en: `Reverses document ${number}` });
        return out;
      }
      if (number) out.push({ el: `Ακυρωμένο παραστατικό ${number}`, en: `Cancelled document ${number}` });
      out.push({ el: `ΜΑΡΚ ακυρωμένου ${mark}`, en: `Cancelled document's MARK ${mark}` });
      return out;
    },
  },
};
