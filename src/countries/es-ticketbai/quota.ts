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
 * invoice so far, every golden file, keeps its bytes) and the rounded product beyond (as
 * it-sdi `summaryTax` writes the FatturaPA summary, docs/decisions.md "FatturaPA VAT
 * summary"). The alternative, a 400, would refuse ordinary tickets the client cannot fix
 * (the core computes each line's tax), short of merging lines.
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
