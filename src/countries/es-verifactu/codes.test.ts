import { describe, expect, it } from 'vitest';
import { lookupStatic } from '../../translations/catalog.ts';
import { VERIFACTU_CODES } from './codes.ts';

/** AEAT's own codes (errores.properties): numeric. The others are this client's. */
const aeatCodes = Object.keys(VERIFACTU_CODES).filter((c) => /^\d+$/.test(c));

describe('VERI*FACTU error codes', () => {
  it('cover every group of AEAT\'s list: 4xxx/35xx submission, 1xxx record, 2xxx accepted with errors, 3xxx', () => {
    for (const code of ['4102', '4112', '3501', '1100', '1180', '1189', '1210', '2000', '2004', '3000', '3001', '3002']) {
      expect(VERIFACTU_CODES[code], code).toBeDefined();
    }
    expect(aeatCodes.length).toBeGreaterThan(100);
  });

  it('only 3000 means "already registered"; AEAT\'s technical errors are retriable', () => {
    expect(Object.entries(VERIFACTU_CODES).filter(([, c]) => c.duplicate).map(([code]) => code)).toEqual(['3000']);
    for (const code of ['4108', '4110', '4111', '3500', '3501', '1129', '1241', '1243']) expect(VERIFACTU_CODES[code]?.retriable, code).toBe(true);
    for (const code of ['1104', '1180', '4102', '3000', '2000']) expect(VERIFACTU_CODES[code]?.retriable, code).toBe(false);
  });

  it.each(aeatCodes)('%s is in the translation catalog for verifactu, with the same retry rule', (code) => {
    const entry = lookupStatic('ES', 'verifactu', code);
    expect(entry, `catalog entry for ${code}`).toBeDefined();
    expect(entry!.retriable).toBe(VERIFACTU_CODES[code]!.retriable);
    // Accepted-with-errors codes are warnings: the invoice is registered.
    if (code.startsWith('2')) expect(entry!.severity).toBe('warning');
  });
});
