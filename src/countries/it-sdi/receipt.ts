import type { Localized, ReceiptFacts } from '../types.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { metaString } from '../shared/metadata-fields.ts';

const INVOICE: Localized = { it: 'Copia di cortesia della fattura elettronica', en: 'Courtesy copy of the e-invoice' };
const CREDIT_NOTE: Localized = { it: 'Copia di cortesia della nota di credito', en: 'Courtesy copy of the credit note' };
const DEBIT_NOTE: Localized = { it: 'Copia di cortesia della nota di debito', en: 'Courtesy copy of the debit note' };

/** An SDI invoice's courtesy copy: the FatturaPA is the legal document, this prints its number. */
export const SDI_RECEIPT: ReceiptFacts = {
  language: 'it',
  title: (_hints, tx) => (tx.type === 'sale' ? INVOICE : CREDIT_NOTE),
  labels: { invoice_number: { it: 'Fattura n.', en: 'Invoice no.' } },
  qr: {},
  // SdI has no annulment: a cancellation is a new document, a nota di credito TD04 reversing
  // an invoice or a nota di debito TD05 reversing a credit note (docs/decisions.md
  // "Cancelling a credit note"), titled as what it is. Each names the document it corrects,
  // as its DatiFattureCollegate does (a refund's `original_invoice_number` and date, when
  // given). Amounts print as the FatturaPA carries them: positive, the type says the rest.
  correction: {
    title: ({ kind, tx }) => (kind !== 'cancellation' ? undefined : tx.type === 'sale' ? CREDIT_NOTE : DEBIT_NOTE),
    references: ({ kind, tx, original }) => {
      const number = kind === 'cancellation'
        ? (original?.hints.find((h) => h.key === 'invoice_number')?.value ?? (original ? metaString(original.tx, 'invoice_number') : undefined))
        : metaString(tx, 'original_invoice_number');
      if (number === undefined) return [];
      const date = kind !== 'cancellation'
        ? metaString(tx, 'original_invoice_date')
        : original ? (metaString(original.tx, 'invoice_date') ?? isoDate(localDate(original.createdAt, 'IT'))) : undefined;
      const what = kind === 'cancellation' && tx.type !== 'sale' ? { it: 'nota di credito', en: 'credit note' } : { it: 'fattura', en: 'invoice' };
      return [date === undefined
        ? { it: `Rif. ${what.it} n. ${number}`, en: `Ref. ${what.en} no. ${number}` }
        : { it: `Rif. ${what.it} n. ${number} del ${date}`, en: `Ref. ${what.en} no. ${number} of ${date}` }];
    },
  },
};
