import { describe, it, expect } from 'vitest';
import { isValidSpanishNif } from './nif.ts';

describe('isValidSpanishNif', () => {
  // 12345678 mod 23 = 14 → Z; X1234567: 01234567 mod 23 = 19 → L;
  // B1234567: odd positions doubled 2+6+1+5 = 14, even 2+4+6 = 12, 26 → control 4.
  // B64717838, J99216582, 54362315K, X5253868R, A13585625: examples published with
  // python-stdnum's es.nif / es.cif modules (an independent implementation).
  it.each([
    '12345678Z',
    '54362315K',
    'X1234567L',
    'X5253868R',
    'Y1234567X',
    'Z1234567R',
    'K1234567L',
    'B12345674',
    'B64717838',
    'J99216582',
    'A13585625',
    'Q2826000H', // entity with the letter form of the control character
    'P2807900B',
  ])('accepts %s', (nif) => {
    expect(isValidSpanishNif(nif)).toBe(true);
  });

  it.each([
    ['12345678A', 'wrong DNI letter'],
    ['X1234567M', 'wrong NIE letter'],
    ['B12345675', 'wrong entity control digit'],
    ['J99216583', 'wrong entity control digit'],
    ['Q2826000I', 'wrong entity control letter'],
    ['O1234567L', 'O is not an entity type'],
    ['12345678z', 'lowercase'],
    ['1234567Z', 'too short'],
    ['123456789Z', 'too long'],
    ['ESB12345674', 'VAT prefix'],
    ['B-1234567-4', 'separators'],
    ['', 'empty'],
  ])('refuses %s (%s)', (nif) => {
    expect(isValidSpanishNif(nif)).toBe(false);
  });
});
