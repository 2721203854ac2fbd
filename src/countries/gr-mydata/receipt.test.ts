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
import { NOW, draft, line, location, txCtx, validatedBuild } from '../shared/test-fixtures.ts';
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
/** The text with every run of white space one space: a wrapped line is found whole. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

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

  it('the original, reprinted after its cancellation, says it is cancelled (the shared CANCELLED notice) and names the cancellation MARK', () => {
    const cancelledBy = { documentNumber: null, fiscalId: null, hints: [mark('400001000000002')], createdAt: NOW, record: '{"operation":"CancelInvoice","mark":"400001000000001","entityVatNumber":null}' };
    const text = print(source(sale, { status: 'cancelled', render_hints: [mark('400001000000001')], cancelledBy }));
    expect(text).toMatch(/\n\s*ΑΚΥΡΩΘΗΚΕ\n/);
    expect(text).toContain('\nΣειρά-Α/Α A-1\nΜΑΡΚ ακύρωσης 400001000000002\n');
    expect(text).toContain('\nΜΑΡΚ 400001000000001\n');
    expect(print(source(sale, { status: 'cancelled', render_hints: [mark('400001000000001')], cancelledBy }), 'en')).toContain('\nCancellation MARK 400001000000002\n');
    // AADE's answer not known yet (251 without its book): cancelled, no MARK to name.
    const unknown = print(source(sale, { status: 'cancelled', cancelledBy: { ...cancelledBy, hints: [] } }));
    expect(unknown).toMatch(/\n\s*ΑΚΥΡΩΘΗΚΕ\n/);
    expect(unknown).not.toContain('ΜΑΡΚ ακύρωσης');
  });

  it('an original reversed by a credit note (no MARK when it was cancelled) is REVERSED, naming the reversing document and its MARK', () => {
    const cancelledBy = { documentNumber: '1', fiscalId: 'A-CN-1', hints: [mark('400001000000003')], createdAt: NOW, record: null };
    const text = print(source(sale, { status: 'cancelled', render_hints: [mark('400001000000001')], cancelledBy }));
    expect(text).toMatch(/\n\s*ΑΝΤΙΛΟΓΙΣΤΗΚΕ\n/);
    expect(text).not.toContain('ΑΚΥΡΩΘΗΚΕ');
    expect(text).toContain('\nΑντιλογίστηκε με το παραστατικό A-CN-1\nΜΑΡΚ αντιλογιστικού 400001000000003\n');
    const en = print(source(sale, { status: 'cancelled', render_hints: [mark('400001000000001')], cancelledBy }), 'en');
    expect(en).toMatch(/\n\s*REVERSED\n/);
    expect(en).toContain("\nReversed by document A-CN-1\nReversing document's MARK 400001000000003\n");
  });
});

describe('what the Greek receipt reads from the record it prints', () => {
  const zeroRated = [
    line({ description: 'Ψωμί', tax_rate: 13, tax_amount: 130, total_amount: 1130 }),
    line({ description: 'Βιβλίο εξαγωγής', tax_rate: 0, tax_amount: 0, total_amount: 2000 }),
  ];
  const built = (metadata: Record<string, unknown>, loc = location('gr-mydata')) => validatedBuild(myData, loc, draft({ items: zeroRated, metadata }));

  it('a 0 % line prints its VAT exemption cause with AADE\'s legal text, as the record carries it; a taxed line none', () => {
    const { tx, record } = built({ vat_exemption_category: 16 });
    expect(record.body).toContain('<vatExemptionCategory>16</vatExemptionCategory>');
    const text = print(source(tx, { record: record.body }));
    // Under the 0 % line, before the totals (wrapped at the paper's width: compared with its spaces folded).
    expect(flat(text)).toContain(' Βιβλίο εξαγωγής 20,00 ΦΠΑ 0 % Αιτία εξαίρεσης ΦΠΑ 16: Χωρίς ΦΠΑ - άρθρο 45 του Κώδικα ΦΠΑ ---');
    expect(text.match(/Αιτία εξαίρεσης/g)).toHaveLength(1);
    expect(text).toMatch(/\n {2}ΦΠΑ 13 %\nΒιβλίο/);
    expect(flat(print(source(tx, { record: record.body }), 'en'))).toContain(' VAT 0 % VAT exemption cause 16: Without VAT - article 45 of the VAT Code ---');
    // The record decides: a draft saying otherwise (edited since) is not what AADE received.
    const edited = { ...tx, metadata: { ...tx.metadata, vat_exemption_category: 27 } };
    expect(print(source(edited, { record: record.body }))).toContain('Αιτία εξαίρεσης ΦΠΑ 16:');
    // Without a readable record (none stored), the cause build.ts writes from the draft.
    expect(flat(print(source(edited)))).toContain(' ΦΠΑ 0 % Αιτία εξαίρεσης ΦΠΑ 27: Λοιπές Εξαιρέσεις ΦΠΑ ---');
  });

  it('a CancelInvoice cancellation prints the cancelled document\'s causes (its own record is the call)', () => {
    const { tx, record } = built({ vat_exemption_category: 28 });
    const text = print(source(tx, {
      type: 'cancellation', fiscal_id: null, record: '{"operation":"CancelInvoice","mark":"400001000000001","entityVatNumber":null}',
      render_hints: [mark('400001000000002')],
      original: { documentNumber: '1', fiscalId: 'A-1', hints: [mark('400001000000001')], tx, createdAt: NOW, record: record.body },
    }));
    expect(flat(text)).toContain(' ΦΠΑ 0 % Αιτία εξαίρεσης ΦΠΑ 28: Χωρίς ΦΠΑ - άρθρο 29 περ. β\' παρ. 1 του Κώδικα ΦΠΑ (Tax Free) ---');
  });

  it('the issuer AFM is the one the record was sent with, whatever the location says now (or without a tax_id)', () => {
    const { tx, record } = built({ vat_exemption_category: 16 }, location('gr-mydata', { afm: '123456783' }));
    expect(record.body).toContain('<vatNumber>123456783</vatNumber>');
    const src = source(tx, { record: record.body });
    const noTaxId = print({ ...src, location: { ...src.location, tax_id: null } });
    expect(noTaxId).toMatch(/\n\s*ΑΦΜ: 123456783\n/);
    // A location whose tax_id changed since: the record's AFM all the same.
    const changed = print(src);
    expect(changed).toMatch(/\n\s*ΑΦΜ: 123456783\n/);
    expect(changed).not.toContain('094259216');
    // A CancelInvoice cancellation (no issuer in its call): the cancelled document's.
    const cancellation = print({
      ...src,
      location: { ...src.location, tax_id: null },
      transaction: {
        ...src.transaction, type: 'cancellation', fiscal_id: null, record: '{"operation":"CancelInvoice","mark":"400001000000001","entityVatNumber":null}',
        original: { documentNumber: '1', fiscalId: 'A-1', hints: [], tx, createdAt: NOW, record: record.body },
      },
    });
    expect(cancellation).toMatch(/\n\s*ΑΦΜ: 123456783\n/);
    // No record to read: the location's tax_id, as before.
    expect(print(source(tx))).toMatch(/\n\s*ΑΦΜ: 094259216\n/);
  });
});
