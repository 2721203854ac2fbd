/**
 * Corrections on paper (refunds, voids, cancellations), every system, from the real
 * plug-ins' receipt facts (`ReceiptFacts.correction`): a cancellation is titled as what it
 * is and names the document it cancels; a refund names the document it corrects where its
 * request gave it; amounts carry the record's sign (France, Spain's corrective invoices);
 * a void and a refund stay apart where the record keeps them apart.
 */
import { describe, expect, it } from 'vitest';
import type { TransactionDraft } from '../countries/types.ts';
import { renderText } from './text.ts';
import { buildReceipt, type ReceiptSource } from './model.ts';
import { receiptCases, type ReceiptCase } from '../../test/support/receipt-cases.ts';

const cases = await receiptCases();
const byName = (name: string): ReceiptCase => cases.find((c) => c.name === name)!;

/** The receipt as 80 mm text, in the system's language or English. */
const print = (c: ReceiptCase, src: ReceiptSource, lang?: 'en'): string => renderText(buildReceipt(src, lang ?? c.system.receipt!.language), 80);

/** A cancellation of the case's sale (its draft, as the core makes it), with no hints of its own unless given. */
function cancellationOf(c: ReceiptCase, over: { reason?: string; hints?: ReceiptSource['transaction']['render_hints'] } = {}): ReceiptSource {
  const sale = c.source.transaction;
  const tx: TransactionDraft = { ...sale.normalized, metadata: { ...sale.normalized.metadata, ...(over.reason ? { cancellation_reason: over.reason } : {}) } };
  return {
    ...c.source,
    transaction: {
      ...sale, id: 'cancellation', type: 'cancellation', fiscal_id: null, document_number: null, normalized: tx, render_hints: over.hints ?? [], record: null,
      original: { documentNumber: sale.document_number, fiscalId: sale.fiscal_id, hints: sale.render_hints, tx: sale.normalized, createdAt: sale.created_at },
    },
  };
}

/** The case's sale turned into a refund or void with the given metadata (hints as the sale's). */
function correctionOf(c: ReceiptCase, type: 'refund' | 'void', metadata: Record<string, unknown>): ReceiptSource {
  const sale = c.source.transaction;
  // Its own record is not built here: none (the sale's would describe the sale).
  return { ...c.source, transaction: { ...sale, type, record: null, normalized: { ...sale.normalized, type, metadata: { ...sale.normalized.metadata, ...metadata } } } };
}

const titleOf = (text: string): string => text.split('\n').find((l, i, all) => i > 0 && all[i - 1]!.startsWith('-----'))!.trim();

describe('a cancellation is titled as what it is and names what it cancels', () => {
  it.each([
    ['fr-nf525', 'Ticket d\'annulation', /\nAnnule le ticket n° \S+-00000001\nMotif : Erreur de saisie\n/],
    ['pt-saft', 'Anulação de documento', /\nDocumento anulado: FS A2026\/1\nATCUD do documento anulado: [A-Z0-9]+-1\nMotivo: Erreur de saisie\nEste documento não serve de fatura\n/],
    ['es-verifactu', 'Anulación de factura', /\nFactura anulada n\.º A-1\nMotivo: Erreur de saisie\n/],
    ['es-ticketbai', 'Anulación de factura', /\nFactura anulada n\.º A-1\nMotivo: Erreur de saisie\n/],
    ['es-sii', 'Anulación de factura', /\nFactura anulada n\.º\s+0b6f9c1e-3d2a-4c5b-9e8f-7a6b5c4d3e2f\nMotivo: Erreur de saisie\n/],
    ['it-sdi', 'Copia di cortesia della nota di credito', /\nRif\. fattura n\. FT-2026\/1 del \d{2}-\d{2}-\d{4}\n/],
    ['it-dc', 'DOCUMENTO COMMERCIALE emesso per ANNULLAMENTO', /\nDocumento di riferimento:\nN\. 0001-0001 del \d{2}-\d{2}-\d{4}\n/],
    ['gr-mydata', 'ΑΚΥΡΩΣΗ ΠΑΡΑΣΤΑΤΙΚΟΥ', /\nΑκυρωμένο παραστατικό A-1\nΜΑΡΚ ακυρωμένου \d+\n/],
  ] as const)('%s: "%s", naming the original', (name, title, reference) => {
    const c = byName(name);
    const text = print(c, cancellationOf(c, { reason: 'Erreur de saisie' }));
    expect(titleOf(text)).toBe(title);
    expect(text).toMatch(reference);
    // Not the original's title with a generic line beneath it (the gap: a French or
    // Portuguese cancellation printed as "Ticket de caisse" / "Fatura simplificada").
    expect(text).not.toMatch(/\n\s+(ANNULATION|ANULAÇÃO|ANULACIÓN|ANNULLAMENTO|ΑΚΥΡΩΣΗ)\n/);
    expect(text).not.toContain(titleOf(print(c, c.source)) + '\n');
  });

  it('Portugal: an annulment issues no document, so its print carries none of a document\'s marks', () => {
    const c = byName('pt-saft');
    const text = print(c, cancellationOf(c));
    expect(text).not.toMatch(/ATCUD:|\[QR\]|Processado por programa/);
    expect(text).toContain('Motivo: Documento anulado\n');
    expect(print(c, cancellationOf(c), 'en')).toContain('Annulled document: FS A2026/1\n');
  });

  it('France: the cancellation of a sale prints negative amounts, as its record carries them; of a refund, positive', () => {
    const c = byName('fr-nf525');
    expect(print(c, cancellationOf(c))).toMatch(/\nTOTAL TTC EUR\s+-3,17\n/);
    const refund = correctionOf(c, 'refund', {});
    const cancelRefund = cancellationOf({ ...c, source: refund });
    expect(print(c, cancelRefund)).toMatch(/\nTOTAL TTC EUR\s+3,17\n/);
  });

  it('Greece: the reversal of a document AADE never acknowledged is a credit note naming it', () => {
    const c = byName('gr-mydata-offline');
    const text = print(c, cancellationOf(c));
    expect(titleOf(text)).toBe('ΠΙΣΤΩΤΙΚΟ ΣΤΟΙΧΕΙΟ ΛΙΑΝΙΚΗΣ');
    expect(text).toMatch(/\nΑντιλογισμός του παραστατικού A-1\n/);
  });
});

describe('refunds and voids', () => {
  it('France: a void is an annulment, a refund a refund; both negative', () => {
    const c = byName('fr-nf525');
    const refund = print(c, correctionOf(c, 'refund', {}));
    const voided = print(c, correctionOf(c, 'void', {}));
    expect(titleOf(refund)).toBe('Ticket de remboursement');
    expect(titleOf(voided)).toBe('Ticket d\'annulation');
    for (const t of [refund, voided]) {
      expect(t).toMatch(/\nTOTAL TTC EUR\s+-3,17\n/);
      expect(t).toMatch(/\nTotal HT\s+-3,00\n/);
      expect(t).toContain('  3 x 1,00 TVA 5,5 %'); // a unit price stays a price
    }
    expect(print(c, c.source)).toMatch(/\nTOTAL TTC EUR\s+3,17\n/);
  });

  it.each(['es-verifactu', 'es-ticketbai', 'es-sii'] as const)('%s: a corrective invoice names the invoice it corrects and prints negative, as its record and QR do', (name) => {
    const c = byName(name);
    const text = print(c, correctionOf(c, 'refund', { original_invoice_number: 'A-7', original_issue_date: '01-03-2026', invoice_number: 'R-1' }));
    expect(titleOf(text)).toBe('Factura rectificativa simplificada');
    expect(text).toContain('\nRectifica la factura n.º A-7 de 01-03-2026\n');
    expect(text).toMatch(/\nTOTAL EUR\s+-\d+,\d\d\n/);
    expect(print(c, c.source)).not.toMatch(/\nTOTAL EUR\s+-/);
  });

  it('SII: a void is a baja (the invoice withdrawn), not a corrective invoice', () => {
    const c = byName('es-sii');
    const src = correctionOf(c, 'void', { original_invoice_number: 'A-7', original_issue_date: '01-03-2026' });
    const text = print(c, { ...src, transaction: { ...src.transaction, render_hints: [{ key: 'voided_invoice_number', placement: 'header', mandatory: true, kind: 'text', value: 'A-7' }] } });
    expect(titleOf(text)).toBe('Anulación de factura');
    expect(text).toContain('\nAnula la factura n.º A-7\n');
    expect(text).not.toContain('Rectifica');
    expect(text).not.toMatch(/\nTOTAL EUR\s+-/);
  });

  it('Portugal: a credit note names the document it corrects and why; amounts as the SAF-T (positive)', () => {
    const c = byName('pt-saft');
    const refund = print(c, correctionOf(c, 'refund', { document_type: 'NC', original_invoice_no: 'FS A2026/1' }));
    expect(titleOf(refund)).toBe('Nota de crédito');
    expect(refund).toContain('\nDocumento de origem: FS A2026/1\nMotivo: Devolução\n');
    expect(refund).not.toMatch(/\nTOTAL EUR\s+-/);
    expect(print(c, correctionOf(c, 'void', { document_type: 'NC', original_invoice_no: 'FS A2026/1', reason: 'Troca' }))).toContain('\nMotivo: Troca\n');
  });

  it('Italy: a credit note and a reso name their original; amounts positive', () => {
    const sdi = byName('it-sdi');
    // A refund's stored metadata says TD04 (the metadata rules' default for a refund).
    const nc = print(sdi, correctionOf(sdi, 'refund', { tipo_documento: 'TD04', original_invoice_number: 'FT-2026/1', original_invoice_date: '2026-03-01' }));
    expect(titleOf(nc)).toBe('Copia di cortesia della nota di credito');
    expect(nc).toContain('\nNota di credito n. FT-2026/1\nRif. fattura n. FT-2026/1 del 01-03-2026\n');
    const dc = byName('it-dc');
    const reso = print(dc, correctionOf(dc, 'refund', { is_return: true, original_matricola: '99AB-123456', original_date: '2026-03-01', original_number: '0001-0007' }));
    expect(titleOf(reso)).toBe('DOCUMENTO COMMERCIALE emesso per RESO MERCE');
    expect(reso).toContain('\nDocumento di riferimento:\nN. 0001-0007 del 01-03-2026\nMatricola RT 99AB-123456\n');
    expect(reso).not.toMatch(/\nTOTALE EUR\s+-/);
  });

  it('Greece: a credit note 5.1 names its correlated MARK', () => {
    const c = byName('gr-mydata');
    expect(print(c, correctionOf(c, 'refund', { correlated_mark: '400001234567890' }))).toContain('\nΣυσχετιζόμενο παραστατικό ΜΑΡΚ 400001234567890\n');
  });
});
