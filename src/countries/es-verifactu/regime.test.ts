/**
 * An issuer in recargo de equivalencia or in the simplified regime (country_config.vat_regime,
 * ../es/regime.ts): its VERI*FACTU records key every taxed detail 18 / 20 (AEAT list L8A) and
 * otherwise say what a general-regime issuer's say. Golden files (shared/golden.ts), each valid
 * against SuministroLR.xsd and with a huella that recomputes from the XML's own values.
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import { goldenFiles } from '../shared/golden.ts';
import { draft, line, location, txCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { RECARGO_SALE } from '../es/test-fixtures.ts';
import { huellaAlta } from './huella.ts';
import { regFactuRequest } from './soap.ts';
import { verifactu } from './index.ts';

const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));
const obligado = { nif: 'B12345674', nombreRazon: 'Ejemplo SL' };
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false });
const xsdTitle = (title: string) => (HAVE_SCHEMAS ? title : `${title}: ${SCHEMAS_MISSING_MESSAGE}`);

const retailer = location('es-verifactu', { vat_regime: 'recargo_equivalencia' });
const simplified = location('es-verifactu', { vat_regime: 'simplified' });

/** A ticket of two rates (21 % and 10 %). */
const twoRates = draft({
  items: [
    line({ description: 'Aceite de oliva 1 l', quantity: 2, unit_price: 1000, tax_rate: 21, tax_amount: 420, total_amount: 2420 }),
    line({ description: 'Arroz 1 kg', quantity: 1, unit_price: 150, tax_rate: 10, tax_amount: 15, total_amount: 165 }),
  ],
});

const cases = [
  // A retailer in recargo de equivalencia sells to a consumer: IVA as ever, ClaveRegimen 18.
  { file: 'alta-issuer-recargo.xml', key: '18', record: validatedBuild(verifactu, retailer, twoRates, { transactionId: '00000000-0000-4000-8000-000000000201' }).record },
  // A shop in the simplified regime: ClaveRegimen 20.
  { file: 'alta-issuer-simplified.xml', key: '20', record: validatedBuild(verifactu, simplified, twoRates, { transactionId: '00000000-0000-4000-8000-000000000202' }).record },
  // Its corrective invoice (R5, by differences): the same key, negative amounts.
  { file: 'alta-issuer-simplified-refund.xml', key: '20', record: validatedBuild(verifactu, simplified, draft({ type: 'refund' }), { transactionId: '00000000-0000-4000-8000-000000000203' }).record },
];

const details = (body: string): Array<Record<string, string>> => {
  const d = (parser.parse(body) as any).RegistroAlta.Desglose.DetalleDesglose;
  return Array.isArray(d) ? d : [d];
};

describe('VERI*FACTU: an issuer in recargo de equivalencia or the simplified regime', () => {
  it.each(cases.map((c) => [c.file, c] as const))('%s matches its golden file', (file, c) => {
    expectGolden(file, c.record.body);
  });

  it.skipIf(!HAVE_SCHEMAS).each(cases.map((c) => [c.file, c] as const))(xsdTitle('%s, in RegFactuSistemaFacturacion, validates against SuministroLR.xsd'), (_file, c) => {
    const result = xsdValidate(regFactuRequest(obligado, [c.record.body]), 'es/verifactu/SuministroLR.xsd');
    expect(result.ok, result.output).toBe(true);
  });

  it.each(cases.map((c) => [c.file, c] as const))('%s: every detail S1 with its rate and quota under the regime key; the huella recomputes', (_file, c) => {
    for (const d of details(c.record.body)) {
      expect(d).toMatchObject({ Impuesto: '01', ClaveRegimen: c.key, CalificacionOperacion: 'S1' });
      expect(d.TipoImpositivo).toBeDefined();
      expect(d.CuotaRepercutida).toBeDefined();
      expect(d.TipoRecargoEquivalencia).toBeUndefined();
    }
    const alta = (parser.parse(c.record.body) as any).RegistroAlta;
    expect(alta.Huella).toBe(huellaAlta({
      IDEmisorFactura: alta.IDFactura.IDEmisorFactura, NumSerieFactura: alta.IDFactura.NumSerieFactura,
      FechaExpedicionFactura: alta.IDFactura.FechaExpedicionFactura, TipoFactura: alta.TipoFactura, CuotaTotal: alta.CuotaTotal,
      ImporteTotal: alta.ImporteTotal, Huella: '', FechaHoraHusoGenRegistro: alta.FechaHoraHusoGenRegistro,
    }));
  });

  it('the refund is by differences: negative base and quota', () => {
    const [d] = details(cases[2]!.record.body);
    expect(d!.BaseImponibleOimporteNoSujeto).toMatch(/^-/);
    expect(d!.CuotaRepercutida).toMatch(/^-/);
  });

  it('a line surcharge at such a location keeps the issuer\'s key (one regime per issuer); a general-regime issuer still writes 18 beside it and 01 elsewhere', () => {
    const sale = draft({ customer_context: { nif: 'B64717838', name: 'Ultramarinos Ejemplo SL' }, ...RECARGO_SALE });
    const keys = (loc: typeof retailer) => details(validatedBuild(verifactu, loc, sale).record.body).map((d) => d.ClaveRegimen);
    expect(keys(simplified)).toEqual(['20', '20', '20']);
    expect(keys(retailer)).toEqual(['18', '18', '18']);
    expect(keys(location('es-verifactu'))).toEqual(['18', '18', '01']);
  });

  it('a general-regime location (no vat_regime, or general) writes 01 as before', () => {
    for (const loc of [location('es-verifactu'), location('es-verifactu', { vat_regime: 'general' })]) {
      expect(details(validatedBuild(verifactu, loc, twoRates).record.body).map((d) => d.ClaveRegimen)).toEqual(['01', '01']);
    }
  });

  it('no exemption cause at such a location (400): no source keys an exempt detail to 18 or 20', () => {
    const exempt = draft({
      metadata: { exemption_code: 'E1' },
      items: [line({ description: 'Consulta', unit_price: 5000, tax_rate: 0, tax_amount: 0, total_amount: 5000 })],
    });
    for (const [loc, name] of [[retailer, 'recargo_equivalencia'], [simplified, 'simplified']] as const) {
      expect(() => verifactu.validateTransaction(exempt, txCtx(loc))).toThrow(`(country_config.vat_regime ${name})`);
    }
    expect(() => verifactu.validateTransaction(exempt, txCtx(location('es-verifactu')))).not.toThrow();
  });
});
