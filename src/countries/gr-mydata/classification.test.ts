import { describe, it, expect } from 'vitest';
import { PAYMENT_TYPE, defaultIncomeClassification, defaultInvoiceType, reversalType, vatCategoryOf } from './classification.ts';

describe('myDATA mappings', () => {
  it.each([[24, 1], [13, 2], [6, 3], [17, 4], [9, 5], [4, 6], [0, 7], [3, 9]])('rate %d %% → vatCategory %d', (rate, cat) => {
    expect(vatCategoryOf(rate)).toBe(cat);
  });
  it.each([21, 10, 23, 5.5, 24.5, -24])('rate %d has no category', (rate) => {
    expect(vatCategoryOf(rate)).toBeUndefined();
  });
  it('payment_method → paymentMethodDetails/type', () => {
    expect(PAYMENT_TYPE).toEqual({ cash: 3, card: 7, transfer: 1, other: 5 });
  });
  it('invoice type from the sale, the counterpart and the correlated MARK', () => {
    expect(defaultInvoiceType(true, false, false)).toBe('11.1');
    expect(defaultInvoiceType(true, true, false)).toBe('1.1');
    expect(defaultInvoiceType(false, false, false)).toBe('11.4');
    expect(defaultInvoiceType(false, true, true)).toBe('5.1');
    expect(defaultInvoiceType(false, true, false)).toBe('5.2');
  });
  it('reversal of a document without a MARK', () => {
    expect(['11.1', '11.2', '11.3', '11.4', '1.1', '2.1', '5.1', '5.2'].map(reversalType)).toEqual(['11.4', '11.4', '11.4', '11.1', '5.2', '5.2', '1.1', '1.1']);
  });
  it('income classification: retail E3_561_003, wholesale E3_561_001; goods category1_1, services category1_3', () => {
    expect(defaultIncomeClassification('11.1')).toEqual({ type: 'E3_561_003', category: 'category1_1' });
    expect(defaultIncomeClassification('11.2')).toEqual({ type: 'E3_561_003', category: 'category1_3' });
    expect(defaultIncomeClassification('11.4')).toEqual({ type: 'E3_561_003', category: 'category1_1' });
    expect(defaultIncomeClassification('1.1')).toEqual({ type: 'E3_561_001', category: 'category1_1' });
    expect(defaultIncomeClassification('2.1')).toEqual({ type: 'E3_561_001', category: 'category1_3' });
    expect(defaultIncomeClassification('5.1')).toEqual({ type: 'E3_561_001', category: 'category1_1' });
  });
});
