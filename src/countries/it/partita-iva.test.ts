import { describe, it, expect } from 'vitest';
import { isPartitaIvaShape, partitaIvaCheckDigitValid } from './partita-iva.ts';

describe('partita IVA', () => {
  // Check digits computed with the Luhn rule: 0123456789 → 7, 1234567890 → 3.
  it.each(['01234567897', '12345678903', '00743110157'])('accepts %s', (p) => {
    expect(partitaIvaCheckDigitValid(p)).toBe(true);
  });
  it.each(['01234567890', '12345678901', '00000000000', '1234567890', 'IT01234567897'])('refuses %s', (p) => {
    expect(partitaIvaCheckDigitValid(p)).toBe(false);
  });
  it('shape is exactly 11 digits', () => {
    expect(isPartitaIvaShape('01234567890')).toBe(true);
    expect(isPartitaIvaShape('0123456789')).toBe(false);
    expect(isPartitaIvaShape('0123456789A')).toBe(false);
  });
});
