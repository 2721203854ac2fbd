import type { Localized, ReceiptFacts, TransactionDraft } from '../types.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { defaultReason } from './build.ts';
import { FINAL_CONSUMER_NIF, UNKNOWN, customerOf } from './document.ts';
import { documentTypeOf } from './metadata.ts';
import { QR_MIN_VERSION } from './qr-image.ts';
import { withQrStatus } from './qr.ts';

const TITLES: Readonly<Record<string, Localized>> = {
  FS: { pt: 'Fatura simplificada', en: 'Simplified invoice' },
  FT: { pt: 'Fatura', en: 'Invoice' },
  FR: { pt: 'Fatura-recibo', en: 'Invoice-receipt' },
  NC: { pt: 'Nota de crédito', en: 'Credit note' },
};

/**
 * The buyer a document names, printed under its number: the tax id (CIVA art. 36 n.º 5 a
 * for an invoice, art. 40 n.º 2 c for a simplified one: the buyer's NIF when it is a
 * taxable person or asks for it, art. 36 n.º 16), with the name and address when the
 * request gives them. The SAF-T and the QR carried the NIF, the paper did not: the buyer's
 * copy lacked the one element it was asked for. The final consumer prints nothing: the
 * generic 999999990 is SAF-T's and the QR's, never a printed NIF.
 */
function buyerLines(tx: TransactionDraft): Localized[] {
  const c = customerOf(tx);
  if (c.id === FINAL_CONSUMER_NIF) return [];
  const out: Localized[] = [];
  if (c.name !== UNKNOWN) out.push({ pt: `Cliente: ${c.name}`, en: `Customer: ${c.name}` });
  const id = c.country === 'PT' || c.country === UNKNOWN ? c.taxId : `${c.country} ${c.taxId}`;
  out.push({ pt: `NIF do adquirente: ${id}`, en: `Customer tax id: ${id}` });
  const place = [c.postalCode, c.city].filter((p) => p !== UNKNOWN).join(' ');
  const address = [c.addressDetail === UNKNOWN ? '' : c.addressDetail, place].filter((p) => p !== '').join(', ');
  if (address !== '') out.push({ pt: `Morada: ${address}`, en: `Address: ${address}` });
  return out;
}

/**
 * A Portuguese document on paper (FORMATS.md §7): `ATCUD:<code>-<number>` immediately
 * above the QR (Portaria 195/2020; the `atcud` hint comes before `qr`), the QR at level
 * M, version 9 at least, 30 mm at least (AT QR spec v1.0), and the 4 hash characters
 * with "Processado por programa certificado n.º <n>/AT" (the `software_certificate` hint).
 */
export const SAFT_RECEIPT: ReceiptFacts = {
  language: 'pt',
  title: (_hints, tx) => TITLES[documentTypeOf(tx)] ?? { pt: documentTypeOf(tx), en: documentTypeOf(tx) },
  labels: {
    invoice_no: { pt: 'Documento', en: 'Document' },
    atcud: { pt: 'ATCUD:', en: 'ATCUD:' },
  },
  qr: { qr: { errorCorrectionLevel: 'M', minVersion: QR_MIN_VERSION, sizeMm: 30 } },
  lines: ({ tx }) => buyerLines(tx).map((text) => ({ placement: 'header' as const, text })),
  // Field E is the document's status (AT QR spec v1.0, the SAF-T InvoiceStatus: N normal,
  // A anulado): a print made after the annulment (its 2.ª via) says A, as the SAF-T does.
  qrContent: (key, content, { cancelled }) => (key === 'qr' && cancelled ? withQrStatus(content, 'A') : undefined),
  // A reprint is marked "2.ª via" (second copy), as Portuguese certified software prints
  // reprints (the AT's FAQs on annulled documents speak of the "2.ª via" printed
  // afterwards); it is the same wording for every reprint, the number is in X-Receipt-Copy.
  // The SAF-T document is unchanged and the file has no place for reprints: nothing is journaled.
  duplicate: {
    label: () => ({ pt: '2.ª via', en: 'Reprint (2.ª via)' }),
  },
  correction: {
    // An annulment issues no document (no number, ATCUD, QR nor Hash: build.ts
    // `buildCancellation`, the SAF-T only changes the original's DocumentStatus to A), so its
    // print is not titled as one ("Fatura simplificada" with ANULAÇÃO beneath read as a new,
    // unnumbered invoice): it is a notice naming the annulled document, saying it is no
    // invoice (the mention certified software prints on its non-fiscal documents).
    title: ({ kind }) => (kind === 'cancellation' ? { pt: 'Anulação de documento', en: 'Document annulment' } : undefined),
    references: ({ kind, tx, original }) => {
      if (kind === 'cancellation') {
        const out: Localized[] = [];
        const no = original ? (original.hints.find((h) => h.key === 'invoice_no')?.value ?? original.documentNumber) : null;
        const atcud = original ? (original.hints.find((h) => h.key === 'atcud')?.value ?? original.fiscalId) : null;
        if (no) out.push({ pt: `Documento anulado: ${no}`, en: `Annulled document: ${no}` });
        if (atcud) out.push({ pt: `ATCUD do documento anulado: ${atcud}`, en: `Annulled document's ATCUD: ${atcud}` });
        const reason = metaString(tx, 'cancellation_reason') ?? 'Documento anulado';
        out.push({ pt: `Motivo: ${reason}`, en: `Reason: ${reason}` });
        out.push({ pt: 'Este documento não serve de fatura', en: 'This document is not an invoice (não serve de fatura)' });
        return out;
      }
      // A credit note names the document it corrects and why (CIVA art. 29, SAF-T Line/References).
      const type = documentTypeOf(tx);
      const origin = metaString(tx, 'original_invoice_no');
      if (type !== 'NC' || origin === undefined) return [];
      const reason = metaString(tx, 'reason') ?? defaultReason(type, tx.type);
      return [{ pt: `Documento de origem: ${origin}`, en: `Original document: ${origin}` }, { pt: `Motivo: ${reason}`, en: `Reason: ${reason}` }];
    },
  },
};
