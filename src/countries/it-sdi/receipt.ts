import { XMLParser } from 'fast-xml-parser';
import type { Localized, ReceiptCorrectionInput, ReceiptFacts, ReceiptTaxSummary, TransactionDraft } from '../types.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { textWithin } from '../shared/xml-text.ts';
import { centsOf, italianDay } from '../it/printed.ts';
import { builtTipoDocumento, cancellationDocument, riepilogo, SEMPLIFICATI, tipoDocumentoOf } from './build.ts';

/**
 * Each TipoDocumento we issue (metadata.ts TIPI_DOCUMENTO, TD05 reversing a credit note, the
 * simplified notes TD08 and TD09) by its name in the FatturaPA 1.2.2 schema (TipoDocumentoType)
 * or Schema_VFSM10.xsd: the courtesy copy's title, how its number is introduced, and how a
 * document referring to it names it.
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
  // Schema_VFSM10.xsd TipoDocumentoType: TD08 "Nota di credito semplificata", TD09 "Nota di
  // debito semplificata" (a TD07's credit note, and the debit note reversing that).
  TD08: {
    title: { it: 'Copia di cortesia della nota di credito semplificata', en: 'Courtesy copy of the simplified credit note' },
    number: { it: 'Nota di credito semplificata n.', en: 'Simplified credit note no.' },
    noun: { it: 'nota di credito semplificata', en: 'simplified credit note' },
  },
  TD09: {
    title: { it: 'Copia di cortesia della nota di debito semplificata', en: 'Courtesy copy of the simplified debit note' },
    number: { it: 'Nota di debito semplificata n.', en: 'Simplified debit note no.' },
    noun: { it: 'nota di debito semplificata', en: 'simplified debit note' },
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

/** What the courtesy copy reads back from the FatturaPA a record holds (build.ts wrote it). */
interface FatturaFacts {
  /** DatiGeneraliDocumento/Data. */
  data: string | undefined;
  summary: ReceiptTaxSummary | undefined;
}

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true });
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (v === undefined ? [] : Array.isArray(v) ? v.map(obj) : [obj(v)]);
const rateOf = (v: unknown): number | undefined => (typeof v === 'string' && /^[0-9]{1,3}\.[0-9]{2}$/.test(v) ? Number(v) : undefined);

/**
 * The FatturaPA's date and VAT summary, as the record carries them: an ordinary invoice's
 * DatiRiepilogo rows (rate, Natura, ImponibileImporto, Imposta) and its Arrotondamento; a
 * simplified one's (FSM10, no summary) DatiBeniServizi grouped by rate and Natura (base:
 * Importo less Imposta). Undefined when the body is no FatturaPA we can read.
 */
function readFattura(body: string | null | undefined): FatturaFacts | undefined {
  if (typeof body !== 'string' || !/<(\w+:)?FatturaElettronica(Semplificata)?[\s>]/.test(body)) return undefined;
  let doc: Obj;
  try {
    doc = obj(parser.parse(body));
  } catch {
    return undefined;
  }
  const simplified = doc.FatturaElettronicaSemplificata !== undefined;
  const root = obj(simplified ? doc.FatturaElettronicaSemplificata : doc.FatturaElettronica);
  const fatturaBody = list(root.FatturaElettronicaBody)[0] ?? {};
  const documento = obj(obj(fatturaBody.DatiGenerali).DatiGeneraliDocumento);
  const data = typeof documento.Data === 'string' ? documento.Data : undefined;
  const rows: ReceiptTaxSummary['rows'] = [];
  if (simplified) {
    for (const b of list(fatturaBody.DatiBeniServizi)) {
      const iva = obj(b.DatiIVA);
      const rate = rateOf(iva.Aliquota) ?? 0;
      const code = typeof b.Natura === 'string' ? b.Natura : undefined;
      const importo = centsOf(b.Importo);
      const tax = centsOf(iva.Imposta) ?? 0;
      if (importo === undefined) return { data, summary: undefined };
      const row = rows.find((r) => r.rate === rate && r.code === code);
      if (row) {
        row.base += importo - tax;
        row.tax += tax;
      } else rows.push({ rate, code, base: importo - tax, tax });
    }
    return { data, summary: { rows } };
  }
  for (const beni of list(fatturaBody.DatiBeniServizi)) {
    for (const r of list(beni.DatiRiepilogo)) {
      const rate = rateOf(r.AliquotaIVA);
      const base = centsOf(r.ImponibileImporto);
      const tax = centsOf(r.Imposta);
      if (rate === undefined || base === undefined || tax === undefined) return { data, summary: undefined };
      rows.push({ rate, code: typeof r.Natura === 'string' ? r.Natura : undefined, base, tax });
    }
  }
  return { data, summary: { rows, rounding: centsOf(documento.Arrotondamento) } };
}

/**
 * The summary build.ts writes for these lines, when no record can be read (a source without
 * one): the same rows and the rounding the document declares; a simplified invoice's lines
 * grouped by rate and Natura, VAT as the lines carry it.
 */
function builtSummary(tx: TransactionDraft, tipo: string): ReceiptTaxSummary {
  const { rows, total } = riepilogo(tx.items);
  if (SEMPLIFICATI.includes(tipo)) {
    const lines: ReceiptTaxSummary['rows'] = [];
    for (const l of tx.items) {
      const code = l.tax_rate === 0 && typeof l.natura === 'string' ? l.natura : undefined;
      const row = lines.find((r) => r.rate === l.tax_rate && r.code === code);
      if (row) {
        row.base += l.total_amount - l.tax_amount;
        row.tax += l.tax_amount;
      } else lines.push({ rate: l.tax_rate, code, base: l.total_amount - l.tax_amount, tax: l.tax_amount });
    }
    return { rows: lines };
  }
  return {
    rows: rows.map((r) => ({ rate: Number(r.AliquotaIVA), code: r.Natura, base: centsOf(r.ImponibileImporto)!, tax: centsOf(r.Imposta)! })),
    rounding: tx.total_amount - total,
  };
}

/** A cancellation's day: the date of the document that cancelled, as its FatturaPA says, else its creation day in Rome. */
const dayOf = (d: { record: string | null; createdAt: Date }): string => readFattura(d.record)?.data ?? isoDate(localDate(d.createdAt, 'IT'));

/**
 * An SDI invoice's courtesy copy: the FatturaPA is the legal document, this prints its
 * number. Title and number label name the document built (its TipoDocumento), not the
 * transaction's `type`: a refund is a nota di credito TD04, a cancellation of a credit note
 * a nota di debito TD05, a `tipo_documento` override (TD02, TD06, TD07, TD24) its own kind.
 */
export const SDI_RECEIPT: ReceiptFacts = {
  // The seller's Denominazione as the FatturaPA carries it (CedentePrestatore; DPR 633/1972
  // art. 21 c. 2 c: the invoice names its issuer): a copy printed after the legal name changed
  // shows the invoice as issued. A seller named by Nome and Cognome: the location's.
  issuerLegalName: ({ record }) => (record ? textWithin(record, 'CedentePrestatore', 'Denominazione') : undefined),
  language: 'it',
  title: (_hints, tx) => documentOf(tipoDocumentoOf(tx)).title,
  // The static label is TD01's; `labelFor` gives every document its own.
  labels: { invoice_number: DOCUMENTS.TD01!.number },
  labelFor: (key, input) => (key === 'invoice_number' ? builtDocument(input).number : undefined),
  qr: {},
  // The copy says what the FatturaPA says: its date (DatiGeneraliDocumento/Data, the request's
  // invoice_date, not the creation time) and its VAT summary row by row (DatiRiepilogo: per
  // rate and, at 0 %, per Natura, with the VAT and Arrotondamento build.ts wrote).
  documentDate: ({ kind, tx, record }) => readFattura(record)?.data ?? (kind === 'cancellation' ? undefined : metaString(tx, 'invoice_date')),
  taxSummary: ({ kind, tx, record }) => readFattura(record)?.summary ?? builtSummary(tx, builtTipoDocumento(kind === 'cancellation', tx)),
  // An invoice SdI delivered cannot be annulled, only offset by a credit note (DPR 633/1972
  // art. 26; a credit note by a debit note): a copy printed after its cancellation says which
  // one, "Stornata con nota di credito n. … del …" (storno: the accounting word for a
  // reversing entry, as Italian invoices say "nota di credito a storno della fattura n."),
  // not ANNULLATO. Every document we issue is feminine (fattura, nota, parcella).
  cancelledNotice: ({ tx, cancelledBy }) => {
    const by = documentOf(cancellationDocument(tipoDocumentoOf(tx), tx.items).tipo).noun;
    const number = cancelledBy ? (cancelledBy.documentNumber ?? cancelledBy.hints.find((h) => h.key === 'invoice_number')?.value) : undefined;
    if (!cancelledBy || number === undefined) return { it: `Stornata con ${by.it}`, en: `Reversed by ${by.en}` };
    const day = italianDay(dayOf(cancelledBy));
    return { it: `Stornata con ${by.it} n. ${number} del ${day}`, en: `Reversed by ${by.en} no. ${number} of ${day}` };
  },
  // SdI has no annulment: a cancellation is a new document, a nota di credito TD04 reversing
  // an invoice or a nota di debito TD05 reversing a credit note (docs/decisions.md
  // "Cancelling a credit note"), their simplified forms TD08/TD09 for a simplified invoice
  // and its credit note, titled as what it is. Each names the document it corrects,
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
      // A refund's original_invoice_number names the invoice it credits: a simplified one for
      // a simplified credit note (TD08, the credit note of a TD07).
      const what = kind === 'cancellation' ? documentOf(tipoDocumentoOf(tx)).noun : documentOf(tipoDocumentoOf(tx) === 'TD08' ? 'TD07' : 'TD01').noun;
      // The day as the Italian prints write it (DD-MM-YYYY, as the documento commerciale's references).
      return [date === undefined
        ? { it: `Rif. ${what.it} n. ${number}`, en: `Ref. ${what.en} no. ${number}` }
        : { it: `Rif. ${what.it} n. ${number} del ${italianDay(date)}`, en: `Ref. ${what.en} no. ${number} of ${italianDay(date)}` }];
    },
  },
};
