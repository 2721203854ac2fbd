/**
 * Imposta di bollo (stamp duty) on an electronic invoice: DatiGeneraliDocumento/DatiBollo
 * (FatturaPA 1.2.2, 2.1.1.6: BolloVirtuale `SI`, ImportoBollo) or BolloVirtuale alone in
 * the simplified format (Schema_VFSM10.xsd).
 *
 * The rule:
 * - DPR 642/1972, Tariffa (allegato A, parte I) art. 13 n. 1: invoices, notes and similar
 *   documents "recanti addebitamenti o accreditamenti" pay 2.00 EUR (amount set by DL
 *   43/2013 art. 7-bis c.3), not when the sum is at most 77.47 EUR (the article's notes);
 * - Tabella allegato B art. 6: documents about operations subject to VAT are exempt, so
 *   the threshold is measured on the amounts NOT subject to VAT only (Agenzia delle
 *   Entrate practice: a mixed invoice pays when its non-VAT amounts exceed 77.47 EUR);
 * - DM 17 giugno 2014 art. 6: on an electronic invoice the duty is paid virtually, and the
 *   file says so (BolloVirtuale SI); SdI totals it per quarter (DL 34/2019 art. 12-novies).
 *
 * Which Natura codes count (the operations outside VAT, exempt from it, or non-taxable):
 * - N1 (excluded, art. 15 DPR 633/1972), N2.1 (outside VAT for territoriality, art. 7 to
 *   7-septies), N2.2 (outside VAT in other cases, e.g. regime forfettario), N3.4 (treated
 *   as exports, art. 8-bis and 9), N3.5 (esportatore abituale with dichiarazione d'intento),
 *   N3.6 (other non-taxable), N4 (exempt, art. 10): count.
 * - N3.1 (exports, art. 8 c.1 lett. a/b): exempt, Tabella B art. 15 ("fatture emesse in
 *   relazione ad esportazioni di merci"; read literally: it does not reach N3.4, Agenzia
 *   risposta 45/2024).
 * - N3.2 (intra-EU supplies): exempt, DL 331/1993 art. 66 c.4.
 * - N3.3 (goods to San Marino): treated as an export of goods (DPR 633/1972 art. 71, DM 21
 *   giugno 2021 art. 5: non-taxable "ai sensi degli articoli 8 e 9"), so exempt like N3.1.
 * - N5 (margin scheme) and N6.x (reverse charge): the operation is subject to VAT, paid on
 *   the margin or by the buyer, so exempt under Tabella B art. 6.
 * - N7 is not accepted by this system (../it/natura.ts), nor are the generic N2, N3 and N6
 *   (SdI refuses them: metadata.ts checkNaturaSubcode).
 *
 * invopop/gobl.fatturapa writes DatiBollo only when the invoice carries an explicit
 * stamp-duty charge; here it follows from the lines, with `metadata.bollo_virtuale` to
 * force (true) or suppress (false) it where the merchant knows better (e.g. an exemption
 * for the buyer, Tabella B art. 16 and 27-bis).
 *
 * ImportoBollo is information: it is not part of ImportoTotaleDocumento (the seller owes the
 * duty; recharging it to the buyer is a line of its own, N1, art. 15 DPR 633/1972).
 * Credit notes (TD04) pay it too: art. 13 names documents of "accreditamenti".
 */
import type { TransactionDraft, TxLine } from '../types.ts';

/** The 77.47 EUR threshold, in cents: the duty is due strictly above it. */
export const BOLLO_THRESHOLD = 7747;
/** ImportoBollo: 2.00 EUR (DPR 642/1972 Tariffa art. 13 n. 1, as set by DL 43/2013). */
export const BOLLO_AMOUNT = '2.00';

/** Natura codes whose amounts count toward the threshold (see the rule above). */
export const BOLLO_NATURE: readonly string[] = ['N1', 'N2.1', 'N2.2', 'N3.4', 'N3.5', 'N3.6', 'N4'];

/** The net amount of the lines not subject to VAT that bear the duty, in cents (absolute). */
export function bolloBase(items: readonly TxLine[]): number {
  let sum = 0;
  for (const l of items) {
    if (l.tax_rate === 0 && typeof l.natura === 'string' && BOLLO_NATURE.includes(l.natura)) sum += l.total_amount - l.tax_amount;
  }
  return Math.abs(sum);
}

/** Whether the document carries the stamp duty: the merchant's override, else the rule. */
export function bolloDue(tx: TransactionDraft): boolean {
  const override = tx.metadata.bollo_virtuale;
  if (typeof override === 'boolean') return override;
  return bolloBase(tx.items) > BOLLO_THRESHOLD;
}
