import { describe, expect, it } from 'vitest';
import { CATALOG, SERVICE_CODES, lookupStatic } from './catalog.ts';
import { CATEGORIES, SEVERITIES, SYSTEMS_BY_COUNTRY } from './types.ts';

describe('static translation catalog', () => {
  it('has at most one entry per (country, system, code), each system belonging to its country', () => {
    const seen = new Set<string>();
    for (const e of CATALOG) {
      expect((SYSTEMS_BY_COUNTRY[e.country] as readonly string[])).toEqual(expect.arrayContaining([...e.systems]));
      for (const s of e.systems) {
        const k = `${e.country}|${s}|${e.code}`;
        expect(seen.has(k), k).toBe(false);
        seen.add(k);
      }
    }
  });

  it('gives every entry an English translation, a short user message and valid enums', () => {
    for (const e of [...CATALOG, ...Object.values(SERVICE_CODES)]) {
      expect(e.translation.length).toBeGreaterThan(5);
      expect(e.user_message.length).toBeGreaterThan(10);
      expect(e.user_message.length).toBeLessThanOrEqual(200);
      expect(CATEGORIES).toContain(e.category);
      expect(SEVERITIES).toContain(e.severity);
      expect(typeof e.retriable).toBe('boolean');
    }
  });

  it('holds the spec\'s Italy DC codes with their retry rule', () => {
    expect(['0100', '0200', '0403', '0429', '0500'].map((c) => lookupStatic('IT', 'dc', c)?.retriable)).toEqual([false, false, false, true, true]);
    expect(lookupStatic('IT', 'dc', '0403')?.category).toBe('auth');
  });

  it('finds a code by country alone when it is unique there', () => {
    expect(lookupStatic('IT', undefined, '00404')).toMatchObject({ systems: ['sdi'], severity: 'warning' });
    expect(lookupStatic('ES', undefined, 'b4_2000003')).toMatchObject({ systems: ['ticketbai'] }); // case-insensitive
    expect(lookupStatic('ES', undefined, '3000')).toMatchObject({ systems: ['verifactu', 'sii'] }); // one entry, two systems
    expect(lookupStatic('es', undefined, ' 4112 ')).toMatchObject({ category: 'auth' });
  });

  it('refuses to guess when the code means different things in different systems', () => {
    expect(lookupStatic('ES', undefined, '1104')).toBeUndefined();
    expect(lookupStatic('ES', 'verifactu', '1104')?.translation).toMatch(/invoice series and number/);
    expect(lookupStatic('ES', 'sii', '1104')?.translation).toMatch(/ID field/);
    expect(lookupStatic('ES', 'verifactu', '4111')?.retriable).toBe(true);
    expect(lookupStatic('ES', 'sii', '4111')?.retriable).toBe(false);
  });

  it('does not cross countries or systems', () => {
    expect(lookupStatic('ES', undefined, '00404')).toBeUndefined();
    expect(lookupStatic('IT', 'sdi', '0429')).toBeUndefined();
    expect(lookupStatic('ES', 'ticketbai', '3000')).toBeUndefined();
    expect(lookupStatic('FR', undefined, '3000')).toBeUndefined();
    expect(lookupStatic('ES', 'verifactu', '9999')).toBeUndefined();
  });
});
