import { describe, expect, it } from 'vitest';
import { isExcludedDay, nationalHolidays, siiSubmissionDeadline } from './deadline.ts';
import { sii } from './index.ts';
import { NOW, draft } from '../shared/test-fixtures.ts';

/** Issue instant → deadline instant (end of the 4th countable day, Madrid). */
const at = (createdAt: Date, metadata: Record<string, unknown> = {}) => siiSubmissionDeadline({ createdAt, tx: draft({ metadata }) });
const deadline = (issuedAt: string): string => at(new Date(issuedAt)).toISOString();

describe('SII submission deadline (RIVA art. 69.Dos: 4 days, Saturdays, Sundays and national holidays excluded)', () => {
  it('is the plug-in submissionDeadline', () => {
    expect(sii.submissionDeadline).toBe(siiSubmissionDeadline);
    // Fixture clock: Thursday 15 January 2026 → Fri 16, Mon 19, Tue 20, Wed 21.
    expect(sii.submissionDeadline!({ createdAt: NOW, tx: draft() }).toISOString()).toBe('2026-01-21T22:59:59.999Z');
  });

  it('skips the weekend: Wednesday → Tuesday, end of day in Madrid (CET)', () => {
    expect(deadline('2026-01-14T09:00:00Z')).toBe('2026-01-20T22:59:59.999Z');
  });

  it('Saturdays are not counted: Friday, Saturday and Sunday issues all end on Thursday', () => {
    // With Sundays only excluded (the 2016 wording), Friday 6 March would end Wednesday 11.
    expect(deadline('2026-03-06T10:00:00Z')).toBe('2026-03-12T22:59:59.999Z');
    expect(deadline('2026-03-07T10:00:00Z')).toBe('2026-03-12T22:59:59.999Z');
    // An invoice issued on a Sunday: Mon 9, Tue 10, Wed 11, Thu 12.
    expect(deadline('2026-03-08T10:00:00Z')).toBe('2026-03-12T22:59:59.999Z');
  });

  it('the invoice date is the Madrid date: 00:30 in Madrid is the next day', () => {
    // 23:30 UTC on Wednesday 14 January is Thursday 15 in Madrid.
    expect(deadline('2026-01-14T23:30:00Z')).toBe('2026-01-21T22:59:59.999Z');
  });

  it('Easter 2026: Good Friday is excluded; Holy Thursday and Easter Monday (regional) count; CEST', () => {
    // Wed 1 April: Thu 2 (1), Fri 3 Good Friday, Sat 4, Sun 5, Mon 6 (2), Tue 7 (3), Wed 8 (4).
    expect(deadline('2026-04-01T10:00:00Z')).toBe('2026-04-08T21:59:59.999Z');
  });

  it('Easter 2027 across the change to summer time (Sunday 28 March)', () => {
    // Wed 24 March: Thu 25 (1), Fri 26 Good Friday, Sat 27, Sun 28, Mon 29 (2), Tue 30 (3), Wed 31 (4).
    expect(deadline('2027-03-24T10:00:00Z')).toBe('2027-03-31T21:59:59.999Z');
  });

  it('year end: Christmas and New Year are excluded', () => {
    // Wed 23 Dec 2026: Thu 24 (1), Fri 25 Christmas, weekend, Mon 28 (2), Tue 29 (3), Wed 30 (4).
    expect(deadline('2026-12-23T10:00:00Z')).toBe('2026-12-30T22:59:59.999Z');
    // Mon 28 Dec 2026: Tue 29, Wed 30, Thu 31, Fri 1 Jan holiday, weekend, Mon 4 Jan 2027.
    expect(deadline('2026-12-28T10:00:00Z')).toBe('2027-01-04T22:59:59.999Z');
  });

  it('a holiday on a Sunday is not moved (6 December 2026); 8 December is excluded', () => {
    // Fri 4 Dec: weekend (Sun 6 Constitution Day), Mon 7 (1), Tue 8 holiday, Wed 9 (2), Thu 10 (3), Fri 11 (4).
    expect(deadline('2026-12-04T10:00:00Z')).toBe('2026-12-11T22:59:59.999Z');
  });

  it('national holidays only: fixed dates and Good Friday, not regional or local ones', () => {
    const h2026 = nationalHolidays(2026);
    for (const d of ['2026-01-01', '2026-01-06', '2026-04-03', '2026-05-01', '2026-08-15', '2026-10-12', '2026-11-01', '2026-12-06', '2026-12-08', '2026-12-25']) {
      expect(h2026.has(d), d).toBe(true);
    }
    // Jueves Santo, Easter Monday, San José, Madrid's San Isidro: regional or local.
    for (const d of ['2026-04-02', '2026-04-06', '2026-03-19', '2026-05-15']) expect(h2026.has(d), d).toBe(false);
    expect(nationalHolidays(2027).has('2027-03-26')).toBe(true);
    expect(isExcludedDay(2026, 1, 17)).toBe(true); // Saturday
    expect(isExcludedDay(2026, 1, 18)).toBe(true); // Sunday
    expect(isExcludedDay(2026, 1, 19)).toBe(false);
  });

  it('always lies 4 to 13 days after the issue', () => {
    for (let day = 0; day < 400; day++) {
      const issued = new Date(Date.UTC(2026, 0, 1, 10) + day * 86_400_000);
      const days = (at(issued).getTime() - issued.getTime()) / 86_400_000;
      expect(days).toBeGreaterThan(4);
      expect(days).toBeLessThan(13);
    }
  });

  it('counts from metadata.issue_date when the invoice was issued before it is reported', () => {
    // Issued Friday 9 Oct 2026 (Madrid), reported Wednesday 14: due Friday 16 (Mon 12 Oct is a national holiday).
    expect(at(new Date('2026-10-14T10:00:00Z'), { issue_date: '09-10-2026' }).toISOString()).toBe('2026-10-16T21:59:59.999Z');
    expect(at(new Date('2026-10-09T10:00:00Z')).toISOString()).toBe('2026-10-16T21:59:59.999Z');
  });

  it('an invoice issued long after its operation is due by the 16th of the month after the operation (metadata.operation_date: the accrual)', () => {
    // Issued Tuesday 10 March 2026 for goods delivered on 20 January: due by the end of 16 February, not 16 March.
    expect(at(new Date('2026-03-10T10:00:00Z'), { issue_date: '10-03-2026', operation_date: '20-01-2026' }).toISOString()).toBe('2026-02-16T22:59:59.999Z');
    // Issued Friday 13 February for an operation of 28 January: the four days end Thursday 19, the 16th comes first.
    expect(at(new Date('2026-02-13T10:00:00Z'), { operation_date: '28-01-2026' }).toISOString()).toBe('2026-02-16T22:59:59.999Z');
    // An operation earlier in the same month: the four days still end first (Thu 15 January → Wed 21).
    expect(at(NOW, { operation_date: '05-01-2026' }).toISOString()).toBe('2026-01-21T22:59:59.999Z');
    // December's operation: the 16th of January of the next year.
    expect(at(new Date('2026-01-14T09:00:00Z'), { operation_date: '10-12-2025' }).toISOString()).toBe('2026-01-16T22:59:59.999Z');
  });
});
