import { describe, expect, it } from 'vitest';
import type { ReceiptCorrectionInput, TransactionDraft } from '../types.ts';
import { TIPI_DOCUMENTO } from './metadata.ts';
import { SDI_RECEIPT } from './receipt.ts';

/** A validated draft of the given type and TipoDocumento (the metadata rules store it). */
const draft = (type: TransactionDraft['type'], tipo: string): TransactionDraft => ({
  location_id: 'loc', timestamp: '2026-03-02T09:30:00Z', currency: 'EUR', payment_method: 'card', type,
  items: [], pretax_amount: 0, tax_amount: 0, total_amount: 0, metadata: { invoice_number: 'X-1', tipo_documento: tipo },
} as unknown as TransactionDraft);
const input = (kind: ReceiptCorrectionInput['kind'], tx: TransactionDraft): ReceiptCorrectionInput => ({ kind, tx, original: null, hints: [] });
const label = (kind: ReceiptCorrectionInput['kind'], tx: TransactionDraft) => SDI_RECEIPT.labelFor!('invoice_number', input(kind, tx))!.it;

describe('SDI courtesy copy: every TipoDocumento we issue has its own name', () => {
  it('each code the metadata rules accept, and TD05, is titled and numbered as itself; only TD01 is "Fattura n."', () => {
    const labels = TIPI_DOCUMENTO.map((tipo) => label('sale', draft('sale', tipo)));
    expect(new Set(labels).size).toBe(TIPI_DOCUMENTO.length);
    expect(labels.filter((l) => l === 'Fattura n.')).toHaveLength(1);
    expect(label('sale', draft('sale', 'TD01'))).toBe('Fattura n.');
    expect(label('refund', draft('refund', 'TD04'))).toBe('Nota di credito n.');
    const titles = TIPI_DOCUMENTO.map((tipo) => SDI_RECEIPT.title([], draft('sale', tipo)).it);
    expect(new Set(titles).size).toBe(TIPI_DOCUMENTO.length);
  });

  it('a cancellation is named by the document that reverses its original: TD04 for an invoice, TD05 for a credit note', () => {
    expect(label('cancellation', draft('sale', 'TD01'))).toBe('Nota di credito n.');
    expect(label('cancellation', draft('sale', 'TD06'))).toBe('Nota di credito n.');
    expect(label('cancellation', draft('refund', 'TD04'))).toBe('Nota di debito n.');
    // The original's TipoDocumento decides, not its type: a sale declared TD04 is reversed by a TD05.
    expect(label('cancellation', draft('sale', 'TD04'))).toBe('Nota di debito n.');
    expect(SDI_RECEIPT.correction!.title!(input('cancellation', draft('sale', 'TD04')))!.it).toBe('Copia di cortesia della nota di debito');
    expect(SDI_RECEIPT.labelFor!('other_key', input('sale', draft('sale', 'TD01')))).toBeUndefined();
  });
});
