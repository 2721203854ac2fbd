/**
 * Portuguese VAT as SAF-T (PT) writes it: the fiscal space (TaxCountryRegion), the rate's
 * code in that space, and the exemption of a 0 % line.
 *
 * Fiscal spaces and their rates (reduced / intermediate / normal):
 * - PT, the mainland: 6 / 13 / 23 (CIVA art. 18).
 * - PT-AC, the Azores: 4 / 9 / 16 since 1 July 2021 (Decreto Legislativo Regional
 *   15-A/2021/A; AT Ofício Circulado 25045/2024 lists them).
 * - PT-MA, Madeira: 4 (5 until 30 September 2024) / 12 / 22 (Lei 14-A/2012; the regional
 *   budget lowered the reduced rate to 4 % from 1 October 2024, same Ofício Circulado).
 *   Both 4 and 5 are taken as the reduced rate, so documents of either period read right.
 * A rate that is not one of its space's is written with code OUT ("outros") and its
 * percentage. Sources: the laws named, as summarised by AT's Ofício Circulado 25045/2024
 * and the Odoo l10n_pt tax data [secondary].
 *
 * Exemptions (TaxExemptionCode, TaxExemptionReason): the AT's table of exemption reason
 * codes ("Códigos de motivo de isenção", M01-M99) [secondary: the codes and legal
 * provisions as commonly published by certified-software producers]. A 0 % line carries
 * the code its line gives (`items[].tax_exemption_code`), else the document's
 * (`metadata.tax_exemption_code`), else M99 ("Não sujeito ou não tributado"): the request
 * says nothing of why a line is exempt, and M99 is the AT's residual code. The reason
 * written is the legal provision of the code (at most 60 characters, the XSD's limit).
 */

export const TAX_REGIONS = ['PT', 'PT-AC', 'PT-MA'] as const;
export type TaxRegion = (typeof TAX_REGIONS)[number];

export type TaxCode = 'RED' | 'INT' | 'NOR' | 'ISE' | 'OUT';

const RATES: Readonly<Record<TaxRegion, ReadonlyArray<readonly [number, TaxCode]>>> = {
  PT: [[6, 'RED'], [13, 'INT'], [23, 'NOR']],
  'PT-AC': [[4, 'RED'], [9, 'INT'], [16, 'NOR']],
  'PT-MA': [[4, 'RED'], [5, 'RED'], [12, 'INT'], [22, 'NOR']],
};

const DESCRIPTION: Readonly<Record<TaxCode, string>> = {
  RED: 'Taxa reduzida',
  INT: 'Taxa intermédia',
  NOR: 'Taxa normal',
  ISE: 'Isento',
  OUT: 'Outra taxa',
};

/** The code of a rate (percent) in a fiscal space. */
export function taxCodeOf(rate: number, region: TaxRegion): TaxCode {
  if (rate === 0) return 'ISE';
  return RATES[region].find(([r]) => r === rate)?.[1] ?? 'OUT';
}

/** The TaxTable description of a rate in a fiscal space. */
export function taxDescriptionOf(code: TaxCode, percentage: string): string {
  return code === 'OUT' ? `Outra taxa (${percentage} %)` : DESCRIPTION[code];
}

/** The AT exemption codes and the legal provision each stands for (TaxExemptionReason, ≤ 60 characters). */
export const EXEMPTION_REASONS: Readonly<Record<string, string>> = {
  M01: 'Artigo 16.º, n.º 6 do CIVA',
  M02: 'Artigo 6.º do Decreto-Lei n.º 198/90, de 19 de junho',
  M04: 'Isento artigo 13.º do CIVA',
  M05: 'Isento artigo 14.º do CIVA',
  M06: 'Isento artigo 15.º do CIVA',
  M07: 'Isento artigo 9.º do CIVA',
  M09: 'IVA - não confere direito a dedução',
  M10: 'IVA - regime de isenção',
  M11: 'Regime particular do tabaco',
  M12: 'Regime da margem de lucro - Agências de viagens',
  M13: 'Regime da margem de lucro - Bens em segunda mão',
  M14: 'Regime da margem de lucro - Objetos de arte',
  M15: 'Regime da margem de lucro-Objetos de coleção e antiguidades',
  M16: 'Isento artigo 14.º do RITI',
  M19: 'Outras isenções',
  M20: 'IVA - regime forfetário',
  M21: 'IVA - não confere direito à dedução (ou expressão similar)',
  M25: 'Mercadorias à consignação',
  M26: 'Isenção de IVA com direito à dedução no cabaz alimentar',
  M30: 'IVA - autoliquidação',
  M31: 'IVA - autoliquidação',
  M32: 'IVA - autoliquidação',
  M33: 'IVA - autoliquidação',
  M34: 'IVA - autoliquidação',
  M40: 'IVA - autoliquidação',
  M41: 'IVA - autoliquidação',
  M42: 'IVA - autoliquidação',
  M43: 'IVA - autoliquidação',
  M99: 'Não sujeito ou não tributado',
};

export const EXEMPTION_CODES: readonly string[] = Object.keys(EXEMPTION_REASONS);

/** The default exemption of a 0 % line whose request names none. */
export const DEFAULT_EXEMPTION_CODE = 'M99';

export interface Exemption {
  code: string;
  reason: string;
}

export function exemptionOf(code: string | undefined): Exemption {
  const c = code !== undefined && EXEMPTION_REASONS[code] !== undefined ? code : DEFAULT_EXEMPTION_CODE;
  return { code: c, reason: EXEMPTION_REASONS[c]! };
}
