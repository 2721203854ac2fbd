/**
 * The largest amount the Italian documents can carry. FatturaPA 1.2.2 (Amount2DecimalType,
 * Amount8DecimalType: `[\-]?[0-9]{1,11}\.[0-9]{2}`), DocCommercialiLotteria 1.0 and
 * DatiCorrispettivi 1.0 (Amount2DecimalType, same pattern) allow at most 11 integer
 * digits: 99,999,999,999.99 EUR. A larger amount would give a file the official schema
 * refuses (SdI: scarto 00200, file not valid against the schema), so it is refused at
 * creation with a 400 naming the field, before anything is stored.
 */
import { badRequest } from '../../core/errors.ts';
import type { TransactionDraft } from '../types.ts';

/** 99,999,999,999.99 EUR in cents. */
export const ITALY_MAX_AMOUNT = 9_999_999_999_999;

const tooLarge = (field: string) =>
  badRequest(`${field} must be at most 99999999999.99 EUR (9999999999999 minor units): the Italian fiscal documents have at most 11 integer digits`);

/**
 * Every amount an Italian document writes is one of these or a sum bounded by the total:
 * a line's unit price (PrezzoUnitario, which a fractional quantity can make larger than
 * the line) and total, and the transaction's total (ImportoTotaleDocumento, Ammontare).
 */
export function checkItalianAmounts(tx: TransactionDraft): void {
  tx.items.forEach((line, i) => {
    if (line.unit_price > ITALY_MAX_AMOUNT) throw tooLarge(`items[${i}].unit_price`);
    if (line.total_amount > ITALY_MAX_AMOUNT) throw tooLarge(`items[${i}].total_amount`);
  });
  if (tx.total_amount > ITALY_MAX_AMOUNT) throw tooLarge('total_amount');
}
