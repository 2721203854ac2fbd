import type { Localized, ReceiptCorrectionInput, ReceiptFacts } from '../types.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { builtTipoDocumento, tipoDocumentoOf } from './build.ts';

/**
 * Each TipoDocumento we issue (metadata.ts TIPI_DOCUMENTO, and TD05 reversing a credit
 * note) by its name in the FatturaPA 1.2.2 schema (TipoDocumentoType): the courtesy copy's
 * title, how its number is introduced, and how a document referring to it names it.
 */
interface SdiDocument { title: Localized; number: Localized; noun: Localized }
const DOCUMENTS: Readonly<Record<string, SdiDocument>> = {
  TD01: {
    title: { it: 'Copia di cortesia della fattura elettronica', en: 'Courtesy copy of the e-invoice' },
    number: { it: 'Fattura n.', en: 'Invoice no.' },
    noun: { it: 'fattura', en: 'invoice' },
  },
  // "Acconto / anticipo su fattura": an invoice for an advance payment.
  TD02: {
    title: { it: 'Copia di cortesia della fattura di acconto', en: 'Courtesy copy of the advance invoice' },
    number: { it: 'Fattura di acconto n.', en: 'Advance invoice no.' },
    noun: { it: 'fattura di acconto', en: 'advance invoice' },
  },
  TD04: {
    title: { it: 'Copia di cortesia della nota di credito', en: 'Courtesy copy of the credit note' },
    number: { it: 'Nota di credito n.', en: 'Credit note no.' },
    noun: { it: 'nota di credito', en: 'credit note' },
  },
  TD05: {
    title: { it: 'Copia di cortesia della nota di debito', en: 'Courtesy copy of the debit note' },
    number: { it: 'Nota di debito n.', en: 'Debit note no.' },
    noun: { it: 'nota di debito', en: 'debit note' },
  },
  TD06: {
    title: { it: 'Copia di cortesia della parcella', en: 'Courtesy copy of the fee note' },
    number: { it: 'Parcella n.', en: 'Fee note no.' },
    noun: { it: 'parcella', en: 'fee note' },
  },
  TD07: {
    title: { it: 'Copia di cortesia della fattura semplificata', en: 'Courtesy copy of the simplified invoice' },
    number: { it: 'Fattura semplificata n.', en: 'Simplified invoice no.' },
    noun: { it: 'fattura semplificata', en: 'simplified invoice' },
  },
  // "Fattura differita di cui all'art. 21, comma 4, lett. a)".
  TD24: {
    title: { it: 'Copia di cortesia della fattura differita', en: 'Courtesy copy of the deferred invoice' },
    number: { it: 'Fattura differita n.', en: 'Deferred invoice no.' },
    noun: { it: 'fattura differita', en: 'deferred invoice' },
  },
};

/** A TipoDocumento's names; one we do not issue (none passes the metadata rules) reads as an invoice. */
const documentOf = (tipo: string): SdiDocument => DOCUMENTS[tipo] ?? DOCUMENTS.TD01!;

/** The document this transaction's record is, as build.ts writes its TipoDocumento. */
const builtDocument = ({ kind, tx }: Pick<ReceiptCorrectionInput, 'kind' | 'tx'>): SdiDocument =>
  documentOf(builtTipoDocumento(kind === 'cancellation', tx));

/**
 * An SDI invoice's courtesy copy: the FatturaPA is the legal document, this prints its
 * number. Title and number label name the document built (its TipoDocumento), not the
 * transaction's `type`: a refund is a nota di credito TD04, a cancellation of a credit note
 * a nota di debito TD05, a `tipo_documento` override (TD02, TD06, TD07, TD24) its own kind.
 */
export const SDI_RECEIPT: ReceiptFacts = {
  language: 'it',
  title: (_hints, tx) => documentOf(tipoDocumentoOf(tx)).title,
  // The static label is TD01's; `labelFor` gives every document its own.
  labels: { invoice_number: DOCUMENTS.TD01!.number },
  labelFor: (key, input) => (key === 'invoice_number' ? builtDocument(input).number : undefined),
  qr: {},
  // SdI has no annulment: a cancellation is a new document, a nota di credito TD04 reversing
  // an invoice or a nota di debito TD05 reversing a credit note (docs/decisions.md
  // "Cancelling a credit note"), titled as what it is. Each names the document it corrects,
  // as its DatiFattureCollegate does (a refund's `original_invoice_number` and date, when
  // given). Amounts print as the FatturaPA carries them: positive, the type says the rest.
  correction: {
    title: (input) => (input.kind !== 'cancellation' ? undefined : builtDocument(input).title),
    references: ({ kind, tx, original }) => {
      const number = kind === 'cancellation'
        ? (original?.hints.find((h) => h.key === 'invoice_number')?.value ?? (original ? metaString(original.tx, 'invoice_number') : undefined))
        : metaString(tx, 'original_invoice_number');
      if (number === undefined) return [];
      const date = kind !== 'cancellation'
        ? metaString(tx, 'original_invoice_date')
        : original ? (metaString(original.tx, 'invoice_date') ?? isoDate(localDate(original.createdAt, 'IT'))) : undefined;
      // A cancellation's draft is the original's: it names the original by its own type.
      // A refund's original_invoice_number names the invoice it credits.
      const what = kind === 'cancellation' ? documentOf(tipoDocumentoOf(tx)).noun : DOCUMENTS.TD01!.noun;
      return [date === undefined
        ? { it: `Rif. ${what.it} n. ${number}`, en: `Ref. ${what.en} no. ${number}` }
        : { it: `Rif. ${what.it} n. ${number} del ${date}`, en: `Ref. ${what.en} no. ${number} of ${date}` }];
    },
  },
};
