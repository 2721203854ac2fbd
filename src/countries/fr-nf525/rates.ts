/**
 * The VAT rates a French line may carry. An NF525 record is final once signed (nothing is
 * sent to an authority that would refuse it), so a rate France does not have (21 %, a
 * Spanish one) would be signed, printed, chained into the grand totals and archived, and
 * only an inspector would notice. It is refused before anything is stored or signed.
 *
 * The rates in force (sources: CGI on Légifrance; BOI-TVA-GEO-20-10 for the overseas ones):
 * - metropolitan France: 20 (normal, art. 278), 10 (art. 279), 5.5 (art. 278-0 bis),
 *   2.1 (art. 281 quater to 281 nonies: reimbursed medicines, press, some shows);
 * - Corsica (art. 297 I-1): 0.9, 2.1, 10 and 13 on the goods and services it lists, the
 *   mainland's 20 and 5.5 on everything else;
 * - Guadeloupe, Martinique and La Réunion: 8.5 (normal) and 2.1 (reduced), art. 296; 1.75
 *   and 1.05 (press, first performances), art. 296 bis;
 * - Guyane and Mayotte: no VAT for now (art. 294-1), so their lines are at 0.
 * 0 is also every exempt or out-of-scope line (art. 261 ff.) and every sale of a business
 * under the franchise en base (art. 293 B), whose receipts show no VAT.
 *
 * The location does not say where it sells (the France config has legal_name and
 * register_id only: spec "Other France fields: not shown"), so a line may carry any of the
 * territories' rates: a mainland sale at 8.5 % is not told apart from a Réunion one.
 */
import { RateListError } from '../../core/transaction-request.ts';
import type { TransactionDraft } from '../types.ts';

/** Highest first, as the 400 lists them. */
export const FRENCH_VAT_RATES: readonly number[] = [20, 13, 10, 8.5, 5.5, 2.1, 1.75, 1.05, 0.9, 0];

export const isFrenchVatRate = (rate: number): boolean => FRENCH_VAT_RATES.includes(rate);

/** `20, 13, …, 0.9 or 0`, each written by `rate` (the guide form says them in hundredths of a percent). */
const ratesText = (rate: (percent: number) => string): string =>
  `${FRENCH_VAT_RATES.slice(0, -1).map(rate).join(', ')} or ${rate(FRENCH_VAT_RATES.at(-1)!)}`;

/**
 * Every line's rate is a French one (a sale, a refund and a void alike: each is a record of
 * its own, signed at its rates). Checked at creation and preview (validateTransaction).
 */
export function checkFrenchVatRates(tx: TransactionDraft): void {
  tx.items.forEach((line, i) => {
    if (!isFrenchVatRate(line.tax_rate)) {
      throw new RateListError((rate) => `items[${i}].tax_rate must be a French VAT rate (${ratesText(rate)})`);
    }
  });
}
