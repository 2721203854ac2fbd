/**
 * The issuer's own VAT regime (country_config.vat_regime, src/countries/es/regime.ts)
 * through the API, on the store TEST_STORE names (run with --project pglite and --project
 * postgres):
 * - a retailer in recargo de equivalencia / a shop in the simplified regime: TicketBAI keys
 *   51 / 52 with OperacionEnRecargoDeEquivalenciaORegimenSimplificado S, VERI*FACTU
 *   ClaveRegimen 18 / 20, each record XSD-valid; the receipt unchanged (RD 1619/2012 asks no
 *   mention for either regime);
 * - refused with a 400 at create and PATCH: an unknown value, either regime on SII, either
 *   regime with IGIC; an exempt sale at such a location (nothing stored).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { regFactuRequest } from '../../src/countries/es-verifactu/soap.ts';
import { locationBodies, type SystemKey } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, fiscalRecordOf, saleBody, saleMetadata } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock(new Date()) });
});
afterAll(() => t?.close());

function expectValid(system: SystemKey, xml: string): void {
  if (!HAVE_SCHEMAS) return console.warn(`spain-regime: XSD validation skipped: ${SCHEMAS_MISSING_MESSAGE}`);
  const [doc, xsd] =
    system === 'es-verifactu'
      ? [regFactuRequest({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [xml]), 'es/verifactu/SuministroLR.xsd']
      : [xml, 'es/ticketbai/ticketbaiv1-2-2.xsd'];
  const v = xsdValidate(doc, xsd);
  expect(v.ok, v.output).toBe(true);
}

/** 2 × 10.00 at 21 % and 1 × 10.00 at 10 %. */
type Line = { description: string; quantity: number; unit_price: number; tax_rate: number; tax_amount: number; total_amount: number };
function sale(loc: string, system: SystemKey, metadata: Record<string, unknown> = {}, items?: Line[]) {
  const lines: Line[] = items ?? [
    { description: 'Aceite de oliva 1 l', quantity: 2, unit_price: 1000, tax_rate: 21, tax_amount: 420, total_amount: 2420 },
    { description: 'Arroz 1 kg', quantity: 1, unit_price: 1000, tax_rate: 10, tax_amount: 100, total_amount: 1100 },
  ];
  const tax = lines.reduce((s, l) => s + l.tax_amount, 0);
  const total = lines.reduce((s, l) => s + l.total_amount, 0);
  return saleBody(loc, { items: lines, pretax_amount: total - tax, tax_amount: tax, total_amount: total, metadata: { ...(saleMetadata[system] ?? {}), ...metadata } });
}

const configWith = (system: SystemKey, over: Record<string, unknown>) => {
  const base = locationBodies[system] as { country_config: Record<string, unknown> };
  return { ...base, ...soleTrader(system), country_config: { ...base.country_config, ...over } };
};

/**
 * TicketBAI takes keys 51/52 only from a natural person or an E/J entity (Araba 10-132,
 * es-ticketbai/foral-rules.ts): its special-regime shops here are a sole trader's (DNI).
 */
const soleTrader = (system: SystemKey): { tax_id?: string } => (system === 'es-ticketbai' ? { tax_id: '12345678Z' } : {});

async function transactionsOf(key: string): Promise<number> {
  const res = await t.request({ method: 'GET', url: '/v1/transactions', key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().total;
}

const flag = (v: string) => `<OperacionEnRecargoDeEquivalenciaORegimenSimplificado>${v}</OperacionEnRecargoDeEquivalenciaORegimenSimplificado>`;
const tbaiKeys = (k: string) => `<Claves><IDClave><ClaveRegimenIvaOpTrascendencia>${k}</ClaveRegimenIvaOpTrascendencia></IDClave></Claves>`;

const CASES: [SystemKey, 'recargo_equivalencia' | 'simplified', (xml: string) => void][] = [
  ['es-ticketbai', 'recargo_equivalencia', (xml) => {
    expect(xml).toContain(tbaiKeys('51'));
    expect(xml.match(new RegExp(flag('S'), 'g'))).toHaveLength(2);
    expect(xml).not.toContain(flag('N'));
    expect(xml).toContain(`<BaseImponible>20.00</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>4.20</CuotaImpuesto>${flag('S')}`);
  }],
  ['es-ticketbai', 'simplified', (xml) => {
    expect(xml).toContain(tbaiKeys('52'));
    expect(xml.match(new RegExp(flag('S'), 'g'))).toHaveLength(2);
  }],
  ['es-verifactu', 'recargo_equivalencia', (xml) => {
    expect(xml.match(/<sf:Impuesto>01<\/sf:Impuesto><sf:ClaveRegimen>18<\/sf:ClaveRegimen><sf:CalificacionOperacion>S1<\/sf:CalificacionOperacion>/g)).toHaveLength(2);
    expect(xml).toContain('<sf:TipoImpositivo>21.00</sf:TipoImpositivo><sf:BaseImponibleOimporteNoSujeto>20.00</sf:BaseImponibleOimporteNoSujeto><sf:CuotaRepercutida>4.20</sf:CuotaRepercutida>');
    expect(xml).not.toContain('RecargoEquivalencia');
  }],
  ['es-verifactu', 'simplified', (xml) => {
    expect(xml.match(/<sf:ClaveRegimen>20<\/sf:ClaveRegimen>/g)).toHaveLength(2);
    expect(xml).not.toContain('<sf:ClaveRegimen>01</sf:ClaveRegimen>');
  }],
];

describe('an issuer in recargo de equivalencia or the simplified regime (country_config.vat_regime)', () => {
  it.each(CASES)('%s, %s: stored in the config; every record says the regime, XSD-valid; the receipt is as a general-regime one', async (system, regime, check) => {
    const { key } = await t.signup();
    const created = await t.request({ method: 'POST', url: '/v1/locations', key, payload: configWith(system, { vat_regime: regime }) });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().country_config.vat_regime).toBe(regime);
    const loc = created.json().id;
    const res = await createTx(t, key, sale(loc, system));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecordOf(t, key, res.json().id);
    check(xml);
    expectValid(system, xml);
    // RD 1619/2012 arts. 6-7 ask no mention for either regime: the receipt prints as a
    // general-regime issuer's would (same rows, no legend).
    const general = await createLocation(t, key, system);
    const plain = await createTx(t, key, sale(general, system));
    expect(plain.statusCode, plain.body).toBe(201);
    const receipt = async (id: string) => (await t.request({ method: 'GET', url: `/v1/transactions/${id}/receipt?format=text`, key })).body;
    const strip = (text: string) => text.split('\n').filter((l) => /IVA|TOTAL|Base/i.test(l)).join('\n');
    expect(strip(await receipt(res.json().id))).toBe(strip(await receipt(plain.json().id)));
    expect(await receipt(res.json().id)).not.toMatch(/recargo|simplificado/i);
  });

  it.each(['es-ticketbai', 'es-verifactu'] as const)('%s: a PATCH to a special regime keys the next records; back to general keys them 01', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system, soleTrader(system));
    const patched = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: configWith(system, { vat_regime: 'simplified' }).country_config } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().country_config.vat_regime).toBe('simplified');
    const first = await createTx(t, key, sale(loc, system));
    expect(first.statusCode, first.body).toBe(201);
    expect(await fiscalRecordOf(t, key, first.json().id)).toMatch(system === 'es-ticketbai' ? /ClaveRegimenIvaOpTrascendencia>52</ : /ClaveRegimen>20</);
    const back = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: configWith(system, { vat_regime: 'general' }).country_config } });
    expect(back.statusCode, back.body).toBe(200);
    const second = await createTx(t, key, sale(loc, system));
    expect(second.statusCode, second.body).toBe(201);
    const xml = await fiscalRecordOf(t, key, second.json().id);
    expect(xml).toMatch(system === 'es-ticketbai' ? /ClaveRegimenIvaOpTrascendencia>01</ : /ClaveRegimen>01</);
    expect(xml).not.toContain(flag('S'));
  });

  it('400 at create and PATCH: an unknown value (three systems), a special regime on SII, a special regime with IGIC', async () => {
    const { key } = await t.signup();
    for (const system of ['es-ticketbai', 'es-verifactu', 'es-sii'] as const) {
      const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: configWith(system, { vat_regime: 'RE' }) });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toBe('country_config.vat_regime must be "general", "recargo_equivalencia" or "simplified"');
    }
    for (const regime of ['recargo_equivalencia', 'simplified']) {
      const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: configWith('es-sii', { vat_regime: regime }) });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toMatch(new RegExp(`^country_config\\.vat_regime ${regime} is not available for sii: the SII issued-invoice regime keys`));
    }
    const sii = await createLocation(t, key, 'es-sii');
    const patch = await t.request({ method: 'PATCH', url: `/v1/locations/${sii}`, key, payload: { country_config: configWith('es-sii', { vat_regime: 'simplified' }).country_config } });
    expect(patch.statusCode, patch.body).toBe(400);
    const general = await t.request({ method: 'POST', url: '/v1/locations', key, payload: configWith('es-sii', { vat_regime: 'general' }) });
    expect(general.statusCode, general.body).toBe(201);
    const igic = await t.request({ method: 'POST', url: '/v1/locations', key, payload: configWith('es-verifactu', { tax: 'igic', vat_regime: 'recargo_equivalencia' }) });
    expect(igic.statusCode, igic.body).toBe(400);
    expect(igic.json().error).toBe('country_config.vat_regime recargo_equivalencia is an IVA regime (recargo de equivalencia (Ley 37/1992 arts. 154-163)), and this location charges IGIC (country_config.tax)');
  });

  it.each(['es-ticketbai', 'es-verifactu'] as const)('%s: an exempt sale at a location in recargo de equivalencia is a 400 at create and preview; nothing stored', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system, { ...soleTrader(system), country_config: configWith(system, { vat_regime: 'recargo_equivalencia' }).country_config });
    const body = sale(loc, system, { exemption_code: 'E1' }, [
      { description: 'Consulta', quantity: 1, unit_price: 5000, tax_rate: 0, tax_amount: 0, total_amount: 5000 },
      { description: 'Aceite de oliva 1 l', quantity: 1, unit_price: 1000, tax_rate: 21, tax_amount: 210, total_amount: 1210 },
    ]);
    for (const url of ['/v1/transactions', '/v1/transactions/preview']) {
      const res = await t.request({ method: 'POST', url, key, payload: body });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toMatch(/^metadata\.exemption_code is not taken at a location in recargo de equivalencia .*\(country_config\.vat_regime recargo_equivalencia\)/);
    }
    expect(await transactionsOf(key)).toBe(0);
  });
});
