import { XMLParser } from 'fast-xml-parser';
import type { Localized, ReceiptCorrectionInput, ReceiptFacts, TransactionDraft } from '../types.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { defaultInvoiceType, reversalType } from './classification.ts';
import { exemptionNote } from './vat-exemptions.ts';

/**
 * Titles by myDATA invoice type: AADE's names of the types we issue (invoice types table,
 * FORMATS.md §6 [secondary: firebed/aade-mydata docs/appendix/invoice-types.md]). The
 * receipt is the document AADE registered, so it is named as that document: a sales
 * invoice 1.1 is no retail receipt, a credit invoice 5.x no retail credit note.
 */
const TITLES: Readonly<Record<string, Localized>> = {
  '11.1': { el: 'ΑΠΟΔΕΙΞΗ ΛΙΑΝΙΚΗΣ ΠΩΛΗΣΗΣ', en: 'RETAIL SALES RECEIPT' },
  '11.2': { el: 'ΑΠΟΔΕΙΞΗ ΠΑΡΟΧΗΣ ΥΠΗΡΕΣΙΩΝ', en: 'SERVICE RECEIPT' },
  '11.3': { el: 'ΑΠΛΟΠΟΙΗΜΕΝΟ ΤΙΜΟΛΟΓΙΟ', en: 'SIMPLIFIED INVOICE' },
  '11.4': { el: 'ΠΙΣΤΩΤΙΚΟ ΣΤΟΙΧΕΙΟ ΛΙΑΝΙΚΗΣ', en: 'RETAIL CREDIT NOTE' },
  '1.1': { el: 'ΤΙΜΟΛΟΓΙΟ ΠΩΛΗΣΗΣ', en: 'SALES INVOICE' },
  '1.2': { el: 'ΤΙΜΟΛΟΓΙΟ ΠΩΛΗΣΗΣ - ΕΝΔΟΚΟΙΝΟΤΙΚΕΣ ΠΑΡΑΔΟΣΕΙΣ', en: 'SALES INVOICE - INTRA-COMMUNITY SUPPLIES' },
  '1.3': { el: 'ΤΙΜΟΛΟΓΙΟ ΠΩΛΗΣΗΣ - ΠΑΡΑΔΟΣΕΙΣ ΤΡΙΤΩΝ ΧΩΡΩΝ', en: 'SALES INVOICE - THIRD COUNTRY SUPPLIES' },
  '2.1': { el: 'ΤΙΜΟΛΟΓΙΟ ΠΑΡΟΧΗΣ ΥΠΗΡΕΣΙΩΝ', en: 'SERVICES INVOICE' },
  '2.2': { el: 'ΤΙΜΟΛΟΓΙΟ ΠΑΡΟΧΗΣ - ΕΝΔΟΚΟΙΝΟΤΙΚΗ ΠΑΡΟΧΗ ΥΠΗΡΕΣΙΩΝ', en: 'SERVICES INVOICE - INTRA-COMMUNITY SERVICES' },
  '2.3': { el: 'ΤΙΜΟΛΟΓΙΟ ΠΑΡΟΧΗΣ - ΠΑΡΟΧΗ ΥΠΗΡΕΣΙΩΝ ΤΡΙΤΩΝ ΧΩΡΩΝ', en: 'SERVICES INVOICE - THIRD COUNTRY SERVICES' },
  '5.1': { el: 'ΠΙΣΤΩΤΙΚΟ ΤΙΜΟΛΟΓΙΟ - ΣΥΣΧΕΤΙΖΟΜΕΝΟ', en: 'CREDIT INVOICE - CORRELATED' },
  '5.2': { el: 'ΠΙΣΤΩΤΙΚΟ ΤΙΜΟΛΟΓΙΟ - ΜΗ ΣΥΣΧΕΤΙΖΟΜΕΝΟ', en: 'CREDIT INVOICE - NOT CORRELATED' },
};
const CANCELLATION: Localized = { el: 'ΑΚΥΡΩΣΗ ΠΑΡΑΣΤΑΤΙΚΟΥ', en: 'DOCUMENT CANCELLATION' };
/** The `mark` of a CancelInvoice cancellation is AADE's cancellationMark ("ΜΑΡΚ ακύρωσης"). */
const CANCELLATION_MARK: Localized = { el: 'ΜΑΡΚ ακύρωσης', en: 'Cancellation MARK' };

/** How an original since reversed prints: AADE holds it still, offset by the reversing document (no CancelInvoice). */
const REVERSED: Localized = { el: 'ΑΝΤΙΛΟΓΙΣΤΗΚΕ', en: 'REVERSED' };

/** The invoice type of a stored draft (validateTransaction always stores one; the defaults for older drafts). */
const invoiceTypeOf = (tx: TransactionDraft): string =>
  metaString(tx, 'invoice_type') ?? defaultInvoiceType(tx.type === 'sale', undefined, false);

const titleOf = (invoiceType: string): Localized => TITLES[invoiceType] ?? { el: `ΠΑΡΑΣΤΑΤΙΚΟ ${invoiceType}`, en: `DOCUMENT ${invoiceType}` };

/**
 * Whether a cancellation issued a document of its own (build.ts): a reversing credit note
 * when its original had no MARK, numbered `<series>-CN-n`; else it is the CancelInvoice call,
 * which issues none (no fiscal id). Decided by the cancellation's own number, not by the
 * original's MARK now: an original sent after its reversal was issued has a MARK by the
 * time the reversal is reprinted, and the reversal is still a credit note. Without the
 * number (a caller that does not give it), the original's MARK decides, as at build.
 */
const issuedDocument = ({ fiscalId, original }: ReceiptCorrectionInput): boolean =>
  typeof fiscalId === 'string' && fiscalId !== '' ? true : !original?.hints.some((h) => h.key === 'mark');

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true });
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (v === undefined ? [] : Array.isArray(v) ? v.map(obj) : [obj(v)]);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** What the receipt reads back from an InvoicesDoc (xml.ts): the issuer's AFM and each line's exemption cause, by lineNumber. */
interface InvoiceFacts {
  issuerVatNumber: string | undefined;
  exemptions: Map<number, number>;
}

/** The InvoicesDoc a record holds; undefined for anything else (a CancelInvoice call's JSON, no record, an unreadable body). */
function readInvoice(body: string | null | undefined): InvoiceFacts | undefined {
  if (typeof body !== 'string' || !/<(\w+:)?InvoicesDoc[\s>]/.test(body)) return undefined;
  let doc: Obj;
  try {
    doc = obj(parser.parse(body));
  } catch {
    return undefined;
  }
  const invoice = list(obj(doc.InvoicesDoc).invoice)[0];
  if (!invoice) return undefined;
  const exemptions = new Map<number, number>();
  for (const row of list(invoice.invoiceDetails)) {
    const line = Number(str(row.lineNumber));
    const cause = Number(str(row.vatExemptionCategory));
    if (Number.isSafeInteger(line) && Number.isSafeInteger(cause) && cause > 0) exemptions.set(line, cause);
  }
  return { issuerVatNumber: str(obj(invoice.issuer).vatNumber), exemptions };
}

/**
 * The document a print shows, as sent: the transaction's own InvoicesDoc; for a CancelInvoice
 * cancellation (its record is the call, no document), the cancelled document's, whose lines
 * and issuer it prints.
 */
const documents = new WeakMap<ReceiptCorrectionInput, InvoiceFacts | undefined>();
function documentOf(input: ReceiptCorrectionInput): InvoiceFacts | undefined {
  // Read once per print: the issuer's AFM and the lines' notes ask for the same document.
  if (!documents.has(input)) documents.set(input, readInvoice(input.record) ?? readInvoice(input.original?.record));
  return documents.get(input);
}

/**
 * Under each 0 % line, its VAT exemption cause and AADE's legal text (vat-exemptions.ts), as
 * the record's `vatExemptionCategory` carries it; without a readable record, the cause
 * build.ts writes (the draft's `vat_exemption_category`, every 0 % line).
 */
function exemptionNotes(input: ReceiptCorrectionInput): (Localized | undefined)[] {
  const doc = documentOf(input);
  const meta = input.tx.metadata.vat_exemption_category;
  const fromDraft = typeof meta === 'number' && Number.isSafeInteger(meta) ? meta : undefined;
  return input.tx.items.map((line, i) => {
    const cause = doc ? doc.exemptions.get(i + 1) : line.tax_rate === 0 ? fromDraft : undefined;
    return cause === undefined ? undefined : exemptionNote(cause);
  });
}

/**
 * What a print of a document since cancelled says of the cancellation that stands: a
 * CancelInvoice names its cancellation MARK (AADE's `cancellationMark`, the cancellation's
 * `mark` item, once AADE answered); a reversing document (the original had no MARK when it
 * was cancelled, build.ts) names its number and MARK.
 */
function cancelledByLines({ cancelledBy }: ReceiptCorrectionInput): Localized[] {
  if (!cancelledBy) return [];
  const mark = cancelledBy.hints.find((h) => h.key === 'mark')?.value;
  if (typeof cancelledBy.fiscalId === 'string' && cancelledBy.fiscalId !== '') {
    const number = cancelledBy.fiscalId;
    const out: Localized[] = [{ el: `Αντιλογίστηκε με το παραστατικό ${number}`, en: `Reversed by document ${number}` }];
    if (mark !== undefined) out.push({ el: `ΜΑΡΚ αντιλογιστικού ${mark}`, en: `Reversing document's MARK ${mark}` });
    return out;
  }
  return mark === undefined ? [] : [{ el: `${CANCELLATION_MARK.el} ${mark}`, en: `${CANCELLATION_MARK.en} ${mark}` }];
}

/**
 * The counterpart of a business document (1.1, 2.1, 5.x; retail documents have none), as
 * the document names it: an invoice names its customer and the customer's VAT number (law
 * 4308/2014 art. 9). A Greek counterpart's name is not in the request unless the merchant
 * gives it (AADE knows it by its AFM).
 */
function counterpartLines(tx: TransactionDraft): Localized[] {
  const vat = metaString(tx, 'counterpart_vat_number');
  if (vat === undefined) return [];
  const out: Localized[] = [];
  const name = metaString(tx, 'counterpart_name');
  if (name !== undefined) out.push({ el: `Λήπτης: ${name}`, en: `Customer: ${name}` });
  const country = metaString(tx, 'counterpart_country') ?? 'GR';
  const id = country === 'GR' ? vat : `${vat} (${country})`;
  out.push({ el: `ΑΦΜ λήπτη: ${id}`, en: `Customer VAT no.: ${id}` });
  const branch = Number(metaString(tx, 'counterpart_branch') ?? '0');
  if (branch > 0) out.push({ el: `Εγκατάσταση λήπτη: ${branch}`, en: `Customer branch: ${branch}` });
  const postal = metaString(tx, 'counterpart_postal_code');
  const city = metaString(tx, 'counterpart_city');
  if (postal !== undefined && city !== undefined) {
    const street = [metaString(tx, 'counterpart_street'), metaString(tx, 'counterpart_number')].filter((p) => p !== undefined).join(' ');
    const address = `${street === '' ? '' : `${street}, `}${postal} ${city}`;
    out.push({ el: `Διεύθυνση λήπτη: ${address}`, en: `Customer address: ${address}` });
  }
  return out;
}

/**
 * A Greek receipt once myDATA answered (spec, Greek render hints): MARK, UID and
 * authentication code at the bottom, the AADE QR (`qrUrl`) on the right; while the
 * authority was unreachable, the offline label at the top of the footer (offline.ts).
 * AADE fixes no error-correction level for the QR: M, as Spain and Portugal. Titled by
 * the document's invoice type; a business document names its counterpart.
 */
export const MYDATA_RECEIPT: ReceiptFacts = {
  language: 'el',
  title: (_hints, tx) => titleOf(invoiceTypeOf(tx)),
  // Series and aa: the transaction's fiscal_id (`<series>-<aa>`, build.ts).
  number: { label: { el: 'Σειρά-Α/Α', en: 'Series-No.' }, value: ({ fiscalId }) => fiscalId },
  labels: {
    mark: { el: 'ΜΑΡΚ', en: 'MARK' },
    uid: { el: 'UID', en: 'UID' },
    auth_code: { el: 'Κωδικός αυθεντικοποίησης', en: 'Authentication code' },
  },
  // A CancelInvoice cancellation's own `mark` is the cancellation MARK, printed as such beside
  // the cancelled document's ("ΜΑΡΚ ακυρωμένου", references below).
  labelFor: (key, input) => (key === 'mark' && input.kind === 'cancellation' && !issuedDocument(input) ? CANCELLATION_MARK : undefined),
  qr: { qr: { errorCorrectionLevel: 'M', sizeMm: 30 } },
  lines: ({ tx }) => counterpartLines(tx).map((text) => ({ placement: 'header' as const, text })),
  // The AFM the document was sent with (its issuer's vatNumber), not the location's tax_id:
  // optional on a Greek location (config.ts: country_config.afm is the issuer), and the
  // location's may be changed after the document was issued.
  issuerTaxId: (input) => documentOf(input)?.issuerVatNumber,
  itemNotes: exemptionNotes,
  // A document reversed rather than cancelled at AADE (its cancellation is a credit note
  // AADE holds beside it) is not "ΑΚΥΡΩΘΗΚΕ": it names the document that offsets it (references).
  cancelledNotice: ({ cancelledBy }) => (typeof cancelledBy?.fiscalId === 'string' && cancelledBy.fiscalId !== '' ? REVERSED : undefined),
  // A cancellation of a document AADE holds (its MARK) is a CancelInvoice: no new document,
  // so it is titled as the cancellation it is and names the cancelled document by series-aa
  // and MARK; its own `mark` item is the cancellation MARK AADE answered (response.ts). One
  // of a document without a MARK is a reversing document (build.ts), titled by its type
  // (a credit note 11.4 / 5.2 for a sale). A credit note 5.1 names its correlated
  // invoice's MARK. Amounts print positive: myDATA carries them so, the invoice type says the rest.
  correction: {
    title: (input) => {
      if (input.kind !== 'cancellation') return undefined;
      if (!issuedDocument(input)) return CANCELLATION;
      const tx = input.original?.tx ?? input.tx;
      return titleOf(reversalType(invoiceTypeOf(tx), metaString(tx, 'counterpart_country')));
    },
    references: (input) => {
      const { kind, tx, original } = input;
      if (kind !== 'cancellation') {
        const mark = metaString(tx, 'correlated_mark');
        const correlated: Localized[] = mark === undefined ? [] : [{ el: `Συσχετιζόμενο παραστατικό ΜΑΡΚ ${mark}`, en: `Correlated document MARK ${mark}` }];
        return [...correlated, ...cancelledByLines(input)];
      }
      if (!original) return [];
      const number = original.fiscalId;
      const mark = original.hints.find((h) => h.key === 'mark')?.value;
      const out: Localized[] = [];
      if (issuedDocument(input)) {
        if (number) out.push({ el: `Αντιλογισμός του παραστατικού ${number}`, en: `Reverses document ${number}` });
        return out;
      }
      if (number) out.push({ el: `Ακυρωμένο παραστατικό ${number}`, en: `Cancelled document ${number}` });
      if (mark !== undefined) out.push({ el: `ΜΑΡΚ ακυρωμένου ${mark}`, en: `Cancelled document's MARK ${mark}` });
      return out;
    },
  },
};
