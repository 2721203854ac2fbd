import { describe, expect, it } from 'vitest';
import { latin } from './latin.ts';

describe('latin (Italian XML free text)', () => {
  it('keeps Latin-1, writes the everyday characters outside it plainly, marks the rest with ?', () => {
    expect(latin('Caffè à la crème – 2,50 €', 100)).toBe('Caffè à la crème - 2,50 EUR');
    expect(latin('“Pizza” ‘Margherita’ — promo…', 100)).toBe('"Pizza" \'Margherita\' - promo...');
    expect(latin('Čevapčići Škoda œuvre', 100)).toBe('Cevapcici Skoda oeuvre');
    expect(latin('Ελληνικά 😀', 100)).toBe('???????? ?');
    expect(latin('a\u0007b   c', 100)).toBe('a b c');
  });

  it('cuts after the plain forms, and falls back when nothing is left', () => {
    expect(latin('1 €', 4)).toBe('1 EU');
    expect(latin('   ', 10)).toBe('.');
    expect(latin('', 10, '-')).toBe('-');
  });
});
