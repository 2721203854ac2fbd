import { describe, expect, it } from 'vitest';
import { CATALOG, lookupStatic } from '../../translations/catalog.ts';
import { TICKETBAI_CODES } from './codes.ts';
import { DUPLICATE_CODES, RETRIABLE_CODES } from './response.ts';
import { LROE_DUPLICATE_CODES, LROE_RETRIABLE_CODES } from './lroe/response.ts';

const codes = Object.keys(TICKETBAI_CODES);
const sorted = (list: Iterable<string>) => [...new Set(list)].sort();

describe('TicketBAI error codes', () => {
  it('cover the common Araba/Gipuzkoa reception codes and the Batuz LROE codes the client knows', () => {
    for (const code of ['002', '003', '004', '005', '006', '007', '008', '019']) expect(TICKETBAI_CODES[code], code).toBeDefined();
    for (const code of ['B4_2000003', 'B4_2000006', 'B4_1000004', 'N3_0000011', 'B4_1000002', 'B4_2000004', 'B4_2000063', 'B4_2000070']) {
      expect(TICKETBAI_CODES[code], code).toBeDefined();
    }
    for (const code of codes) expect(code).toMatch(/^(\d{3}|B4_[12]\d{6}|N3_\d{7})$/);
  });

  it('"already held" codes are those the answer parsers treat as duplicates', () => {
    const flagged = codes.filter((c) => TICKETBAI_CODES[c]!.duplicate);
    expect(sorted(flagged)).toEqual(sorted([...Object.values(DUPLICATE_CODES).flat(), ...Object.values(LROE_DUPLICATE_CODES).flat()]));
  });

  it('retriable codes are those the answer parsers retry (the authorities\' own failures)', () => {
    const retriable = codes.filter((c) => TICKETBAI_CODES[c]!.retriable);
    expect(sorted(retriable)).toEqual(sorted([...RETRIABLE_CODES, ...LROE_RETRIABLE_CODES]));
    for (const c of retriable) expect(TICKETBAI_CODES[c]!.category, c).toBe('submission');
  });

  it.each(codes)('%s is in the translation catalog for ticketbai, with the same category and retry rule', (code) => {
    const entry = lookupStatic('ES', 'ticketbai', code);
    expect(entry, `catalog entry for ${code}`).toBeDefined();
    expect(entry!.retriable).toBe(TICKETBAI_CODES[code]!.retriable);
    expect(entry!.category).toBe(TICKETBAI_CODES[code]!.category);
    // Held already, or retried automatically: nothing for the merchant to fix.
    const nothingToFix = TICKETBAI_CODES[code]!.duplicate === true || TICKETBAI_CODES[code]!.retriable;
    expect(entry!.severity).toBe(nothingToFix ? 'warning' : 'error');
  });

  it('the catalog holds no TicketBAI code that codes.ts lacks', () => {
    const catalogCodes = CATALOG.filter((e) => (e.systems as readonly string[]).includes('ticketbai')).map((e) => e.code);
    expect(sorted(catalogCodes)).toEqual(sorted(codes));
  });
});
