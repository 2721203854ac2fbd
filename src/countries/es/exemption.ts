/**
 * VAT-exempt sales in the three Spanish records (VERI*FACTU, TicketBAI, SII).
 *
 * An exempt operation is not a sale taxed at 0 %: the records report it in a breakdown of
 * its own with the legal cause of the exemption, and no rate or quota:
 * - VERI*FACTU: `DetalleDesglose` with `OperacionExenta` instead of `CalificacionOperacion`
 *   S1, no `TipoImpositivo` or `CuotaRepercutida` (SuministroInformacion.xsd DetalleType;
 *   AEAT error 1196: the two exclude each other);
 * - TicketBAI: `Sujeta/Exenta/DetalleExenta` (`CausaExencion`, `BaseImponible`) beside or
 *   instead of `Sujeta/NoExenta` (ticketbaiv1-2-2.xsd ExentaType);
 * - SII: `Sujeta/Exenta/DetalleExenta` the same way (SuministroInformacion.xsd SujetaType).
 * Reporting an exempt sale as S1 at 0 % is wrong, and AEAT refuses a rate that does not
 * exist on the invoice's date.
 *
 * The request model has no per-line cause, so the transaction names one:
 * `metadata.exemption_code`, and it applies to the lines with `tax_rate` 0 (whose tax is 0
 * by construction); the other lines stay taxed (S1). Codes (the AEAT L10 list, the same in
 * the Basque Normas Forales): E1 Ley 37/1992 art. 20 (health, education, insurance,
 * finance, letting of dwellings…), E2 art. 21 (exports), E3 art. 22 (operations treated as
 * exports), E4 arts. 23 and 24 (free zones, customs regimes), E5 art. 25 (intra-EU
 * supplies), E6 other. VERI*FACTU's schema also lists E7 and E8; TicketBAI and SII do not,
 * so only E1–E6 are taken (the same code works in every system a location may move to).
 */
import { badRequest } from '../../core/errors.ts';
import type { TransactionDraft, TxLine } from '../types.ts';
import { metaString, optionalChoice, type Metadata } from '../shared/metadata-fields.ts';

export const EXEMPTION_CODES = ['E1', 'E2', 'E3', 'E4', 'E5', 'E6'] as const;
export type ExemptionCode = (typeof EXEMPTION_CODES)[number];

export const EXEMPTION_CODE_INVALID = `metadata.exemption_code must be one of ${EXEMPTION_CODES.join(', ')}`;
export const EXEMPTION_WITHOUT_EXEMPT_LINE = 'metadata.exemption_code applies to the lines with tax_rate 0, and this transaction has none';

/**
 * The causes are IVA's (LIVA arts. 20-25; the E-codes of AEAT's list L10 and the receipt's
 * legend cite them). An IGIC or IPSI location (../es/tax.ts) has exemptions of its own law,
 * with other articles (VERI*FACTU's list L10B for IGIC), which this service does not write.
 */
export const exemptionNotForTax = (taxName: string): string =>
  `metadata.exemption_code applies to IVA sales: this location charges ${taxName} (country_config.tax), whose exemptions the records do not carry`;

/** Validation: the code if given (a known cause, and at least one line it applies to). */
export function readExemptionCode(tx: TransactionDraft, meta: Metadata): ExemptionCode | undefined {
  const code = optionalChoice(meta, 'exemption_code', EXEMPTION_CODES, EXEMPTION_CODE_INVALID);
  if (code !== undefined && !tx.items.some((l) => l.tax_rate === 0)) throw badRequest(EXEMPTION_WITHOUT_EXEMPT_LINE);
  return code;
}

/** The stored (validated) code of a transaction, for the builders. */
export const exemptionCodeOf = (tx: TransactionDraft): ExemptionCode | undefined =>
  EXEMPTION_CODES.find((c) => c === metaString(tx, 'exemption_code'));

/** Whether a line is reported exempt: the transaction names a cause and the line is at 0 %. */
export const isExemptLine = (line: TxLine, code: ExemptionCode | undefined): boolean => code !== undefined && line.tax_rate === 0;

/** The base of the exempt lines (minor units, unsigned), or null when nothing is exempt. */
export function exemptBase(items: readonly TxLine[], code: ExemptionCode | undefined): number | null {
  const exempt = items.filter((l) => isExemptLine(l, code));
  return exempt.length === 0 ? null : exempt.reduce((sum, l) => sum + l.total_amount - l.tax_amount, 0);
}

/** The lines that stay taxed (S1) beside the exempt ones. */
export const taxedLines = (items: readonly TxLine[], code: ExemptionCode | undefined): TxLine[] =>
  items.filter((l) => !isExemptLine(l, code));

/*
 * What the invoice must say of an exempt operation (RD 1619/2012 art. 6.1.j: "referencia a
 * las disposiciones correspondientes de la Directiva 2006/112/CE, de 28 de noviembre, o a
 * los preceptos correspondientes de la Ley del Impuesto o indicación de que la operación
 * está exenta"). The Basque records cite the same articles of their Norma Foral del IVA.
 */
const ARTICLES: Record<ExemptionCode, string> = {
  E1: 'art. 20',
  E2: 'art. 21',
  E3: 'art. 22',
  E4: 'arts. 23 y 24',
  E5: 'art. 25',
  E6: '',
};

/** The receipt's legend for an exempt operation: the article of the VAT law, when the code names one. */
export function exemptionLegend(code: ExemptionCode, law: 'Ley 37/1992' | 'Norma Foral del IVA'): string {
  const article = ARTICLES[code];
  return article === '' ? 'Operación exenta de IVA' : `Operación exenta de IVA (${article} ${law})`;
}
