/**
 * The French company register number (INSEE's SIRENE register): a 9-digit SIREN
 * identifies the company, a 14-digit SIRET (SIREN + 5-digit establishment number) one
 * of its establishments. Both end in a Luhn check digit.
 *
 * INSEE's one exception: the establishments of La Poste (SIREN 356 000 000) have
 * SIRETs numbered past what Luhn allows; theirs are valid when the digit sum is a
 * multiple of 5.
 */
import { luhnValid } from '../shared/checksums.ts';

const LA_POSTE_SIREN = '356000000';

export function isValidSirenOrSiret(value: string): boolean {
  if (/^[0-9]{9}$/.test(value)) return luhnValid(value);
  if (!/^[0-9]{14}$/.test(value)) return false;
  if (!luhnValid(value.slice(0, 9))) return false;
  if (value.startsWith(LA_POSTE_SIREN)) {
    const digitSum = [...value].reduce((sum, c) => sum + Number(c), 0);
    return luhnValid(value) || digitSum % 5 === 0;
  }
  return luhnValid(value);
}
