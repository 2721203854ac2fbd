/**
 * SAF-T (PT) document (placeholder). The real one is signed with the producer's RSA key
 * (Portaria 363/2010 art. 6: InvoiceDate;SystemEntryDate;InvoiceNo;GrossTotal;previous
 * Hash) and reported in the monthly SAF-T file; it comes with the Portugal issue. Real
 * already: the ATCUD (Portaria 195/2020), the document id, the QR content and the
 * 4-character hash extract.
 *
 * A cancellation sets the original document's status to A (anulado) in SAF-T: it is not
 * a new document, takes no number and stays outside the series' hash chain.
 */
import type { BuildInput, FiscalRecord } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { customerTaxId } from '../shared/metadata-fields.ts';
import {
  chainedFingerprint,
  commonFields,
  placeholderBody,
  placeholderNote,
  previousFingerprint,
} from '../shared/placeholder.ts';
import { MISSING_TAX_ID, issuerTaxId } from '../shared/issuer-tax-id.ts';
import { configString } from '../shared/config-fields.ts';
import { qrDataHint, textHint } from '../shared/render-hints.ts';
import { documentTypeOf, seriesEntryOf } from './metadata.ts';
import { hashExtract, saftQrData } from './qr.ts';

/** A final consumer's NIF on SAF-T PT documents and QR codes. */
export const FINAL_CONSUMER_NIF = '999999990';

export function buildSaft(input: BuildInput): FiscalRecord {
  return input.kind === 'cancellation' ? buildCancellation(input) : buildDocument(input);
}

function buildDocument(input: BuildInput): FiscalRecord {
  const { tx, location } = input;
  const type = documentTypeOf(tx);
  const entry = seriesEntryOf(location, type);
  if (entry === undefined) throw new Error(`pt-saft: location ${location.id} has no series for ${type}`);
  const seq = input.chain.seq;
  // SAF-T InvoiceNo "<type> <series>/<number>"; ATCUD "<validation code>-<number>".
  const invoiceNo = `${type} ${entry.prefix}/${seq}`;
  const atcud = `${entry.atcud_code}-${seq}`;
  const date = localDate(input.now, 'PT');
  const fields = {
    ...commonFields(input, { chained: true }),
    document_type: type,
    invoice_no: invoiceNo,
    atcud,
    invoice_date: isoDate(date),
    gross_total: decimal(tx.total_amount),
    document_status: 'N',
  };
  // Placeholder for the document Hash: it covers the document fields and the previous
  // document's hash, as the real signature does; the QR (which prints part of it) is not
  // inside it.
  const hash = chainedFingerprint(previousFingerprint(input), placeholderBody('SAF-T (PT) 1.04_01 document', '', fields));
  const extract = hashExtract(hash);
  const certificate = configString(location.config, 'software_certificate_number');
  const qr = saftQrData({
    issuerNif: issuerTaxId(input) ?? MISSING_TAX_ID,
    buyerNif: customerTaxId(tx) ?? FINAL_CONSUMER_NIF,
    buyerCountry: 'PT',
    documentType: type,
    status: 'N',
    date: `${date.year}${date.month}${date.day}`,
    invoiceNo,
    atcud,
    lines: tx.items,
    taxPayable: tx.tax_amount,
    grossTotal: tx.total_amount,
    hashExtract: extract,
    // Field R is mandatory; a location not yet certified has no number: 0.
    certificateNumber: certificate ?? '0',
  });
  const body = placeholderBody(
    'SAF-T (PT) 1.04_01 document (signed)',
    placeholderNote('SAF-T (PT) document (RSA-SHA1 signed)', 'Portugal'),
    { ...fields, hash, qr_data: qr },
  );
  const hints = [
    textHint('atcud', 'footer_bottom', atcud),
    qrDataHint('qr', 'footer_bottom', qr),
    textHint('hash_extract', 'footer_bottom', extract),
  ];
  if (certificate !== undefined) {
    // Printed after the hash extract: "<extract>-Processado por programa certificado n.º <n>/AT".
    hints.push(textHint('software_certificate', 'footer_bottom', `Processado por programa certificado n.º ${certificate}/AT`));
  }
  return {
    body,
    contentType: 'application/json',
    fiscalId: atcud,
    documentNumber: invoiceNo,
    fingerprint: hash,
    qrData: qr,
    placeholder: true,
    renderHints: hints,
  };
}

function buildCancellation(input: BuildInput): FiscalRecord {
  const body = placeholderBody(
    'SAF-T (PT) document status change (A: cancelled)',
    placeholderNote('SAF-T (PT) cancellation (DocumentStatus A)', 'Portugal'),
    {
      ...commonFields(input, { chained: false }),
      document_status: 'A',
      cancelled_document: {
        invoice_no: input.original?.documentNumber ?? null,
        atcud: input.original?.fiscalId ?? null,
      },
    },
  );
  return { body, contentType: 'application/json', fiscalId: null, documentNumber: null, fingerprint: null, qrData: null, placeholder: true, renderHints: [] };
}
