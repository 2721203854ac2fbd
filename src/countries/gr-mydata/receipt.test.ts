/**
 * The Greek receipt from the plug-in's facts (receipt.ts), drawn by the shared model: titled
 * as the document AADE registered (its invoice type), a business document naming its
 * counterpart, a cancellation as what it was when it was made (CancelInvoice or reversing
 * credit note), whatever the original's MARK is now.
 */
import { describe, expect, it } from 'vitest';
import { buildReceipt, type ReceiptSource } from '../../receipts/model.ts';
import { renderText } from '../../receipts/text.ts';
import type { RenderHint, TransactionDraft } from '../types.ts';
import { textHint } from '../shared/render-hints.ts';
import { NOW, draft, line, location, txCtx } from '../shared/test-fixtures.ts';
import { myData } from './index.ts';

const loc = location('gr-mydata');
const items = [line({ description: 'Τυρόπιτα', tax_rate: 13, tax_amount: 130, total_amount: 1130 })];
const B2B = { counterpart_vat_number: '123456783' };

/** A stored draft, as validateTransaction leaves it. */
function stored(type: TransactionDraft['type'], metadata: Record<string, unknown>): TransactionDraft {
  const d = draft({ type, items, metadata });
  return { ...d, metadata: myData.validateTransaction(d, txCtx(loc)) };
}

function source(tx: TransactionDraft, over: Partial<ReceiptSource['transaction']> = {}): ReceiptSource {
  return {
    transaction: {
      id: 'tx', type: tx.type, environment: 'live', country: 'GR', created_at: NOW, fiscal_id: 'A-1', document_number: '1',
      normalized: tx, render_hints: [], ...over,
    },
    location: { name: 'Καφενείο', address: null, tax_id: '094259216', legal_name: null },
    system: myData,
    software: { name: 'x', version: '1', vendorTaxId: 'x' },
  };
}
const print = (src: ReceiptSource, lang: 'el' | 'en' = 'el') => renderText(buildReceipt(src, lang), 80);
const titleOf = (text: string) => text.split('\n').find((l, i, all) => i > 0 && all[i - 1]!.startsWith('-----'))!.trim();
const mark = (value: string): RenderHint => textHint('mark', 'footer_bottom', value);

describe('Greek receipt titles follow the invoice type', () => {
  it.each([
    ['sale', {}, 'ΑΠΟΔΕΙΞΗ ΛΙΑΝΙΚΗΣ ΠΩΛΗΣΗΣ', 'RETAIL SALES RECEIPT'],
    ['sale', { invoice_type: '11.2' }, 'ΑΠΟΔΕΙΞΗ ΠΑΡΟΧΗΣ ΥΠΗΡΕΣΙΩΝ', 'SERVICE RECEIPT'],
    ['sale', { invoice_type: '11.3' }, 'ΑΠΛΟΠΟΙΗΜΕΝΟ ΤΙΜΟΛΟΓΙΟ', 'SIMPLIFIED INVOICE'],
    ['sale', B2B, 'ΤΙΜΟΛΟΓΙΟ ΠΩΛΗΣΗΣ', 'SALES INVOICE'],
    ['sale', { ...B2B, invoice_type: '2.1' }, 'ΤΙΜΟΛΟΓΙΟ ΠΑΡΟΧΗΣ ΥΠΗΡΕΣΙΩΝ', 'SERVICES INVOICE'],
    ['refund', {}, 'ΠΙΣΤΩΤΙΚΟ ΣΤΟΙΧΕΙΟ ΛΙΑΝΙΚΗΣ', 'RETAIL CREDIT NOTE'],
    ['refund', { ...B2B, correlated_mark: '400001925600940' }, 'ΠΙΣΤΩΤΙΚΟ ΤΙΜΟΛΟΓΙΟ - ΣΥΣΧΕΤΙΖΟΜΕΝΟ', 'CREDIT INVOICE - CORRELATED'],
    ['void', B2B, 'ΠΙΣΤΩΤΙΚΟ ΤΙΜΟΛΟΓΙΟ - ΜΗ ΣΥΣΧΕΤΙΖΟΜΕΝΟ', 'CREDIT INVOICE - NOT CORRELATED'],
  ] as const)('%s %j: %s', (type, metadata, el, en) => {
    const src = source(stored(type, metadata));
    expect(titleOf(print(src))).toBe(el);
    expect(titleOf(print(src, 'en'))).toBe(en);
  });

  it('an invoice names its counterpart (AFM, and the name and address given); a retail document none', () => {
    const greek = print(source(stored('sale', { ...B2B, counterpart_branch: 2, counterpart_street: 'Ερμού', counterpart_number: '5', counterpart_postal_code: '10563', counterpart_city: 'Αθήνα' })));
    expect(greek).toContain('\nΣειρά-Α/Α A-1\nΑΦΜ λήπτη: 123456783\nΕγκατάσταση λήπτη: 2\nΔιεύθυνση λήπτη: Ερμού 5, 10563 Αθήνα\n');
    const foreign = print(source(stored('sale', { counterpart_vat_number: 'DE123456789', counterpart_country: 'DE', counterpart_name: 'Beispiel GmbH', counterpart_postal_code: '10115', counterpart_city: 'Berlin' })), 'en');
    expect(foreign).toContain('\nCustomer: Beispiel GmbH\nCustomer VAT no.: DE123456789 (DE)\nCustomer address: 10115 Berlin\n');
    expect(print(source(stored('sale', {})))).not.toMatch(/λήπτη/);
  });
});

describe('Greek cancellations print as what they were made as', () => {
  const sale = stored('sale', {});
  const original = (hints: RenderHint[]) => ({ documentNumber: '1', fiscalId: 'A-1', hints, tx: sale, createdAt: NOW });

  it('CancelInvoice (no document of its own): titled as a cancellation, the cancelled document and its MARK, and its own (cancellation) MARK', () => {
    const text = print(source(sale, { type: 'cancellation', fiscal_id: null, document_number: null, render_hints: [mark('400001000000002')], original: original([mark('400001000000001')]) }));
    expect(titleOf(text)).toBe('ΑΚΥΡΩΣΗ ΠΑΡΑΣΤΑΤΙΚΟΥ');
    expect(text).toContain('\nΑκυρωμένο παραστατικό A-1\nΜΑΡΚ ακυρωμένου 400001000000001\n');
    expect(text).toContain('\nΜΑΡΚ ακύρωσης 400001000000002\n');
    expect(text).not.toContain('Σειρά-Α/Α');
    expect(print(source(sale, { type: 'cancellation', fiscal_id: null, render_hints: [mark('400001000000002')], original: original([mark('400001000000001')]) }), 'en'))
      .toContain("\nCancelled document A-1\nCancelled document's MARK 400001000000001\n");
  });

  it('a reversing credit note stays one when its original got its MARK later (its own number decides, not the original\'s MARK now)', () => {
    const reversal = (hints: RenderHint[]) => print(source(sale, { type: 'cancellation', fiscal_id: 'A-CN-1', document_number: '1', render_hints: [mark('400001000000003')], original: original(hints) }));
    for (const text of [reversal([]), reversal([mark('400001000000001')])]) {
      expect(titleOf(text)).toBe('ΠΙΣΤΩΤΙΚΟ ΣΤΟΙΧΕΙΟ ΛΙΑΝΙΚΗΣ');
      expect(text).toContain('\nΣειρά-Α/Α A-CN-1\nΑντιλογισμός του παραστατικού A-1\n');
      expect(text).not.toMatch(/ΑΚΥΡΩΣΗ|ΜΑΡΚ ακυρωμένου|ΜΑΡΚ ακύρωσης/);
      expect(text).toContain('\nΜΑΡΚ 400001000000003\n'); // a document's own MARK
    }
    // The reversal of an invoice is a credit invoice 5.2, to the same counterpart.
    const invoice = stored('sale', B2B);
    const text = print(source(invoice, { type: 'cancellation', fiscal_id: 'A-CN-2', original: { documentNumber: '3', fiscalId: 'A-3', hints: [], tx: invoice, createdAt: NOW } }));
    expect(titleOf(text)).toBe('ΠΙΣΤΩΤΙΚΟ ΤΙΜΟΛΟΓΙΟ - ΜΗ ΣΥΣΧΕΤΙΖΟΜΕΝΟ');
    expect(text).toContain('\nΑΦΜ λήπτη: 123456783\n');
  });

  it('the original, reprinted after its cancellation, says it is cancelled (the shared CANCELLED notice)', () => {
    const text = print(source(sale, { status: 'cancelled', render_hints: [mark('400001000000001')] }));
    expect(text).toMatch(/\n\s*ΑΚΥΡΩΘΗΚΕ\n/);
  });
});
