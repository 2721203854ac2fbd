/**
 * `metadata.operation_date` at VERI*FACTU and SII locations through the API, on the store
 * TEST_STORE names (run with --project pglite and --project postgres): the day of the
 * operation when the invoice is issued later (RD 1619/2012 art. 6.1.f), written as
 * `FechaOperacion` (src/countries/es/operation-date.ts), valid against the official XSDs,
 * printed on the receipt; a malformed or later one is a 400 at create and preview, nothing
 * stored. TicketBAI's is in ticketbai-foral-rules.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { regFactuRequest } from '../../src/countries/es-verifactu/soap.ts';
import { suministroBody } from '../../src/countries/es-sii/soap.ts';
import { OPERATION_DATE_FUTURE, OPERATION_DATE_TOO_OLD } from '../../src/countries/es-verifactu/metadata.ts';
import { OPERATION_DATE_LATER, OPERATION_DATE_ON_VOID } from '../../src/countries/es-sii/metadata.ts';
import { OPERATION_DATE_INVALID } from '../../src/countries/es/operation-date.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, getTx, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';

let t: TestApp;
beforeAll(async () => {
  // 02-03-2026 in Madrid.
  t = await startTestApp({ clock: new ManualClock(new Date('2026-03-02T10:00:00Z')) });
});
afterAll(() => t?.close());

async function fiscalRecord(key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

async function receipt(key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/receipt?format=text`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

function expectValid(system: 'verifactu' | 'sii', xml: string): void {
  if (!HAVE_SCHEMAS) return console.warn(`spain-operation-date: XSD validation skipped: ${SCHEMAS_MISSING_MESSAGE}`);
  const v = system === 'verifactu'
    ? xsdValidate(regFactuRequest({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [xml]), 'es/verifactu/SuministroLR.xsd')
    : xsdValidate(suministroBody({ nif: 'B12345674', name: 'Ejemplo SL' }, [xml]), 'es/sii/SuministroLR.xsd');
  expect(v.ok, v.output).toBe(true);
}

async function transactionsOf(key: string): Promise<number> {
  const res = await t.request({ method: 'GET', url: '/v1/transactions', key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().total;
}

/** 400 with `message` at create and at preview. */
async function refused(key: string, body: object, message: string): Promise<void> {
  for (const url of ['/v1/transactions', '/v1/transactions/preview']) {
    const res = await t.request({ method: 'POST', url, key, payload: body });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe(message);
  }
}

/** One line at 5 % (AEAT's window for it: 01-07-2022 … 30-09-2024). */
const atFivePercent = {
  items: [{ description: 'Aceite de oliva', quantity: 1, unit_price: 1000, tax_rate: 5, tax_amount: 50, total_amount: 1050 }],
  pretax_amount: 1000,
  tax_amount: 50,
  total_amount: 1050,
};

describe('metadata.operation_date at a VERI*FACTU location (RegistroAlta/FechaOperacion)', () => {
  it('written before DescripcionOperacion, XSD-valid, stored and printed; later, twenty years back or malformed is a 400 at create and preview', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    await refused(key, saleBody(loc, { metadata: { operation_date: '03-03-2026' } }), OPERATION_DATE_FUTURE);
    await refused(key, saleBody(loc, { metadata: { operation_date: '01-03-2006' } }), OPERATION_DATE_TOO_OLD);
    await refused(key, saleBody(loc, { metadata: { operation_date: '2026-02-27' } }), OPERATION_DATE_INVALID);
    expect(await transactionsOf(key)).toBe(0);

    const res = await createTx(t, key, saleBody(loc, { metadata: { operation_date: '27-02-2026', description: 'Comida de empresa' } }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecord(key, res.json().id);
    expect(xml).toContain('<sf:FechaExpedicionFactura>02-03-2026</sf:FechaExpedicionFactura>');
    expect(xml).toContain('<sf:FechaOperacion>27-02-2026</sf:FechaOperacion><sf:DescripcionOperacion>Comida de empresa</sf:DescripcionOperacion>');
    expectValid('verifactu', xml);
    expect((await getTx(t, key, res.json().id)).request_payload.metadata.operation_date).toBe('27-02-2026');
    expect(await receipt(key, res.json().id)).toContain('Fecha de operación 27-02-2026');

    // The issue day itself: nothing stated.
    const same = await createTx(t, key, saleBody(loc, { metadata: { operation_date: '02-03-2026' } }));
    expect(same.statusCode, same.body).toBe(201);
    expect(await fiscalRecord(key, same.json().id)).not.toContain('FechaOperacion');
    expect(await receipt(key, same.json().id)).not.toContain('Fecha de operación');
  });

  it('the temporary IVA rates are dated by it, as AEAT does: the refund today of a sale of September 2024 at 5 % is taken', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const refund = (operation_date?: string) => saleBody(loc, {
      type: 'refund',
      ...atFivePercent,
      metadata: { original_invoice_number: 'A-2024-77', original_issue_date: '20-09-2024', ...(operation_date === undefined ? {} : { operation_date }) },
    });
    const without = await createTx(t, key, refund());
    expect(without.statusCode, without.body).toBe(400);
    expect(without.json().error).toMatch(/^items\[0\]\.tax_rate 5 is refused by AEAT on an invoice issued on 02-03-2026: .*\(AEAT error 1194\)$/);
    const res = await createTx(t, key, refund('20-09-2024'));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecord(key, res.json().id);
    expect(xml).toMatch(/<\/sf:FacturasRectificadas><sf:FechaOperacion>20-09-2024<\/sf:FechaOperacion><sf:DescripcionOperacion>/);
    expect(xml).toContain('<sf:TipoImpositivo>5.00</sf:TipoImpositivo>');
    expectValid('verifactu', xml);
  });
});

describe('metadata.operation_date at an SII location (FacturaExpedida/FechaOperacion)', () => {
  it('written before the regime key, XSD-valid, printed; not after metadata.issue_date (else today); malformed or on a void is a 400', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    await refused(key, saleBody(loc, { metadata: { simplified: true, operation_date: '03-03-2026' } }), OPERATION_DATE_LATER);
    await refused(key, saleBody(loc, { metadata: { simplified: true, issue_date: '25-02-2026', operation_date: '26-02-2026' } }), OPERATION_DATE_LATER);
    await refused(key, saleBody(loc, { metadata: { simplified: true, operation_date: '27/02/2026' } }), OPERATION_DATE_INVALID);
    await refused(
      key,
      saleBody(loc, { type: 'void', metadata: { original_invoice_number: 'T-1', original_issue_date: '25-02-2026', operation_date: '20-02-2026' } }),
      OPERATION_DATE_ON_VOID,
    );
    expect(await transactionsOf(key)).toBe(0);

    const res = await createTx(t, key, saleBody(loc, { metadata: { simplified: true, issue_date: '25-02-2026', operation_date: '20-02-2026' } }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecord(key, res.json().id);
    expect(xml).toContain('<sii:FechaExpedicionFacturaEmisor>25-02-2026</sii:FechaExpedicionFacturaEmisor>');
    expect(xml).toMatch(/<sii:TipoFactura>F2<\/sii:TipoFactura>\s*<sii:FechaOperacion>20-02-2026<\/sii:FechaOperacion>\s*<sii:ClaveRegimenEspecialOTrascendencia>/);
    expectValid('sii', xml);
    expect(await receipt(key, res.json().id)).toContain('Fecha de operación 20-02-2026');

    // Without issue_date the invoice is today's: an earlier operation is stated against it.
    const today = await createTx(t, key, saleBody(loc, { metadata: { simplified: true, operation_date: '01-03-2026' } }));
    expect(today.statusCode, today.body).toBe(201);
    const todayXml = await fiscalRecord(key, today.json().id);
    expect(todayXml).toContain('<sii:FechaOperacion>01-03-2026</sii:FechaOperacion>');
    expectValid('sii', todayXml);
  });
});
