import { describe, it, expect } from 'vitest';
import { ticketBai } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { CUSTOMER_COUNTRY_REQUIRED } from '../es/party.ts';
import { LICENSE_INVALID, SERIES_INVALID as CONFIG_SERIES_INVALID } from './config.ts';
import { draft, line, location, txCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { CUSTOMER_ADDRESS_INVALID, CUSTOMER_POSTAL_CODE_INVALID, ORIGINAL_DATE_FUTURE, correctiveNeedsOriginal } from './foral-rules.ts';
import {
  DESCRIPTION_INVALID,
  OPERATION_DATE_FUTURE,
  OPERATION_DATE_INVALID,
  ORIGINAL_DATE_INVALID,
  ORIGINAL_NUMBER_INVALID,
  ORIGINAL_ON_SALE,
  ORIGINAL_PAIR,
  ORIGINAL_SERIES_ALONE,
  ORIGINAL_SERIES_INVALID,
  TAX_ID_REQUIRED,
  TOO_MANY_RATES,
  customerNameInvalid,
  customerNameRequired,
  rateDecimalsInvalid,
} from './metadata.ts';

const validate = (tx = draft(), loc = location('es-ticketbai'), now?: Date) => ticketBai.validateTransaction(tx, txCtx(loc, now));
const refund = (metadata: Record<string, unknown>) => draft({ type: 'refund', metadata });
/** What every corrective invoice names (./foral-rules.ts): the invoice it corrects. */
const ORIGINAL = { original_invoice_number: '7', original_issue_date: '14-01-2026' };
const withCustomer = (customer_context: Record<string, unknown>, over: Parameters<typeof draft>[0] = {}) => draft({ customer_context, ...over });

describe('es-ticketbai validateTransaction', () => {
  it('a location without a tax_id cannot issue (a 400, not a record without an issuer)', () => {
    expect400(() => validate(draft(), { ...location('es-ticketbai'), tax_id: null }), TAX_ID_REQUIRED);
    expect400(() => validate(draft(), { ...location('es-ticketbai'), tax_id: '  ' }), TAX_ID_REQUIRED);
  });
  it('a customer tax id that is neither a Spanish NIF nor an EU VAT number needs customer_context.country (the record must say 02 or 04)', () => {
    expect400(() => validate(withCustomer({ tax_id: '12-3456789', name: 'US Inc' })), CUSTOMER_COUNTRY_REQUIRED);
    expect(validate(withCustomer({ tax_id: '12-3456789', name: 'US Inc', country: 'US' }))).toMatchObject({ invoice_type: 'F1' });
    expect(validate(withCustomer({ tax_id: 'DE123456789', name: 'GmbH' }))).toMatchObject({ invoice_type: 'F1' });
    expect(validate(withCustomer({ tax_id: 'ES B95123451', name: 'SA' }))).toMatchObject({ invoice_type: 'F1' });
  });

  it('a location stored before the config checks, with a licence or series longer than TextMax20, issues nothing until PATCHed', () => {
    expect400(() => validate(draft(), location('es-ticketbai', { tbai_license: 'TBAIARbdcb78bc0e44f3b4' })), LICENSE_INVALID);
    expect400(() => validate(draft(), location('es-ticketbai', { series: 'TIENDA-CENTRO-2026-XX' })), CONFIG_SERIES_INVALID);
  });

  it('defaults: series A, simplified invoice F2, no invoice number (ours)', () => {
    expect(validate()).toEqual({ series: 'A', invoice_type: 'F2' });
  });
  it('series defaults to the location config series', () => {
    expect(validate(draft(), location('es-ticketbai', { series: 'TPV1' })).series).toBe('TPV1');
    expect(validate(draft({ metadata: { series: 'B' } }), location('es-ticketbai', { series: 'TPV1' })).series).toBe('B');
  });
  it('customer with nif → F1; refund → R5 (simplified) or R1', () => {
    expect(validate(withCustomer({ nif: 'B95123451', name: 'Cliente SA' })).invoice_type).toBe('F1');
    expect(validate(draft({ type: 'refund', metadata: ORIGINAL })).invoice_type).toBe('R5');
    expect(validate(draft({ type: 'void', metadata: ORIGINAL, customer_context: { tax_id: 'B95123451', name: 'Cliente SA' } })).invoice_type).toBe('R1');
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

describe('es-ticketbai description (DescripcionFactura, TextMax250ObligatorioType)', () => {
  it('kept trimmed up to 250 characters (code points, as the XSD counts); blank is "not given"', () => {
    expect(validate(draft({ metadata: { description: '  Cena de empresa ' } })).description).toBe('Cena de empresa');
    const max = '€'.repeat(250);
    expect(validate(draft({ metadata: { description: max } })).description).toBe(max);
    expect(validate(draft({ metadata: { description: 'Línea 1\nLínea 2' } })).description).toBe('Línea 1\nLínea 2');
    expect(validate(draft({ metadata: { description: '   ' } }))).not.toHaveProperty('description');
  });
  it('the record writes it whole, not cut', () => {
    const text = 'Ñ'.repeat(250);
    const { record } = validatedBuild(ticketBai, location('es-ticketbai'), draft({ metadata: { description: text } }));
    expect(record.body).toContain(`<DescripcionFactura>${text}</DescripcionFactura>`);
  });
  it.each([
    ['€'.repeat(251)],
    [42],
    [{ text: 'x' }],
    ['Cena\u0001'],
  ])('refuses %j', (description) => {
    expect400(() => validate(draft({ metadata: { description } })), DESCRIPTION_INVALID);
  });
});

describe('es-ticketbai corrected invoice (FacturasRectificadasSustituidas)', () => {
  it('number + DD-MM-YYYY date (+ optional series) on a refund or void: kept, and written in the record', () => {
    expect(validate(refund({ original_invoice_number: ' 7 ', original_issue_date: '14-01-2026', original_series: ' TPV1 ' }))).toMatchObject({
      invoice_type: 'R5', original_invoice_number: '7', original_issue_date: '14-01-2026', original_series: 'TPV1',
    });
    expect(validate(draft({ type: 'void', metadata: { original_invoice_number: 7, original_issue_date: '14-01-2026' } })).original_invoice_number).toBe('7');
    const { record } = validatedBuild(ticketBai, location('es-ticketbai'), refund({ original_invoice_number: 'F-2026/000007', original_issue_date: '14-01-2026', original_series: 'B' }));
    expect(record.body).toContain(
      '<IDFacturaRectificadaSustituida><SerieFactura>B</SerieFactura><NumFactura>F-2026/000007</NumFactura><FechaExpedicionFactura>14-01-2026</FechaExpedicionFactura></IDFacturaRectificadaSustituida>',
    );
  });
  it('a refund or void that names nothing → 400 (optional in the XSD, refused by the Haciendas Forales: Araba 10-235, Gipuzkoa 011, Bizkaia B4_2000045)', () => {
    expect400(() => validate(refund({})), correctiveNeedsOriginal('R5'));
    expect400(() => validate(draft({ type: 'void' })), correctiveNeedsOriginal('R5'));
    expect400(() => validate(withCustomer({ nif: 'B95123451', name: 'Cliente SA' }, { type: 'refund', metadata: { invoice_type: 'R2' } })), correctiveNeedsOriginal('R2'));
    expect(validate(refund(ORIGINAL))).toMatchObject({ series: 'RA', invoice_type: 'R5' }); // corrective invoices: a series of their own
  });
  it('the corrected invoice cannot be dated after today, the correction\'s own date (Araba 10-70)', () => {
    const at = new Date('2026-01-14T22:30:00Z'); // 23:30 in Madrid, 14-01-2026
    expect(validate(refund(ORIGINAL), undefined, at)).toMatchObject({ original_issue_date: '14-01-2026' });
    expect400(() => validate(refund({ ...ORIGINAL, original_issue_date: '15-01-2026' }), undefined, at), ORIGINAL_DATE_FUTURE);
    expect400(() => validate(refund({ ...ORIGINAL, original_issue_date: '01-01-2027' }), undefined, at), ORIGINAL_DATE_FUTURE);
  });
  it.each([
    [{ original_invoice_number: 'X'.repeat(21), original_issue_date: '14-01-2026' }, ORIGINAL_NUMBER_INVALID],
    [{ original_invoice_number: 'A\u0009B', original_issue_date: '14-01-2026' }, ORIGINAL_NUMBER_INVALID],
    [{ original_invoice_number: -1, original_issue_date: '14-01-2026' }, ORIGINAL_NUMBER_INVALID],
    [{ original_invoice_number: '7', original_issue_date: '2026-01-14' }, ORIGINAL_DATE_INVALID],
    [{ original_invoice_number: '7', original_issue_date: '31-02-2026' }, ORIGINAL_DATE_INVALID],
    [{ original_invoice_number: '7', original_issue_date: 14012026 }, ORIGINAL_DATE_INVALID],
    [{ original_invoice_number: '7', original_issue_date: '14-01-2026', original_series: 'S'.repeat(21) }, ORIGINAL_SERIES_INVALID],
    [{ original_invoice_number: '7', original_issue_date: '14-01-2026', original_series: true }, ORIGINAL_SERIES_INVALID],
    [{ original_invoice_number: '7' }, ORIGINAL_PAIR],
    [{ original_issue_date: '14-01-2026' }, ORIGINAL_PAIR],
    [{ original_series: 'A' }, ORIGINAL_SERIES_ALONE],
  ])('refund with %j → 400', (metadata, message) => {
    expect400(() => validate(refund(metadata)), message);
  });
  it('refused on a sale (it would be lost: only a corrective invoice carries it)', () => {
    expect400(() => validate(draft({ metadata: { original_invoice_number: '7', original_issue_date: '14-01-2026' } })), ORIGINAL_ON_SALE);
  });
});

describe('es-ticketbai tax rates (TipoImpositivo Tipo3.2Type, at most 12 DetalleIVA)', () => {
  it('12 DetalleIVA (rates and recargo de equivalencia pairs) are fine; a rate that is not an IVA rate → 400 listing them', () => {
    // Since the AEAT rate list (es/tax.ts) only IVA rates are taken: 12 breakdown lines need
    // surcharged lines beside the plain ones (each pair is a DetalleIVA of its own).
    const pairs: [number, number | undefined][] = [
      [21, undefined], [21, 5.2], [21, 1.75], [10, undefined], [10, 1.4], [7.5, 1], [5, 0.62], [5, 0.5], [4, undefined], [4, 0.5], [2, 0.26], [0, undefined],
    ];
    const twelve = pairs.map(([tax_rate, surcharge_rate]) => line({ tax_rate, tax_amount: 0, total_amount: 1000, ...(surcharge_rate === undefined ? {} : { surcharge_rate, surcharge_amount: 0 }) }));
    expect(() => validate(withCustomer({ nif: 'B95123451', name: 'Ultramarinos SL' }, { items: twelve }))).not.toThrow();
    expect400(() => validate(draft({ items: [line({ tax_rate: 5.5 })] })), 'items[0].tax_rate must be one of the IVA rates 0, 2, 4, 5, 7.5, 10 or 21');
  });
  it('a rate with more than 2 decimals → 400 naming the line', () => {
    expect400(() => validate(draft({ items: [line({ tax_rate: 21 }), line({ tax_rate: 21.125 })] })), rateDecimalsInvalid(1));
  });
  it('13 distinct rates → 400', () => {
    const many = Array.from({ length: 13 }, (_, i) => line({ tax_rate: i, tax_amount: 0, total_amount: 1000 }));
    expect400(() => validate(draft({ items: many })), TOO_MANY_RATES);
  });
});

describe('es-ticketbai customer name (IDDestinatario/ApellidosNombreRazonSocial)', () => {
  it('required whenever the customer gives a tax id: F1, R1-R4, and an F2/R5 given one', () => {
    expect400(() => validate(withCustomer({ nif: 'B95123451' })), customerNameRequired('F1'));
    expect400(() => validate(withCustomer({ tax_id: 'B95123451', name: '  ' }, { type: 'refund', metadata: ORIGINAL })), customerNameRequired('R1'));
    expect400(
      () => validate(withCustomer({ nif: 'B95123451' }, { type: 'refund', metadata: { invoice_type: 'R3', ...ORIGINAL } })),
      customerNameRequired('R3'),
    );
    expect400(() => validate(withCustomer({ nif: 'B95123451' }, { metadata: { invoice_type: 'F2' } })), customerNameRequired('F2'));
  });
  it('not needed without a tax id (nothing of the customer is written)', () => {
    expect(validate(withCustomer({ email: 'ana@example.com' })).invoice_type).toBe('F2');
  });
  it('name or legal_name, at most 120 characters; the record writes that name, never the tax id', () => {
    expect(() => validate(withCustomer({ nif: 'B95123451', legal_name: 'Cliente SA' }))).not.toThrow();
    expect(() => validate(withCustomer({ nif: 'B95123451', name: 'Ñ'.repeat(120) }))).not.toThrow();
    const { record } = validatedBuild(ticketBai, location('es-ticketbai'), withCustomer({ nif: 'B95123451', name: 'Cliente Ejemplo SA' }));
    expect(record.body).toContain('<IDDestinatario><NIF>B95123451</NIF><ApellidosNombreRazonSocial>Cliente Ejemplo SA</ApellidosNombreRazonSocial>');
  });
  it.each([
    [{ nif: 'B95123451', name: 'N'.repeat(121) }, 'name'],
    [{ nif: 'B95123451', name: 42 }, 'name'],
    [{ nif: 'B95123451', name: 'Cliente\u0007' }, 'name'],
    [{ nif: 'B95123451', legal_name: ['Cliente'] }, 'legal_name'],
  ])('refuses %j', (customer, field) => {
    expect400(() => validate(withCustomer(customer)), customerNameInvalid(field));
  });
});

describe('es-ticketbai operation date (DatosFactura/FechaOperacion)', () => {
  const at = new Date('2026-01-14T22:30:00Z'); // 23:30 in Madrid, 14-01-2026
  const sale = (operation_date: unknown) => draft({ metadata: { operation_date } });

  it('a date in DD-MM-YYYY up to the issue day (Madrid) is taken; the issue day itself states nothing', () => {
    expect(validate(sale('10-01-2026'), undefined, at)).toMatchObject({ operation_date: '10-01-2026' });
    expect(validate(sale(' 31-12-2025 '), undefined, at)).toMatchObject({ operation_date: '31-12-2025' });
    expect(validate(sale('14-01-2026'), undefined, at)).not.toHaveProperty('operation_date');
    // A refund may state the corrected operation's day too.
    expect(validate(refund({ ...ORIGINAL, operation_date: '13-01-2026' }), undefined, at)).toMatchObject({ operation_date: '13-01-2026' });
  });

  it('a malformed one → 400; one later than the issue day (Araba 10-59, 10-90) → 400', () => {
    for (const bad of ['2026-01-10', '32-01-2026', '10/01/2026', '1-1-2026', 20260110, true, '']) {
      if (bad === '') continue; // empty is absent, as every optional field
      expect400(() => validate(sale(bad), undefined, at), OPERATION_DATE_INVALID);
    }
    expect400(() => validate(sale('15-01-2026'), undefined, at), OPERATION_DATE_FUTURE);
    expect400(() => validate(sale('01-01-2027'), undefined, at), OPERATION_DATE_FUTURE);
    expect400(() => validate(refund({ ...ORIGINAL, operation_date: '15-01-2026' }), undefined, at), OPERATION_DATE_FUTURE);
  });

  it('the record writes FechaOperacion first in DatosFactura and the receipt hint states it; none when not given', () => {
    const { record } = validatedBuild(ticketBai, location('es-ticketbai'), sale('10-01-2026'), { now: at });
    expect(record.body).toContain('<DatosFactura><FechaOperacion>10-01-2026</FechaOperacion><DescripcionFactura>');
    expect(record.renderHints).toContainEqual(expect.objectContaining({ key: 'operation_date', placement: 'header', value: '10-01-2026' }));
    const plain = validatedBuild(ticketBai, location('es-ticketbai'), draft(), { now: at }).record;
    expect(plain.body).not.toContain('FechaOperacion');
    expect(plain.renderHints.map((h) => h.key)).not.toContain('operation_date');
  });
});

describe('es-ticketbai customer address (IDDestinatario/Direccion, CodigoPostal)', () => {
  const nif = { nif: 'B95123451', name: 'Cliente SA' };
  it('written when given, as a string or an object; too long or not text → 400 (not cut)', () => {
    const withAddress = validatedBuild(ticketBai, location('es-ticketbai'), withCustomer({ ...nif, address: { street: 'Calle Mayor 1', city: 'Donostia', postal_code: '20001' } })).record.body;
    expect(withAddress).toContain('<ApellidosNombreRazonSocial>Cliente SA</ApellidosNombreRazonSocial><CodigoPostal>20001</CodigoPostal><Direccion>Calle Mayor 1, Donostia</Direccion></IDDestinatario>');
    expect400(() => validate(withCustomer({ ...nif, address: 'x'.repeat(251), postal_code: '20001' })), CUSTOMER_ADDRESS_INVALID);
    expect400(() => validate(withCustomer({ ...nif, address: 42 })), CUSTOMER_ADDRESS_INVALID);
    expect400(() => validate(withCustomer({ ...nif, address: 'Calle\u0001', postal_code: '20001' })), CUSTOMER_ADDRESS_INVALID);
    expect400(() => validate(withCustomer({ ...nif, address: 'Calle Mayor 1', postal_code: '2'.repeat(21) })), CUSTOMER_POSTAL_CODE_INVALID);
    // Not required (decision): a customer without an address is still taken.
    expect(validate(withCustomer(nif))).toMatchObject({ invoice_type: 'F1' });
  });
});
