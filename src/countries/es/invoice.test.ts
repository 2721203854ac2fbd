import { describe, it, expect } from 'vitest';
import { INVOICE_NUMBER_INVALID, SERIES_INVALID, readInvoiceNumber, readSeries, readSpanishInvoiceType } from './invoice.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft } from '../shared/test-fixtures.ts';

const withNif = { customer_context: { nif: 'B12345674' } };

describe('Spanish invoice type (TicketBAI, VERI*FACTU)', () => {
  it.each([
    ['sale', false, 'F2'],
    ['sale', true, 'F1'],
    ['refund', false, 'R5'],
    ['refund', true, 'R1'],
    ['void', false, 'R5'],
    ['void', true, 'R1'],
  ] as const)('%s, customer tax id %s → %s', (type, customer, expected) => {
    const tx = draft({ type, ...(customer ? withNif : {}) });
    expect(readSpanishInvoiceType(tx, {})).toBe(expected);
  });

  it('accepts tax_id as well as nif', () => {
    expect(readSpanishInvoiceType(draft({ customer_context: { tax_id: 'B12345674' } }), {})).toBe('F1');
  });

  it('override within the family', () => {
    expect(readSpanishInvoiceType(draft(withNif), { invoice_type: 'F2' })).toBe('F2');
    expect(readSpanishInvoiceType(draft({ type: 'refund', ...withNif }), { invoice_type: 'R4' })).toBe('R4');
    expect400(() => readSpanishInvoiceType(draft(), { invoice_type: 'R1' }), 'metadata.invoice_type must be F1 or F2 for a sale');
    expect400(
      () => readSpanishInvoiceType(draft({ type: 'refund' }), { invoice_type: 'F2' }),
      'metadata.invoice_type must be one of R1, R2, R3, R4, R5 for refund and void transactions',
    );
    expect400(
      () => readSpanishInvoiceType(draft(), { invoice_type: 'F1' }),
      "metadata.invoice_type F1 needs the customer's tax id in customer_context (nif or tax_id)",
    );
  });

  it('series and invoice number', () => {
    expect(readSeries({}, 'A')).toBe('A');
    expect(readSeries({ series: ' TB-2026 ' }, 'A')).toBe('TB-2026');
    expect400(() => readSeries({ series: 'A B' }, 'A'), SERIES_INVALID);
    expect400(() => readSeries({ series: 'x'.repeat(21) }, 'A'), SERIES_INVALID);
    expect(readInvoiceNumber({})).toBeUndefined();
    expect(readInvoiceNumber({ invoice_number: 27174 })).toBe('27174');
    expect400(() => readInvoiceNumber({ invoice_number: 'a=b' }), INVOICE_NUMBER_INVALID);
  });
});
