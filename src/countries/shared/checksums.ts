/**
 * Check-digit algorithms shared by more than one country.
 */

/**
 * Luhn (ISO/IEC 7812-1 mod 10): doubling every second digit from the right, the sum of
 * all digits is a multiple of 10. Used by the French SIREN/SIRET (INSEE) and, in the
 * same form, by the Italian partita IVA (DPR 633/1972, art. 35).
 * `digits` must contain only 0-9.
 */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}
