import { describe, expect, it } from 'vitest';
import { ValidationError } from '../core/errors.ts';
import { checkPage, checkParam, createLocationFileService } from './location-files.ts';
import { SYSTEMS } from '../countries/registry.ts';

describe('location files', () => {
  it('dates: real calendar dates only; months: YYYY-MM', () => {
    const date = { name: 'date', kind: 'date' as const };
    expect(checkParam(date, '2026-02-28')).toBe('2026-02-28');
    for (const missing of [undefined, '']) {
      expect(() => checkParam(date, missing)).toThrow(new ValidationError('date is required: a date in the form YYYY-MM-DD'));
    }
    for (const bad of ['2026-02-30', '2026-2-01', '2026-02', ['2026-02-01']]) {
      expect(() => checkParam(date, bad)).toThrow(new ValidationError('date must be a date in the form YYYY-MM-DD'));
    }
    const month = { name: 'period', kind: 'month' as const };
    expect(checkParam(month, '2026-12')).toBe('2026-12');
    expect(() => checkParam(month, undefined)).toThrow(new ValidationError('period is required: a month in the form YYYY-MM'));
    for (const bad of ['2026-13', '2026-00', '2026-01-01', 202601]) {
      expect(() => checkParam(month, bad)).toThrow(new ValidationError('period must be a month in the form YYYY-MM'));
    }
  });

  it('years 1970-9998 only: year 1 and 9999-12-31 were 500s in the plug-ins\' zone arithmetic', () => {
    const date = { name: 'date', kind: 'date' as const };
    const month = { name: 'period', kind: 'month' as const };
    expect(checkParam(date, '1970-01-01')).toBe('1970-01-01');
    expect(checkParam(date, '9998-12-31')).toBe('9998-12-31');
    expect(checkParam(month, '9998-12')).toBe('9998-12');
    for (const bad of ['0001-01-01', '1969-12-31', '9999-12-31']) {
      expect(() => checkParam(date, bad)).toThrow(new ValidationError('date must be a date from 1970-01-01 to 9998-12-31'));
    }
    for (const bad of ['0001-01', '1969-12', '9999-12']) {
      expect(() => checkParam(month, bad)).toThrow(new ValidationError('period must be a month from 1970-01 to 9998-12'));
    }
  });

  it('paged lists: limit 1-100 (default 20), offset 0-10000 (default 0), as the spec\'s other lists', () => {
    expect(checkPage({})).toEqual({ limit: 20, offset: 0 });
    expect(checkPage({ limit: 100, offset: 10000 })).toEqual({ limit: 100, offset: 10000 });
    expect(checkPage({ limit: '5', offset: '40' })).toEqual({ limit: 5, offset: 40 });
    for (const limit of [0, 101, 1.5, 'x', '-1']) expect(() => checkPage({ limit })).toThrow(new ValidationError('limit must be an integer between 1 and 100'));
    for (const offset of [-1, 10001, 'x']) expect(() => checkPage({ offset })).toThrow(new ValidationError('offset must be an integer between 0 and 10000'));
  });

  it('one route per path the registered plug-ins offer (corrispettivi, closures, jet, archives, saft)', () => {
    const svc = createLocationFileService({ systems: SYSTEMS } as unknown as Parameters<typeof createLocationFileService>[0]);
    expect(svc.paths().map((p) => p.path)).toEqual(['corrispettivi', 'closures', 'jet', 'archives', 'saft']);
    expect(svc.paths().find((p) => p.path === 'closures')!.files[0]!.param).toEqual({ kind: 'page' });
    // A listed file whose items download by id (`archives/{archive_id}`).
    expect(svc.paths().find((p) => p.path === 'archives')!.files[0]!.item?.contentType).toBe('application/json');
    expect(svc.paths().find((p) => p.path === 'closures')!.files[0]!.item).toBeUndefined();
  });
});
