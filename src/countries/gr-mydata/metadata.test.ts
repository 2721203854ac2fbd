import { describe, it, expect } from 'vitest';
import { myData } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft, line, location, txCtx } from '../shared/test-fixtures.ts';

const loc = location('gr-mydata');
const items = [line({ tax_rate: 24, tax_amount: 240, total_amount: 1240 })];
const validate = (metadata: Record<string, unknown>, over: Parameters<typeof draft>[0] = {}) =>
  myData.validateTransaction(draft({ items, metadata, ...over }), txCtx(loc));
const B2B = { counterpart_vat_number: '123456783' };

describe('gr-mydata validateTransaction', () => {
  it('retail receipt 11.1 for a sale, credit note 11.4 for a refund; series from the config', () => {
    expect(validate({})).toEqual({ invoice_type: '11.1', series: 'A' });
    expect(validate({}, { type: 'refund' })).toEqual({ invoice_type: '11.4', series: 'A' });
    expect(validate({}, { type: 'void' })).toEqual({ invoice_type: '11.4', series: 'A' });
    expect(validate({ invoice_type: '11.2', series: 'ΑΠΥ' })).toEqual({ invoice_type: '11.2', series: 'ΑΠΥ' });
  });
  it('metadata.series: no ":" or "#" (chain key separators), unless it is the stored default_series', () => {
    const message = 'metadata.series must not contain ":" or "#" (they separate the parts of the series\' chain key)';
    expect400(() => validate({ series: 'A:live' }), message);
    expect400(() => validate({ series: 'A#corrections' }), message);
    const old = location('gr-mydata', { default_series: 'Α:1' });
    expect(myData.validateTransaction(draft({ items, metadata: { series: 'Α:1' } }), txCtx(old))).toMatchObject({ series: 'Α:1' });
    expect(myData.validateTransaction(draft({ items, metadata: {} }), txCtx(old))).toMatchObject({ series: 'Α:1' });
    expect400(() => myData.validateTransaction(draft({ items, metadata: { series: 'Α:2' } }), txCtx(old)), message);
  });
  it('a business counterpart: 1.1 / 2.1 invoices, 5.1 with the corrected MARK, else 5.2', () => {
    expect(validate(B2B)).toEqual({ invoice_type: '1.1', series: 'A', counterpart_vat_number: '123456783', counterpart_country: 'GR', counterpart_branch: 0 });
    expect(validate({ ...B2B, invoice_type: '2.1' }).invoice_type).toBe('2.1');
    expect(validate({ ...B2B, correlated_mark: 400001925600940 }, { type: 'refund' })).toMatchObject({ invoice_type: '5.1', correlated_mark: '400001925600940' });
    expect(validate(B2B, { type: 'refund' }).invoice_type).toBe('5.2');
    // A retail credit note may name the MARK of the receipt it credits (was a 400 naming 5.1 only).
    expect(validate({ correlated_mark: '400001925600940' }, { type: 'refund' })).toEqual({ invoice_type: '11.4', series: 'A', correlated_mark: '400001925600940' });
    expect(validate({ invoice_type: '11.4', correlated_mark: 400001925600940 }, { type: 'void' })).toMatchObject({ invoice_type: '11.4', correlated_mark: '400001925600940' });
    expect(validate({ counterpart_vat_number: 'DE123456789', counterpart_country: 'DE', counterpart_name: 'Beispiel GmbH', counterpart_postal_code: '10115', counterpart_city: 'Berlin' })).toMatchObject({ counterpart_country: 'DE', counterpart_name: 'Beispiel GmbH' });
  });
  it('overrides: payment type, exemption cause, income classification', () => {
    expect(validate({ payment_type: '6', income_classification_type: 'E3_561_007', income_classification_category: 'category1_3' })).toMatchObject({ payment_type: 6, income_classification_type: 'E3_561_007', income_classification_category: 'category1_3' });
    const zero = [line({ tax_rate: 0, tax_amount: 0, total_amount: 1000 })];
    expect(validate({ vat_exemption_category: 28 }, { items: zero }).vat_exemption_category).toBe(28);
  });
  it.each([
    [{ invoice_type: '5.1' }, {}, 'metadata.invoice_type must be one of 11.1, 11.2, 11.3, 1.1, 1.2, 1.3, 2.1, 2.2, 2.3 for a sale'],
    [{ invoice_type: '11.1' }, { type: 'refund' as const }, 'metadata.invoice_type must be one of 11.4, 5.1, 5.2 for refund and void transactions'],
    [{ series: 'A B' }, {}, 'metadata.series must be 1-50 characters without spaces'],
    [{ invoice_type: '1.1' }, {}, 'metadata.counterpart_vat_number is required for invoice type 1.1'],
    [{ ...B2B, invoice_type: '11.1' }, {}, 'metadata.counterpart_* fields are not accepted on retail documents (invoice types 11.x)'],
    [{ ...B2B, invoice_type: '5.1' }, { type: 'refund' as const }, 'metadata.correlated_mark (the MARK of the corrected invoice) is required for invoice type 5.1; a credit note whose invoice has no MARK is a 5.2'],
    [{ ...B2B, invoice_type: '5.1', correlated_mark: '' }, { type: 'void' as const }, 'metadata.correlated_mark (the MARK of the corrected invoice) is required for invoice type 5.1; a credit note whose invoice has no MARK is a 5.2'],
    [{ ...B2B, correlated_mark: '400001925600940' }, {}, 'metadata.correlated_mark is only for credit notes (refund or void, invoice type 5.1 or 11.4)'],
    [{ correlated_mark: '400001925600940' }, {}, 'metadata.correlated_mark is only for credit notes (refund or void, invoice type 5.1 or 11.4)'],
    [{ ...B2B, invoice_type: '5.2', correlated_mark: '400001925600940' }, { type: 'refund' as const }, 'metadata.correlated_mark is not accepted on a non-correlated credit note (invoice type 5.2): use 5.1'],
    [{ ...B2B, correlated_mark: '0123' }, { type: 'refund' as const }, 'metadata.correlated_mark must be a MARK (a positive integer of up to 19 digits)'],
    [{ counterpart_vat_number: '123456789' }, {}, 'metadata.counterpart_vat_number must be a valid 9-digit AFM for a Greek counterpart'],
    [{ counterpart_name: 'X' }, {}, 'metadata.counterpart_vat_number is required when a counterpart is given'],
    [{ counterpart_vat_number: 'DE1', counterpart_country: 'DE' }, {}, 'metadata.counterpart_name, counterpart_postal_code and counterpart_city are required for a foreign counterpart'],
    [{ ...B2B, counterpart_city: 'Αθήνα' }, {}, 'metadata.counterpart_postal_code and metadata.counterpart_city are required for a counterpart address'],
    [{ ...B2B, counterpart_branch: -1 }, {}, 'metadata.counterpart_branch must be an integer >= 0'],
    [{ ...B2B, counterpart_branch: 2_147_483_648 }, {}, "metadata.counterpart_branch must be at most 2147483647 (myDATA's branch is a 32-bit integer)"],
    [{ payment_type: 9 }, {}, 'metadata.payment_type must be a myDATA payment method code (1-8)'],
    [{ vat_exemption_category: 32 }, {}, 'metadata.vat_exemption_category must be a myDATA VAT exemption cause (1-31)'],
    [{ income_classification_type: 'E3_999' }, {}, 'metadata.income_classification_type must be a myDATA E3 income classification type (e.g. E3_561_003)'],
  ])('refuses %j', (meta, over, message) => {
    expect400(() => validate(meta, over), message);
  });
  it('a foreign business counterpart gets the invoice type of its country (AADE 242-244)', () => {
    const de = { counterpart_vat_number: 'DE123456789', counterpart_country: 'DE', counterpart_name: 'Beispiel GmbH', counterpart_postal_code: '10115', counterpart_city: 'Berlin' };
    const us = { ...de, counterpart_vat_number: '12-3456789', counterpart_country: 'US', counterpart_name: 'Example Inc', counterpart_postal_code: '10001', counterpart_city: 'New York' };
    expect(validate(de).invoice_type).toBe('1.2');
    expect(validate(us).invoice_type).toBe('1.3');
    expect(validate({ ...de, invoice_type: '2.2' }).invoice_type).toBe('2.2');
    expect(validate({ ...us, invoice_type: '2.3' }).invoice_type).toBe('2.3');
    expect(validate(de, { type: 'refund' }).invoice_type).toBe('5.2');
    expect400(() => validate({ ...de, invoice_type: '1.1' }), 'invoice type 1.1 needs a counterpart in Greece (country GR) (AADE refuses it otherwise, myDATA error 242); metadata.counterpart_country DE takes invoice type 1.2 or 2.2');
    expect400(() => validate({ ...us, invoice_type: '2.1' }), 'invoice type 2.1 needs a counterpart in Greece (country GR) (AADE refuses it otherwise, myDATA error 242); metadata.counterpart_country US takes invoice type 1.3 or 2.3');
    expect400(() => validate({ ...B2B, invoice_type: '1.2' }), 'invoice type 1.2 needs a counterpart in another EU member state (AADE refuses it otherwise, myDATA error 243); metadata.counterpart_country GR takes invoice type 1.1 or 2.1');
    expect400(() => validate({ ...de, invoice_type: '2.3' }), 'invoice type 2.3 needs a counterpart outside the EU (AADE refuses it otherwise, myDATA error 244); metadata.counterpart_country DE takes invoice type 1.2 or 2.2');
  });
  it('the counterpart is not the issuer (AADE 235)', () => {
    const afm = String(loc.config.afm);
    expect400(() => validate({ counterpart_vat_number: afm }), 'metadata.counterpart_vat_number is the AFM of this location: a document cannot be addressed to its issuer (myDATA error 235)');
    expect400(() => validate({ counterpart_vat_number: afm }, { type: 'refund' }), 'metadata.counterpart_vat_number is the AFM of this location: a document cannot be addressed to its issuer (myDATA error 235)');
  });
  it('income classification overrides must be a combination AADE accepts on the invoice type (307/308)', () => {
    // A wholesale type on a retail receipt (with its default category1_1).
    expect400(() => validate({ income_classification_type: 'E3_561_001' }), 'metadata.income_classification_type / _category: income classification type E3_561_001 is not accepted by AADE with category1_1 on invoice type 11.1 (myDATA error 307); it takes E3_561_003, E3_561_004, E3_561_005, E3_561_006, E3_561_007');
    // Goods on a services invoice.
    expect400(() => validate({ ...B2B, invoice_type: '2.1', income_classification_category: 'category1_1' }), 'metadata.income_classification_type / _category: income classification category category1_1 is not accepted by AADE on invoice type 2.1 (myDATA error 308); it takes category1_3, category1_5, category1_8, category1_9');
    expect400(() => validate({ income_classification_category: 'category3' }), 'metadata.income_classification_type / _category: income classification category category3 is not accepted by AADE on invoice type 11.1 (myDATA error 308); it takes category1_1, category1_2, category1_3, category1_4, category1_5, category1_6, category1_7, category1_8, category1_9');
    expect(validate({ ...B2B, income_classification_type: 'E3_561_002' })).toMatchObject({ invoice_type: '1.1', income_classification_type: 'E3_561_002' });
    expect(validate({ income_classification_type: 'E3_595', income_classification_category: 'category1_6' }, { type: 'refund' })).toMatchObject({ invoice_type: '11.4' });
  });
  it('lines must carry a Greek VAT rate; a 0 % line needs its exemption cause', () => {
    expect400(() => validate({}, { items: [line()] }), 'items[0].tax_rate must be a Greek VAT rate (24, 13, 6, 17, 9, 4, 3 or 0)');
    expect400(() => validate({}, { items: [...items, line({ tax_rate: 0, tax_amount: 0, total_amount: 1000 })] }), 'metadata.vat_exemption_category is required for a 0 % line (myDATA exemption cause 1-31)');
  });
  it('offline grace and inline window', () => {
    expect(myData.capabilities).toMatchObject({ inlineWindowSeconds: 5, offlineGraceSeconds: 604800, submission: 'realtime' });
  });
});
