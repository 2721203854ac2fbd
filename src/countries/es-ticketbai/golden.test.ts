/**
 * Golden TicketBAI records: fixed clock, ids and key (test/fixtures/signing), compared
 * byte for byte with golden/*.xml (shared/golden.ts: `UPDATE_GOLDEN=1` rewrites them and
 * their .pretty.xml copies). Each one is also
 * checked by the reference tools: valid against the official XSD (xmllint) and its
 * XAdES signature verified (xmlsec1).
 */
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xmlsecVerify, xsdValidate } from '../../../test/support/xml-tools.ts';
import type { FiscalRecord } from '../types.ts';
import { goldenFiles } from '../shared/golden.ts';
import { NOW, SOFTWARE, draft, fixedSigningKey, line, location, validatedBuild } from '../shared/test-fixtures.ts';
import { RECARGO_SALE, replacingBuild } from '../es/test-fixtures.ts';
import { ticketBai } from './index.ts';

const key = fixedSigningKey();
const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));
const ALTA = 'es/ticketbai/ticketbaiv1-2-2.xsd';
const ANULA = 'es/ticketbai/anula_ticketbaiv1-2-2.xsd';

function checkWithTools(xml: string, xsd: string): void {
  const sig = xmlsecVerify(xml, { trustedCertPem: key.certificatePem });
  expect(sig.output).toContain('SignedInfo References (ok/all): 3/3');
  expect(sig.ok).toBe(true);
  if (!HAVE_SCHEMAS) {
    console.warn(`es-ticketbai golden: ${SCHEMAS_MISSING_MESSAGE}`);
    return;
  }
  const v = xsdValidate(xml, xsd);
  expect(v.output).toMatch(/validates$/);
  expect(v.ok).toBe(true);
}

const gipuzkoa = location('es-ticketbai');
const araba = location('es-ticketbai', { territory: 'araba', territory_code: '01', tbai_license: 'TBAIARbf8c0e3f7a8c', series: 'TK' });
const bizkaia = location('es-ticketbai', { territory: 'bizkaia', territory_code: '48', tbai_license: 'TBAIBI00000000PRUEBA' });
// Keys 51/52 come from a natural person (or an E/J entity): Araba 10-132, ./foral-rules.ts.
const gipuzkoaRetailer = { ...location('es-ticketbai', { vat_regime: 'recargo_equivalencia' }), tax_id: '12345678Z' };
const bizkaiaSimplified = {
  ...location('es-ticketbai', { territory: 'bizkaia', territory_code: '48', tbai_license: 'TBAIBI00000000PRUEBA', vat_regime: 'simplified', lroe_epigrafe: '659400' }),
  tax_id: 'E12345674',
};

/** Two rates and a fractional quantity: 2 × 10.00 at 21 %, 0.5 × 3.00 at 10 %. */
const twoRates = draft({
  items: [
    line({ description: 'Menú del día', quantity: 2, unit_price: 1000, tax_rate: 21, tax_amount: 420, total_amount: 2420 }),
    line({ description: 'Café & bollo <2x1>', quantity: 0.5, unit_price: 300, tax_rate: 10, tax_amount: 15, total_amount: 165 }),
  ],
  payment_method: 'cash',
});

const first = validatedBuild(ticketBai, gipuzkoa, twoRates, { signingKey: key, transactionId: 'a1b2c3d4-0001-4000-8000-000000000001' });
const chained = validatedBuild(ticketBai, gipuzkoa, draft(), {
  signingKey: key,
  transactionId: 'a1b2c3d4-0002-4000-8000-000000000002',
  now: new Date(NOW.getTime() + 90_000),
  chain: { seq: 2, number: 2, previous: { fingerprint: first.record.fingerprint, fiscalId: first.record.fiscalId, issuedAt: NOW.toISOString(), linkData: first.record.linkData } },
});

const tickets = [
  { transactionId: 'a1b2c3d4-0001-4000-8000-000000000001', ...first, issuedAt: NOW },
  { transactionId: 'a1b2c3d4-0002-4000-8000-000000000002', ...chained, issuedAt: new Date(NOW.getTime() + 90_000) },
];
const f3 = replacingBuild(
  ticketBai, gipuzkoa,
  draft({ customer_context: { nif: 'B95123451', name: 'Cliente Ejemplo SA' }, metadata: { replaces_simplified: tickets.map((t) => t.transactionId) }, items: [...twoRates.items, line()] }),
  tickets,
  { transactionId: 'a1b2c3d4-000a-4000-8000-00000000000a', now: new Date(NOW.getTime() + 10_800_000), chain: { seq: 1, number: 4, previous: null } },
);

const SCENARIOS: Array<{ name: string; record: FiscalRecord; xsd: string }> = [
  { name: 'gipuzkoa-first.xml', record: first.record, xsd: ALTA },
  { name: 'gipuzkoa-chained.xml', record: chained.record, xsd: ALTA },
  {
    name: 'araba-simplified.xml',
    record: validatedBuild(ticketBai, araba, draft({ metadata: { description: 'Venta en mostrador' } }), {
      signingKey: key,
      transactionId: 'a1b2c3d4-0003-4000-8000-000000000003',
      chain: { seq: 1, number: 7, previous: null },
    }).record,
    xsd: ALTA,
  },
  {
    name: 'bizkaia-customer-f1.xml',
    record: validatedBuild(ticketBai, bizkaia, draft({ customer_context: { nif: 'B95123451', name: 'Cliente Ejemplo SA', postal_code: '48001', address: 'Gran Vía 1, Bilbao' } }), {
      signingKey: key,
      transactionId: 'a1b2c3d4-0004-4000-8000-000000000004',
      // 23:30 UTC on 15 January is already the 16th in Bilbao.
      now: new Date('2026-01-15T23:30:00Z'),
    }).record,
    xsd: ALTA,
  },
  {
    // A full invoice issued days after the operation (RD 1619/2012 art. 6.1.f): FechaOperacion
    // first in DatosFactura; the customer's address given as an object (street, city,
    // postal_code), written as Direccion and CodigoPostal (Araba 016-024 / 016-025).
    name: 'operation-date.xml',
    record: validatedBuild(ticketBai, gipuzkoa, draft({
      customer_context: { nif: 'B95123451', name: 'Cliente Ejemplo SA', address: { street: 'Calle Mayor 1', city: 'Donostia', postal_code: '20001' } },
      metadata: { operation_date: '09-01-2026' },
    }), { signingKey: key, transactionId: 'a1b2c3d4-000b-4000-8000-00000000000b' }).record,
    xsd: ALTA,
  },
  {
    name: 'refund.xml',
    record: validatedBuild(ticketBai, gipuzkoa, draft({ type: 'refund', metadata: { original_invoice_number: '1', original_issue_date: '15-01-2026', original_series: 'A' } }), {
      signingKey: key,
      transactionId: 'a1b2c3d4-0005-4000-8000-000000000005',
      now: new Date(NOW.getTime() + 3_600_000),
      chain: { seq: 3, number: 3, previous: { fingerprint: chained.record.fingerprint, fiscalId: chained.record.fiscalId, issuedAt: NOW.toISOString(), linkData: chained.record.linkData } },
    }).record,
    xsd: ALTA,
  },
  {
    // An exempt operation (E1) beside a taxed line: Sujeta/Exenta then Sujeta/NoExenta.
    name: 'exempt-mixed.xml',
    record: validatedBuild(ticketBai, gipuzkoa, draft({
      metadata: { exemption_code: 'E1' },
      items: [line({ description: 'Consulta médica', unit_price: 6000, tax_rate: 0, tax_amount: 0, total_amount: 6000 }), line()],
    }), { signingKey: key, transactionId: 'a1b2c3d4-0007-4000-8000-000000000007' }).record,
    xsd: ALTA,
  },
  {
    // Every line exempt (E5, an intra-EU supply to a German company): Exenta alone, no
    // NoExenta, under DesgloseTipoOperacion/Entrega (an IDOtro customer). The customer was
    // added in session 25: an E5 needs an intra-EU customer (foral-rules.ts, Araba 10-168);
    // the file was an F2 without one, which the Haciendas Forales refuse.
    name: 'exempt-only.xml',
    record: validatedBuild(ticketBai, bizkaia, draft({
      customer_context: { tax_id: 'DE123456789', name: 'Maschinenbau Beispiel GmbH' },
      metadata: { exemption_code: 'E5' },
      items: [line({ description: 'Maquinaria', unit_price: 150000, tax_rate: 0, tax_amount: 0, total_amount: 150000 })],
    }), { signingKey: key, transactionId: 'a1b2c3d4-0008-4000-8000-000000000008' }).record,
    xsd: ALTA,
  },
  {
    // A wholesaler's invoice to a retailer in recargo de equivalencia (LIVA arts. 154-163,
    // ../es/surcharge.ts): goods at 21 % + 5.2 % and 10 % + 1.4 %, a service at 21 % without
    // it. Each surcharged rate is a DetalleIVA of its own with TipoRecargoEquivalencia and
    // CuotaRecargoEquivalencia; Claves 01 (the wholesaler is in the general regime:
    // ../es/regime.ts); ImporteTotalFactura counts the surcharge.
    name: 'recargo.xml',
    record: validatedBuild(ticketBai, gipuzkoa, draft({
      customer_context: { nif: 'B95123451', name: 'Ultramarinos Ejemplo SL' },
      ...RECARGO_SALE,
    }), { signingKey: key, transactionId: 'a1b2c3d4-0009-4000-8000-000000000009' }).record,
    xsd: ALTA,
  },
  {
    // A retailer in recargo de equivalencia (../es/regime.ts) sells to a consumer: IVA as
    // ever, Claves 51 alone, OperacionEnRecargoDeEquivalenciaORegimenSimplificado S.
    name: 'issuer-recargo.xml',
    record: validatedBuild(ticketBai, gipuzkoaRetailer, twoRates, { signingKey: key, transactionId: 'a1b2c3d4-000b-4000-8000-00000000000b' }).record,
    xsd: ALTA,
  },
  {
    // A shop in the simplified regime, Bizkaia: Claves 52 alone, the flag S.
    name: 'issuer-simplified.xml',
    record: validatedBuild(ticketBai, bizkaiaSimplified, twoRates, { signingKey: key, transactionId: 'a1b2c3d4-000c-4000-8000-00000000000c' }).record,
    xsd: ALTA,
  },
  {
    // The customer of the two Gipuzkoa tickets asks for an invoice with their NIF and name:
    // a full invoice (F3, ../es/replacement.ts), FacturaEmitidaSustitucionSimplificada S,
    // each ticket in FacturasRectificadasSustituidas.
    name: 'f3-replaces.xml',
    record: f3.record,
    xsd: ALTA,
  },
  {
    name: 'cancellation.xml',
    record: ticketBai.build({
      transactionId: 'a1b2c3d4-0006-4000-8000-000000000006',
      kind: 'cancellation',
      tx: first.tx,
      original: { transactionId: 'a1b2c3d4-0001-4000-8000-000000000001', fiscalId: first.record.fiscalId, tx: first.tx, issuedAt: NOW.toISOString(), documentNumber: first.record.documentNumber },
      location: gipuzkoa,
      environment: 'test',
      now: new Date(NOW.getTime() + 7_200_000),
      chain: { seq: 1, previous: null },
      software: SOFTWARE,
      signingKey: key,
    }),
    xsd: ANULA,
  },
];

describe('es-ticketbai golden records', () => {
  for (const s of SCENARIOS) {
    it(`${s.name}: byte for byte, XSD-valid, signature verified`, () => {
      expectGolden(s.name, s.record.body);
      checkWithTools(s.record.body, s.xsd);
    });
  }

  it('exempt operations: the 0 % lines are one DetalleExenta with the cause, the other lines stay S1; the receipt cites the article', () => {
    const mixed = SCENARIOS.find((x) => x.name === 'exempt-mixed.xml')!.record;
    expect(mixed.body).toContain(
      '<Sujeta><Exenta><DetalleExenta><CausaExencion>E1</CausaExencion><BaseImponible>60.00</BaseImponible></DetalleExenta></Exenta><NoExenta><DetalleNoExenta><TipoNoExenta>S1</TipoNoExenta><DesgloseIVA><DetalleIVA><BaseImponible>10.00</BaseImponible><TipoImpositivo>21.00</TipoImpositivo>',
    );
    expect(mixed.renderHints[0]).toEqual({ key: 'exemption', placement: 'body', mandatory: true, kind: 'text', value: 'Operación exenta de IVA (art. 20 Norma Foral del IVA)' });
    const only = SCENARIOS.find((x) => x.name === 'exempt-only.xml')!.record;
    expect(only.body).toContain('<Sujeta><Exenta><DetalleExenta><CausaExencion>E5</CausaExencion><BaseImponible>1500.00</BaseImponible></DetalleExenta></Exenta></Sujeta>');
    expect(only.body).not.toContain('NoExenta');
    expect(only.renderHints[0]!.value).toBe('Operación exenta de IVA (art. 25 Norma Foral del IVA)');
  });

  it('recargo de equivalencia: a DetalleIVA per surcharged rate with its rate and quota, the plain one without; key 01 (a general-regime wholesaler); the total counts the surcharge', () => {
    const body = SCENARIOS.find((x) => x.name === 'recargo.xml')!.record.body;
    expect(body).toContain(
      '<DesgloseIVA>' +
        '<DetalleIVA><BaseImponible>20.00</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>4.20</CuotaImpuesto><TipoRecargoEquivalencia>5.20</TipoRecargoEquivalencia><CuotaRecargoEquivalencia>1.04</CuotaRecargoEquivalencia><OperacionEnRecargoDeEquivalenciaORegimenSimplificado>N</OperacionEnRecargoDeEquivalenciaORegimenSimplificado></DetalleIVA>' +
        '<DetalleIVA><BaseImponible>5.00</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>1.05</CuotaImpuesto><OperacionEnRecargoDeEquivalenciaORegimenSimplificado>N</OperacionEnRecargoDeEquivalenciaORegimenSimplificado></DetalleIVA>' +
        '<DetalleIVA><BaseImponible>15.00</BaseImponible><TipoImpositivo>10.00</TipoImpositivo><CuotaImpuesto>1.50</CuotaImpuesto><TipoRecargoEquivalencia>1.40</TipoRecargoEquivalencia><CuotaRecargoEquivalencia>0.21</CuotaRecargoEquivalencia><OperacionEnRecargoDeEquivalenciaORegimenSimplificado>N</OperacionEnRecargoDeEquivalenciaORegimenSimplificado></DetalleIVA>' +
        '</DesgloseIVA>',
    );
    // 01 only: 51 names the issuer's own regime (the Haciendas Forales warn on a 51 without a
    // DetalleIVA flagged S, validation 196); the wholesaler is in the general regime.
    expect(body).toContain('<ImporteTotalFactura>48.00</ImporteTotalFactura><Claves><IDClave><ClaveRegimenIvaOpTrascendencia>01</ClaveRegimenIvaOpTrascendencia></IDClave></Claves>');
    // A line's ImporteTotal stays its net + IVA (the surcharge is the invoice's, in the breakdown).
    expect(body).toContain('<DescripcionDetalle>Aceite de oliva 1 l</DescripcionDetalle><Cantidad>2.00</Cantidad><ImporteUnitario>10.00</ImporteUnitario><ImporteTotal>24.20</ImporteTotal>');
  });

  it('an issuer in recargo de equivalencia / the simplified regime: every DetalleIVA keeps its rate and quota and says S; Claves 51 / 52 alone', () => {
    const flag = (v: string) => `<OperacionEnRecargoDeEquivalenciaORegimenSimplificado>${v}</OperacionEnRecargoDeEquivalenciaORegimenSimplificado>`;
    const keys = (k: string) => `<Claves><IDClave><ClaveRegimenIvaOpTrascendencia>${k}</ClaveRegimenIvaOpTrascendencia></IDClave></Claves>`;
    const detalles =
      '<DesgloseIVA>' +
      `<DetalleIVA><BaseImponible>20.00</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>4.20</CuotaImpuesto>${flag('S')}</DetalleIVA>` +
      `<DetalleIVA><BaseImponible>1.50</BaseImponible><TipoImpositivo>10.00</TipoImpositivo><CuotaImpuesto>0.15</CuotaImpuesto>${flag('S')}</DetalleIVA>` +
      '</DesgloseIVA>';
    for (const [name, key] of [['issuer-recargo.xml', '51'], ['issuer-simplified.xml', '52']] as const) {
      const body = SCENARIOS.find((x) => x.name === name)!.record.body;
      expect(body).toContain(detalles);
      expect(body).toContain(keys(key));
      expect(body).not.toContain(flag('N'));
    }
    // Every general-regime issuer's DetalleIVA says N, and its key is 01 alone.
    for (const s of SCENARIOS.filter((x) => x.xsd === ALTA && !x.name.startsWith('issuer-'))) {
      expect(s.record.body, s.name).not.toContain(flag('S'));
      if (s.record.body.includes('<Claves>')) expect(s.record.body, s.name).toContain(keys('01'));
    }
  });

  it('F3: the invoice replacing two tickets says so (FacturaEmitidaSustitucionSimplificada S, not simplified) and names each by series, number and date; it names its customer', () => {
    const body = f3.record.body;
    expect(body).toContain(
      '<FacturaSimplificada>N</FacturaSimplificada><FacturaEmitidaSustitucionSimplificada>S</FacturaEmitidaSustitucionSimplificada>' +
        '<FacturasRectificadasSustituidas>' +
        '<IDFacturaRectificadaSustituida><SerieFactura>A</SerieFactura><NumFactura>1</NumFactura><FechaExpedicionFactura>15-01-2026</FechaExpedicionFactura></IDFacturaRectificadaSustituida>' +
        '<IDFacturaRectificadaSustituida><SerieFactura>A</SerieFactura><NumFactura>2</NumFactura><FechaExpedicionFactura>15-01-2026</FechaExpedicionFactura></IDFacturaRectificadaSustituida>' +
        '</FacturasRectificadasSustituidas></CabeceraFactura>',
    );
    expect(body).not.toContain('FacturaRectificativa>');
    expect(body).toContain('<IDDestinatario><NIF>B95123451</NIF><ApellidosNombreRazonSocial>Cliente Ejemplo SA</ApellidosNombreRazonSocial>');
    // Every other invoice says N.
    for (const s of SCENARIOS.filter((x) => x.xsd === ALTA && x.name !== 'f3-replaces.xml')) {
      expect(s.record.body).toContain('<FacturaEmitidaSustitucionSimplificada>N</FacturaEmitidaSustitucionSimplificada>');
    }
  });

  it('the golden chain links: the second invoice repeats the first one’s series, number, date and signature', () => {
    expect(chained.record.body).toContain(
      `<SerieFacturaAnterior>A</SerieFacturaAnterior><NumFacturaAnterior>1</NumFacturaAnterior><FechaExpedicionFacturaAnterior>15-01-2026</FechaExpedicionFacturaAnterior><SignatureValueFirmaFacturaAnterior>${first.record.fingerprint!.slice(0, 100)}</SignatureValueFirmaFacturaAnterior>`,
    );
  });
});
