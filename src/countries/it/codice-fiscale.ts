/**
 * The Italian codice fiscale (DPR 605/1973; DM 23 dicembre 1976, which defines the 16-character
 * code of a natural person and its check character). Two forms:
 * - a natural person's: 6 letters (surname, name), 2 for the year, a month letter, 2 for the
 *   day (+40 for women), 4 for the municipality (a letter and 3 digits), and a check letter.
 *   Where two people would get the same code (omocodia) the Agenzia replaces digits, from the
 *   right, with the letters L M N P Q R S T U V, so any digit position may hold one of them;
 * - a company's or entity's: 11 digits, checked as the partita IVA is (Luhn).
 * SdI refuses a buyer's codice fiscale it does not find valid (NS 00306): the shape and check
 * character catch typing errors; whether the code was ever issued only SdI's registry knows.
 */
import { partitaIvaCheckDigitValid } from './partita-iva.ts';

const DIGIT = '[0-9LMNPQRSTUV]';
const PERSON = new RegExp(`^[A-Z]{6}${DIGIT}{2}[ABCDEHLMPRST]${DIGIT}{2}[A-Z]${DIGIT}{3}[A-Z]$`);

/** The values of the characters in odd positions (1st, 3rd, … 15th), DM 23/12/1976 table; a digit counts as the letter in its place (0 = A). */
const ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];

/** A character's index: 0-9 for digits, 0-25 for letters. */
const index = (c: string): number => (c >= '0' && c <= '9' ? c.charCodeAt(0) - 48 : c.charCodeAt(0) - 65);

/** The check character of a natural person's first 15 characters. */
function checkCharacter(first15: string): string {
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const v = index(first15[i]!);
    sum += i % 2 === 0 ? ODD[v]! : v;
  }
  return String.fromCharCode(65 + (sum % 26));
}

/** A natural person's 16-character code with its check character, or an entity's 11 digits with its check digit (upper case expected). */
export function codiceFiscaleValid(value: string): boolean {
  if (/^[0-9]{11}$/.test(value)) return partitaIvaCheckDigitValid(value);
  return PERSON.test(value) && checkCharacter(value.slice(0, 15)) === value[15];
}
