import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { configs } from '../support/fixtures.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { embeddedCertificatePem, tagText } from '../support/spain.ts';
import { createdTx, createLocation, createTx, fiscalRecordOf } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xmlsecVerify, xsdValidate } from '../support/xml-tools.ts';

/*
 * A black-box conformance check of Spain's documents, the way an outside checker reads them
 * (session-18 document audit): locations and transactions through the HTTP API only, each
 * record checked with independent tools (xmllint against the official XSDs, xmlsec1 for
 * TicketBAI's XAdES), the VERI*FACTU huella recomputed per FORMATS.md §2.1-2.2 and the
 * TicketBAI identifier's CRC-8 per §1.1-1.2. Each `describe` names the divergence it pins.
 */

const TBAI_XSD = 'es/ticketbai/ticketbaiv1-2-2.xsd';
const TBAI_ANULA_XSD = 'es/ticketbai/anula_ticketbaiv1-2-2.xsd';
const VF_XSD = 'es/verifactu/SuministroInformacion.xsd';
const SII_XSD = 'es/sii/SuministroLR.xsd';

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock(new Date('2026-11-27T10:00:00.000Z'));
  t = await startTestApp({ clock, limiter: unlimitedLimiter() });
});
afterAll(async () => {
  await t?.close();
});

function expectValid(xml: string, xsd: string): void {
  if (!HAVE_SCHEMAS) return console.warn(`conformance-spain-documents: XSD validation skipped: ${SCHEMAS_MISSING_MESSAGE}`);
  const v = xsdValidate(xml, xsd);
  expect(v.output).toMatch(/validates$/);
}

function expectSignatureVerifies(xml: string): void {
  if (!HAVE_SCHEMAS) return;
  const v = xmlsecVerify(xml, { trustedCertPem: embeddedCertificatePem(xml) });
  expect(v.output).toContain('SignedInfo References (ok/all): 3/3');
  expect(v.ok).toBe(true);
}

/** A line in the canonical form: tax = round-half-up(quantity × unit_price × rate / 100). */
function item(description: string, quantity: number, unit_price: number, tax_rate: number) {
  const net = Math.round(quantity * unit_price);
  const tax = Math.round((quantity * unit_price * tax_rate) / 100);
  return { description, quantity, unit_price, tax_rate, tax_amount: tax, total_amount: net + tax };
}

function sale(location_id: string, items: ReturnType<typeof item>[], over: Record<string, unknown> = {}) {
  return {
    location_id,
    timestamp: clock.now().toISOString(),
    currency: 'EUR',
    payment_method: 'card',
    items,
    pretax_amount: items.reduce((s, l) => s + l.total_amount - l.tax_amount, 0),
    tax_amount: items.reduce((s, l) => s + l.tax_amount, 0),
    total_amount: items.reduce((s, l) => s + l.total_amount, 0),
    ...over,
  };
}

const MIXED = [item('Pan', 3, 133, 4), item('Leche', 1.5, 99, 10), item('Vino & "tinto" <reserva>', 2, 1050, 21), item('Libro', 1, 1000, 0)];

const created = (key: string, body: object) => createdTx(t, key, body);
const record = (key: string, id: string) => fiscalRecordOf(t, key, id);

async function expect400(key: string, body: object, message: string): Promise<void> {
  const res = await createTx(t, key, body);
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json().error).toBe(message);
}

async function locationError(key: string, body: Record<string, unknown>): Promise<{ status: number; error: string }> {
  const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { name: 'Tienda', country: 'ES', tax_id: 'B12345674', ...body } });
  return { status: res.statusCode, error: res.json().error };
}

/** The SII record inside the request an outside checker validates (SuministroLR.xsd), written here, not by our soap.ts. */
function siiRequest(recordXml: string): string {
  const base = 'https://www2.agenciatributaria.gob.es/static_files/common/internet/dep/aplicaciones/es/aeat/ssii/fact/ws';
  return (
    `<siiLR:SuministroLRFacturasEmitidas xmlns:siiLR="${base}/SuministroLR.xsd" xmlns:sii="${base}/SuministroInformacion.xsd">` +
    '<sii:Cabecera><sii:IDVersionSii>1.1</sii:IDVersionSii><sii:Titular><sii:NombreRazon>Ejemplo SL</sii:NombreRazon><sii:NIF>B12345674</sii:NIF></sii:Titular>' +
    '<sii:TipoComunicacion>A0</sii:TipoComunicacion></sii:Cabecera>' +
    `${recordXml}</siiLR:SuministroLRFacturasEmitidas>`
  );
}

/** FORMATS.md §2.1 / §2.2, recomputed from the record's own fields. */
function recomputedHuella(xml: string): string {
  const f = (name: string) => (tagText(xml, `sf:${name}`) ?? '').replaceAll('&amp;', '&').trim();
  const previous = /<sf:RegistroAnterior>.*?<sf:Huella>([^<]*)<\/sf:Huella>/.exec(xml)?.[1] ?? '';
  const pairs = xml.startsWith('<sf:RegistroAnulacion')
    ? [['IDEmisorFacturaAnulada', f('IDEmisorFacturaAnulada')], ['NumSerieFacturaAnulada', f('NumSerieFacturaAnulada')], ['FechaExpedicionFacturaAnulada', f('FechaExpedicionFacturaAnulada')]]
    : [
        ['IDEmisorFactura', f('IDEmisorFactura')], ['NumSerieFactura', f('NumSerieFactura')], ['FechaExpedicionFactura', f('FechaExpedicionFactura')],
        ['TipoFactura', f('TipoFactura')], ['CuotaTotal', f('CuotaTotal')], ['ImporteTotal', f('ImporteTotal')],
      ];
  pairs.push(['Huella', previous], ['FechaHoraHusoGenRegistro', f('FechaHoraHusoGenRegistro')]);
  return crypto.createHash('sha256').update(pairs.map(([k, v]) => `${k}=${v}`).join('&'), 'utf8').digest('hex').toUpperCase();
}

const ownHuella = (xml: string): string => [...xml.matchAll(/<sf:Huella>([^<]*)<\/sf:Huella>/g)].at(-1)![1]!;

describe('country_config: values every record carries are checked against the record schemas at registration', () => {
  it('TicketBAI tbai_license (LicenciaTBAI) and series (SerieFactura) are TextMax20: longer made every record schema-invalid', async () => {
    const { key } = await t.signup();
    const tbai = { ...configs.ticketbai };
    expect(await locationError(key, { country_config: { ...tbai, tbai_license: 'TBAIARbdcb78bc0e44f3b4' } })).toEqual({
      status: 400, error: 'country_config.tbai_license must be 1-20 characters without spaces (TicketBAI LicenciaTBAI)',
    });
    expect(await locationError(key, { country_config: { ...tbai, series: 'TIENDA-CENTRO-2026-XX' } })).toEqual({
      status: 400, error: 'country_config.series must be 1-20 characters: letters, digits, ".", "_", "/" or "-"',
    });
    // PATCH is validated the same way.
    const loc = await createLocation(t, key, 'es-ticketbai');
    const patch = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...tbai, tbai_license: 'L'.repeat(21) } } });
    expect(patch.statusCode).toBe(400);
  });

  it('a legal name over 120 characters (the issuer\'s NombreRazon in every Spanish record) is refused, not cut', async () => {
    const { key } = await t.signup();
    const message = 'country_config.legal_name must be at most 120 characters for Spain locations (the records name the issuer in 120)';
    for (const config of [configs.verifactu, configs.ticketbai, configs.sii]) {
      expect(await locationError(key, { country_config: { ...config, legal_name: 'Ñ'.repeat(121) } })).toEqual({ status: 400, error: message });
    }
    expect((await locationError(key, { country_config: { ...configs.verifactu, legal_name: 'Ñ'.repeat(120) } })).status).toBe(201);
  });

  it('VERI*FACTU software_nif must name the producer by Spanish NIF or EU VAT number; installation_number fits NumeroInstalacion (100)', async () => {
    const { key } = await t.signup();
    expect(await locationError(key, { country_config: { ...configs.verifactu, software_nif: 'nope' } })).toEqual({
      status: 400, error: "country_config.software_nif must be the software producer's Spanish NIF or EU VAT number (e.g. B12345674, FR12345678901)",
    });
    expect(await locationError(key, { country_config: { ...configs.verifactu, installation_number: 'I'.repeat(101) } })).toEqual({
      status: 400, error: 'country_config.installation_number must be at most 100 characters',
    });
  });
});

describe('simplified invoices above 3,000.00 EUR (RD 1619/2012 art. 4; AEAT 1150) are refused at creation, not dead at the authority', () => {
  const over = [item('Ordenador', 1, 247_935, 21)]; // 3,000.00 + 0.01
  const at = [item('Ordenador', 1, 247_934, 21)]; // 3,000.00

  it('VERI*FACTU and TicketBAI: F2 over the limit → 400; at the limit, or with the customer (F1), accepted', async () => {
    const { key } = await t.signup();
    const message = "a simplified invoice (F2) cannot exceed 3,000.00 EUR (RD 1619/2012 art. 4): give the customer's tax id and name in customer_context for a full invoice (F1)";
    for (const system of ['es-verifactu', 'es-ticketbai'] as const) {
      const loc = await createLocation(t, key, system);
      await expect400(key, sale(loc, over), message);
      const limit = await created(key, sale(loc, at));
      expect(tagText(await record(key, limit.id), system === 'es-verifactu' ? 'sf:TipoFactura' : 'FacturaSimplificada')).toBe(system === 'es-verifactu' ? 'F2' : 'S');
      await created(key, sale(loc, over, { customer_context: { nif: 'A58818501', name: 'Cliente SA' } }));
    }
  });

  it('SII: simplified: true over the limit → 400', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    await expect400(
      key,
      sale(loc, over, { metadata: { simplified: true } }),
      'an SII simplified invoice (F2) cannot exceed 3,000.00 EUR (RD 1619/2012 art. 4): leave simplified out and give counterparty_nif and counterparty_name for a full invoice (F1)',
    );
    await created(key, sale(loc, at, { metadata: { simplified: true } }));
  });
});

describe('a customer outside the EU is not declared with an EU VAT number (IDType 02)', () => {
  const us = { tax_id: '12-3456789', name: 'Acme Inc', country: 'US' };

  it('VERI*FACTU: IDOtro 04 with CodigoPais; the record is XSD-valid and its huella recomputes; an EU VAT number stays 02', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await created(key, sale(loc, MIXED, { customer_context: us }));
    const xml = await record(key, tx.id);
    expectValid(xml, VF_XSD);
    expect(xml).toContain('<sf:IDOtro><sf:CodigoPais>US</sf:CodigoPais><sf:IDType>04</sf:IDType><sf:ID>12-3456789</sf:ID></sf:IDOtro>');
    expect(ownHuella(xml)).toBe(recomputedHuella(xml));
    const eu = await record(key, (await created(key, sale(loc, MIXED, { customer_context: { tax_id: 'DE123456789', name: 'Kunde GmbH' } }))).id);
    expect(eu).toContain('<sf:IDOtro><sf:IDType>02</sf:IDType><sf:ID>DE123456789</sf:ID></sf:IDOtro>');
  });

  it('TicketBAI: IDOtro 04 with CodigoPais, XSD-valid and signed; without any country → 400', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    const xml = await record(key, (await created(key, sale(loc, MIXED, { customer_context: us }))).id);
    expectValid(xml, TBAI_XSD);
    expectSignatureVerifies(xml);
    expect(xml).toContain('<IDOtro><CodigoPais>US</CodigoPais><IDType>04</IDType><ID>12-3456789</ID></IDOtro>');
    const message = 'customer_context.country (ISO 3166-1 alpha-2) is required when the customer tax id is neither a Spanish NIF nor an EU VAT number with its country prefix';
    await expect400(key, sale(loc, MIXED, { customer_context: { tax_id: '12-3456789', name: 'Acme Inc' } }), message);
    const vf = await createLocation(t, key, 'es-verifactu');
    await expect400(key, sale(vf, MIXED, { customer_context: { tax_id: '12-3456789', name: 'Acme Inc' } }), message);
  });
});

describe('SII: a counterparty named by IDOtro (or a NIF starting with N) takes DesgloseTipoOperacion, as AEAT requires', () => {
  it('foreign F1: DesgloseTipoOperacion/Entrega, valid in a SuministroLRFacturasEmitidas request; a Spanish customer keeps DesgloseFactura', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const foreign = { counterparty_name: 'Kunde GmbH', counterparty_id_type: '02', counterparty_country: 'DE', counterparty_id: 'DE123456789', invoice_number: 'F-1' };
    const xml = await record(key, (await created(key, sale(loc, MIXED, { metadata: foreign }))).id);
    expectValid(siiRequest(xml), SII_XSD);
    expect(xml).toMatch(/<sii:TipoDesglose>\s*<sii:DesgloseTipoOperacion>\s*<sii:Entrega>\s*<sii:Sujeta>/);
    expect(xml).not.toContain('DesgloseFactura');
    const domestic = await record(key, (await created(key, sale(loc, MIXED, { metadata: { counterparty_nif: 'A58818501', counterparty_name: 'Cliente SA', invoice_number: 'F-2' } }))).id);
    expectValid(siiRequest(domestic), SII_XSD);
    expect(domestic).toContain('<sii:DesgloseFactura>');
  });
});

describe('dates around midnight in Europe/Madrid and the chain across a cancellation', () => {
  it('VERI*FACTU: an invoice at 23:59:59 Madrid (22:59:59 UTC) is dated that day; its annulment after midnight names that date and chains on it', async () => {
    const saved = clock.now();
    try {
      const { key } = await t.signup();
      const loc = await createLocation(t, key, 'es-verifactu');
      clock.set('2026-03-28T22:59:59.400Z'); // Saturday 23:59:59 CET; DST starts that night
      const first = await created(key, sale(loc, MIXED));
      const alta = await record(key, first.id);
      expect(tagText(alta, 'sf:FechaExpedicionFactura')).toBe('28-03-2026');
      expect(tagText(alta, 'sf:FechaHoraHusoGenRegistro')).toBe('2026-03-28T23:59:59+01:00');
      expect(alta).toContain('<sf:PrimerRegistro>S</sf:PrimerRegistro>');
      expect(ownHuella(alta)).toBe(recomputedHuella(alta));

      clock.set('2026-03-29T01:30:00.000Z'); // 03:30 CEST, the next day
      await t.worker.drain(); // the stub accepts the invoice: cancellable now
      const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${first.id}/cancel`, key, payload: {} });
      expect(cancel.statusCode, cancel.body).toBeLessThan(300);
      const anulacion = await record(key, cancel.json().id);
      expectValid(anulacion, VF_XSD);
      expect(tagText(anulacion, 'sf:FechaExpedicionFacturaAnulada')).toBe('28-03-2026');
      expect(tagText(anulacion, 'sf:FechaHoraHusoGenRegistro')).toBe('2026-03-29T03:30:00+02:00');
      expect(anulacion).toContain(`<sf:RegistroAnterior><sf:IDEmisorFactura>B12345674</sf:IDEmisorFactura><sf:NumSerieFactura>${tagText(alta, 'sf:NumSerieFactura')}</sf:NumSerieFactura><sf:FechaExpedicionFactura>28-03-2026</sf:FechaExpedicionFactura><sf:Huella>${ownHuella(alta)}</sf:Huella></sf:RegistroAnterior>`);
      expect(ownHuella(anulacion)).toBe(recomputedHuella(anulacion));

      const next = await record(key, (await created(key, sale(loc, MIXED))).id);
      expect(tagText(next, 'sf:FechaExpedicionFactura')).toBe('29-03-2026');
      expect(next).toContain(`<sf:Huella>${ownHuella(anulacion)}</sf:Huella></sf:RegistroAnterior>`);
      expect(ownHuella(next)).toBe(recomputedHuella(next));
    } finally {
      clock.set(saved);
    }
  });

  it('TicketBAI: the invoice\'s date and time are Madrid\'s; the TBAI id\'s DDMMYY and the annulment after midnight name the same day', async () => {
    const saved = clock.now();
    try {
      const { key } = await t.signup();
      const loc = await createLocation(t, key, 'es-ticketbai');
      clock.set('2026-12-31T22:59:59.000Z'); // 23:59:59 CET on New Year's Eve
      const tx = await created(key, sale(loc, MIXED));
      const xml = await record(key, tx.id);
      expectValid(xml, TBAI_XSD);
      expect(tagText(xml, 'FechaExpedicionFactura')).toBe('31-12-2026');
      expect(tagText(xml, 'HoraExpedicionFactura')).toBe('23:59:59');
      expect(tx.fiscal_id).toMatch(/^TBAI-B12345674-311226-/);

      clock.set('2027-01-01T00:30:00.000Z');
      await t.worker.drain();
      const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${tx.id}/cancel`, key, payload: {} });
      expect(cancel.statusCode, cancel.body).toBeLessThan(300);
      const anula = await record(key, cancel.json().id);
      expectValid(anula, TBAI_ANULA_XSD);
      expectSignatureVerifies(anula);
      expect(tagText(anula, 'FechaExpedicionFactura')).toBe('31-12-2026');
      expect(tagText(anula, 'NumFactura')).toBe(tagText(xml, 'NumFactura'));
    } finally {
      clock.set(saved);
    }
  });
});
