/**
 * The myDATA record of a transaction:
 * - a sale, refund or void: an `InvoicesDoc` (xml.ts) for SendInvoices, its UID
 *   (uid.ts) as the record's fingerprint;
 * - a cancellation of a document AADE holds (the original has its MARK): a CancelInvoice
 *   call by MARK. No XML exists for it (CancelInvoice takes `mark` as a query parameter),
 *   so the record is the JSON `{"operation":"CancelInvoice","mark":…,"entityVatNumber":null}`
 *   that the transport turns into the call;
 * - a cancellation of a document without a MARK (never acknowledged: offline, or still
 *   being sent): nothing to cancel at AADE yet, so a reversing document is issued instead
 *   (a credit note 11.4 / 5.2 for a sale), in its own series (cancellationSeries);
 *   docs/decisions.md "Greece: cancellation". It names no MARK (there is none yet): a 5.2,
 *   or an 11.4 with specialInvoiceCategory 13 ("correlation difficulty"). It is sent only
 *   once AADE has accepted its original (index.ts `cancellationAwaitsOriginal`); an 11.4 then
 *   names the original's MARK instead (`correlateReversal`).
 *
 * Credit documents: a 5.1 names the MARK it corrects (`correlatedInvoices`, never empty); an
 * 11.4 names it when the request gives it, else says it cannot (specialInvoiceCategory 13);
 * a 5.2 names none (classification.ts `specialCategoryOf`).
 *
 * Numbering (`aa`): gapless per (AFM, year, branch, series). The chain is the series
 * (index.ts chainKey: location and series; one location is one AFM and branch), and each
 * document leaves `{year, aa}` as its linkData: the next one continues the count in the
 * same Greek calendar year and restarts at 1 in a new one. The fiscal id is
 * "<series>-<aa>" (spec: Greece fiscal_id = series-number); the MARK, UID, authentication
 * code and QR URL arrive with AADE's answer (no receipt items at build).
 */
import type { BuildInput, ChainLink, FiscalRecord, OriginalOfCancellation, StoredRecord, TransactionDraft } from '../types.ts';
import { el } from '../../xml/escape.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { configString } from '../shared/config-fields.ts';
import { seriesOf } from './metadata.ts';
import {
  PAYMENT_TYPE,
  VAT_CATEGORY_EXEMPT,
  defaultIncomeClassification,
  needsCounterpart,
  reversalType,
  SPECIAL_CATEGORY_CORRELATION_DIFFICULTY,
  specialCategoryOf,
  vatCategoryOf,
  type IncomeClassification,
} from './classification.ts';
import { invoicesDocXml, type Classification, type InvoiceModel, type Party } from './xml.ts';
import { myDataUid } from './uid.ts';

/** The next `aa` of a series: +1 within the year, 1 in a new year (or for the first document). */
export function nextAa(chain: ChainLink, year: string): number {
  const prev = chain.previous;
  if (prev === null) return 1;
  const prevYear = prev.linkData?.year;
  const prevAa = Number(prev.linkData?.aa);
  // A record from before numbering was kept (the JSON placeholder) was numbered by seq.
  if (prevYear === undefined || !Number.isSafeInteger(prevAa)) return chain.seq;
  return prevYear === year ? prevAa + 1 : 1;
}

/**
 * The series of the reversing documents issued at cancellation. They are numbered in the
 * cancellations' own sequence (the core's `<chain>#annulments`), so they cannot share the
 * sales' series without repeating its numbers.
 */
export const cancellationSeries = (series: string): string => `${series.slice(0, 47)}-CN`;

/** The CancelInvoice call a cancellation of a transmitted document stands for (contract with the transport). */
export const cancelInvoiceBody = (mark: string): string => JSON.stringify({ operation: 'CancelInvoice', mark, entityVatNumber: null });

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);

function counterpartOf(meta: Record<string, unknown>): Party | undefined {
  const vatNumber = str(meta.counterpart_vat_number);
  if (vatNumber === undefined) return undefined;
  const country = str(meta.counterpart_country) ?? 'GR';
  const postalCode = str(meta.counterpart_postal_code);
  const city = str(meta.counterpart_city);
  return {
    vatNumber,
    country,
    branch: int(meta.counterpart_branch) ?? 0,
    // AADE refuses the name of a Greek counterpart (it knows it by its AFM).
    name: country === 'GR' ? undefined : str(meta.counterpart_name),
    address: postalCode !== undefined && city !== undefined
      ? { street: str(meta.counterpart_street), number: str(meta.counterpart_number), postalCode, city }
      : undefined,
  };
}

function classificationOf(meta: Record<string, unknown>, classifyAs: string): IncomeClassification {
  const d = defaultIncomeClassification(classifyAs);
  return { type: str(meta.income_classification_type) ?? d.type, category: str(meta.income_classification_category) ?? d.category };
}

interface DocumentChoice {
  invoiceType: string;
  series: string;
  /** The invoice type whose income classification applies (the original's, for a reversal). */
  classifyAs: string;
  correlatedMark?: string | undefined;
}

function invoiceDocument(input: BuildInput, tx: TransactionDraft, choice: DocumentChoice): FiscalRecord {
  const config = input.location.config;
  const meta = tx.metadata;
  const afm = configString(config, 'afm') ?? '';
  const branch = typeof config.branch === 'number' ? config.branch : 0;
  const local = localDate(input.now, 'GR');
  const issueDate = isoDate(local);
  const aa = String(nextAa(input.chain, local.year));

  // Income classification goes with the document for TypeB (spec: "invoice plus income
  // classification"), or whenever the merchant names one; TypeA sends the document alone.
  const classify = configString(config, 'document_class') === 'TypeB' || str(meta.income_classification_type) !== undefined || str(meta.income_classification_category) !== undefined;
  const icls = classify ? classificationOf(meta, choice.classifyAs) : undefined;
  const exemption = int(meta.vat_exemption_category);

  const rows = tx.items.map((line, i) => {
    const netValue = line.total_amount - line.tax_amount;
    const vatCategory = vatCategoryOf(line.tax_rate);
    // validateTransaction refused any other rate: this is a record stored before it did.
    if (vatCategory === undefined) throw new Error(`myDATA: no VAT category for rate ${line.tax_rate}`);
    return {
      lineNumber: i + 1,
      netValue,
      vatCategory,
      vatAmount: line.tax_amount,
      vatExemptionCategory: vatCategory === VAT_CATEGORY_EXEMPT ? exemption : undefined,
      incomeClassification: icls ? { ...icls, amount: netValue } : undefined,
    };
  });
  const totalNetValue = rows.reduce((s, r) => s + r.netValue, 0);
  const totalVatAmount = rows.reduce((s, r) => s + r.vatAmount, 0);
  const totalGrossValue = totalNetValue + totalVatAmount;
  const summaryIcls: Classification[] = [];
  for (const r of rows) {
    const c = r.incomeClassification;
    if (!c) continue;
    const same = summaryIcls.find((s) => s.type === c.type && s.category === c.category);
    if (same) same.amount += c.amount;
    else summaryIcls.push({ ...c });
  }

  // Never a 5.1 without the MARK it corrects (validateTransaction refuses one): AADE would refuse it (204).
  if (choice.invoiceType === '5.1' && choice.correlatedMark === undefined) throw new Error('myDATA: a credit note 5.1 needs the MARK it corrects');

  const model: InvoiceModel = {
    issuer: { vatNumber: afm, country: 'GR', branch },
    counterpart: needsCounterpart(choice.invoiceType) ? counterpartOf(meta) : undefined,
    header: {
      series: choice.series,
      aa,
      issueDate,
      invoiceType: choice.invoiceType,
      correlatedInvoices: choice.correlatedMark !== undefined ? [choice.correlatedMark] : undefined,
      specialInvoiceCategory: specialCategoryOf(choice.invoiceType, choice.correlatedMark),
    },
    payments: [{ type: int(meta.payment_type) ?? PAYMENT_TYPE[tx.payment_method], amount: totalGrossValue }],
    rows,
    summary: { totalNetValue, totalVatAmount, totalGrossValue, incomeClassification: summaryIcls },
  };
  return {
    body: invoicesDocXml(model),
    contentType: 'application/xml',
    fiscalId: `${choice.series}-${aa}`,
    documentNumber: aa,
    fingerprint: myDataUid({ afm, issueDate, branch, invoiceType: choice.invoiceType, series: choice.series, aa }),
    linkData: { year: local.year, aa },
    qrData: null,
    placeholder: false,
    renderHints: [],
  };
}

export function buildMyData(input: BuildInput): FiscalRecord {
  const { tx, location } = input;
  const series = seriesOf(tx, location);
  if (input.kind === 'cancellation') {
    const original = input.original;
    const originalType = str(original?.tx.metadata.invoice_type) ?? str(tx.metadata.invoice_type) ?? '11.1';
    const mark = str(original?.upstreamId);
    if (mark !== undefined) {
      // No document is issued: the cancellations' numbering passes on unchanged.
      const year = localDate(input.now, 'GR').year;
      return {
        body: cancelInvoiceBody(mark),
        contentType: 'application/json',
        fiscalId: null,
        documentNumber: null,
        fingerprint: null,
        linkData: input.chain.previous?.linkData ?? { year, aa: '0' },
        qrData: null,
        placeholder: false,
        renderHints: [],
      };
    }
    // The original has no MARK to name: a lone reversal (5.2, or 11.4 "correlation difficulty";
    // a credit note is undone by the sales invoice of its counterpart's country). It classifies
    // as its original, but a sales invoice that undoes a credit note as itself: the credit
    // note's default (E3_561_001) is refused on a 1.2 or 1.3 (INCOME_COMBINATIONS).
    const invoiceType = reversalType(originalType, str(original?.tx.metadata.counterpart_country) ?? str(tx.metadata.counterpart_country));
    const classifyAs = originalType.startsWith('5.') ? invoiceType : originalType;
    return invoiceDocument(input, tx, { invoiceType, series: cancellationSeries(series), classifyAs });
  }
  const invoiceType = str(tx.metadata.invoice_type) ?? (tx.type === 'sale' ? '11.1' : '11.4');
  const correlatedMark = tx.type === 'sale' ? undefined : str(tx.metadata.correlated_mark);
  return invoiceDocument(input, tx, { invoiceType, series, classifyAs: invoiceType, correlatedMark });
}

/**
 * A reversing document, sent once AADE has accepted its original (`FiscalSystem.completeCancellation`):
 * a retail credit note 11.4 issued while the original had no MARK said it could not name it
 * (specialInvoiceCategory 13, "correlation difficulty"); now that the original has its MARK
 * it names it (`correlatedInvoices`), so that AADE pairs the credit note with its sale (Φ2,
 * E3 pre-filling) as for any 11.4 that knows its receipt. Nothing else changes: the same
 * number, date and type, so the same UID (the record's fingerprint) and the same receipt.
 * A 5.2 stays as it is (the non-correlated type: naming the MARK would make it a 5.1, another
 * document under another UID), and so does a reversal of a credit note (11.1, 1.1: sales do
 * not correlate). Undefined: nothing to change (a CancelInvoice call, a document that names
 * its MARK already, an original without one).
 */
export function correlateReversal(record: StoredRecord & { original: OriginalOfCancellation }): string | undefined {
  const mark = record.original.upstreamId;
  if (record.kind !== 'cancellation' || !record.contentType.startsWith('application/xml') || mark === null || !/^\d{1,19}$/.test(mark)) return undefined;
  const header = /<invoiceHeader>[\s\S]*?<\/invoiceHeader>/.exec(record.body)?.[0];
  const difficulty = el('specialInvoiceCategory', String(SPECIAL_CATEGORY_CORRELATION_DIFFICULTY));
  if (header === undefined || !header.includes(el('invoiceType', '11.4')) || header.includes('<correlatedInvoices>') || !header.includes(difficulty)) return undefined;
  // correlatedInvoices stands where specialInvoiceCategory stood (it comes before it in the schema's sequence).
  return record.body.replace(header, header.replace(difficulty, el('correlatedInvoices', mark)));
}
