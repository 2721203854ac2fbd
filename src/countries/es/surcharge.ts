/**
 * Recargo de equivalencia (Ley 37/1992 arts. 154-163): a retailer in this regime neither
 * charges nor deducts IVA on what it resells; its suppliers charge it, on every delivery of
 * goods to it, a surcharge on top of the IVA (art. 156), at the rate art. 161 pairs with
 * each IVA rate, and pay it in with their IVA. The invoice states it apart, and each record
 * carries it beside the IVA of its breakdown line: VERI*FACTU `DetalleDesglose`, TicketBAI
 * `DetalleIVA`, SII `DetalleIVA`, each with `TipoRecargoEquivalencia` and
 * `CuotaRecargoEquivalencia`.
 *
 * The request names it per line, as the core's line surcharge (`SurchargeLineField`):
 * `surcharge_rate` (percent) and `surcharge_amount` (minor units, computed and rounded as
 * `tax_amount` is, checked when given). The retailer is the customer of the whole sale, but
 * a sale may mix goods (surcharged) and services (not: art. 154 names deliveries of goods),
 * so the rate is per line; the amount is part of what the customer pays (`total_amount`),
 * not of the line's `total_amount` (net + IVA).
 */
import { badRequest } from '../../core/errors.ts';
import { RateListError } from '../../core/transaction-request.ts';
import type { LineField, TransactionDraft, TxLine } from '../types.ts';
import { type AnyExemptionCode, isExemptLine } from './exemption.ts';
import { TAX_NAMES, ratesText, type SpanishTax } from './tax.ts';

/** The line surcharge the three Spanish systems declare (FiscalSystem.lineFields). */
export const SURCHARGE_LINE_FIELD: LineField = { name: 'surcharge_rate', type: 'surcharge', amount: 'surcharge_amount' };

/**
 * The surcharge rates AEAT accepts with each IVA rate (AEAT's VERI*FACTU validation
 * document, as marcchacon/verifactu-rb `validar_tipo_recargo_equivalencia` implements it;
 * the SII and the Basque records take the same):
 * - 21 → 5.2 (LIVA art. 161.1º), or 1.75 for tobacco (art. 161.4º);
 * - 10 → 1.4 (art. 161.2º); 4 → 0.5 (art. 161.3º);
 * - 5 → 0.62, or 0.5 (the temporary 5 % rates of 2022-2024: food, energy);
 * - 7.5 → 1 and 2 → 0.26 (the temporary food rates of late 2024);
 * - 0 → 0 (the temporary 0 % food rate of 2023-2024 had a 0 % surcharge).
 */
export const SURCHARGE_RATES: ReadonlyMap<number, readonly number[]> = new Map([
  [21, [5.2, 1.75]],
  [10, [1.4]],
  [7.5, [1]],
  [5, [0.62, 0.5]],
  [4, [0.5]],
  [2, [0.26]],
  [0, [0]],
]);

/** A line's surcharge rate and amount (minor units, unsigned), when it has one. */
export function surchargeOf(line: TxLine): { rate: number; amount: number } | undefined {
  const rate = line.surcharge_rate;
  if (typeof rate !== 'number') return undefined;
  const amount = line.surcharge_amount;
  return { rate, amount: typeof amount === 'number' ? amount : 0 };
}

/** Whether any line of the transaction carries a surcharge. */
export const hasSurcharge = (tx: TransactionDraft): boolean => tx.items.some((l) => surchargeOf(l) !== undefined);

/**
 * Validation, at creation and preview: a surcharge only with IVA (the regime is IVA's; IGIC
 * and IPSI have none on sales), never on an exempt line (no IVA to surcharge; AEAT 1238),
 * and at the rate paired with the line's IVA rate. The amount was computed (or checked) by
 * the core, as the line's tax.
 */
export function checkSurcharges(tx: TransactionDraft, tax: SpanishTax, exemption: AnyExemptionCode | undefined): void {
  tx.items.forEach((l, i) => {
    const s = surchargeOf(l);
    if (s === undefined) return;
    if (tax !== 'iva') {
      throw badRequest(
        `items[${i}].surcharge_rate is not allowed: recargo de equivalencia is charged with IVA only (Ley 37/1992 arts. 154-163), and this location charges ${TAX_NAMES[tax]} (country_config.tax)`,
      );
    }
    if (isExemptLine(l, exemption)) {
      throw badRequest(`items[${i}].surcharge_rate is not allowed on an exempt line (metadata.exemption_code): an exempt operation carries no IVA and no recargo de equivalencia`);
    }
    const allowed = SURCHARGE_RATES.get(l.tax_rate) ?? [];
    if (!allowed.includes(s.rate)) {
      throw new RateListError((rate) =>
        `items[${i}].surcharge_rate must be ${ratesText(allowed, rate)} with tax_rate ${rate(l.tax_rate)} (recargo de equivalencia, Ley 37/1992 art. 161)`);
    }
  });
}

/** Lines grouped per breakdown line of the records: the same rate and the same surcharge (or none). */
export const breakdownKey = (l: TxLine): string => `${l.tax_rate}|${surchargeOf(l)?.rate ?? ''}`;

/** One breakdown line of the records: a rate (and surcharge rate, or none), its lines summed (minor units, unsigned). */
export interface BreakdownGroup {
  rate: number;
  surchargeRate: number | undefined;
  base: number;
  tax: number;
  surcharge: number;
}

/**
 * The lines summed per breakdown line (`breakdownKey`), in the order each first appears:
 * what VERI*FACTU's DetalleDesglose, TicketBAI's and SII's DetalleIVA each write (base =
 * the line's total less its tax).
 */
export function breakdownGroups(items: Iterable<TxLine>): BreakdownGroup[] {
  const groups = new Map<string, BreakdownGroup>();
  for (const l of items) {
    const s = surchargeOf(l);
    const key = breakdownKey(l);
    const g = groups.get(key) ?? { rate: l.tax_rate, surchargeRate: s?.rate, base: 0, tax: 0, surcharge: 0 };
    g.base += l.total_amount - l.tax_amount;
    g.tax += l.tax_amount;
    g.surcharge += s?.amount ?? 0;
    groups.set(key, g);
  }
  return [...groups.values()];
}

/** How many breakdown lines the records will carry (each system has a maximum). */
export const breakdownCount = (items: readonly TxLine[]): number => new Set(items.map(breakdownKey)).size;
