/**
 * Italian partita IVA (VAT number): 11 digits, the last a check digit computed with
 * the Luhn algorithm over the first 10 (DPR 633/1972 art. 35 and the Agenzia delle
 * Entrate's specification). All zeros passes Luhn but is never issued.
 */
import { luhnValid } from '../shared/checksums.ts';

export const isPartitaIvaShape = (value: string): boolean => /^[0-9]{11}$/.test(value);

export const partitaIvaCheckDigitValid = (value: string): boolean =>
  isPartitaIvaShape(value) && value !== '00000000000' && luhnValid(value);
