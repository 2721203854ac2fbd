/**
 * Money: integer minor units, never floats (DECISIONS "Money and the transaction request").
 *
 * Quantities and tax rates may be fractional (1.5 kg, 5.5 %). They are turned into
 * scaled integers from their decimal text, so `1.1 × 3` is exactly 3.3, and products are
 * computed with BigInt and rounded once, half up, at the end.
 */

/** A non-negative decimal as an integer numerator over 10^scale. */
export interface Decimal {
  units: bigint;
  scale: number;
}

export const MAX_DECIMALS = 6;

/** Parses a JS number (as given in JSON) into an exact decimal; null if not finite or too precise. */
export function toDecimal(n: number): Decimal | null {
  if (!Number.isFinite(n)) return null;
  // Shortest round-trip representation: what the client wrote in its JSON.
  let text = String(n);
  if (/e/i.test(text)) {
    text = n.toFixed(MAX_DECIMALS + 1).replace(/0+$/, '').replace(/\.$/, '');
  }
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) return null;
  const frac = m[3] ?? '';
  if (frac.length > MAX_DECIMALS) return null;
  const units = BigInt(m[2]! + frac) * (m[1] ? -1n : 1n);
  return { units, scale: frac.length };
}

/** round-half-up(numerator / denominator) for non-negative numerators; half away from zero otherwise. */
export function divRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < 0n !== denominator < 0n;
  const n = numerator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  const q = (n * 2n + d) / (d * 2n);
  return negative ? -q : q;
}

/** round-half-up(quantity × unitPrice) in minor units. */
export function lineNet(quantity: Decimal, unitPrice: number): number {
  return Number(divRoundHalfUp(quantity.units * BigInt(unitPrice), 10n ** BigInt(quantity.scale)));
}

/** round-half-up(quantity × unitPrice × taxRate / 100) in minor units (DECISIONS: line tax_amount). */
export function lineTax(quantity: Decimal, unitPrice: number, taxRate: Decimal): number {
  const numerator = quantity.units * BigInt(unitPrice) * taxRate.units;
  const denominator = 10n ** BigInt(quantity.scale + taxRate.scale) * 100n;
  return Number(divRoundHalfUp(numerator, denominator));
}

/** True for a safe integer: an amount in minor units. */
export const isMinorUnits = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n);
