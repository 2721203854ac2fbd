/**
 * Spanish NIF (Número de Identificación Fiscal) check, for a Spanish location's tax_id.
 *
 * Three shapes, all 9 characters (Orden EHA/451/2008 and RD 1065/2007):
 * - DNI: 8 digits + control letter = TABLE[number mod 23];
 * - NIE (foreigners): X, Y or Z + 7 digits + control letter; X/Y/Z count as 0/1/2 in
 *   front of the digits; K, L, M (Spaniards without DNI) use the same letter on the
 *   7 digits;
 * - legal entities (the former CIF): an entity-type letter + 7 digits + a control
 *   character computed like Luhn over the 7 digits, written as a digit or as the
 *   letter 'JABCDEFGHI'[digit]. Sources disagree on which entity types use which
 *   form, so both are accepted (as AEAT's own validator does).
 * Only uppercase, no separators, no `ES` VAT prefix: this is the value sent as
 * <NIF> to the authority, so it is checked exactly as it will be sent.
 */
const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
const ENTITY_LETTERS = 'ABCDEFGHJNPQRSUVW';
const ENTITY_CONTROL_LETTERS = 'JABCDEFGHI';

const dniLetter = (digits: string): string => DNI_LETTERS[Number(digits) % 23] ?? '';

function entityControlDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(i) - 48;
    // Positions 1, 3, 5, 7 (odd, counting from 1) are doubled and their digits summed.
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

export function isValidSpanishNif(value: string): boolean {
  if (!/^[0-9A-Z][0-9]{7}[0-9A-Z]$/.test(value)) return false;
  const first = value.charAt(0);
  const middle = value.slice(1, 8);
  const control = value.charAt(8);

  if (/[0-9]/.test(first)) return control === dniLetter(value.slice(0, 8));
  const nieIndex = 'XYZ'.indexOf(first);
  if (nieIndex >= 0) return control === dniLetter(`${nieIndex}${middle}`);
  if ('KLM'.includes(first)) return control === dniLetter(middle);
  if (ENTITY_LETTERS.includes(first)) {
    const digit = entityControlDigit(middle);
    return control === String(digit) || control === ENTITY_CONTROL_LETTERS[digit];
  }
  return false;
}
