/**
 * IGIC (Canary Islands) and IPSI (Ceuta, Melilla) beyond the taxed sale, through the API on
 * the store TEST_STORE names (run with --project pglite and --project postgres):
 * - VERI*FACTU exemptions of those taxes: `OperacionExenta` with `Impuesto` 03 / 02, IGIC's
 *   causes from AEAT list L10B (E1-E8), ClaveRegimen 02 for an export (AEAT 1199), 01 for
 *   IPSI (src/countries/es/exemption.ts, es-verifactu/build.ts);
 * - SII at an IGIC or IPSI location: key 08 and the whole sale in NoSujeta/
 *   ImporteTAIReglasLocalizacion, refunds (R1, R5) negative (es-sii/xml.ts);
 * - the 400s of what stays refused, nothing stored.
 * Records are fetched from GET /v1/transactions/{id}/fiscal-record and checked with xmllint
 * against the official XSDs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { regFactuRequest } from '../../src/countries/es-verifactu/soap.ts';
import { suministroBody } from '../../src/countries/es-sii/soap.ts';
import { configs, locationBodies } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createTx, getTx, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock(new Date()) });
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
  if (!HAVE_SCHEMAS) return console.warn(`spain-igic: XSD validation skipped: ${SCHEMAS_MISSING_MESSAGE}`);
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

async function location(key: string, system: 'verifactu' | 'sii', tax: 'igic' | 'ipsi'): Promise<string> {
  const base = locationBodies[system === 'verifactu' ? 'es-verifactu' : 'es-sii'];
  const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { ...base, country_config: { ...configs[system], tax } } });
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().country_config.tax).toBe(tax);
  return res.json().id;
}

/** Lines of 10.00 × quantity at each rate, totals as the service computes them. */
function sale(loc: string, lines: { rate: number; quantity?: number }[], metadata: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const items = lines.map((l, i) => {
    const net = (l.quantity ?? 1) * 1000;
    const tax = Math.round((net * l.rate) / 100);
    return { description: `Artículo ${i + 1}`, quantity: l.quantity ?? 1, unit_price: 1000, tax_rate: l.rate, tax_amount: tax, total_amount: net + tax };
  });
  const pretax = items.reduce((s, l) => s + l.total_amount - l.tax_amount, 0);
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  return saleBody(loc, { items, pretax_amount: pretax, tax_amount: tax, total_amount: pretax + tax, metadata, ...extra });
}

/** A 400 at create and at preview with `message`. */
async function expectRefused(key: string, body: object, message: string): Promise<void> {
  const created = await createTx(t, key, body);
  expect(created.statusCode, created.body).toBe(400);
  expect(created.json().error).toBe(message);
  const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: body });
  expect(preview.statusCode, preview.body).toBe(400);
  expect(preview.json().error).toBe(message);
}

describe('VERI*FACTU: IGIC and IPSI exemptions (OperacionExenta with Impuesto 03 / 02)', () => {
  it('IGIC: an export (E2) is OperacionExenta under ClaveRegimen 02 beside a taxed line; stored, XSD-valid; the receipt says IGIC; an unknown cause is a 400, nothing stored', async () => {
    const { key } = await t.signup();
    const loc = await location(key, 'verifactu', 'igic');
    await expectRefused(key, sale(loc, [{ rate: 0 }, { rate: 7 }], { exemption_code: 'E9' }),
      'metadata.exemption_code must be one of E1, E2, E3, E4, E5, E6, E7, E8 (IGIC exemption causes, AEAT list L10B)');
    expect(await transactionsOf(key)).toBe(0);

    const created = await createTx(t, key, sale(loc, [{ rate: 0, quantity: 3 }, { rate: 7 }], { exemption_code: 'E2' }));
    expect(created.statusCode, created.body).toBe(201);
    expect((await getTx(t, key, created.json().id)).request_payload.metadata.exemption_code).toBe('E2');
    const xml = await fiscalRecord(key, created.json().id);
    expect(xml).toContain('<sf:DetalleDesglose><sf:Impuesto>03</sf:Impuesto><sf:ClaveRegimen>02</sf:ClaveRegimen><sf:OperacionExenta>E2</sf:OperacionExenta><sf:BaseImponibleOimporteNoSujeto>30.00</sf:BaseImponibleOimporteNoSujeto></sf:DetalleDesglose>');
    expect(xml).toContain('<sf:Impuesto>03</sf:Impuesto><sf:ClaveRegimen>01</sf:ClaveRegimen><sf:CalificacionOperacion>S1</sf:CalificacionOperacion><sf:TipoImpositivo>7.00</sf:TipoImpositivo>');
    expect(xml).toContain('<sf:ImporteTotal>40.70</sf:ImporteTotal>');
    expectValid('verifactu', xml);
    const text = await receipt(key, created.json().id);
    expect(text).toContain('Operación exenta de IGIC');
    expect(text).toMatch(/IGIC 7 % \(10,00\)\s+0,70/);
    expect(text).not.toContain('IVA');

    // E7 (an L10B cause IVA's list lacks) is taken at an IGIC location, under ClaveRegimen 01.
    const e7 = await createTx(t, key, sale(loc, [{ rate: 0 }], { exemption_code: 'E7' }));
    expect(e7.statusCode, e7.body).toBe(201);
    const e7xml = await fiscalRecord(key, e7.json().id);
    expect(e7xml).toContain('<sf:Impuesto>03</sf:Impuesto><sf:ClaveRegimen>01</sf:ClaveRegimen><sf:OperacionExenta>E7</sf:OperacionExenta>');
    expectValid('verifactu', e7xml);
  });

  it('IPSI: the 0 % lines with a cause are OperacionExenta under ClaveRegimen 01 (as every IPSI detail); E7 and a 0 % line without a cause are 400s, nothing stored', async () => {
    const { key } = await t.signup();
    const loc = await location(key, 'verifactu', 'ipsi');
    await expectRefused(key, sale(loc, [{ rate: 0 }, { rate: 3 }], { exemption_code: 'E7' }), 'metadata.exemption_code must be one of E1, E2, E3, E4, E5, E6');
    await expectRefused(key, sale(loc, [{ rate: 0 }, { rate: 3 }]), 'items[0].tax_rate must be one of the IPSI rates 0.5, 1, 2, 3, 4, 8 or 10 (country_config.tax is ipsi)');
    expect(await transactionsOf(key)).toBe(0);

    const created = await createTx(t, key, sale(loc, [{ rate: 0, quantity: 5 }, { rate: 3, quantity: 4 }], { exemption_code: 'E1' }));
    expect(created.statusCode, created.body).toBe(201);
    const xml = await fiscalRecord(key, created.json().id);
    expect(xml).toContain('<sf:DetalleDesglose><sf:Impuesto>02</sf:Impuesto><sf:ClaveRegimen>01</sf:ClaveRegimen><sf:OperacionExenta>E1</sf:OperacionExenta><sf:BaseImponibleOimporteNoSujeto>50.00</sf:BaseImponibleOimporteNoSujeto></sf:DetalleDesglose>');
    expect(xml).toContain('<sf:Impuesto>02</sf:Impuesto><sf:ClaveRegimen>01</sf:ClaveRegimen><sf:CalificacionOperacion>S1</sf:CalificacionOperacion>');
    expectValid('verifactu', xml);
    expect(await receipt(key, created.json().id)).toContain('Operación exenta de IPSI');
  });
});

describe('SII at an IGIC or IPSI location (key 08, not subject to IVA by the location rules)', () => {
  it('IGIC: F2, R5 and R1 carry key 08 and the whole amount in ImporteTAIReglasLocalizacion (refunds negative), XSD-valid; the receipt says IGIC', async () => {
    const { key } = await t.signup();
    const loc = await location(key, 'sii', 'igic');
    const f2 = await createTx(t, key, sale(loc, [{ rate: 7 }, { rate: 0 }], { simplified: true }));
    expect(f2.statusCode, f2.body).toBe(201);
    const xml = await fiscalRecord(key, f2.json().id);
    expect(xml).toContain('<sii:ClaveRegimenEspecialOTrascendencia>08</sii:ClaveRegimenEspecialOTrascendencia>');
    expect(xml).toContain('<sii:ImporteTotal>20.70</sii:ImporteTotal>');
    expect(xml).toMatch(/<sii:DesgloseFactura>\s*<sii:NoSujeta>\s*<sii:ImporteTAIReglasLocalizacion>20\.70<\/sii:ImporteTAIReglasLocalizacion>\s*<\/sii:NoSujeta>\s*<\/sii:DesgloseFactura>/);
    expect(xml).not.toContain('DetalleIVA');
    expectValid('sii', xml);
    const text = await receipt(key, f2.json().id);
    expect(text).toMatch(/IGIC 7 % \(10,00\)\s+0,70/);
    expect(text).not.toContain('IVA');

    const r5 = await createTx(t, key, { ...sale(loc, [{ rate: 7 }], { simplified: true }), type: 'refund' });
    expect(r5.statusCode, r5.body).toBe(201);
    const r5xml = await fiscalRecord(key, r5.json().id);
    expect(r5xml).toContain('<sii:TipoFactura>R5</sii:TipoFactura>');
    expect(r5xml).toContain('<sii:ImporteTAIReglasLocalizacion>-10.70</sii:ImporteTAIReglasLocalizacion>');
    expectValid('sii', r5xml);

    const r1 = await createTx(t, key, {
      ...sale(loc, [{ rate: 7 }], { counterparty_nif: 'A13585625', counterparty_name: 'Cliente Ejemplo SA', original_invoice_number: 'C-1', original_issue_date: '15-01-2026' }),
      type: 'refund',
    });
    expect(r1.statusCode, r1.body).toBe(201);
    const r1xml = await fiscalRecord(key, r1.json().id);
    expect(r1xml).toContain('<sii:TipoFactura>R1</sii:TipoFactura>');
    expect(r1xml).toContain('<sii:ClaveRegimenEspecialOTrascendencia>08</sii:ClaveRegimenEspecialOTrascendencia>');
    expect(r1xml).toContain('<sii:ImporteTAIReglasLocalizacion>-10.70</sii:ImporteTAIReglasLocalizacion>');
    expectValid('sii', r1xml);
  });

  it('IGIC: another regime key, an exemption cause or an IVA rate is a 400 at create and preview; nothing stored', async () => {
    const { key } = await t.signup();
    const loc = await location(key, 'sii', 'igic');
    await expectRefused(key, sale(loc, [{ rate: 7 }], { simplified: true, regime_key: '01' }),
      'metadata.regime_key must be 08 at this location: it charges IGIC (country_config.tax), and the SII book reports its sales as operations subject to IPSI/IGIC (key 08), not subject to IVA');
    await expectRefused(key, sale(loc, [{ rate: 0 }, { rate: 7 }], { simplified: true, exemption_code: 'E1' }),
      'metadata.exemption_code is not taken at this location: it charges IGIC (country_config.tax), and the SII book reports the whole sale as not subject to IVA (key 08), with no exemption cause');
    await expectRefused(key, sale(loc, [{ rate: 21 }], { simplified: true }), 'items[0].tax_rate must be one of the IGIC rates 0, 3, 7, 9.5, 15 or 20 (country_config.tax is igic)');
    expect(await transactionsOf(key)).toBe(0);
  });

  it('IPSI by PATCH of an IVA location: the next sale is key 08 and NoSujeta, XSD-valid', async () => {
    const { key } = await t.signup();
    const created = await t.request({ method: 'POST', url: '/v1/locations', key, payload: locationBodies['es-sii'] });
    expect(created.statusCode, created.body).toBe(201);
    const loc = created.json().id;
    const patched = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...configs.sii, tax: 'ipsi' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    const res = await createTx(t, key, sale(loc, [{ rate: 3 }], { simplified: true }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecord(key, res.json().id);
    expect(xml).toContain('<sii:ClaveRegimenEspecialOTrascendencia>08</sii:ClaveRegimenEspecialOTrascendencia>');
    expect(xml).toContain('<sii:ImporteTAIReglasLocalizacion>10.30</sii:ImporteTAIReglasLocalizacion>');
    expectValid('sii', xml);
    expect(await receipt(key, res.json().id)).toMatch(/IPSI 3 % \(10,00\)\s+0,30/);
  });
});
