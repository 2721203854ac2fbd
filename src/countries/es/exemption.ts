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
 * so an IVA sale takes only E1–E6 (the same code works in every system a location may move
 * to).
 *
 * IGIC and IPSI (./tax.ts; VERI*FACTU only): VERI*FACTU writes the exemption of an IGIC
 * sale as of an IVA one, with `Impuesto` 03, and its cause from AEAT's list L10B, "motivo
 * exenta para desgloses donde el impuesto de aplicación es el IGIC": E1–E8 (AEAT
 * DsRegistroVeriFactu.xlsx, as marcchacon/verifactu-rb `verifactu_config.rb` encodes it
 * beside L10 = E1–E6, "version 1.0.9 del documento de validación"; OCA
 * l10n_es_igic_verifactu_oca sends E7 for the exemption of the small-business regime, REPEP).
 * An IPSI sale (`Impuesto` 02) has no list of its own: it takes L10's E1–E6.
 */
import { badRequest } from '../../core/errors.ts';
import type { TransactionDraft, TxLine } from '../types.ts';
import { metaString, optionalChoice, type Metadata } from '../shared/metadata-fields.ts';
import { TAX_NAMES, type SpanishTax } from './tax.ts';

/** IVA's causes (AEAT list L10), the only ones TicketBAI and SII carry. */
export const EXEMPTION_CODES = ['E1', 'E2', 'E3', 'E4', 'E5', 'E6'] as const;
export type ExemptionCode = (typeof EXEMPTION_CODES)[number];

/** IGIC's causes in VERI*FACTU (AEAT list L10B): L10's and E7, E8. */
export const IGIC_EXEMPTION_CODES = [...EXEMPTION_CODES, 'E7', 'E8'] as const;
/** Any cause a VERI*FACTU `OperacionExenta` may carry (OperacionExentaType: E1–E8). */
export type AnyExemptionCode = (typeof IGIC_EXEMPTION_CODES)[number];

/** The causes a sale of the location's tax may name: L10B for IGIC, L10 otherwise. */
export const exemptionCodesFor = (tax: SpanishTax): readonly AnyExemptionCode[] => (tax === 'igic' ? IGIC_EXEMPTION_CODES : EXEMPTION_CODES);

export const EXEMPTION_CODE_INVALID = `metadata.exemption_code must be one of ${EXEMPTION_CODES.join(', ')}`;
/** The 400 of an unknown cause: IVA's message is the one it always was; IGIC names its list. */
export const exemptionCodeInvalid = (tax: SpanishTax): string =>
  tax === 'igic' ? `metadata.exemption_code must be one of ${IGIC_EXEMPTION_CODES.join(', ')} (IGIC exemption causes, AEAT list L10B)` : EXEMPTION_CODE_INVALID;
export const EXEMPTION_WITHOUT_EXEMPT_LINE = 'metadata.exemption_code applies to the lines with tax_rate 0, and this transaction has none';

/** Validation of an IVA sale (TicketBAI, SII): `readTaxExemptionCode` with IVA's causes, E1–E6. */
export const readExemptionCode = (tx: TransactionDraft, meta: Metadata): ExemptionCode | undefined =>
  readTaxExemptionCode(tx, meta, 'iva') as ExemptionCode | undefined;

/** Validation: the code if given, among the location's tax's causes (`exemptionCodesFor`), and at least one line it applies to. */
export function readTaxExemptionCode(tx: TransactionDraft, meta: Metadata, tax: SpanishTax): AnyExemptionCode | undefined {
  const code = optionalChoice(meta, 'exemption_code', exemptionCodesFor(tax), exemptionCodeInvalid(tax));
  if (code !== undefined && !tx.items.some((l) => l.tax_rate === 0)) throw badRequest(EXEMPTION_WITHOUT_EXEMPT_LINE);
  return code;
}

/** The stored (validated) code of a transaction, for the builders. */
export const exemptionCodeOf = (tx: TransactionDraft): ExemptionCode | undefined =>
  EXEMPTION_CODES.find((c) => c === metaString(tx, 'exemption_code'));

/** The stored code of a VERI*FACTU transaction, E7 and E8 included (validated against the location's tax). */
export const anyExemptionCodeOf = (tx: TransactionDraft): AnyExemptionCode | undefined =>
  IGIC_EXEMPTION_CODES.find((c) => c === metaString(tx, 'exemption_code'));

/** Whether a line is reported exempt: the transaction names a cause and the line is at 0 %. */
export const isExemptLine = (line: TxLine, code: AnyExemptionCode | undefined): boolean => code !== undefined && line.tax_rate === 0;

/** The base of the exempt lines (minor units, unsigned), or null when nothing is exempt. */
export function exemptBase(items: readonly TxLine[], code: AnyExemptionCode | undefined): number | null {
  const exempt = items.filter((l) => isExemptLine(l, code));
  return exempt.length === 0 ? null : exempt.reduce((sum, l) => sum + l.total_amount - l.tax_amount, 0);
}

/** The lines that stay taxed (S1) beside the exempt ones. */
export const taxedLines = (items: readonly TxLine[], code: AnyExemptionCode | undefined): TxLine[] =>
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

/**
 * The legend of an exempt operation of the location's tax. IVA: as above. IGIC and IPSI:
 * "Operación exenta de IGIC" without an article. RD 1619/2012 art. 6.1.j accepts the
 * "indicación de que la operación está exenta"; the articles of Ley 20/1991 / Ley 4/2012
 * each L10B code stands for were not established from a source (AEAT's list text), and
 * citing a LIVA article for an IGIC sale would be wrong.
 */
export function exemptionLegendFor(code: AnyExemptionCode, tax: SpanishTax): string {
  if (tax === 'iva') return EXEMPTION_CODES.includes(code as ExemptionCode) ? exemptionLegend(code as ExemptionCode, 'Ley 37/1992') : 'Operación exenta de IVA';
  return `Operación exenta de ${TAX_NAMES[tax]}`;
}
