import { describe, it, expect } from 'vitest';
import { INVOICE_NUMBER_INVALID, SERIES_INVALID, SIMPLIFIED_TOO_LARGE, readInvoiceNumber, readSeries, readSpanishInvoiceType } from './invoice.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft, line } from '../shared/test-fixtures.ts';

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

  it('no simplified invoice above 3,000.00 EUR (RD 1619/2012 art. 4; AEAT 1150): F2 refused, F1 and corrective types not', () => {
    // 2,479.34 + 21 % = 3,000.00: the limit itself is allowed.
    const at = [line({ unit_price: 247_934, tax_rate: 21, tax_amount: 52_066, total_amount: 300_000 })];
    const over = [line({ unit_price: 247_935, tax_rate: 21, tax_amount: 52_066, total_amount: 300_001 })];
    expect(readSpanishInvoiceType(draft({ items: at }), {})).toBe('F2');
    expect400(() => readSpanishInvoiceType(draft({ items: over }), {}), SIMPLIFIED_TOO_LARGE);
    expect400(() => readSpanishInvoiceType(draft({ items: over, ...withNif }), { invoice_type: 'F2' }), SIMPLIFIED_TOO_LARGE);
    expect(readSpanishInvoiceType(draft({ items: over, ...withNif }), {})).toBe('F1');
    expect(readSpanishInvoiceType(draft({ items: over, type: 'refund' }), {})).toBe('R5');
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
