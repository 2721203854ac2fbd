import { describe, it, expect } from 'vitest';
import { ticketBai } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft, location, txCtx } from '../shared/test-fixtures.ts';

const validate = (tx = draft(), loc = location('es-ticketbai')) => ticketBai.validateTransaction(tx, txCtx(loc));

describe('es-ticketbai validateTransaction', () => {
  it('defaults: series A, simplified invoice F2, no invoice number (ours)', () => {
    expect(validate()).toEqual({ series: 'A', invoice_type: 'F2' });
  });
  it('series defaults to the location config series', () => {
    expect(validate(draft(), location('es-ticketbai', { series: 'TPV1' })).series).toBe('TPV1');
    expect(validate(draft({ metadata: { series: 'B' } }), location('es-ticketbai', { series: 'TPV1' })).series).toBe('B');
  });
  it('customer with nif → F1; refund → R5 (simplified) or R1', () => {
    expect(validate(draft({ customer_context: { nif: 'B12345674' } })).invoice_type).toBe('F1');
    expect(validate(draft({ type: 'refund' })).invoice_type).toBe('R5');
    expect(validate(draft({ type: 'void', customer_context: { tax_id: 'B12345674' } })).invoice_type).toBe('R1');
  });
  it('keeps a client invoice number', () => {
    expect(validate(draft({ metadata: { invoice_number: '000123' } })).invoice_number).toBe('000123');
  });
  it('refuses non-EUR', () => {
    expect400(() => validate(draft({ currency: 'GBP' })), 'currency must be EUR for Spain locations');
  });
  it('initial status: pending_batch in Bizkaia (LROE), pending elsewhere', () => {
    expect(ticketBai.initialStatus(location('es-ticketbai', { territory: 'bizkaia', territory_code: '48' }))).toBe('pending_batch');
    expect(ticketBai.initialStatus(location('es-ticketbai', { territory: 'araba', territory_code: '01' }))).toBe('pending');
    expect(ticketBai.initialStatus(location('es-ticketbai'))).toBe('pending');
  });
});
