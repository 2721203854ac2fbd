import { describe, expect, it } from 'vitest';
import { ValidationError } from '../core/errors.ts';
import { checkParam, createLocationFileService } from './location-files.ts';
import { SYSTEMS } from '../countries/registry.ts';

describe('location files', () => {
  it('dates: real calendar dates only; months: YYYY-MM', () => {
    const date = { name: 'date', kind: 'date' as const };
    expect(checkParam(date, '2026-02-28')).toBe('2026-02-28');
    for (const bad of [undefined, '', '2026-02-30', '2026-2-01', '2026-02', ['2026-02-01']]) {
      expect(() => checkParam(date, bad)).toThrow(new ValidationError('date is required: a date in the form YYYY-MM-DD'));
    }
    const month = { name: 'period', kind: 'month' as const };
    expect(checkParam(month, '2026-12')).toBe('2026-12');
    for (const bad of ['2026-13', '2026-00', '2026-01-01', 202601]) {
      expect(() => checkParam(month, bad)).toThrow(new ValidationError('period is required: a month in the form YYYY-MM'));
    }
  });

  it('one route per path the registered plug-ins offer (today: corrispettivi, saft)', () => {
    const svc = createLocationFileService({ systems: SYSTEMS } as unknown as Parameters<typeof createLocationFileService>[0]);
    expect(svc.paths().map((p) => p.path)).toEqual(['corrispettivi', 'saft']);
  });
});
