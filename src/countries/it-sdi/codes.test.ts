import { describe, expect, it } from 'vitest';
import { lookupStatic } from '../../translations/catalog.ts';
import { SDI_CODES } from './codes.ts';

/** The SdI scarto codes (codes.ts, its sources in the header): final for the file, translated. */
describe('SdI error catalog', () => {
  const scarto = Object.entries(SDI_CODES).filter(([code]) => /^00\d{3}$/.test(code));

  it('covers the common scarto codes: file name and size, signature, schema, identifiers, uniqueness, amounts, Natura', () => {
    for (const code of ['00001', '00002', '00003', '00100', '00101', '00102', '00104', '00200', '00300', '00301', '00302', '00303', '00304', '00305',
      '00306', '00311', '00312', '00398', '00399', '00400', '00401', '00403', '00404', '00409', '00411', '00413', '00414', '00415', '00417',
      '00418', '00419', '00420', '00421', '00422', '00423', '00424', '00425', '00426', '00427', '00428', '00429', '00430', '00437', '00438',
      '00443', '00444', '00445', '00448', '00471']) {
      expect(SDI_CODES[code], code).toBeDefined();
    }
  });

  it('every scarto code is final (an NS is never retried) and has its English text and translation in the static catalog', () => {
    for (const [code, c] of scarto) {
      expect(c.retriable, code).toBe(false);
      expect(c.message.length, code).toBeGreaterThan(10);
      expect(c.translation?.userMessage, code).toBeTruthy();
      expect(lookupStatic('IT', 'sdi', code), code).toMatchObject({ systems: ['sdi'], retriable: false });
    }
  });
});
