import { describe, it, expect } from 'vitest';
import { inGuideForm } from '../../core/transaction-request.ts';
import { ValidationError } from '../../core/errors.ts';
import { nf525 } from './index.ts';
import { FRENCH_VAT_RATES, isFrenchVatRate } from './rates.ts';
import { draft, line, location, txCtx } from '../shared/test-fixtures.ts';
import { expect400 } from '../shared/test-helpers.ts';

const loc = location('fr-nf525');
const at = (...rates: number[]) => draft({ items: rates.map((tax_rate) => line({ tax_rate, tax_amount: Math.round(10 * tax_rate), total_amount: 1000 + Math.round(10 * tax_rate) })) });
const validate = (...rates: number[]) => nf525.validateTransaction(at(...rates), txCtx(loc));
const LIST = '20, 13, 10, 8.5, 5.5, 2.1, 1.75, 1.05, 0.9 or 0';

describe('fr-nf525 VAT rates', () => {
  it('lists the rates of metropolitan France, Corsica and the overseas departments, and 0', () => {
    // Mainland (CGI 278, 278-0 bis, 279, 281 quater ff.), Corsica (297), Guadeloupe, Martinique, La Réunion (296, 296 bis).
    expect([...FRENCH_VAT_RATES].sort((a, b) => a - b)).toEqual([0, 0.9, 1.05, 1.75, 2.1, 5.5, 8.5, 10, 13, 20]);
  });

  it.each(FRENCH_VAT_RATES.map((r) => [r]))('accepts a line at %s %%', (rate) => {
    expect(validate(rate)).toEqual({});
  });

  it('accepts a sale mixing rates (a 0 % line needs nothing more)', () => {
    expect(validate(20, 5.5, 0)).toEqual({});
  });

  it.each([21, 19.6, 7, 5, 2, 24, 22, 100, 0.5, 20.5])('refuses a line at %s %% (not a French rate)', (rate) => {
    expect400(() => validate(rate), `items[0].tax_rate must be a French VAT rate (${LIST})`);
    expect(isFrenchVatRate(rate)).toBe(false);
  });

  it('names the first line at a foreign rate, for a refund and a void too', () => {
    for (const type of ['sale', 'refund', 'void'] as const) {
      expect400(() => nf525.validateTransaction({ ...at(20, 10, 21), type }, txCtx(loc)), `items[2].tax_rate must be a French VAT rate (${LIST})`);
    }
  });

  it('a guide-form caller reads the rates in hundredths of a percent', () => {
    let err: unknown;
    try { validate(21); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(ValidationError);
    expect((inGuideForm(err) as ValidationError).message)
      .toBe('line_items[0].vat_rate must be a French VAT rate (2000, 1300, 1000, 850, 550, 210, 175, 105, 90 or 0)');
  });

  it('still refuses another currency first', () => {
    expect(() => nf525.validateTransaction({ ...at(21), currency: 'USD' }, txCtx(loc))).toThrow(/currency/);
  });
});
