/**
 * myDATA's VAT exemption causes (`vatExemptionCategory`, VatExemptionType 1-31) with AADE's
 * texts, for the receipt: a 0 % line prints the legal ground of its exemption. An invoice
 * of an exempt supply names the provision that exempts it (Directive 2006/112/EC art.
 * 226(11), transposed by law 4308/2014 art. 9, the content of an invoice); a retail
 * document prints it too, as its record carries it.
 *
 * Source: AADE's VatExemptionType table as firebed/aade-mydata documents it
 * (docs/appendix/vat-exemption-categories.md, "Αιτία Εξαίρεσης (ν. 5144/2024)", commit
 * 965d0f49), the same list as AADE's myDATA technical specification; the article numbers
 * are those of the VAT Code as codified by law 5144/2024 (the list before it cited law
 * 2859/2000's numbering: e.g. 16 was "άρθρο 39α", now "άρθρο 45"). The English texts are
 * ours, word for word.
 */
import type { Localized } from '../types.ts';

const without = (ground: string, en: string): Localized => ({ el: `Χωρίς ΦΠΑ - ${ground}`, en: `Without VAT - ${en}` });
const article = (n: string): Localized => without(`άρθρο ${n} του Κώδικα ΦΠΑ`, `article ${n} of the VAT Code`);
const included = (n: string): Localized => ({ el: `ΦΠΑ εμπεριεχόμενος - άρθρο ${n} του Κώδικα ΦΠΑ`, en: `VAT included - article ${n} of the VAT Code` });

export const VAT_EXEMPTION_CAUSES: Readonly<Record<number, Localized>> = {
  1: without('άρθρο 2 και 3 του Κώδικα ΦΠΑ', 'articles 2 and 3 of the VAT Code'),
  2: article('5'),
  3: article('17'),
  4: article('18'),
  5: article('21'),
  6: article('24'),
  7: article('27'),
  8: article('29'),
  9: article('30'),
  10: article('31'),
  11: article('32'),
  12: without('άρθρο 32 του Κώδικα ΦΠΑ - Πλοία Ανοικτής Θαλάσσης', 'article 32 of the VAT Code - high-seas vessels'),
  13: without('άρθρο 32.1.γ του Κώδικα ΦΠΑ - Πλοία Ανοικτής Θαλάσσης', 'article 32.1.c of the VAT Code - high-seas vessels'),
  14: article('33'),
  15: article('44'),
  16: article('45'),
  17: article('47'),
  18: article('48'),
  19: article('54'),
  20: included('50'),
  21: included('51'),
  22: included('52'),
  23: included('53'),
  24: article('8'),
  25: without('ΠΟΛ.1029/1995', 'POL.1029/1995'),
  26: without('ΠΟΛ.1167/2015', 'POL.1167/2015'),
  27: { el: 'Λοιπές Εξαιρέσεις ΦΠΑ', en: 'Other VAT exemptions' },
  28: without('άρθρο 29 περ. β\' παρ. 1 του Κώδικα ΦΠΑ (Tax Free)', 'article 29 par. 1(b) of the VAT Code (Tax Free)'),
  29: without('άρθρο 56 του Κώδικα ΦΠΑ (OSS μη ενωσιακό καθεστώς)', 'article 56 of the VAT Code (OSS non-Union scheme)'),
  30: without('άρθρο 57 του Κώδικα ΦΠΑ (OSS ενωσιακό καθεστώς)', 'article 57 of the VAT Code (OSS Union scheme)'),
  31: without('άρθρο 58 του Κώδικα ΦΠΑ (IOSS)', 'article 58 of the VAT Code (IOSS)'),
};

/**
 * The line printed under a 0 % line: the cause's number (as the record carries it) and its
 * text. A number outside the table (a later AADE code) prints as its number alone.
 */
export function exemptionNote(category: number): Localized {
  const cause = VAT_EXEMPTION_CAUSES[category];
  if (!cause) return { el: `Αιτία εξαίρεσης ΦΠΑ ${category}`, en: `VAT exemption cause ${category}` };
  return { el: `Αιτία εξαίρεσης ΦΠΑ ${category}: ${cause.el}`, en: `VAT exemption cause ${category}: ${cause.en}` };
}
