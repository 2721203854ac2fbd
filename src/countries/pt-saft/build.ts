/**
 * The SAF-T (PT) sales document: the record's body is the document's `Invoice` element
 * of SAF-T (PT) 1.04_01 (xml.ts), signed per Portaria 363/2010 art. 6 (signature.ts):
 * its `Hash` signs InvoiceDate;SystemEntryDate;InvoiceNo;GrossTotal;<previous Hash> with
 * the producer key, chained per series and document type (index.ts `chainKey`: the
 * previous document "of the same series and type"). The record's fingerprint is that
 * Hash, which the next document of the chain signs in turn.
 *
 * Numbers: InvoiceNo `<type> <series>/<n>` and ATCUD `<validation code>-<n>` (Portaria
 * 195/2020), n the chain's sequence. Printed: the ATCUD, the QR (qr.ts, AT spec v1.0), the
 * 4 Hash characters followed by "Processado por programa certificado n.º <n>/AT".
 *
 * A cancellation sets the original's DocumentStatus to A: not a new document, no number,
 * no Hash, outside the chain (`cancellationJoinsChain: false`). Its record is the
 * original's new DocumentStatus (xml.ts `statusChangeXml`), which the monthly SAF-T file
 * applies to the original (saft-file.ts).
 */
import type { BuildInput, FiscalRecord, PrepareInput, PreparedRecord, RenderHint, TxLine } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { isoDate, localDate, localDateTimeWithOffset } from '../shared/dates.ts';
import { buildPrepared } from '../shared/prepared-record.ts';
import { MISSING_TAX_ID, issuerTaxId } from '../shared/issuer-tax-id.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { qrDataHint, textHint } from '../shared/render-hints.ts';
import { documentTypeOf, seriesEntryOf, taxRegionOf } from './metadata.ts';
import { hashExtract, saftQrData } from './qr.ts';
import { certificateNumberOf, certifiedProgramText, hashMessage, producerKey } from './signature.ts';
import { PAYMENT_MECHANISM, customerOf, money, productOf, qrCountryOf, quantityText, taxOf } from './document.ts';
import { exemptionOf } from './tax.ts';
import { invoiceXml, statusChangeXml, type InvoiceLineXml } from './xml.ts';

export { FINAL_CONSUMER_NIF } from './document.ts';

/** Document types paid when issued: their totals say how (DocumentTotals/Payment). */
const PAID_AT_ISSUE = new Set(['FS', 'FR']);

/**
 * ATCUD (Portaria 195/2020 art. 3-4): the series' validation code, `-`, and the document's
 * sequential number as the digits after the `/` of its InvoiceNo (leading zeros kept).
 */
export function atcudOf(validationCode: string, invoiceNo: string): string {
  const number = /\/([0-9]+)$/.exec(invoiceNo)?.[1];
  if (number === undefined) throw new Error(`pt-saft: not a SAF-T InvoiceNo: ${invoiceNo}`);
  return `${validationCode}-${number}`;
}

/** Local wall time in Lisbon, to the second, without zone: SAF-T `SystemEntryDate`, `InvoiceStatusDate`. */
export const saftDateTime = (at: Date): string => localDateTimeWithOffset(at, 'PT').slice(0, 19);

/** SourceID: who made the document. The API has no user of its own: the software's name. */
export const sourceIdOf = (input: Pick<BuildInput, 'software'>): string => input.software.name.slice(0, 30) || 'api';

export function buildSaft(input: BuildInput): FiscalRecord {
  return input.kind === 'cancellation' ? buildCancellation(input) : buildPrepared(prepareDocument(input), input);
}

/** FiscalSystem.prepare: a document up to its Hash; an annulment is not signed (null: `build` makes it). */
export const prepareSaft = (input: PrepareInput): PreparedRecord | null => (input.kind === 'cancellation' ? null : prepareDocument(input));

/**
 * Everything of the document but its Hash (signature.ts): the message up to the previous
 * document's Hash (its last field), the key, and how the Hash completes the document.
 */
function prepareDocument(input: PrepareInput): PreparedRecord {
  const { tx, location } = input;
  const type = documentTypeOf(tx);
  const entry = seriesEntryOf(location, type);
  if (entry === undefined) throw new Error(`pt-saft: location ${location.id} has no series for ${type}`);
  const signer = producerKey(input); // fail first: nothing is built unsigned
  const seq = input.chain.seq;
  const invoiceNo = `${type} ${entry.prefix}/${seq}`;
  const atcud = atcudOf(entry.atcud_code, invoiceNo);
  // AT requires dates that never go back within a series. The ledger reads its clock just
  // before it waits for the chain, so a document can be numbered after one stamped a few
  // milliseconds later: such a document takes its predecessor's time.
  const at = issueTime(input);
  const date = localDate(at, 'PT');
  const invoiceDate = isoDate(date);
  const systemEntryDate = saftDateTime(at);
  const grossTotal = decimal(tx.total_amount);
  // The previous Hash is the message's last field: the head is the message with none.
  const messageHead = hashMessage({ invoiceDate, systemEntryDate, invoiceNo, grossTotal, previousHash: null });
  const finish = (hash: string): FiscalRecord => {
    const customer = customerOf(tx);
    const credit = type === 'NC';
    const region = taxRegionOf(tx, location);
    // Credit and debit notes name the document they correct (SAF-T Line/References).
    const reference = credit || type === 'ND' ? { invoiceNo: metaString(tx, 'original_invoice_no') ?? '', reason: metaString(tx, 'reason') ?? defaultReason(type, tx.type) } : undefined;
    const lines: InvoiceLineXml[] = tx.items.map((line, i) => {
      const product = productOf(line);
      const tax = taxOf(line.tax_rate, region);
      return {
        lineNumber: i + 1,
        productCode: product.code,
        productDescription: product.description,
        quantity: quantityText(line.quantity),
        unitOfMeasure: 'UN',
        unitPrice: money(line.unit_price),
        taxPointDate: invoiceDate,
        reference: reference && reference.invoiceNo !== '' ? reference : undefined,
        description: product.description,
        side: credit ? 'debit' : 'credit',
        amount: money(line.total_amount - line.tax_amount),
        tax: { code: tax.code, percentage: tax.percentage, region },
        // The line's code, else the document's, else M99 (tax.ts).
        exemption: tax.code === 'ISE' ? exemptionOf(lineString(line, 'tax_exemption_code') ?? metaString(tx, 'tax_exemption_code')) : undefined,
      };
    });
    const body = invoiceXml({
      invoiceNo,
      atcud,
      documentStatus: { status: 'N', statusDate: systemEntryDate, sourceId: sourceIdOf(input) },
      hash,
      hashControl: signer.hashControl,
      period: Number(date.month),
      invoiceDate,
      invoiceType: type,
      sourceId: sourceIdOf(input),
      systemEntryDate,
      customerId: customer.id,
      lines,
      totals: { taxPayable: decimal(tx.tax_amount), netTotal: decimal(tx.pretax_amount), grossTotal },
      payment: PAID_AT_ISSUE.has(type) ? { mechanism: PAYMENT_MECHANISM[tx.payment_method], amount: grossTotal, date: invoiceDate } : undefined,
    });

    const extract = hashExtract(hash);
    const certificate = certificateNumberOf(location, input.software);
    const qr = saftQrData({
      issuerNif: issuerTaxId(input) ?? MISSING_TAX_ID,
      buyerNif: customer.taxId,
      buyerCountry: qrCountryOf(customer),
      documentType: type,
      status: 'N',
      date: `${date.year}${date.month}${date.day}`,
      invoiceNo,
      atcud,
      lines: tx.items,
      region,
      taxPayable: tx.tax_amount,
      grossTotal: tx.total_amount,
      hashExtract: extract,
      // Field R is mandatory; a location not yet certified has no number: 0.
      certificateNumber: certificate ?? '0',
    });
    const hints: RenderHint[] = [
      textHint('invoice_no', 'header', invoiceNo),
      textHint('atcud', 'footer_bottom', atcud),
      qrDataHint('qr', 'footer_bottom', qr),
      // The same QR drawn (AT: level M, version 9 at least; qr-image.ts), for a POS that
      // cannot draw one; not mandatory: `qr` is the QR, this is one rendering of it. A path
      // fetched on demand: drawing the symbol here cost more than the whole rest of a create.
      { key: 'qr_image', placement: 'footer_bottom', mandatory: false, kind: 'image_url', value: `/v1/transactions/${input.transactionId}/qr.png` },
      // The 4 characters; printed within the certified-program line when there is one.
      textHint('hash_extract', 'footer_bottom', extract, certificate === undefined),
    ];
    if (certificate !== undefined) {
      hints.push(textHint('software_certificate', 'footer_bottom', `${extract}-${certifiedProgramText(certificate)}`));
    }
    return {
      body,
      contentType: 'application/xml',
      fiscalId: atcud,
      documentNumber: invoiceNo,
      fingerprint: hash,
      qrData: qr,
      placeholder: false,
      renderHints: hints,
    };
  };
  return { signing: { signer: signer.key, digest: 'sha1', encoding: 'base64', messageHead }, fiscalId: atcud, finish };
}

/** A string field of a request line (FiscalSystem.lineFields). */
const lineString = (line: TxLine, name: string): string | undefined => (typeof line[name] === 'string' ? (line[name] as string) : undefined);

/** The document's time: the record's, or its predecessor's in the chain when that is later. */
function issueTime(input: PrepareInput): Date {
  const previous = input.chain.previous ? Date.parse(input.chain.previous.issuedAt) : Number.NaN;
  return Number.isFinite(previous) && previous > input.now.getTime() ? new Date(previous) : input.now;
}

/** The reason a credit note gives when the client gives none. */
export const defaultReason = (documentType: string, txType: string): string =>
  documentType === 'ND' ? 'Nota de débito' : txType === 'void' ? 'Anulação da venda' : 'Devolução';

function buildCancellation(input: BuildInput): FiscalRecord {
  const original = input.original;
  const invoiceNo = original?.documentNumber;
  const atcud = original?.fiscalId;
  if (!original || !invoiceNo || !atcud) {
    throw new Error('pt-saft: a cancellation names its original document by InvoiceNo and ATCUD (BuildInput.original)');
  }
  const reason = (metaString(input.tx, 'cancellation_reason') ?? 'Documento anulado').slice(0, 50);
  const body = statusChangeXml({
    invoiceNo,
    atcud,
    status: { status: 'A', statusDate: saftDateTime(input.now), reason, sourceId: sourceIdOf(input) },
  });
  return { body, contentType: 'application/xml', fiscalId: null, documentNumber: null, fingerprint: null, qrData: null, placeholder: false, renderHints: [] };
}
