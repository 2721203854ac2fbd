import { describe, it, expect } from 'vitest';
import { sii } from './index.ts';
import { OPERATION_DATE_LATER, OPERATION_DATE_ON_VOID, SII_SIMPLIFIED_TOO_LARGE } from './metadata.ts';
import { OPERATION_DATE_INVALID } from '../es/operation-date.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft, line, location, txCtx } from '../shared/test-fixtures.ts';
import { liveTaxIdRequired } from '../es/common.ts';

const loc = location('es-sii');
const validate = (metadata: Record<string, unknown>, over: Parameters<typeof draft>[0] = {}) =>
  sii.validateTransaction(draft({ metadata, ...over }), txCtx(loc));
const F1 = 'counterparty_nif and counterparty_name are required in metadata for SII standard invoices (F1); set simplified: true for an F2';
const party = { counterparty_nif: 'B12345674', counterparty_name: 'Cliente SA' };

describe('es-sii validateTransaction', () => {
  it('a live transaction needs the location tax_id (the holder is named by NIF, never 000000000); test keys may go without', () => {
    const bare = { ...loc, tax_id: null };
    const tx = draft({ metadata: { simplified: true } });
    expect400(() => sii.validateTransaction(tx, { ...txCtx(bare), environment: 'live' }), liveTaxIdRequired('sii'));
    expect400(() => sii.validateTransaction(tx, { ...txCtx({ ...loc, tax_id: '  ' }), environment: 'live' }), liveTaxIdRequired('sii'));
    expect(liveTaxIdRequired('sii')).toBe('location tax_id is required for live sii transactions: AEAT identifies the issuer by its NIF');
    expect(sii.validateTransaction(tx, txCtx(bare))).toMatchObject({ invoice_type: 'F2' });
    expect(sii.validateTransaction(tx, { ...txCtx(loc), environment: 'live' })).toMatchObject({ invoice_type: 'F2' });
  });

  it('no simplified invoice above 3,000.00 EUR (RD 1619/2012 art. 4): F2 refused, F1 and R5 not', () => {
    const over = [line({ unit_price: 247_935, tax_rate: 21, tax_amount: 52_066, total_amount: 300_001 })];
    expect400(() => validate({ simplified: true }, { items: over }), SII_SIMPLIFIED_TOO_LARGE);
    expect(validate(party, { items: over })).toMatchObject({ invoice_type: 'F1' });
    expect(validate({ simplified: true }, { items: over, type: 'refund' })).toMatchObject({ invoice_type: 'R5' });
  });

  it('defaults for a simplified sale (invoice_number left to the core)', () => {
    expect(validate({ simplified: true })).toEqual({
      simplified: true,
      issue_date: '15-01-2026',
      description: 'Coffee',
      regime_key: '01',
      exercise: '2026',
      period: '01',
      book_type: 'issued',
      invoice_type: 'F2',
    });
  });

  it('F1 (the default) needs the counterparty', () => {
    expect400(() => validate({}), F1);
    expect400(() => validate({ counterparty_nif: 'B12345674' }), F1);
    expect(validate(party)).toMatchObject({ invoice_type: 'F1', ...party });
  });

  it('a foreign counterparty is named by id type, country and id', () => {
    const foreign = { counterparty_name: 'Client SARL', counterparty_id_type: '02', counterparty_country: 'FR', counterparty_id: 'FR12345678901' };
    expect(validate(foreign).invoice_type).toBe('F1');
    expect400(
      () => validate({ counterparty_name: 'C', counterparty_id_type: '02' }),
      'metadata.counterparty_id_type, counterparty_country and counterparty_id must be given together for a foreign party',
    );
    expect400(() => validate({ ...foreign, counterparty_id_type: '01' }), 'metadata.counterparty_id_type must be one of 02, 03, 04, 05, 06, 07');
    expect400(() => validate({ ...party, counterparty_nif: '12345678A' }), 'metadata.counterparty_nif must be a valid Spanish NIF');
  });

  it('refund → R1 with the original invoice (R5 when simplified)', () => {
    const original = { original_invoice_number: 'F-2026-1', original_issue_date: '10-01-2026' };
    expect(validate({ ...party, ...original }, { type: 'refund' }).invoice_type).toBe('R1');
    expect400(
      () => validate({ ...party }, { type: 'refund' }),
      'original_invoice_number and original_issue_date are required in metadata for SII credit notes (R1)',
    );
    expect400(
      () => validate({ ...party, ...original, original_issue_date: '2026-01-10' }, { type: 'refund' }),
      'metadata.original_issue_date must be a date in the form DD-MM-YYYY',
    );
    expect(validate({ simplified: true }, { type: 'refund' }).invoice_type).toBe('R5');
  });

  it('void → the baja of the invoice it names (no invoice type, no customer), in that invoice\'s period', () => {
    const voided = validate({ original_invoice_number: 'F-2025-77', original_issue_date: '30-12-2025' }, { type: 'void' });
    expect(voided).toMatchObject({ exercise: '2025', period: '12', original_invoice_number: 'F-2025-77' });
    expect(voided.invoice_type).toBeUndefined();
    expect400(
      () => validate({ original_invoice_number: 'F-2025-77' }, { type: 'void' }),
      'original_invoice_number and original_issue_date are required in metadata for an SII void (the baja names the invoice it withdraws)',
    );
  });

  it('exercise and period follow a given issue date', () => {
    expect(validate({ simplified: true, issue_date: '28-12-2025' })).toMatchObject({ exercise: '2025', period: '12' });
    expect(validate({ simplified: true, period: 3, exercise: 2026 })).toMatchObject({ exercise: '2026', period: '03' });
    expect(validate({ simplified: true, period: '0A' }).period).toBe('0A');
  });

  it.each([
    [{ issue_date: '2026-01-15' }, 'metadata.issue_date must be a date in the form DD-MM-YYYY'],
    [{ issue_date: '31-02-2026' }, 'metadata.issue_date must be a date in the form DD-MM-YYYY'],
    [{ regime_key: '04' }, 'metadata.regime_key must be one of 01, 02, 03, 05, 07, 09'],
    [{ period: '13' }, 'metadata.period must be 01-12 or 0A'],
    [{ exercise: '26' }, 'metadata.exercise must be a 4-digit year'],
    [{ simplified: 'yes' }, 'metadata.simplified must be a boolean'],
    [{ book_type: 'sales' }, 'metadata.book_type must be issued or received'],
  ])('refuses %j', (meta, message) => {
    expect400(() => validate({ simplified: true, ...meta }), message);
  });

  it('keeps the given invoice number and series', () => {
    expect(validate({ simplified: true, invoice_number: 'F-1', series: '2026/' })).toMatchObject({ invoice_number: 'F-1', series: '2026/' });
  });

  it('refuses what the SII record cannot hold: long numbers, odd rates, more than 6 rates', () => {
    expect400(
      () => validate({ simplified: true, series: 'S'.repeat(20), invoice_number: 'N'.repeat(41) }),
      'metadata.series and metadata.invoice_number together must be at most 60 characters',
    );
    expect(validate({ simplified: true, series: 'S'.repeat(20), invoice_number: 'N'.repeat(40) }).invoice_number).toBe('N'.repeat(40));
    expect400(() => validate({ simplified: true }, { items: [line(), line({ tax_rate: 5.125 })] }), 'items[1].tax_rate must have at most 2 decimals for SII');
    // Only the IVA rates AEAT accepts (es/tax.ts; 5.5 was accepted before that rule).
    expect400(() => validate({ simplified: true }, { items: [line({ tax_rate: 5.5 })] }), 'items[0].tax_rate must be one of the IVA rates 0, 2, 4, 5, 7.5, 10 or 21');
    const seven = [0, 2, 4, 5, 7.5, 10, 21].map((tax_rate) => line({ tax_rate }));
    expect400(() => validate({ simplified: true }, { items: seven }), 'SII records take at most 6 different tax rates per invoice');
    expect(validate({ simplified: true }, { items: seven.slice(1) }).invoice_type).toBe('F2');
  });
});

describe('es-sii metadata.operation_date (FacturaExpedida/FechaOperacion)', () => {
  it('not later than the issue date (metadata.issue_date, else today in Madrid); equal is dropped; malformed is a 400', () => {
    expect(validate({ ...party, operation_date: '10-01-2026' })).toMatchObject({ operation_date: '10-01-2026', issue_date: '15-01-2026' });
    expect(validate({ ...party, operation_date: '15-01-2026' })).not.toHaveProperty('operation_date');
    expect400(() => validate({ ...party, operation_date: '16-01-2026' }), OPERATION_DATE_LATER);
    // An invoice issued earlier (issue_date): the operation may not follow it.
    expect(validate({ ...party, issue_date: '12-01-2026', operation_date: '05-01-2026' })).toMatchObject({ operation_date: '05-01-2026' });
    expect400(() => validate({ ...party, issue_date: '12-01-2026', operation_date: '13-01-2026' }), OPERATION_DATE_LATER);
    expect400(() => validate({ ...party, operation_date: '2026-01-10' }), OPERATION_DATE_INVALID);
  });

  it('a void (a baja, which carries no FechaOperacion) takes none', () => {
    const voidOf = (metadata: Record<string, unknown>) => validate({ original_invoice_number: 'F-1', original_issue_date: '10-01-2026', ...metadata }, { type: 'void' });
    expect400(() => voidOf({ operation_date: '09-01-2026' }), OPERATION_DATE_ON_VOID);
    expect(voidOf({})).not.toHaveProperty('operation_date');
  });
});
