import { describe, expect, it } from 'vitest';
import { romeDayRange, rilevazioneOf, romeInstant } from './build.ts';
import { GOLDEN_DAY, goldenDay } from './golden-cases.ts';
import { aggregateDay, amount2, documentKind, parentNatura, rate2, romeDay, type DayTransaction } from './totals.ts';

describe('corrispettivi totals', () => {
  it('per rate and Natura: sales net of VAT with their VAT, returns and cancellations VAT included; the payment split of the sales', () => {
    const t = aggregateDay(GOLDEN_DAY, goldenDay());
    expect(t.riepiloghi).toEqual([
      { rateBp: 2200, ammontare: 2500, imposta: 550, resi: 1830, annulli: 0 },
      { rateBp: 1000, ammontare: 2400, imposta: 240, resi: 0, annulli: 880 },
      { natura: 'N2', ammontare: 500, imposta: 0, resi: 0, annulli: 0 },
      { natura: 'N4', ammontare: 1200, imposta: 0, resi: 0, annulli: 0 },
    ]);
    expect(t).toMatchObject({ documents: 5, sales: 3, returns: 1, cancellations: 1, cash: 4470, electronic: 2420, ticketAmount: 500, ticketCount: 2 });
  });

  it('kinds: cancellation transactions and is_cancellation are annulli, is_return resi, the rest sales', () => {
    const d = goldenDay()[0]!.normalized;
    expect(documentKind({ type: 'cancellation', normalized: d })).toBe('annullo');
    expect(documentKind({ type: 'void', normalized: { ...d, metadata: { is_cancellation: true } } })).toBe('annullo');
    expect(documentKind({ type: 'refund', normalized: { ...d, metadata: { is_return: true } } })).toBe('reso');
    expect(documentKind({ type: 'sale', normalized: d })).toBe('vendita');
  });

  it('the day is the Rome day: 00:30 in Rome belongs to that day, 23:59 UTC in summer to the next', () => {
    expect(romeDay(new Date('2026-01-14T23:30:00Z'))).toBe('2026-01-15');
    expect(romeDay(new Date('2026-07-14T22:30:00Z'))).toBe('2026-07-15');
    expect(() => aggregateDay('2026-01-14', goldenDay())).toThrow(/in the totals of 2026-01-14/);
  });

  it('day ranges and the closing time follow CET and CEST (and the change days)', () => {
    expect(romeDayRange('2026-01-15')).toEqual({ from: new Date('2026-01-14T23:00:00Z'), to: new Date('2026-01-15T23:00:00Z') });
    expect(romeDayRange('2026-07-15')).toEqual({ from: new Date('2026-07-14T22:00:00Z'), to: new Date('2026-07-15T22:00:00Z') });
    // 29 March 2026: clocks go forward, a 23-hour day.
    const spring = romeDayRange('2026-03-29');
    expect(spring.to.getTime() - spring.from.getTime()).toBe(23 * 3_600_000);
    // 25 October 2026: clocks go back, a 25-hour day.
    const autumn = romeDayRange('2026-10-25');
    expect(autumn.to.getTime() - autumn.from.getTime()).toBe(25 * 3_600_000);
    expect(rilevazioneOf('2026-01-15')).toBe('2026-01-15T23:59:59+01:00');
    expect(rilevazioneOf('2026-07-15')).toBe('2026-07-15T23:59:59+02:00');
    expect(() => romeInstant('2026-02-30', '00:00:00')).toThrow(/not a date/);
  });

  it('exact decimals: cents and rates written with two decimals', () => {
    expect(amount2(0)).toBe('0.00');
    expect(amount2(5)).toBe('0.05');
    expect(amount2(123456)).toBe('1234.56');
    expect(amount2(-50)).toBe('-0.50');
    expect(rate2(2200)).toBe('22.00');
    expect(rate2(550)).toBe('5.50');
    expect(() => amount2(1.5)).toThrow(/whole number of cents/);
  });

  it('Natura subcodes count under their parent (the schema has N1-N6); a 0 % line needs one', () => {
    expect(parentNatura('N2.1')).toBe('N2');
    expect(parentNatura('N6.9')).toBe('N6');
    expect(() => parentNatura('N7')).toThrow();
    const row = goldenDay()[0]!;
    const bad: DayTransaction = { ...row, normalized: { ...row.normalized, items: [{ ...row.normalized.items[0]!, tax_rate: 0, tax_amount: 0 }] } };
    expect(() => aggregateDay(GOLDEN_DAY, [bad])).toThrow(/without a Natura/);
  });
});
