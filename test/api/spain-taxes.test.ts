/**
 * Spain's taxes through the API (src/countries/es/tax.ts, surcharge.ts), on the store
 * TEST_STORE names (run with --project pglite and --project postgres):
 * - a line whose rate is not one of its tax's is a 400 at create and preview, before
 *   anything is stored (AEAT error 1124 refused it only later, after the sale was
 *   acknowledged, chained and numbered);
 * - a Canary Islands (IGIC) or Ceuta/Melilla (IPSI) location on VERI*FACTU writes its
 *   tax in `Impuesto`; TicketBAI refuses such a location (SII: spain-igic.test.ts);
 * - recargo de equivalencia per line (`surcharge_rate`, `surcharge_amount`) in the three
 *   records, part of the total; refused on a location of another country's system.
 * Records are fetched from GET /v1/transactions/{id}/fiscal-record and checked with xmllint
 * against the official XSDs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { regFactuRequest } from '../../src/countries/es-verifactu/soap.ts';
import { suministroBody } from '../../src/countries/es-sii/soap.ts';
import type { SystemKey } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody, saleMetadata } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock(new Date()) });
});
afterAll(() => t?.close());

const SPAIN: SystemKey[] = ['es-verifactu', 'es-ticketbai', 'es-sii'];
const IVA_LIST = 'items[1].tax_rate must be one of the IVA rates 0, 2, 4, 5, 7.5, 10 or 21';

async function fiscalRecord(key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

/** The record as its authority receives it, valid against the official XSD (TicketBAI: the record itself). */
function expectValid(system: SystemKey, xml: string): void {
  if (!HAVE_SCHEMAS) return console.warn(`spain-taxes: XSD validation skipped: ${SCHEMAS_MISSING_MESSAGE}`);
  const obligado = { nif: 'B12345674', nombreRazon: 'Ejemplo SL' };
  const [doc, xsd] =
    system === 'es-verifactu' ? [regFactuRequest(obligado, [xml]), 'es/verifactu/SuministroLR.xsd']
      : system === 'es-sii' ? [suministroBody({ nif: 'B12345674', name: 'Ejemplo SL' }, [xml]), 'es/sii/SuministroLR.xsd']
        : [xml, 'es/ticketbai/ticketbaiv1-2-2.xsd'];
  const v = xsdValidate(doc, xsd);
  expect(v.ok, v.output).toBe(true);
}

async function transactionsOf(key: string): Promise<number> {
  const res = await t.request({ method: 'GET', url: '/v1/transactions', key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().total;
}

/** One line of 10.00 × `quantity` at `rate` (and surcharge), totals as the service computes them. */
function saleAt(loc: string, system: SystemKey, lines: { rate: number; surcharge?: number; quantity?: number; description?: string }[], extra: Record<string, unknown> = {}) {
  const items = lines.map((l, i) => {
    const net = (l.quantity ?? 1) * 1000;
    const tax = Math.round((net * l.rate) / 100);
    return {
      description: l.description ?? `Artículo ${i + 1}`, quantity: l.quantity ?? 1, unit_price: 1000, tax_rate: l.rate, tax_amount: tax, total_amount: net + tax,
      ...(l.surcharge === undefined ? {} : { surcharge_rate: l.surcharge }),
    };
  });
  const surcharge = lines.reduce((s, l) => s + (l.surcharge === undefined ? 0 : Math.round(((l.quantity ?? 1) * 1000 * l.surcharge) / 100)), 0);
  const pretax = items.reduce((s, l) => s + l.total_amount - l.tax_amount, 0);
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  return saleBody(loc, { items, pretax_amount: pretax, tax_amount: tax, total_amount: pretax + tax + surcharge, metadata: { ...(saleMetadata[system] ?? {}) }, ...extra });
}

describe('the rate list: a rate AEAT refuses (1124) is a 400 at create and preview, nothing stored', () => {
  it.each(SPAIN)('%s: a rate of no Spanish tax (20, 5.5, 16) is refused with the field and the list; nothing is stored', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system);
    for (const rate of [20, 5.5, 16]) {
      const body = saleAt(loc, system, [{ rate: 21 }, { rate }]);
      const created = await createTx(t, key, body);
      expect(created.statusCode, created.body).toBe(400);
      expect(created.json().error).toBe(IVA_LIST);
      const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: body });
      expect(preview.statusCode, preview.body).toBe(400);
      expect(preview.json().error).toBe(IVA_LIST);
    }
    expect(await transactionsOf(key)).toBe(0);
    // The rates AEAT accepts, the temporary ones included; VERI*FACTU dates those by the issue
    // date and refuses them today (es-verifactu/dated-rates.ts, test/api/verifactu-aeat-rules.test.ts).
    const temporary = system === 'es-verifactu' ? [{ rate: 10 }, { rate: 4 }] : [{ rate: 7.5 }, { rate: 2 }];
    const ok = await createTx(t, key, saleAt(loc, system, [{ rate: 21 }, ...temporary]));
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('the guide form is told in its own unit (vat_rate, hundredths of a percent)', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const res = await createTx(t, key, { location_id: loc, amount: 1200, line_items: [{ description: 'Pizza', quantity: 1, unit_price: 1000, vat_rate: 2000 }] });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('line_items[0].vat_rate must be one of the IVA rates 0, 200, 400, 500, 750, 1000 or 2100');
  });
});

describe('IGIC and IPSI locations (country_config.tax)', () => {
  it('VERI*FACTU in the Canary Islands: Impuesto 03 at IGIC rates, XSD-valid; IVA-only rates refused; the config keeps tax', async () => {
    const { key } = await t.signup();
    const res = await t.request({
      method: 'POST', url: '/v1/locations', key,
      payload: { name: 'Bar Las Palmas', country: 'ES', tax_id: 'B12345674', country_config: { system: 'verifactu', legal_name: 'Ejemplo SL', software_nif: 'B12345674', tax: 'igic' } },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().country_config.tax).toBe('igic');
    const loc = res.json().id;
    const sale = await createTx(t, key, saleAt(loc, 'es-verifactu', [{ rate: 7 }, { rate: 3 }]));
    expect(sale.statusCode, sale.body).toBe(201);
    const xml = await fiscalRecord(key, sale.json().id);
    expect(xml.match(/<sf:Impuesto>03<\/sf:Impuesto><sf:ClaveRegimen>01<\/sf:ClaveRegimen>/g)).toHaveLength(2);
    expect(xml).not.toContain('<sf:Impuesto>01</sf:Impuesto>');
    expectValid('es-verifactu', xml);
    // The receipt names the tax the record carries.
    const receipt = await t.request({ method: 'GET', url: `/v1/transactions/${sale.json().id}/receipt?format=text`, key });
    expect(receipt.body).toMatch(/IGIC 7 % \(10,00\)\s+0,70/);
    expect(receipt.body).not.toContain('IVA');
    // Its cancellation's receipt prints the invoice's amounts under the same tax (the
    // RegistroAnulacion names none: read from the cancelled invoice's record).
    await t.worker.drain();
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${sale.json().id}/cancel`, key, payload: {} });
    expect(cancel.statusCode, cancel.body).toBe(201);
    const cancelReceipt = await t.request({ method: 'GET', url: `/v1/transactions/${cancel.json().id}/receipt?format=text`, key });
    expect(cancelReceipt.statusCode, cancelReceipt.body).toBe(200);
    expect(cancelReceipt.body).toMatch(/IGIC 7 % \(10,00\)\s+0,70/);
    expect(cancelReceipt.body).not.toContain('IVA');
    const iva = await createTx(t, key, saleAt(loc, 'es-verifactu', [{ rate: 7 }, { rate: 21 }]));
    expect(iva.statusCode, iva.body).toBe(400);
    expect(iva.json().error).toBe('items[1].tax_rate must be one of the IGIC rates 0, 3, 7, 9.5, 15 or 20 (country_config.tax is igic)');
    // A recargo de equivalencia is IVA's.
    const surcharged = await createTx(t, key, saleAt(loc, 'es-verifactu', [{ rate: 7, surcharge: 1.4 }]));
    expect(surcharged.statusCode, surcharged.body).toBe(400);
    expect(surcharged.json().error).toMatch(/^items\[0\]\.surcharge_rate is not allowed: recargo de equivalencia is charged with IVA only/);
  });

  it('VERI*FACTU in Ceuta: Impuesto 02 with ClaveRegimen 01 (AEAT rejects it missing from 2027), XSD-valid; a PATCH to ipsi changes the next records', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const patched = await t.request({
      method: 'PATCH', url: `/v1/locations/${loc}`, key,
      payload: { country_config: { system: 'verifactu', legal_name: 'Ejemplo SL', software_nif: 'B12345674', tax: 'ipsi' } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const sale = await createTx(t, key, saleAt(loc, 'es-verifactu', [{ rate: 3 }, { rate: 0.5 }]));
    expect(sale.statusCode, sale.body).toBe(201);
    const xml = await fiscalRecord(key, sale.json().id);
    expect(xml).toContain('<sf:DetalleDesglose><sf:Impuesto>02</sf:Impuesto><sf:ClaveRegimen>01</sf:ClaveRegimen><sf:CalificacionOperacion>S1</sf:CalificacionOperacion><sf:TipoImpositivo>3.00</sf:TipoImpositivo>');
    expect(xml.match(/<sf:ClaveRegimen>01<\/sf:ClaveRegimen>/g)).toHaveLength(2);
    expectValid('es-verifactu', xml);
  });

  // SII takes them since (key 08, not subject to IVA): spain-igic.test.ts.
  it.each([['es-ticketbai', 'ticketbai']] as const)('%s refuses an IGIC or IPSI location at create and PATCH; iva is taken', async (system, name) => {
    const { key } = await t.signup();
    const base = (await import('../support/fixtures.ts')).locationBodies[system];
    for (const tax of ['igic', 'ipsi']) {
      const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { ...base, country_config: { ...base.country_config, tax } } });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toMatch(new RegExp(`^country_config\\.tax ${tax} is not available for ${name}: `));
    }
    const loc = await createLocation(t, key, system);
    const patch = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...base.country_config, tax: 'igic' } } });
    expect(patch.statusCode, patch.body).toBe(400);
    const iva = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { ...base, country_config: { ...base.country_config, tax: 'iva' } } });
    expect(iva.statusCode, iva.body).toBe(201);
  });
});

describe('recargo de equivalencia (surcharge_rate, surcharge_amount per line)', () => {
  const retailer = { nif: 'B95123451', name: 'Ultramarinos Ejemplo SL' };
  const SURCHARGED: Record<string, { extra: Record<string, unknown>; fields: RegExp[] }> = {
    'es-verifactu': {
      extra: { customer_context: retailer },
      fields: [
        /<sf:ClaveRegimen>18<\/sf:ClaveRegimen><sf:CalificacionOperacion>S1<\/sf:CalificacionOperacion><sf:TipoImpositivo>21\.00<\/sf:TipoImpositivo><sf:BaseImponibleOimporteNoSujeto>20\.00<\/sf:BaseImponibleOimporteNoSujeto><sf:CuotaRepercutida>4\.20<\/sf:CuotaRepercutida><sf:TipoRecargoEquivalencia>5\.20<\/sf:TipoRecargoEquivalencia><sf:CuotaRecargoEquivalencia>1\.04<\/sf:CuotaRecargoEquivalencia>/,
        /<sf:CuotaTotal>6\.38<\/sf:CuotaTotal><sf:ImporteTotal>36\.38<\/sf:ImporteTotal>/,
      ],
    },
    'es-ticketbai': {
      extra: { customer_context: retailer },
      fields: [
        /<CuotaImpuesto>4\.20<\/CuotaImpuesto><TipoRecargoEquivalencia>5\.20<\/TipoRecargoEquivalencia><CuotaRecargoEquivalencia>1\.04<\/CuotaRecargoEquivalencia>/,
        /<ImporteTotalFactura>36\.38<\/ImporteTotalFactura>/,
      ],
    },
    'es-sii': {
      extra: { metadata: { counterparty_nif: 'B95123451', counterparty_name: 'Ultramarinos Ejemplo SL', invoice_number: 'F-RE-1' } },
      fields: [/<sii:TipoRecargoEquivalencia>5\.20<\/sii:TipoRecargoEquivalencia>\s*<sii:CuotaRecargoEquivalencia>1\.04<\/sii:CuotaRecargoEquivalencia>/, /<sii:ImporteTotal>36\.38<\/sii:ImporteTotal>/],
    },
  };

  it.each(SPAIN)('%s: stored on the line, written beside the IVA in the record (XSD-valid), part of total_amount', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system);
    // 2 × 10.00 at 21 % + 5.2 % (IVA 4.20, recargo 1.04) and 10.00 at 10 % + 1.4 % (IVA 1.00, recargo 0.14):
    // 30.00 + 5.20 + 1.18 = 36.38, the amounts left to the service.
    const body = saleAt(loc, system, [{ rate: 21, surcharge: 5.2, quantity: 2 }, { rate: 10, surcharge: 1.4 }], SURCHARGED[system]!.extra);
    expect(body.total_amount).toBe(3638);
    const res = await createTx(t, key, body);
    expect(res.statusCode, res.body).toBe(201);
    const tx = res.json();
    const { rows } = await t.db.query<{ normalized: { items: Record<string, unknown>[]; total_amount: number } }>('SELECT normalized FROM transactions WHERE id = $1', [tx.id]);
    const normalized = typeof rows[0]!.normalized === 'string' ? JSON.parse(rows[0]!.normalized) : rows[0]!.normalized;
    expect(normalized.items.map((l: Record<string, unknown>) => [l.surcharge_rate, l.surcharge_amount, l.total_amount])).toEqual([[5.2, 104, 2420], [1.4, 14, 1100]]);
    expect(normalized.total_amount).toBe(3638);
    const xml = await fiscalRecord(key, tx.id);
    for (const f of SURCHARGED[system]!.fields) expect(xml).toMatch(f);
    expectValid(system, xml);
    // The receipt states the surcharge apart from the IVA (RD 1619/2012 art. 6.1.i), and its rows add up to the total.
    const receipt = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}/receipt?format=text`, key });
    expect(receipt.statusCode, receipt.body).toBe(200);
    expect(receipt.body).toMatch(/IVA 21 % \(20,00\)\s+4,20/);
    expect(receipt.body).toMatch(/Recargo de equivalencia 5,2 % \(20,00\)\s+1,04/);
    expect(receipt.body).toMatch(/Recargo de equivalencia 1,4 % \(10,00\)\s+0,14/);
    expect(receipt.body).toMatch(/TOTAL EUR\s+36,38/);
  });

  it.each(SPAIN)('%s: a rate not paired with the IVA rate, a wrong amount or a total without the surcharge is a 400 at create and preview; nothing stored', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system);
    const extra = SURCHARGED[system]!.extra;
    const pair = saleAt(loc, system, [{ rate: 21, surcharge: 1.4 }], extra);
    const amount = saleAt(loc, system, [{ rate: 21, surcharge: 5.2 }], extra);
    (amount.items as Record<string, unknown>[])[0]!.surcharge_amount = 53;
    const total = saleAt(loc, system, [{ rate: 21, surcharge: 5.2 }], { ...extra, total_amount: 1210 });
    for (const [body, message] of [
      [pair, 'items[0].surcharge_rate must be 5.2 or 1.75 with tax_rate 21 (recargo de equivalencia, Ley 37/1992 art. 161)'],
      [amount, 'items[0].surcharge_amount must be 52 (quantity × unit_price × surcharge_rate / 100, rounded half up)'],
      [total, "pretax_amount + tax_amount + the items' surcharge_amount (52) must equal total_amount"],
    ] as const) {
      for (const url of ['/v1/transactions', '/v1/transactions/preview']) {
        const res = await t.request({ method: 'POST', url, key, payload: body });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error).toBe(message);
      }
    }
    expect(await transactionsOf(key)).toBe(0);
  });

  it('another country\'s location refuses a line surcharge (its record could not carry the amount the total holds); nothing stored', async () => {
    const { key } = await t.signup();
    for (const system of ['fr-nf525', 'pt-saft'] as const) {
      const loc = await createLocation(t, key, system);
      const res = await createTx(t, key, saleAt(loc, system, [{ rate: 21 }, { rate: 10, surcharge: 1.4 }]));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toBe(`items[1].surcharge_rate is not taken at this location: its fiscal system (${system}) charges no line surcharge`);
    }
    expect(await transactionsOf(key)).toBe(0);
  });
});
