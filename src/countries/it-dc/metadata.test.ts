import { describe, it, expect } from 'vitest';
import { documentoCommerciale as dc } from './index.ts';
import { SUM_MESSAGE } from './metadata.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft, location, txCtx } from '../shared/test-fixtures.ts';

const loc = location('it-dc');
const validate = (metadata: Record<string, unknown>, over: Parameters<typeof draft>[0] = {}) =>
  dc.validateTransaction(draft({ metadata, ...over }), txCtx(loc));
const original = { original_matricola: 'ABCD-123456', original_date: '2026-01-10', original_number: '0012-0034' };

describe('it-dc validateTransaction', () => {
  it('payment defaults from the payment method', () => {
    expect(validate({}, { payment_method: 'cash' })).toEqual({ cash_amount: 1210, is_return: false, is_cancellation: false });
    expect(validate({}, { payment_method: 'card' })).toMatchObject({ electronic_amount: 1210 });
    expect(validate({}, { payment_method: 'transfer' })).toMatchObject({ electronic_amount: 1210 });
    expect(validate({}, { payment_method: 'other' })).toEqual({ is_return: false, is_cancellation: false });
    expect(validate({ ticket_amount: 210 }, { payment_method: 'cash' })).toMatchObject({ cash_amount: 1000, ticket_amount: 210 });
  });

  it('split payments must add up to the total', () => {
    expect(validate({ cash_amount: 1000, electronic_amount: 110, ticket_amount: 100 })).toMatchObject({ cash_amount: 1000, electronic_amount: 110 });
    expect400(() => validate({ cash_amount: 1000, electronic_amount: 100 }), SUM_MESSAGE);
    // One of them given: it (with the ticket) says how the whole was paid; the other is 0.
    expect(validate({ cash_amount: 1210 }, { payment_method: 'card' })).toMatchObject({ cash_amount: 1210 });
    expect(validate({ electronic_amount: 1110, ticket_amount: 100 })).toMatchObject({ electronic_amount: 1110, ticket_amount: 100 });
    for (const meta of [{ electronic_amount: 999_999 }, { cash_amount: 1 }, { cash_amount: 5, ticket_amount: 7 }]) expect400(() => validate(meta), SUM_MESSAGE);
    expect(SUM_MESSAGE).toBe('cash_amount + electronic_amount + ticket_amount must equal total_amount');
    expect400(() => validate({ cash_amount: 12.1, electronic_amount: 0 }), 'metadata.cash_amount must be a non-negative integer amount in minor units');
  });

  it('refunds and voids are returns, and need the original document', () => {
    expect(validate(original, { type: 'refund' })).toMatchObject({ is_return: true, is_cancellation: false, ...original });
    expect(validate({ ...original, is_cancellation: true }, { type: 'void' })).toMatchObject({ is_return: false, is_cancellation: true });
    expect400(() => validate({}, { type: 'refund' }), 'metadata.original_matricola is required for returns and cancellations');
    expect400(() => validate({ ...original, original_date: undefined }, { type: 'refund' }), 'metadata.original_date is required for returns and cancellations');
    expect400(() => validate({ ...original, original_number: undefined }, { type: 'refund' }), 'metadata.original_number is required for returns and cancellations');
    expect400(() => validate({ ...original, original_number: '12-34' }, { type: 'refund' }), 'metadata.original_number must have the form NNNN-NNNN');
    expect400(() => validate({ ...original, original_date: '10-01-2026' }, { type: 'refund' }), 'metadata.original_date must be a date in the form YYYY-MM-DD');
    expect400(() => validate({ ...original, is_return: true, is_cancellation: true }, { type: 'void' }), 'metadata.is_return and metadata.is_cancellation cannot both be true');
    expect400(() => validate({ ...original, is_return: false }, { type: 'refund' }), 'metadata.is_return or metadata.is_cancellation must be true for refund and void transactions');
    expect400(() => validate({ is_return: 'yes' }), 'metadata.is_return must be a boolean');
  });

  it('a sale flagged as a return needs the original too', () => {
    expect400(() => validate({ is_return: true }), 'metadata.original_matricola is required for returns and cancellations');
  });

  it('lottery code and customer codice fiscale', () => {
    expect(validate({ lottery_code: 'AB12CD34', customer_codice_fiscale: 'rssmra85t10a562s' })).toMatchObject({
      lottery_code: 'AB12CD34',
      customer_codice_fiscale: 'RSSMRA85T10A562S',
    });
    expect400(() => validate({ lottery_code: 'AB12CD3' }), 'metadata.lottery_code must be 8 alphanumeric characters');
    expect400(() => validate({ customer_codice_fiscale: '01234567897' }), 'metadata.customer_codice_fiscale must be 16 alphanumeric characters');
    expect400(() => validate({ ticket_count: -1 }), 'metadata.ticket_count must be a non-negative integer');
  });
});
