/**
 * A Spanish sale the three systems' tests share: a wholesaler's invoice to a retailer in
 * recargo de equivalencia (LIVA arts. 154-163, ./surcharge.ts). Goods at 21 % + 5.2 % and
 * 10 % + 1.4 %, a service (transport) at 21 % without a surcharge; the total counts the
 * surcharges (40.00 + 6.75 + 1.25 = 48.00). Each system adds its customer.
 */
import type { TransactionDraft } from '../types.ts';
import { line } from '../shared/test-fixtures.ts';

export const RECARGO_SALE: Pick<TransactionDraft, 'items' | 'pretax_amount' | 'tax_amount' | 'total_amount'> = {
  items: [
    line({ description: 'Aceite de oliva 1 l', quantity: 2, unit_price: 1000, tax_rate: 21, tax_amount: 420, total_amount: 2420, surcharge_rate: 5.2, surcharge_amount: 104 }),
    line({ description: 'Arroz 1 kg', quantity: 10, unit_price: 150, tax_rate: 10, tax_amount: 150, total_amount: 1650, surcharge_rate: 1.4, surcharge_amount: 21 }),
    line({ description: 'Transporte', quantity: 1, unit_price: 500, tax_rate: 21, tax_amount: 105, total_amount: 605 }),
  ],
  pretax_amount: 4000,
  tax_amount: 675,
  total_amount: 4800,
};
