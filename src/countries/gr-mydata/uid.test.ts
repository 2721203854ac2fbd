import { describe, it, expect } from 'vitest';
import { myDataUid, uidInput } from './uid.ts';

// FORMATS.md §6/§9: the AADE FAQ's input `999999999-2020-10-22-0-1.1-Α-2` (no published digest).
const faq = { afm: '999999999', issueDate: '2020-10-22', branch: 0, invoiceType: '1.1', aa: '2' };

describe('myDATA UID', () => {
  it('joins the six fields with "-" in the FAQ order', () => {
    expect(uidInput({ ...faq, series: 'A' })).toBe('999999999-2020-10-22-0-1.1-A-2');
  });
  it('SHA-1, uppercase hex: the FORMATS §9 values for a Latin A and (UTF-8) a Greek Α', () => {
    expect(myDataUid({ ...faq, series: 'A' })).toBe('C242E229D54850E9CE6116220B23F1666188E297');
    expect(myDataUid({ ...faq, series: 'Α' })).toBe('B6135D5377B0AA2A92264AB56B334169D0B25089');
    // Not ISO-8859-7 (FORMATS §9 gives 51D64223…): the encoding chosen is UTF-8.
    expect(myDataUid({ ...faq, series: 'Α' })).not.toBe('51D64223A48783BFCF64CA199B95F13387971303');
  });
  it('each field changes it', () => {
    const base = myDataUid({ ...faq, series: 'A' });
    for (const over of [{ afm: '094259216' }, { issueDate: '2020-10-23' }, { branch: 1 }, { invoiceType: '11.1' }, { series: 'B' }, { aa: '3' }]) {
      expect(myDataUid({ ...faq, series: 'A', ...over })).not.toBe(base);
    }
  });
});
