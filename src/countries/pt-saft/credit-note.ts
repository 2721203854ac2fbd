/**
 * A credit note (NC) corrects a document this location issued, by no more than that
 * document has left (FiscalSystem.correctedSale, run by the core before the NC joins its
 * chain; docs/decisions.md "Portugal: a credit note names a document of its location and
 * credits at most what it has left").
 *
 * - CIVA art. 29 n.º 1 c) and art. 78 n.º 1 and 7: a credit note is issued "for the
 *   correction" of an invoice the issuer issued, naming it (art. 36 n.º 6, "referência à
 *   fatura a que respeitam"); the SAF-T (PT) structure (Portaria 302/2016, 4.1.4.19.9
 *   References/Reference) holds "the reference to the invoice or simplified invoice,
 *   through its unique identification in the systems where it is issued". A number that no
 *   document of this location holds makes a credit that reduces nothing the issuer declared
 *   (and a VAT deduction, art. 78, without a base): refused.
 * - A cancelled document (annulled, status A) cannot be credited: 400.
 * - What may be credited: the document's gross total, less what the credit notes that
 *   stand against it (not cancelled) credited already; and rate by rate, its lines at that
 *   VAT rate less what those credit notes credited at it. AT's cross-checks of e-fatura and
 *   SAF-T set a document's credits against its amount; a credit above it would make the
 *   document negative.
 * - A debit note (ND) names the document it adds to the same way (art. 36 n.º 6 covers
 *   every document that rectifies an invoice): unknown or cancelled, 400; it takes nothing
 *   from what credit notes may still credit of it.
 * - A document that standing credit or debit notes name cannot be cancelled (the core's 409,
 *   `cumulative` registers both against it): annulling it (status A) would leave their
 *   References naming a document that no longer counts, the NC's VAT regularised (art. 78)
 *   against nothing, the ND's added to nothing.
 *
 * The InvoiceNo `<type> <series>/<n>` of our documents is the place of the record in the
 * location's chain of that type and series (build.ts: n is the chain's sequence; the core
 * keys the chain by `<type> <series>`, index.ts `chainKey`; annulments are numbered apart,
 * `cancellationJoinsChain: false`), so the document is read at that place: the location's
 * own chains only (another location's `FS A2026/1` is its own document, not this one's), in
 * the caller's environment. The record found there is taken only if it holds that very
 * InvoiceNo (`originalOf`): were numbering and place ever to part, a number would be refused
 * as not issued, never matched to another document. credit-note.test.ts ties the two
 * (what build numbers a record is where `named` looks for it).
 */
import { badRequest } from '../../core/errors.ts';
import type { CorrectedSaleLookup, CorrectedSale, TransactionDraft } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { chainKeyOf } from '../shared/chain-key.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { DOCUMENT_TYPES } from './series.ts';
import { documentTypeOf } from './metadata.ts';

/** Our InvoiceNo: a type we issue, the series, and the chain's sequence (no leading zero). */
const OUR_INVOICE_NO = /^([A-Z]{2}) ([^/^ ]+)\/([1-9][0-9]{0,14})$/;

export const originalNotIssued = (invoiceNo: string) =>
  `metadata.original_invoice_no ${invoiceNo} is not a document this location issued: a credit note (NC) corrects a document of its own location (CIVA art. 29 n.º 1 c, SAF-T References); give the invoice_no of one of its sales`;

/** A debit note's (ND) document, likewise: it names the invoice it adds to (CIVA art. 36 n.º 6). */
export const debitedNotIssued = (invoiceNo: string) =>
  `metadata.original_invoice_no ${invoiceNo} is not a document this location issued: a debit note (ND) adds to a document of its own location (CIVA art. 36 n.º 6, SAF-T References); give the invoice_no of one of its sales`;

/**
 * A cancelled document (SAF-T `InvoiceStatus` A: annulled, Portaria 302/2016 4.1.4.19.3) no
 * longer counts in the issuer's sales: there is nothing left of it to credit, and a credit
 * note against it would deduct VAT (CIVA art. 78) that the annulment already took back.
 */
export const originalCancelled = (invoiceNo: string, transactionId: string) =>
  `metadata.original_invoice_no ${invoiceNo} is cancelled (transaction ${transactionId}): a cancelled document (status A in the SAF-T) has nothing left to credit`;

/** Nor can a debit note add to an annulled document: the sale it would add to does not count. */
export const debitedCancelled = (invoiceNo: string, transactionId: string) =>
  `metadata.original_invoice_no ${invoiceNo} is cancelled (transaction ${transactionId}): a debit note (ND) cannot add to a cancelled document (status A in the SAF-T)`;

export const creditAboveOriginal = (invoiceNo: string, total: number, gross: number, credited: number) =>
  `total_amount ${decimal(total)} EUR is more than document ${invoiceNo} has left to credit: ${decimal(Math.max(0, gross - credited))} EUR ` +
  `(its gross total ${decimal(gross)} EUR, ${decimal(credited)} EUR credited by earlier credit notes) (CIVA art. 29 and 78)`;

export const creditAboveRate = (invoiceNo: string, rate: number, amount: number, sold: number, credited: number) =>
  `the lines at ${rate} % total ${decimal(amount)} EUR, more than document ${invoiceNo} has left to credit at ${rate} %: ${decimal(Math.max(0, sold - credited))} EUR ` +
  `(its lines at ${rate} % ${decimal(sold)} EUR, ${decimal(credited)} EUR credited by earlier credit notes) (CIVA art. 29 and 78)`;

/** Where an InvoiceNo of ours sits: its chain (as `FiscalSystem.chainKey` keys it) and sequence; null for a number we never write. */
function positionOf(locationId: string, invoiceNo: string): { chainKey: string; seq: number } | null {
  const m = OUR_INVOICE_NO.exec(invoiceNo);
  if (m === null || !DOCUMENT_TYPES.some((t) => t === m[1] && t !== 'NC')) return null;
  return { chainKey: chainKeyOf('pt-saft', locationId, `${m[1]} ${m[2]}`), seq: Number(m[3]) };
}

/** The credit note's original among the sales found: the sale whose record holds that very InvoiceNo. */
const originalOf = (invoiceNo: string, sales: CorrectedSale[]): CorrectedSale | undefined =>
  sales.find((s) => s.tx.type === 'sale' && s.documentNumber === invoiceNo);

/** What the credit notes standing against a document credited, in cents. */
const creditedBy = (sale: CorrectedSale): number => (sale.corrections ?? []).reduce((sum, c) => sum + c.tx.total_amount, 0);

export const saftCreditedDocument: CorrectedSaleLookup = {
  named({ tx, location }) {
    const invoiceNo = metaString(tx, 'original_invoice_no');
    const type = documentTypeOf(tx);
    if ((type !== 'NC' && type !== 'ND') || invoiceNo === undefined) return null;
    const at = positionOf(location.id, invoiceNo);
    // A number none of our documents can have is looked up as nothing: `resolve` refuses it.
    return { scope: `pt-saft:${location.id}`, documents: [], positions: at === null ? [] : [at] };
  },
  resolve({ tx }, sales) {
    const invoiceNo = metaString(tx, 'original_invoice_no') ?? '';
    const original = originalOf(invoiceNo, sales);
    if (documentTypeOf(tx) === 'ND') {
      // A debit note adds to its document: it must exist and count, and takes nothing from it.
      if (original === undefined) throw badRequest(debitedNotIssued(invoiceNo));
      if (original.cancelled === true) throw badRequest(debitedCancelled(invoiceNo, original.transactionId));
      return tx.metadata;
    }
    if (original === undefined) throw badRequest(originalNotIssued(invoiceNo));
    if (original.cancelled === true) throw badRequest(originalCancelled(invoiceNo, original.transactionId));
    refuseOverCredit(tx, invoiceNo, original);
    return tx.metadata;
  },
  // Partial credit notes add up: each takes from what the earlier ones left.
  cumulative: true,
  // A debit note (ND, a sale) names the document it adds to, as a credit note does (CIVA
  // art. 36 n.º 6: "a referência à fatura a que respeitam"): looked up too, and registered
  // against it (it holds it: no cancel while it stands), counting for nothing.
  sales: true,
};

function refuseOverCredit(tx: TransactionDraft, invoiceNo: string, original: CorrectedSale): void {
  const gross = original.tx.total_amount;
  const credited = creditedBy(original);
  if (tx.total_amount > gross - credited) throw badRequest(creditAboveOriginal(invoiceNo, tx.total_amount, gross, credited));
  // Rate by rate too: under the total, an NC could still credit more of a 23 % line than was
  // sold at 23 % (and less of a 6 % one), deducting VAT that was never charged (CIVA art. 78
  // n.º 1: the regularisation is of the tax "liquidado", at the rate it was charged).
  const sold = byRate(original.tx);
  const before = byRate(...(original.corrections ?? []).map((c) => c.tx));
  for (const [rate, amount] of byRate(tx)) {
    const left = (sold.get(rate) ?? 0) - (before.get(rate) ?? 0);
    if (amount > left) throw badRequest(creditAboveRate(invoiceNo, rate, amount, sold.get(rate) ?? 0, before.get(rate) ?? 0));
  }
}

/** The lines' totals (tax included, cents) per VAT rate, over one or more drafts. */
function byRate(...drafts: TransactionDraft[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of drafts) for (const item of d.items) out.set(item.tax_rate, (out.get(item.tax_rate) ?? 0) + item.total_amount);
  return out;
}
