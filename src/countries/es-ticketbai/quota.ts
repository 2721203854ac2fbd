/**
 * The quotas of a TicketBAI `DetalleIVA`: `CuotaImpuesto` and `CuotaRecargoEquivalencia`.
 *
 * The request's lines carry their tax rounded each on its own (half up, the core's rule), and
 * a DetalleIVA sums the lines of one rate. The Haciendas Forales check each quota against its
 * base × rate: Araba 10-74 (IVA) and 10-77 (recargo de equivalencia), "la cuota … tiene que
 * estar bien calculada", which the Araba integrator's validator (`TbaiValidation`, quoting
 * Araba's v13 list) applies as |quota − round(base × rate / 100)| ≤ 0.01; Gipuzkoa refuses a
 * surcharge quota that does not match its base and rate (OCA l10n-spain issue 3045: "La Cuota
 * de recargo de equivalencia tiene un valor incorrecto para los campos Tipo recargo y Base
 * imponible suministrados"). Many lines rounding the same way drift past that: five lines of
 * 0.12 at 21 % carry 0.03 each, 0.15 in all, where 0.60 × 21 % = 0.126 → 0.13.
 *
 * So the quota is the lines' sum while it is within 0.01 of the rounded product (every
 * invoice so far, every golden file, keeps its bytes). Beyond, the record splits what the
 * lines charged again into base and quota (`detalleAmounts`, below: what xml.ts writes), so
 * that the breakdown still adds up to the total and the receipt prints the same figures;
 * `detalleQuota` (the rounded product beside the lines' net, session 26) is its fallback.
 * The alternative, a 400, would refuse ordinary tickets the client cannot fix (the core
 * computes each line's tax), short of merging lines.
 */

/**
 * The quota of `base` (minor units, unsigned) at `rate` percent (at most 2 decimals,
 * Tipo3.2Type): `linesQuota` (the lines' own quotas summed) when within one cent of
 * round-half-up(base × rate / 100), else that rounded product. Integer arithmetic.
 */
export function detalleQuota(base: number, rate: number, linesQuota: number): number {
  const exact = BigInt(base) * BigInt(Math.round(rate * 100)); // the quota in minor units × 10,000
  const product = Number((exact + 5_000n) / 10_000n);
  return Math.abs(linesQuota - product) <= 1 ? linesQuota : product;
}

/** One DetalleIVA's amounts, minor units, unsigned: base, quota and (with a surcharge rate) the surcharge's quota. */
export interface DetalleAmounts {
  base: number;
  quota: number;
  surcharge: number;
}

/** round-half-up(amount × rate / 100), rate in percent with at most 2 decimals; minor units, unsigned. */
const percentOf = (amount: number, rate: number): number =>
  Number((BigInt(amount) * BigInt(Math.round(rate * 100)) + 5_000n) / 10_000n);

/**
 * The amounts of one DetalleIVA whose lines were each rounded on their own: `net`, `tax`
 * and `surcharge` are the lines' sums at `rate` (and `surchargeRate`, percent).
 *
 * - While every quota is within one cent of round(net × rate) (Araba 10-74, 10-77; ./quota.ts
 *   above), the lines' sums as they are: the record states what the receipt prints.
 * - Beyond, what the customer paid for those lines (net + tax + surcharge, the lines'
 *   ImporteTotal and their share of ImporteTotalFactura) is split again into base and
 *   quotas, as a price with VAT included is: base ≈ paid × 100 / (100 + rate + surcharge
 *   rate), the quota its rate of that base, the surcharge the rest, taking the nearest base
 *   for which each quota stays within one cent of its base × rate. The cents the lines'
 *   rounding charged beyond the tax due are consideration, so part of the base (Ley
 *   37/1992 art. 78.1: the base is the whole consideration; the Normas Forales del IVA
 *   repeat it), not tax. So base + quotas = what was paid, to the cent: the breakdown adds up
 *   to ImporteTotalFactura and to the lines (Araba 10-72, 10-78, 10-79), and the receipt
 *   prints these same amounts (./receipt.ts).
 *   (Session 26's `detalleQuota` wrote round(net × rate) beside the lines' net, so the
 *   breakdown fell short of the total by the drift and the receipt printed other figures.)
 */
export function detalleAmounts(net: number, rate: number, tax: number, surchargeRate: number | undefined, surcharge: number): DetalleAmounts {
  const coherent = (base: number, quota: number, r: number) => Math.abs(quota - percentOf(base, r)) <= 1;
  if (coherent(net, tax, rate) && (surchargeRate === undefined || coherent(net, surcharge, surchargeRate))) return { base: net, quota: tax, surcharge };
  const paid = net + tax + surcharge;
  const hundredths = 10_000 + Math.round(rate * 100) + Math.round((surchargeRate ?? 0) * 100);
  const start = Number((2n * BigInt(paid) * 10_000n + BigInt(hundredths)) / (2n * BigInt(hundredths)));
  for (const step of [0, -1, 1, -2, 2, -3, 3]) {
    const base = start + step;
    if (base < 0 || base > paid) continue;
    if (surchargeRate === undefined) {
      const quota = paid - base;
      if (coherent(base, quota, rate)) return { base, quota, surcharge: 0 };
      continue;
    }
    const quota = percentOf(base, rate);
    const rest = paid - base - quota;
    if (rest >= 0 && coherent(base, rest, surchargeRate)) return { base, quota, surcharge: rest };
  }
  // Not reached for any rate of ../es/tax.ts (a base within a cent always exists); kept
  // so that an unforeseen rate still gives a quota within a cent, as session 26 wrote it.
  return { base: net, quota: detalleQuota(net, rate, tax), surcharge: surchargeRate === undefined ? surcharge : detalleQuota(net, surchargeRate, surcharge) };
}
