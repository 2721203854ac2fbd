import { describe, it, expect } from 'vitest';
import { MYDATA_CODES, isMyDataDuplicate, markInDuplicateMessage, myDataErrorCategory } from './codes.ts';
import { lookupStatic } from '../../translations/catalog.ts';
import { TRANSLATION_COUNTRIES } from '../../translations/types.ts';

// The provider channel's duplicate answer, as published (fiskaltrust/middleware PR #742).
const DUP_228 = 'The UID: E983749569A44D1417B39328DED86B6E84AF6B59 is invalid . It has already been sent for another invoice (MARK:400001966030681 , AUTHENTICATION_CODE:ABC)';

describe('myDATA codes', () => {
  it('the spec\'s Greek categories', () => {
    expect(myDataErrorCategory('233')).toBe('duplicate_as_success');
    expect(myDataErrorCategory('228', DUP_228)).toBe('duplicate_as_success');
    expect(myDataErrorCategory('228', 'The INVOICE TYPE: 11.5 is invalid')).toBe('regulatory_reject');
    expect(myDataErrorCategory('203')).toBe('regulatory_reject');
    expect(myDataErrorCategory('101')).toBe('regulatory_reject');
    expect(myDataErrorCategory('500')).toBe('transient');
    expect(myDataErrorCategory('429')).toBe('transient');
    expect(myDataErrorCategory('102')).toBe('permanent');
    expect(myDataErrorCategory('105')).toBe('permanent');
    expect(myDataErrorCategory('999')).toBe('permanent');
  });
  it('duplicates and the original MARK they quote', () => {
    expect(MYDATA_CODES['233']!.duplicate).toBe(true);
    expect(isMyDataDuplicate('228', DUP_228)).toBe(true);
    expect(isMyDataDuplicate('228', 'The UID: X is invalid')).toBe(false);
    expect(markInDuplicateMessage(DUP_228)).toBe('400001966030681');
    expect(markInDuplicateMessage('no mark')).toBeUndefined();
  });
  it('every code is in the translation catalog, and GR is a translation country', () => {
    expect(TRANSLATION_COUNTRIES).toContain('GR');
    for (const [code, def] of Object.entries(MYDATA_CODES)) {
      expect(def.translation, code).toBeDefined();
      expect(lookupStatic('GR', 'mydata', code)).toMatchObject({ category: def.category, retriable: def.retriable, user_message: def.translation!.userMessage });
    }
    expect(lookupStatic('GR', undefined, '233')).toMatchObject({ severity: 'warning' });
  });
});
