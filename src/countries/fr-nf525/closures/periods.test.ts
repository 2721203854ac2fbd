import { describe, expect, it } from 'vitest';
import { fixedRecordKey } from '../../shared/test-fixtures.ts';
import { ClosureConflict, buildClosure, closureConflict, readClosureState, sumVat, type ClosureInput } from './closure.ts';
import { NO_CLOSURE, closingDay, dueClosures, firstOpenDay, nextClosure, parisInstant, parisToday, periodRange, type ClosureState } from './periods.ts';

const due = (s: ClosureState, days: string[], today: string) => dueClosures(s, days, today).map((d) => `${d.kind} ${d.period}`);
const state = (o: Partial<ClosureState>): ClosureState => ({ ...NO_CLOSURE, ...o });

describe('Paris periods', () => {
  it('today in Paris across the DST changes (CET +1, CEST +2)', () => {
    expect(parisToday(new Date('2026-03-28T23:30:00Z'))).toBe('2026-03-29'); // 00:30 CET
    expect(parisToday(new Date('2026-03-29T21:59:59Z'))).toBe('2026-03-29'); // 23:59:59 CEST
    expect(parisToday(new Date('2026-03-29T22:00:00Z'))).toBe('2026-03-30');
    expect(parisToday(new Date('2026-10-25T22:59:59Z'))).toBe('2026-10-25'); // 23:59:59 CET
    expect(parisToday(new Date('2026-12-31T23:00:00Z'))).toBe('2027-01-01');
  });

  it('a day is 23 hours when the clocks go forward, 25 when they go back; months and years in Paris', () => {
    const hours = (r: { from: Date; to: Date }) => (r.to.getTime() - r.from.getTime()) / 3_600_000;
    expect(periodRange('daily', '2026-03-29')).toEqual({ from: new Date('2026-03-28T23:00:00Z'), to: new Date('2026-03-29T22:00:00Z') });
    expect(hours(periodRange('daily', '2026-03-29'))).toBe(23);
    expect(hours(periodRange('daily', '2026-10-25'))).toBe(25);
    expect(hours(periodRange('daily', '2026-06-15'))).toBe(24);
    expect(periodRange('monthly', '2026-12')).toEqual({ from: new Date('2026-11-30T23:00:00Z'), to: new Date('2026-12-31T23:00:00Z') });
    expect(periodRange('monthly', '2026-03')).toEqual({ from: new Date('2026-02-28T23:00:00Z'), to: new Date('2026-03-31T22:00:00Z') });
    expect(periodRange('annual', '2026')).toEqual({ from: new Date('2025-12-31T23:00:00Z'), to: new Date('2026-12-31T23:00:00Z') });
    expect(parisInstant('2026-07-01')).toEqual(new Date('2026-06-30T22:00:00Z'));
    expect(() => parisInstant('2026-02-30')).toThrow();
  });

  it('the 01:00 UTC run is after Paris midnight in winter and in summer: yesterday is closed', () => {
    expect(parisToday(new Date('2026-01-16T01:00:00Z'))).toBe('2026-01-16');
    expect(parisToday(new Date('2026-07-16T01:00:00Z'))).toBe('2026-07-16');
  });
});

describe('which closures are due', () => {
  it('each closed day with records, then its month once the month is over; today is never closed', () => {
    expect(due(NO_CLOSURE, ['2026-03-30', '2026-03-31'], '2026-04-01')).toEqual(['daily 2026-03-30', 'daily 2026-03-31', 'monthly 2026-03']);
    expect(due(NO_CLOSURE, ['2026-03-30', '2026-03-31'], '2026-03-31')).toEqual(['daily 2026-03-30']);
    expect(due(NO_CLOSURE, [], '2026-03-31')).toEqual([]);
  });

  it('a month closes when the next day with records is in a later month, even before that day is closed', () => {
    expect(due(NO_CLOSURE, ['2026-01-10', '2026-03-05'], '2026-03-06')).toEqual(['daily 2026-01-10', 'monthly 2026-01', 'daily 2026-03-05']);
    // Nothing in February: no February closure.
    expect(due(state({ day: '2026-01-31' }), [], '2026-02-01')).toEqual(['monthly 2026-01']);
  });

  it('the year end: December, then the fiscal year, then the new year\'s days', () => {
    expect(due(NO_CLOSURE, ['2026-12-30', '2026-12-31', '2027-01-02'], '2027-01-05'))
      .toEqual(['daily 2026-12-30', 'daily 2026-12-31', 'monthly 2026-12', 'annual 2026', 'daily 2027-01-02']);
    // The run of 1 January at 01:00 UTC (02:00 in Paris): 31 December, December, 2026.
    expect(due(state({ day: '2026-12-30' }), ['2026-12-31', '2027-01-01'], parisToday(new Date('2027-01-01T01:00:00Z'))))
      .toEqual(['daily 2026-12-31', 'monthly 2026-12', 'annual 2026']);
    // A year whose last records were in November closes on 1 January, with no record since.
    expect(due(state({ day: '2026-11-20', month: '2026-11' }), [], '2026-12-15')).toEqual([]);
    expect(due(state({ day: '2026-11-20', month: '2026-11' }), [], '2027-01-01')).toEqual(['annual 2026']);
  });

  it('what is closed is never due again; a run resumes where the last stopped', () => {
    const closed = state({ day: '2026-03-31', month: '2026-03', lastSeq: 5 });
    expect(due(closed, ['2026-03-30', '2026-03-31'], '2026-04-01')).toEqual([]);
    expect(due(state({ day: '2026-03-30', lastSeq: 2 }), ['2026-03-30', '2026-03-31'], '2026-04-01')).toEqual(['daily 2026-03-31', 'monthly 2026-03']);
    expect(nextClosure(state({ day: '2026-12-31', month: '2026-12', year: '2026' }), null, '2027-06-01')).toBeNull();
  });
});

describe('a record stamped on a period closed already (a node whose clock lagged)', () => {
  it('closes on the first day still open: after the last closed day, month and fiscal year', () => {
    expect(firstOpenDay(NO_CLOSURE)).toBeNull();
    expect(firstOpenDay(state({ day: '2026-02-09' }))).toBe('2026-02-10');
    expect(firstOpenDay(state({ day: '2026-03-15', month: '2026-03' }))).toBe('2026-04-01');
    expect(firstOpenDay(state({ day: '2026-12-31', month: '2026-12' }))).toBe('2027-01-01');
    expect(firstOpenDay(state({ day: '2026-06-10', month: '2026-06', year: '2026' }))).toBe('2027-01-01');
    // Its own day when open; the first open day when closed.
    expect(closingDay(NO_CLOSURE, '2026-02-09')).toBe('2026-02-09');
    expect(closingDay(state({ day: '2026-02-09' }), '2026-02-12')).toBe('2026-02-12');
    expect(closingDay(state({ day: '2026-02-09' }), '2026-02-09')).toBe('2026-02-10');
    expect(closingDay(state({ day: '2026-02-09' }), '2026-01-20')).toBe('2026-02-10');
    expect(closingDay(state({ day: '2026-03-15', month: '2026-03' }), '2026-03-20')).toBe('2026-04-01');
    expect(closingDay(state({ day: '2026-06-10', month: '2026-06', year: '2026' }), '2026-08-03')).toBe('2027-01-01');
  });

  it('its closing day is due like any other; a closed month gets no daily closure after its own', () => {
    const s = state({ day: '2026-02-09', lastSeq: 1 });
    expect(nextClosure(s, closingDay(s, '2026-02-09'), '2026-02-11')).toEqual({ kind: 'daily', period: '2026-02-10' });
    // The first open day is in the next month: the open month closes first.
    const endOfMarch = state({ day: '2026-03-31', month: '2026-02', lastSeq: 4 });
    expect(nextClosure(endOfMarch, closingDay(endOfMarch, '2026-03-31'), '2026-04-02')).toEqual({ kind: 'monthly', period: '2026-03' });
    expect(nextClosure(state({ day: '2026-03-15', month: '2026-03' }), '2026-03-20', '2026-04-02')).toBeNull();
    expect(closureConflict(state({ day: '2026-03-15', month: '2026-03' }), { kind: 'daily', period: '2026-03-20' }, 10)).toMatch(/closed already/);
    expect(closureConflict(state({ day: '2026-03-15', month: '2026-03' }), { kind: 'daily', period: '2026-04-01' }, 10)).toBeNull();
    expect(closureConflict(state({ day: '2026-06-10', month: '2026-06', year: '2026' }), { kind: 'daily', period: '2026-08-03' }, 10)).toMatch(/closed already/);
  });
});

describe('closing once', () => {
  const key = fixedRecordKey();
  const input = (kind: 'daily' | 'monthly' | 'annual', period: string, firstSeq = 1): ClosureInput => ({
    accountId: 'a', locationId: 'l', registerId: 'R', environment: 'test', due: { kind, period }, key, software: { name: 's', version: '1' },
    content: { vat: [], totals: { excl_tax: 0, tax: 0, incl_tax: 0 }, perpetual: { excl_tax: 0, incl_tax: 0 }, records: { count: 1, first_seq: firstSeq, last_seq: firstSeq } },
  });

  it('a closure that is not the chain\'s next is refused: a day or month closed already, a month whose days are not all closed', () => {
    const s = state({ day: '2026-03-31', month: '2026-02', lastSeq: 9 });
    expect(closureConflict(s, { kind: 'daily', period: '2026-03-31' }, 10)).toMatch(/closed already/);
    expect(closureConflict(s, { kind: 'daily', period: '2026-04-01' }, 9)).toMatch(/covered already/);
    expect(closureConflict(s, { kind: 'daily', period: '2026-04-01' }, 10)).toBeNull();
    expect(closureConflict(s, { kind: 'monthly', period: '2026-03' }, 0)).toBeNull();
    expect(closureConflict(s, { kind: 'monthly', period: '2026-02' }, 0)).toMatch(/closed already/);
    expect(closureConflict(state({ day: '2026-03-15' }), { kind: 'monthly', period: '2026-04' }, 0)).toMatch(/not all closed/);
    expect(closureConflict(state({ month: '2026-11' }), { kind: 'annual', period: '2026' }, 0)).toBeNull();
    expect(closureConflict(state({ month: '2026-11', year: '2026' }), { kind: 'annual', period: '2026' }, 0)).toMatch(/closed already/);
    expect(closureConflict(state({ month: '2025-12' }), { kind: 'annual', period: '2026' }, 0)).toMatch(/not all closed/);
  });

  it('built twice on the same head: the second is refused (what a racing run meets in the ledger)', () => {
    const first = buildClosure(input('daily', '2026-03-30'), { seq: 1, previous: null }, new Date('2026-03-31T01:00:00Z'));
    const link = { seq: 2, previous: { fingerprint: first.closure.signature.value, fiscalId: first.closure.number, issuedAt: '', linkData: first.linkData } };
    expect(() => buildClosure(input('daily', '2026-03-30'), link, new Date('2026-03-31T01:00:01Z'))).toThrow(ClosureConflict);
    expect(readClosureState(first.linkData)).toEqual({ day: '2026-03-30', month: null, year: null, lastSeq: 1 });
    expect(readClosureState(null)).toEqual(NO_CLOSURE);
  });

  it('VAT sums per rate, rates in numeric order', () => {
    expect(sumVat([[{ rate: '10.00', excl_tax: 100, tax: 10, incl_tax: 110 }], [{ rate: '5.50', excl_tax: 200, tax: 11, incl_tax: 211 }, { rate: '10.00', excl_tax: -100, tax: -10, incl_tax: -110 }]]))
      .toEqual([{ rate: '5.50', excl_tax: 200, tax: 11, incl_tax: 211 }, { rate: '10.00', excl_tax: 0, tax: 0, incl_tax: 0 }]);
  });
});
