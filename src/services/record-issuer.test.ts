import { describe, expect, it } from 'vitest';
import { issuerOf, legalNameOf, printedIssuer } from './record-issuer.ts';

const current = { name: 'Now', address: 'Street 2', legal_name: 'Now Ltd' };

describe('receipts: the issuer as the document was issued', () => {
  it('keeps the location\'s name, address and legal name (an empty or non-string legal name is none)', () => {
    expect(issuerOf({ name: 'Shop', address: 'Street 1', config: { legal_name: 'Shop Ltd', other: 1 } })).toEqual({ name: 'Shop', address: 'Street 1', legal_name: 'Shop Ltd' });
    expect(issuerOf({ name: 'Shop', address: null, config: {} })).toEqual({ name: 'Shop', address: null, legal_name: null });
    expect(legalNameOf({ legal_name: '' })).toBeNull();
    expect(legalNameOf({ legal_name: 7 })).toBeNull();
  });

  it('prints what the record kept; a record without it (stored before) or with something else prints the location\'s current values', () => {
    expect(printedIssuer({ name: 'Then', address: null, legal_name: null }, current)).toEqual({ name: 'Then', address: null, legal_name: null });
    expect(printedIssuer({ name: 'Then', address: '', legal_name: '' }, current)).toEqual({ name: 'Then', address: null, legal_name: null });
    for (const kept of [null, undefined, 'Then', { address: 'x' }, { name: 'Then', address: 3, legal_name: null }, { name: 'Then', address: null }]) {
      expect(printedIssuer(kept, current)).toBe(current);
    }
  });
});
