import { describe, expect, it } from 'vitest';
import { divRoundHalfUp, lineNet, lineTax, toDecimal } from './money.ts';

const d = (n: number) => toDecimal(n)!;

describe('money', () => {
  it('parses decimals exactly', () => {
    expect(toDecimal(21)).toEqual({ units: 21n, scale: 0 });
    expect(toDecimal(5.5)).toEqual({ units: 55n, scale: 1 });
    expect(toDecimal(0.1)).toEqual({ units: 1n, scale: 1 });
    expect(toDecimal(1e-7)).toBeNull(); // more than 6 decimals
    expect(toDecimal(Number.NaN)).toBeNull();
  });

  it('rounds half up', () => {
    expect(divRoundHalfUp(5n, 2n)).toBe(3n);
    expect(divRoundHalfUp(4n, 2n)).toBe(2n);
    expect(divRoundHalfUp(7n, 3n)).toBe(2n);
    expect(divRoundHalfUp(-5n, 2n)).toBe(-3n);
  });

  it('computes line tax without float error: 1.1 × 300 × 10 % = 33, 3 × 1050 × 21 % = 661.5 → 662', () => {
    expect(lineTax(d(1.1), 300, d(10))).toBe(33);
    expect(lineTax(d(3), 1050, d(21))).toBe(662);
    expect(lineTax(d(1), 999, d(5.5))).toBe(55); // 54.945 → 55
    expect(lineTax(d(2), 1000, d(0))).toBe(0);
    expect(lineNet(d(1.5), 333)).toBe(500); // 499.5 → 500
  });
});
