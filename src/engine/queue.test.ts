import { describe, expect, it } from 'vitest';
import { EMBEDDED_BACKOFF, retryDelayMs } from '../jobs/backoff.ts';
import { alertLevel, deadlineOf, pctElapsed } from './queue.ts';
import { ENGINE_ERROR_CODES, EngineError, toEngineError } from './errors.ts';
import { badRequest, conflict, forbidden, notFound, unauthorized, DbUnavailableError } from '../core/errors.ts';

describe('deadline alerts', () => {
  it('levels at 75, 90 and 100 % of the window', () => {
    expect(alertLevel(74.9)).toBeNull();
    expect(alertLevel(75)).toBe('warning_75pct');
    expect(alertLevel(89.9)).toBe('warning_75pct');
    expect(alertLevel(90)).toBe('critical_90pct');
    expect(alertLevel(100)).toBe('breached_100pct');
    expect(alertLevel(250)).toBe('breached_100pct');
  });

  it('share elapsed of [creation, deadline]', () => {
    const created = new Date('2026-03-01T00:00:00Z');
    const deadline = new Date('2026-03-05T00:00:00Z');
    expect(pctElapsed(created, deadline, new Date('2026-03-04T00:00:00Z'))).toBe(75);
    expect(pctElapsed(created, deadline, new Date('2026-03-06T00:00:00Z'))).toBe(125);
  });

  it('reads the deadline through the plug-in: stored deadline_at, else the offline grace, else none', () => {
    const created = new Date('2026-03-01T00:00:00Z');
    const stored = new Date('2026-03-05T00:00:00Z');
    expect(deadlineOf({ system: 'es-verifactu', created_at: created, deadline_at: stored })).toEqual(stored);
    expect(deadlineOf({ system: 'gr-mydata', created_at: created, deadline_at: null })).toEqual(new Date('2026-03-08T00:00:00Z')); // 7-day grace
    expect(deadlineOf({ system: 'pt-saft', created_at: created, deadline_at: null })).toBeNull();
    expect(deadlineOf({ system: 'fr-nf525', created_at: created, deadline_at: null })).toBeNull();
  });

  it('the embedded backoff: 2 s doubling, capped at 21,600 s', () => {
    const exact = () => 0.5;
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, EMBEDDED_BACKOFF, exact))).toEqual([2000, 4000, 8000, 16000]);
    expect(retryDelayMs(20, EMBEDDED_BACKOFF, exact)).toBe(21_600_000);
  });
});

describe('envelope error mapping', () => {
  it('maps the service core\'s errors by status, keeping their message', () => {
    expect(toEngineError(badRequest('location not found'))).toMatchObject({ code: 'validation_error', message: 'location not found' });
    expect(toEngineError(unauthorized('x')).code).toBe('unauthorized');
    expect(toEngineError(forbidden('x')).code).toBe('forbidden');
    expect(toEngineError(notFound('x')).code).toBe('not_found');
    expect(toEngineError(conflict('x')).code).toBe('conflict');
  });
  it('store failures and anything else', () => {
    expect(toEngineError(new DbUnavailableError(new Error('down'))).code).toBe('store_error');
    expect(toEngineError(Object.assign(new Error('duplicate key'), { code: '23505' })).code).toBe('store_error');
    expect(toEngineError(new Error('PGlite is closed')).code).toBe('store_error');
    expect(toEngineError(new TypeError('x is undefined'))).toEqual(new EngineError('internal_error', 'internal error (details in the engine log)'));
    expect(toEngineError('a string').code).toBe('internal_error');
    expect(ENGINE_ERROR_CODES).toContain(toEngineError(new Error()).code);
  });
});
