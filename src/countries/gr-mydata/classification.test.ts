import { describe, it, expect } from 'vitest';
import { CREDIT_TYPES, INCOME_COMBINATIONS, PAYMENT_TYPE, SALE_TYPES, defaultIncomeClassification, defaultInvoiceType, incomeCombinationError, reversalType, vatCategoryOf } from './classification.ts';

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
    expect(defaultInvoiceType(true, undefined, false)).toBe('11.1');
    expect(defaultInvoiceType(true, 'GR', false)).toBe('1.1');
    expect(defaultInvoiceType(false, undefined, false)).toBe('11.4');
    expect(defaultInvoiceType(false, 'GR', true)).toBe('5.1');
    expect(defaultInvoiceType(false, 'DE', false)).toBe('5.2');
  });
  it('reversal of a document without a MARK', () => {
    expect(['11.1', '11.2', '11.3', '11.4', '1.1', '2.1', '5.1', '5.2'].map((t) => reversalType(t))).toEqual(['11.4', '11.4', '11.4', '11.1', '5.2', '5.2', '1.1', '1.1']);
  });
  it('income classification: retail E3_561_003, wholesale E3_561_001; goods category1_1, services category1_3', () => {
    expect(defaultIncomeClassification('11.1')).toEqual({ type: 'E3_561_003', category: 'category1_1' });
    expect(defaultIncomeClassification('11.2')).toEqual({ type: 'E3_561_003', category: 'category1_3' });
    expect(defaultIncomeClassification('11.4')).toEqual({ type: 'E3_561_003', category: 'category1_1' });
    expect(defaultIncomeClassification('1.1')).toEqual({ type: 'E3_561_001', category: 'category1_1' });
    expect(defaultIncomeClassification('2.1')).toEqual({ type: 'E3_561_001', category: 'category1_3' });
    expect(defaultIncomeClassification('5.1')).toEqual({ type: 'E3_561_001', category: 'category1_1' });
  });
  it('a foreign business counterpart: 1.2 in the EU, 1.3 outside it (AADE 242-244); its credit note is undone by the same', () => {
    expect(defaultInvoiceType(true, 'DE', false)).toBe('1.2');
    expect(defaultInvoiceType(true, 'US', false)).toBe('1.3');
    expect(defaultInvoiceType(true, 'GB', false)).toBe('1.3');
    expect(reversalType('5.2', 'FR')).toBe('1.2');
    expect(reversalType('5.1', 'CH')).toBe('1.3');
    expect(defaultIncomeClassification('1.2')).toEqual({ type: 'E3_561_005', category: 'category1_1' });
    expect(defaultIncomeClassification('2.3')).toEqual({ type: 'E3_561_006', category: 'category1_3' });
  });
  it('every default classification is one AADE accepts on its invoice type (INCOME_COMBINATIONS)', () => {
    for (const t of [...SALE_TYPES, ...CREDIT_TYPES]) {
      expect(INCOME_COMBINATIONS[t]).toBeDefined();
      expect(incomeCombinationError(t, defaultIncomeClassification(t))).toBeUndefined();
    }
  });
  it('combinations AADE refuses (307 type, 308 category)', () => {
    expect(incomeCombinationError('11.1', { type: 'E3_561_001', category: 'category1_1' })).toMatch(/E3_561_001 is not accepted by AADE with category1_1 on invoice type 11.1 \(myDATA error 307\)/);
    expect(incomeCombinationError('2.1', { type: 'E3_561_001', category: 'category1_1' })).toMatch(/category category1_1 is not accepted by AADE on invoice type 2.1 \(myDATA error 308\)/);
    expect(incomeCombinationError('1.2', { type: 'E3_561_001', category: 'category1_1' })).toMatch(/307/);
    expect(incomeCombinationError('11.3', { type: 'E3_561_001', category: 'category1_1' })).toBeUndefined();
    expect(incomeCombinationError('1.1', { type: 'E3_596', category: 'category1_95' })).toBeUndefined();
  });
});
