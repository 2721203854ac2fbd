import { describe, expect, it } from 'vitest';
import { codiceFiscaleValid } from './codice-fiscale.ts';

describe('codiceFiscaleValid (DM 23/12/1976)', () => {
  it('a natural person\'s code: shape and check character', () => {
    for (const cf of ['RSSMRA85T10A562S', 'RSSMRA80A01H501U', 'MRTMTT25D09F205Z']) expect(codiceFiscaleValid(cf)).toBe(true);
    // Another check character, a month letter that is none, a short code.
    for (const cf of ['RSSMRA85T10A562T', 'RSSMRA85Z10A562S', 'RSSMRA85T10A562']) expect(codiceFiscaleValid(cf)).toBe(false);
  });

  it('omocodia: a digit replaced by its letter keeps the shape, with its own check character', () => {
    // RSSMRA85T10A562S with the last digit 2 → N (the omocodia letter of 2): the check character moves.
    const omocode = 'RSSMRA85T10A56N';
    const valid = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'].filter((c) => codiceFiscaleValid(omocode + c));
    expect(valid).toHaveLength(1);
  });

  it('an entity\'s 11 digits: the partita IVA check digit', () => {
    expect(codiceFiscaleValid('01234567897')).toBe(true);
    expect(codiceFiscaleValid('01234567890')).toBe(false);
    expect(codiceFiscaleValid('00000000000')).toBe(false);
  });
});
