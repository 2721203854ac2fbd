import { describe, expect, it } from 'vitest';
import { SYSTEMS } from '../countries/registry.ts';
import { systemName, type AuthorityCode, type FiscalSystem } from '../countries/types.ts';
import { CATALOG, SERVICE_CODES, buildCatalog, lookupStatic } from './catalog.ts';
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

describe('the catalog is built from the plug-ins', () => {
  const base = { key: 'es-verifactu', country: 'ES', errorTranslations: true } as const;
  const plugin = (over: Partial<FiscalSystem>): FiscalSystem => ({ ...base, ...over }) as FiscalSystem;
  const shared: AuthorityCode = { message: 'Duplicate.', category: 'submission', retriable: false, translation: { userMessage: 'Already there.', severity: 'warning' } };

  it('takes the codes with a translation, under the short name, the English text defaulting to the message', () => {
    const catalog = buildCatalog([plugin({
      codes: {
        A1: { message: 'Bad field.', category: 'validation', retriable: false, translation: { userMessage: 'Fix the field.', severity: 'error', english: 'Invalid field.' } },
        A2: { message: 'Busy.', category: 'submission', retriable: true, translation: { userMessage: 'Sent again later.', severity: 'warning' } },
        A3: { message: 'Not in the catalog.', category: 'validation', retriable: false },
      },
    })]);
    expect(catalog).toEqual([
      { country: 'ES', systems: ['verifactu'], code: 'A1', translation: 'Invalid field.', user_message: 'Fix the field.', category: 'validation', severity: 'error', retriable: false },
      { country: 'ES', systems: ['verifactu'], code: 'A2', translation: 'Busy.', user_message: 'Sent again later.', category: 'submission', severity: 'warning', retriable: true },
    ]);
  });

  it('gives one entry to a code object two systems share, separate entries to equal copies', () => {
    const catalog = buildCatalog([
      plugin({ codes: { S: shared, C: { ...shared } } }),
      plugin({ key: 'es-sii', codes: { S: shared, C: { ...shared } } }),
    ]);
    expect(catalog.map((e) => [e.code, e.systems])).toEqual([['S', ['verifactu', 'sii']], ['C', ['verifactu']], ['C', ['sii']]]);
  });

  it('leaves out the systems the endpoint does not serve', () => {
    expect(buildCatalog([plugin({ key: 'gr-mydata', country: 'GR', errorTranslations: undefined, codes: { S: shared } })])).toEqual([]);
  });

  it('holds every translated code of the served plug-ins, with the plug-in\'s category and retry rule', () => {
    for (const system of SYSTEMS) {
      for (const [code, c] of Object.entries(system.codes)) {
        if (!system.errorTranslations || !c.translation) continue;
        expect(lookupStatic(system.country, systemName(system.key), code), `${system.key} ${code}`).toMatchObject({ category: c.category, retriable: c.retriable, severity: c.translation.severity });
      }
    }
  });
});
