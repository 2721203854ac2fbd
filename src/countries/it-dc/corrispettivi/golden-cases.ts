/**
 * Test fixtures (not a test file): one register's day on the fixed clock, as the golden
 * DatiCorrispettivi holds it: sales at 22 % and 10 %, an exempt N4 line (and an N2.1 one,
 * counted under N2), a return, a cancellation (POST /cancel's `cancellation` transaction)
 * and a voucher payment.
 */
import type { TransactionDraft, TxLine } from '../../types.ts';
import type { DayTransaction } from './totals.ts';

export const GOLDEN_DAY = '2026-01-15';
export const GOLDEN_MATRICOLA = 'ABCD-123456';
/** The signing time: 01:00 Rome the next day, when the daily run builds the file. */
export const GOLDEN_NOW = new Date('2026-01-16T00:00:00.000Z');

const line = (over: Partial<TxLine>): TxLine => ({
  description: 'Articolo', quantity: 1, unit_price: 1000, tax_rate: 22, tax_amount: 220, total_amount: 1220, ...over,
});

function draft(type: TransactionDraft['type'], items: TxLine[], metadata: Record<string, unknown>): TransactionDraft {
  const pretax = items.reduce((s, l) => s + l.total_amount - l.tax_amount, 0);
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  return {
    type, location_id: '7d9c5a34-6e1f-4b2a-8c3d-1e2f3a4b5c6d', timestamp: '2026-01-15T10:00:00.000Z', currency: 'EUR', payment_method: 'cash',
    items, pretax_amount: pretax, tax_amount: tax, total_amount: pretax + tax, customer_context: null, metadata: { country: 'IT', ...metadata },
  };
}

export function goldenDay(): DayTransaction[] {
  const sale1 = draft('sale', [
    line({ description: 'Pizza', quantity: 2, unit_price: 800, tax_rate: 10, tax_amount: 160, total_amount: 1760 }),
    line({ description: 'Vino', quantity: 1, unit_price: 1500, tax_rate: 22, tax_amount: 330, total_amount: 1830 }),
  ], { cash_amount: 3590, is_return: false, is_cancellation: false });
  const sale2 = draft('sale', [
    line({ description: 'Libro', quantity: 1, unit_price: 1200, tax_rate: 0, tax_amount: 0, total_amount: 1200, natura: 'N4' }),
    line({ description: 'Gadget', quantity: 1, unit_price: 1000, tax_rate: 22, tax_amount: 220, total_amount: 1220 }),
    line({ description: 'Servizio estero', quantity: 1, unit_price: 500, tax_rate: 0, tax_amount: 0, total_amount: 500, natura: 'N2.1' }),
  ], { electronic_amount: 2420, ticket_amount: 500, ticket_count: 2, is_return: false, is_cancellation: false });
  const ret = draft('refund', [
    line({ description: 'Vino', quantity: 1, unit_price: 1500, tax_rate: 22, tax_amount: 330, total_amount: 1830 }),
  ], { cash_amount: 1830, is_return: true, is_cancellation: false, original_matricola: 'ABCD-123456', original_date: '2026-01-14', original_number: '0001-0004' });
  const cancelled = draft('sale', [
    line({ description: 'Pizza', quantity: 1, unit_price: 800, tax_rate: 10, tax_amount: 80, total_amount: 880 }),
  ], { cash_amount: 880, is_return: false, is_cancellation: false });
  const at = (iso: string) => new Date(iso);
  return [
    { type: 'sale', normalized: sale1, created_at: at('2026-01-14T23:30:00.000Z') }, // 00:30 in Rome: the 15th
    { type: 'sale', normalized: sale2, created_at: at('2026-01-15T11:00:00.000Z') },
    { type: 'refund', normalized: ret, created_at: at('2026-01-15T15:00:00.000Z') },
    { type: 'sale', normalized: cancelled, created_at: at('2026-01-15T18:00:00.000Z') },
    { type: 'cancellation', normalized: cancelled, created_at: at('2026-01-15T18:05:00.000Z') },
  ];
}
