import { describe, expect, it } from 'vitest';
import { draft } from '../shared/test-fixtures.ts';
import { expect400 } from '../shared/test-helpers.ts';
import {
  OPERATION_DATE_INVALID,
  isLaterDay,
  madridDay,
  operationDateHints,
  operationDateOf,
  readOperationDate,
} from './operation-date.ts';

const LATER = 'later than the issue day';

describe('metadata.operation_date, shared by the Spanish systems (operation-date.ts)', () => {
  it('compares days as dates, not as DD-MM-YYYY text', () => {
    expect(isLaterDay('14-02-2026', '15-01-2026')).toBe(true);
    expect(isLaterDay('15-01-2026', '15-01-2026')).toBe(false);
    expect(isLaterDay('31-12-2025', '01-01-2026')).toBe(false);
    expect(isLaterDay('01-01-2027', '31-12-2026')).toBe(true);
  });

  it('"today" is Madrid\'s: 23:30 UTC on the 15th is already the 16th there', () => {
    expect(madridDay(new Date('2026-01-15T10:00:00Z'))).toBe('15-01-2026');
    expect(madridDay(new Date('2026-01-15T23:30:00Z'))).toBe('16-01-2026');
  });

  it('reads an earlier day; none when absent or the issue day itself; trimmed', () => {
    expect(readOperationDate({ operation_date: '10-01-2026' }, '15-01-2026', LATER)).toBe('10-01-2026');
    expect(readOperationDate({ operation_date: ' 31-12-2025 ' }, '15-01-2026', LATER)).toBe('31-12-2025');
    expect(readOperationDate({ operation_date: '15-01-2026' }, '15-01-2026', LATER)).toBeUndefined();
    expect(readOperationDate({}, '15-01-2026', LATER)).toBeUndefined();
    expect(readOperationDate({ operation_date: null }, '15-01-2026', LATER)).toBeUndefined();
    expect(readOperationDate({ operation_date: ' ' }, '15-01-2026', LATER)).toBeUndefined();
  });

  it('a malformed date is a 400 with the shared message; a later one with the caller\'s', () => {
    for (const bad of ['2026-01-10', '32-01-2026', '29-02-2026', 20260110, 'ayer', {}]) {
      expect400(() => readOperationDate({ operation_date: bad }, '15-01-2026', LATER), OPERATION_DATE_INVALID);
    }
    expect400(() => readOperationDate({ operation_date: '16-01-2026' }, '15-01-2026', LATER), LATER);
    expect400(() => readOperationDate({ operation_date: '14-02-2026' }, '15-01-2026', LATER), LATER);
  });

  it('the build writes a stored earlier day only; a later, equal or broken one is left out; the hint follows it', () => {
    const tx = (operation_date: unknown) => draft({ metadata: { operation_date } });
    expect(operationDateOf(tx('10-01-2026'), '15-01-2026')).toBe('10-01-2026');
    expect(operationDateOf(tx('15-01-2026'), '15-01-2026')).toBeNull();
    expect(operationDateOf(tx('16-01-2026'), '15-01-2026')).toBeNull();
    expect(operationDateOf(tx('2026-01-10'), '15-01-2026')).toBeNull();
    expect(operationDateOf(draft(), '15-01-2026')).toBeNull();
    expect(operationDateHints('10-01-2026')).toEqual([expect.objectContaining({ key: 'operation_date', placement: 'header', value: '10-01-2026' })]);
    expect(operationDateHints(null)).toEqual([]);
  });
});
