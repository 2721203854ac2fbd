/**
 * TicketBAI business validations of the Haciendas Forales through the API
 * (src/countries/es-ticketbai/foral-rules.ts), on the store TEST_STORE names (run with
 * --project pglite and --project postgres): what the XSD lets through but Araba, Gipuzkoa or
 * Batuz refuse is a 400 at create and preview, before anything is numbered, chained or
 * stored; what is taken is written as they ask (XSD-valid, checked with xmllint).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import {
  ARABA_RESERVED_SERIES,
  CUSTOMER_IS_ISSUER,
  CUSTOMER_NIF_INVALID,
  E5_NEEDS_EU_CUSTOMER,
  CUSTOMER_ADDRESS_INVALID,
  ORIGINAL_DATE_FUTURE,
  SURCHARGE_NEEDS_NIF,
  correctiveNeedsOriginal,
  specialRegimeNotForEntity,
} from '../../src/countries/es-ticketbai/foral-rules.ts';
import { OPERATION_DATE_FUTURE, OPERATION_DATE_INVALID } from '../../src/countries/es-ticketbai/metadata.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { tagText } from '../support/spain.ts';
import { configs } from '../support/fixtures.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock(new Date('2026-03-02T10:00:00Z')) });
});
afterAll(() => t?.close());

async function fiscalRecord(key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

function expectValid(xml: string): void {
  if (!HAVE_SCHEMAS) return console.warn(`ticketbai-foral-rules: XSD validation skipped: ${SCHEMAS_MISSING_MESSAGE}`);
  const v = xsdValidate(xml, 'es/ticketbai/ticketbaiv1-2-2.xsd');
  expect(v.ok, v.output).toBe(true);
}

async function transactionsOf(key: string): Promise<number> {
  const res = await t.request({ method: 'GET', url: '/v1/transactions', key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().total;
}

/** 400 with `message` at create and at preview. */
async function refused(key: string, body: object, message: string, headers: Record<string, string> = {}): Promise<void> {
  for (const url of ['/v1/transactions', '/v1/transactions/preview']) {
    const res = await t.request({ method: 'POST', url, key, payload: body, headers });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe(message);
  }
}

/** A test key's record sent to the Hacienda's own test service, checked as a live one. */
const AUTHORITY = { 'x-svc-sandbox': 'authority' };
const SPANISH = { nif: 'B95123451', name: 'Ultramarinos Ejemplo SL' };
const GERMAN = { tax_id: 'DE123456789', name: 'Maschinenbau Beispiel GmbH' };
const ORIGINAL = { original_invoice_number: '1', original_issue_date: '02-03-2026', original_series: 'A' };
const exportLine = { description: 'Maquinaria', quantity: 1, unit_price: 150000, tax_rate: 0, tax_amount: 0, total_amount: 150000 };
const exempt = (loc: string, code: string, customer_context?: object) =>
  saleBody(loc, { items: [exportLine], pretax_amount: 150000, tax_amount: 0, total_amount: 150000, metadata: { exemption_code: code }, ...(customer_context ? { customer_context } : {}) });
/** 20.00 of oil at 21 % with the 5.2 % surcharge: 20.00 + 4.20 + 1.04. */
const surcharged = (loc: string, over: Record<string, unknown> = {}) =>
  saleBody(loc, {
    items: [{ description: 'Aceite', quantity: 2, unit_price: 1000, tax_rate: 21, tax_amount: 420, total_amount: 2420, surcharge_rate: 5.2 }],
    pretax_amount: 2000, tax_amount: 420, total_amount: 2524, ...over,
  });

describe('TicketBAI: what the Haciendas Forales refuse is a 400 at create and preview, nothing stored', () => {
  it('a refund or void that names no corrected invoice (live, or on the way to a Hacienda\'s test service), or names one dated after today; with it the rectificativa lists it', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    await refused(key, saleBody(loc, { type: 'refund' }), correctiveNeedsOriginal('R5'), AUTHORITY);
    await refused(key, saleBody(loc, { type: 'void', customer_context: SPANISH }), correctiveNeedsOriginal('R1'), AUTHORITY);
    await refused(key, saleBody(loc, { type: 'refund', metadata: { ...ORIGINAL, original_issue_date: '03-03-2026' } }), ORIGINAL_DATE_FUTURE);
    expect(await transactionsOf(key)).toBe(0);
    // The sandbox stub keeps the spec's minimal refund working (no header: the stub).
    const minimal = await createTx(t, key, saleBody(loc, { type: 'refund' }));
    expect(minimal.statusCode, minimal.body).toBe(201);
    expect(await fiscalRecord(key, minimal.json().id)).not.toContain('<FacturasRectificadasSustituidas>');

    const ok = await createTx(t, key, saleBody(loc, { type: 'refund', metadata: ORIGINAL }));
    expect(ok.statusCode, ok.body).toBe(201);
    const xml = await fiscalRecord(key, ok.json().id);
    expect(xml).toContain(
      '<FacturaRectificativa><Codigo>R5</Codigo><Tipo>I</Tipo></FacturaRectificativa><FacturasRectificadasSustituidas><IDFacturaRectificadaSustituida><SerieFactura>A</SerieFactura><NumFactura>1</NumFactura><FechaExpedicionFactura>02-03-2026</FechaExpedicionFactura></IDFacturaRectificadaSustituida></FacturasRectificadasSustituidas>',
    );
    expectValid(xml);
  });

  it('recargo de equivalencia without a Spanish customer (Araba 10-167); with one it is written', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    await refused(key, surcharged(loc), SURCHARGE_NEEDS_NIF);
    await refused(key, surcharged(loc, { customer_context: GERMAN }), SURCHARGE_NEEDS_NIF);
    expect(await transactionsOf(key)).toBe(0);
    const ok = await createTx(t, key, surcharged(loc, { customer_context: SPANISH }));
    expect(ok.statusCode, ok.body).toBe(201);
    const xml = await fiscalRecord(key, ok.json().id);
    expect(tagText(xml, 'CuotaRecargoEquivalencia')).toBe('1.04');
    expectValid(xml);
  });

  it('an E5 (intra-EU supply) without an EU customer (Araba 10-168); an export (E2) is keyed 02 (10-174)', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    await refused(key, exempt(loc, 'E5'), E5_NEEDS_EU_CUSTOMER);
    await refused(key, exempt(loc, 'E5', SPANISH), E5_NEEDS_EU_CUSTOMER);
    expect(await transactionsOf(key)).toBe(0);

    const e5 = await createTx(t, key, exempt(loc, 'E5', GERMAN));
    expect(e5.statusCode, e5.body).toBe(201);
    const supply = await fiscalRecord(key, e5.json().id);
    expect(supply).toContain('<IDOtro><CodigoPais>DE</CodigoPais><IDType>02</IDType><ID>DE123456789</ID></IDOtro>');
    expect(supply).toContain('<Claves><IDClave><ClaveRegimenIvaOpTrascendencia>01</ClaveRegimenIvaOpTrascendencia></IDClave></Claves>');
    expectValid(supply);

    const e2 = await createTx(t, key, exempt(loc, 'E2', { tax_id: '12-3456789', name: 'Example Inc', country: 'US' }));
    expect(e2.statusCode, e2.body).toBe(201);
    const exported = await fiscalRecord(key, e2.json().id);
    expect(exported).toContain('<Claves><IDClave><ClaveRegimenIvaOpTrascendencia>02</ClaveRegimenIvaOpTrascendencia></IDClave></Claves>');
    expect(exported).toContain('<CausaExencion>E2</CausaExencion>');
    expectValid(exported);
  });

  it('Araba: a DFA_ series (FakturAraba\'s, 004) at registration, PATCH and create', async () => {
    const { key } = await t.signup();
    const araba = { ...configs.ticketbai, territory: 'araba', tbai_license: 'TBAIARbf8c0e3f7a8c' };
    const reg = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { name: 'Gasteiz', country: 'ES', tax_id: 'B12345674', country_config: { ...araba, series: 'DFA_TPV' } } });
    expect(reg.statusCode, reg.body).toBe(400);
    expect(reg.json().error).toBe(ARABA_RESERVED_SERIES);
    const loc = await createLocation(t, key, 'es-ticketbai', { name: 'Gasteiz', country_config: araba });
    const patch = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...araba, series: 'dfa_tpv' } } });
    expect(patch.statusCode, patch.body).toBe(400);
    expect(patch.json().error).toBe(ARABA_RESERVED_SERIES);
    await refused(key, saleBody(loc, { metadata: { series: 'DFA_1' } }), ARABA_RESERVED_SERIES);
    expect(await transactionsOf(key)).toBe(0);
    const ok = await createTx(t, key, saleBody(loc, { metadata: { series: 'TPV1' } }));
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('a customer NIF whose control character is wrong (Araba 10-68, Gipuzkoa 1153, Bizkaia B4_2000011), or the issuer\'s own NIF', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    await refused(key, saleBody(loc, { customer_context: { nif: 'B95123452', name: 'Cliente' } }), CUSTOMER_NIF_INVALID);
    await refused(key, saleBody(loc, { type: 'refund', metadata: ORIGINAL, customer_context: { tax_id: 'ES 12345678A', name: 'Cliente' } }), CUSTOMER_NIF_INVALID);
    // The location's own NIF (B12345674) as its customer.
    await refused(key, saleBody(loc, { customer_context: { nif: 'ESB12345674', name: 'Bar Pepe' } }), CUSTOMER_IS_ISSUER);
    expect(await transactionsOf(key)).toBe(0);
    const ok = await createTx(t, key, saleBody(loc, { customer_context: SPANISH }));
    expect(ok.statusCode, ok.body).toBe(201);
    const xml = await fiscalRecord(key, ok.json().id);
    expect(xml).toContain('<IDDestinatario><NIF>B95123451</NIF>');
    expectValid(xml);
  });

  it('keys 51/52 only from a natural person or an E/J entity (Araba 10-132): registration and PATCH refuse a company in either regime', async () => {
    const { key } = await t.signup();
    for (const regime of ['recargo_equivalencia', 'simplified'] as const) {
      const reg = await t.request({
        method: 'POST', url: '/v1/locations', key,
        payload: { name: 'Tienda', country: 'ES', tax_id: 'B12345674', country_config: { ...configs.ticketbai, vat_regime: regime } },
      });
      expect(reg.statusCode, reg.body).toBe(400);
      expect(reg.json().error).toBe(specialRegimeNotForEntity(regime));
    }
    const company = await createLocation(t, key, 'es-ticketbai');
    const patch = await t.request({ method: 'PATCH', url: `/v1/locations/${company}`, key, payload: { country_config: { ...configs.ticketbai, vat_regime: 'simplified' } } });
    expect(patch.statusCode, patch.body).toBe(400);
    expect(patch.json().error).toBe(specialRegimeNotForEntity('simplified'));
    // A sole trader (DNI) is taken, and its records are keyed 51.
    const person = await createLocation(t, key, 'es-ticketbai', { tax_id: '12345678Z', country_config: { ...configs.ticketbai, vat_regime: 'recargo_equivalencia' } });
    const sale = await createTx(t, key, saleBody(person));
    expect(sale.statusCode, sale.body).toBe(201);
    const xml = await fiscalRecord(key, sale.json().id);
    expect(xml).toContain('<ClaveRegimenIvaOpTrascendencia>51</ClaveRegimenIvaOpTrascendencia>');
    expectValid(xml);
  });
});

describe('TicketBAI: each DetalleIVA quota within 0.01 of base × rate (Araba 10-74, 10-77)', () => {
  it('many lines whose own rounding drifts: what they charged is split again into base and quota; the lines and ImporteTotalFactura are what was paid', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    // 5 sweets at 0.12, 21 %: 0.03 each (0.0252 rounded up), 0.15 in all; 0.60 × 21 % = 0.126.
    const items = Array.from({ length: 5 }, (_, i) => ({ description: `Caramelo ${i + 1}`, quantity: 1, unit_price: 12, tax_rate: 21, tax_amount: 3, total_amount: 15 }));
    const res = await createTx(t, key, saleBody(loc, { items, pretax_amount: 60, tax_amount: 15, total_amount: 75 }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecord(key, res.json().id);
    // 0.75 charged: base 0.62, 0.62 × 21 % = 0.1302 → 0.13; 0.62 + 0.13 = 0.75 (session 26 wrote 0.60 + 0.13).
    expect(xml).toContain('<BaseImponible>0.62</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>0.13</CuotaImpuesto>');
    expect(tagText(xml, 'ImporteTotalFactura')).toBe('0.75');
    expect(xml.match(/<ImporteTotal>0\.15<\/ImporteTotal>/g)).toHaveLength(5);
    expectValid(xml);
  });
});

describe('TicketBAI: operation date, customer address, a rectificativa whose lines round otherwise than their rate', () => {
  it('metadata.operation_date is written as FechaOperacion and printed; a later or malformed one is a 400 at create and preview', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    await refused(key, saleBody(loc, { metadata: { operation_date: '03-03-2026' } }), OPERATION_DATE_FUTURE);
    await refused(key, saleBody(loc, { metadata: { operation_date: '2026-02-27' } }), OPERATION_DATE_INVALID);
    expect(await transactionsOf(key)).toBe(0);
    const res = await createTx(t, key, saleBody(loc, { metadata: { operation_date: '27-02-2026' } }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecord(key, res.json().id);
    expect(xml).toContain('<DatosFactura><FechaOperacion>27-02-2026</FechaOperacion><DescripcionFactura>');
    expectValid(xml);
    const text = await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}/receipt?format=text`, key });
    expect(text.statusCode, text.body).toBe(200);
    expect(text.body).toContain('Fecha de operación 27-02-2026');
  });

  it('the customer\'s address, as a string or an object, is written as Direccion and CodigoPostal; one too long is a 400', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    await refused(key, saleBody(loc, { customer_context: { ...SPANISH, address: 'x'.repeat(251) } }), CUSTOMER_ADDRESS_INVALID);
    const res = await createTx(t, key, saleBody(loc, { customer_context: { ...SPANISH, address: { street: 'Calle Mayor 1', city: 'Donostia', postal_code: '20001' } } }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecord(key, res.json().id);
    expect(xml).toContain('<CodigoPostal>20001</CodigoPostal><Direccion>Calle Mayor 1, Donostia</Direccion></IDDestinatario>');
    expectValid(xml);
    // The receipt names the recipient as the signed record does (RD 1619/2012 art. 6.1.d-e).
    const text = await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}/receipt?format=text`, key });
    expect(text.statusCode, text.body).toBe(200);
    expect(text.body.replace(/\s+/g, ' ')).toContain(`Destinatario: ${SPANISH.name} NIF destinatario: ${SPANISH.nif} Domicilio destinatario: Calle Mayor 1, Donostia, 20001 -----`);
  });

  it('a refund of lines rounded each on its own: DetalleIVA adds up to ImporteTotalFactura and the lines, and the receipt prints the record\'s base and quota', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    // Per line: 7 × 0.12 at 10 % and 5 × 0.18 + 4 × 0.03 at 21 %; per rate 0.81 and 0.99.
    const items = [
      ...Array.from({ length: 7 }, (_, i) => ({ description: `Café ${i + 1}`, quantity: 1, unit_price: 115, tax_rate: 10, tax_amount: 12, total_amount: 127 })),
      ...Array.from({ length: 5 }, (_, i) => ({ description: `Pastel ${i + 1}`, quantity: 1, unit_price: 85, tax_rate: 21, tax_amount: 18, total_amount: 103 })),
      ...Array.from({ length: 4 }, (_, i) => ({ description: `Caramelo ${i + 1}`, quantity: 1, unit_price: 12, tax_rate: 21, tax_amount: 3, total_amount: 15 })),
    ];
    const res = await createTx(t, key, saleBody(loc, {
      type: 'refund', items, pretax_amount: 1278, tax_amount: 186, total_amount: 1464, metadata: ORIGINAL,
    }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecord(key, res.json().id);
    expect(xml).toContain('<BaseImponible>-8.08</BaseImponible><TipoImpositivo>10.00</TipoImpositivo><CuotaImpuesto>-0.81</CuotaImpuesto>');
    expect(xml).toContain('<BaseImponible>-4.75</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>-1.00</CuotaImpuesto>');
    expect(tagText(xml, 'ImporteTotalFactura')).toBe('-14.64');
    expectValid(xml);
    const text = await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}/receipt?format=text`, key });
    expect(text.statusCode, text.body).toBe(200);
    // The receipt: the record's rows and the subtotal they make, adding up to the total paid back.
    expect(text.body).toMatch(/Base imponible\s+-12,83/);
    expect(text.body).toMatch(/IVA 10 % \(-8,08\)\s+-0,81/);
    expect(text.body).toMatch(/IVA 21 % \(-4,75\)\s+-1,00/);
    expect(text.body).toMatch(/TOTAL EUR\s+-14,64/);
  });
});
