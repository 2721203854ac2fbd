import { describe, it, expect } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xmlsecVerify, xsdValidate } from '../../../test/support/xml-tools.ts';
import type { BuildInput, FiscalRecord } from '../types.ts';
import { ticketBai } from './index.ts';
import { crc8Text } from './crc8.ts';
import { SIGNATURE_POLICIES } from './build.ts';
import { NOW, SOFTWARE, TX_ID, draft, fixedSigningKey, location, stored, submitCtx, validatedBuild, buildInput } from '../shared/test-fixtures.ts';

const TBAI_ID = /^TBAI-[0-9A-Z]{9}-\d{6}-[A-Za-z0-9+/]{13}-\d{3}$/;
const key = fixedSigningKey();
const signed = { signingKey: key } as const;

const text = (xml: string, name: string): string | undefined => new RegExp(`<${name}(?: [^>]*)?>([^<]*)</${name}>`).exec(xml)?.[1];

/** Valid against the official XSD (when ../shared/schemas is there) and verified by xmlsec1. */
function expectValidSigned(xml: string, xsd = 'es/ticketbai/ticketbaiv1-2-2.xsd'): void {
  const sig = xmlsecVerify(xml, { trustedCertPem: key.certificatePem });
  expect(sig.output).toContain('SignedInfo References (ok/all): 3/3');
  expect(sig.ok).toBe(true);
  if (!HAVE_SCHEMAS) {
    console.warn(`es-ticketbai build: ${SCHEMAS_MISSING_MESSAGE}`);
    return;
  }
  const v = xsdValidate(xml, xsd);
  expect(v.output).toMatch(/validates$/);
  expect(v.ok).toBe(true);
}

describe('es-ticketbai build', () => {
  const loc = location('es-ticketbai');

  it('declares that it signs with the issuer certificate', () => {
    expect(ticketBai.capabilities.signsWithCertificate).toBe(true);
    expect(ticketBai.capabilities.signsLocally).toBe(true);
  });

  it('a signed TicketBai XML record, valid against ticketbaiv1-2-2.xsd and verified by xmlsec1', () => {
    const { record } = validatedBuild(ticketBai, loc, draft(), signed);
    expect(record).toMatchObject({ contentType: 'application/xml', placeholder: false, documentNumber: '1' });
    expect(record.body.startsWith('<T:TicketBai xmlns:T="urn:ticketbai:emision" ')).toBe(true);
    expectValidSigned(record.body);
  });

  it('one changed byte in a signed record: xmlsec1 refuses it', () => {
    const { record } = validatedBuild(ticketBai, loc, draft(), signed);
    const tampered = record.body.replace('<ImporteTotalFactura>12.10<', '<ImporteTotalFactura>12.19<');
    expect(tampered).not.toBe(record.body);
    const r = xmlsecVerify(tampered, { trustedCertPem: key.certificatePem });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/fail/i);
  });

  it('the record carries the transaction: issuer, number, local date and time, lines, totals, licence', () => {
    const { record } = validatedBuild(ticketBai, loc, draft(), signed);
    const x = record.body;
    expect(text(x, 'NIF')).toBe('B12345674');
    expect(text(x, 'ApellidosNombreRazonSocial')).toBe('Ejemplo SL');
    expect(text(x, 'SerieFactura')).toBe('A');
    expect(text(x, 'NumFactura')).toBe('1');
    expect(text(x, 'FechaExpedicionFactura')).toBe('15-01-2026');
    // 10:00 UTC is 11:00 in Madrid in January.
    expect(text(x, 'HoraExpedicionFactura')).toBe('11:00:00');
    expect(text(x, 'FacturaSimplificada')).toBe('S');
    expect(text(x, 'ImporteTotalFactura')).toBe('12.10');
    expect(text(x, 'BaseImponible')).toBe('10.00');
    expect(text(x, 'CuotaImpuesto')).toBe('2.10');
    expect(text(x, 'LicenciaTBAI')).toBe('TBAIGIPRE00000000123');
    expect(x).toContain(`<EntidadDesarrolladora><NIF>${SOFTWARE.vendorTaxId}</NIF></EntidadDesarrolladora><Nombre>${SOFTWARE.name}</Nombre><Version>${SOFTWARE.version}</Version>`);
    expect(x).not.toContain('EncadenamientoFacturaAnterior');
  });

  it('fingerprint: the full SignatureValue; linkData: series, number, date for the next invoice', () => {
    const { record } = validatedBuild(ticketBai, loc, draft(), signed);
    expect(record.fingerprint).toBe(text(record.body, 'ds:SignatureValue'));
    expect(record.fingerprint).toMatch(/^[A-Za-z0-9+/]{342}==$/);
    expect(record.linkData).toEqual({ series: 'A', number: '1', date: '15-01-2026' });
  });

  it('TBAI id: NIF, local issue date DDMMYY, the first 13 SignatureValue characters, real CRC-8', () => {
    const { record } = validatedBuild(ticketBai, loc, draft(), signed);
    const id = record.fiscalId!;
    expect(id).toMatch(TBAI_ID);
    expect(id).toHaveLength(39);
    expect(id).toBe(`TBAI-B12345674-150126-${record.fingerprint!.slice(0, 13)}-${crc8Text(id.slice(0, 36))}`);
  });

  it('QR URL: territory test URL, id, series, number, total as in the XML, CRC last', () => {
    const { record } = validatedBuild(ticketBai, loc, draft(), { ...signed, chain: { seq: 42, previous: null } });
    const qr = record.qrData!;
    expect(qr.startsWith(`https://tbai.prep.gipuzkoa.eus/qr/?id=${encodeURIComponent(record.fiscalId!)}&s=A&nf=42&i=12.10&cr=`)).toBe(true);
    const cut = qr.lastIndexOf('&cr=');
    expect(qr.slice(cut + 4)).toBe(crc8Text(qr.slice(0, cut)));
    expect(record.documentNumber).toBe('42');
    expect(text(record.body, 'NumFactura')).toBe('42');
  });

  it('numbering: chain.number, else the sequence, unless metadata.invoice_number', () => {
    expect(validatedBuild(ticketBai, loc, draft(), { ...signed, chain: { seq: 9, number: 3, previous: null } }).record.documentNumber).toBe('3');
    const own = validatedBuild(ticketBai, loc, draft({ metadata: { invoice_number: 'T-77' } }), signed).record;
    expect(own.documentNumber).toBe('T-77');
    expect(own.linkData).toMatchObject({ number: 'T-77' });
  });

  it('live environment and territory pick the QR base and the signature policy', () => {
    const live = validatedBuild(ticketBai, loc, draft(), { ...signed, environment: 'live' }).record;
    expect(live.qrData).toMatch(/^https:\/\/tbai\.egoitza\.gipuzkoa\.eus\/qr\/\?id=/);
    expect(live.body).toContain(`<xades:Identifier>${SIGNATURE_POLICIES.gipuzkoa.identifier}</xades:Identifier>`);
    const araba = validatedBuild(ticketBai, location('es-ticketbai', { territory: 'araba', territory_code: '01' }), draft(), signed).record;
    expect(araba.qrData).toMatch(/^https:\/\/pruebas-ticketbai\.araba\.eus\/tbai\/qrtbai\/\?id=/);
    expect(araba.body).toContain(`<ds:DigestValue>${SIGNATURE_POLICIES.araba.sha256}</ds:DigestValue>`);
    const bizkaia = validatedBuild(ticketBai, location('es-ticketbai', { territory: 'bizkaia', territory_code: '48' }), draft(), signed).record;
    expect(bizkaia.qrData).toMatch(/^https:\/\/batuz\.eus\/QRTBAI\/\?id=/);
    expect(bizkaia.body).toContain('especificaciones_de_la_firma_electronica_v1_0.pdf</xades:Identifier>');
    expect(bizkaia.body).toContain(`<ds:DigestValue>${SIGNATURE_POLICIES.bizkaia.sha256}</ds:DigestValue>`);
  });

  it('render hints: tbai_id then qr', () => {
    const { record } = validatedBuild(ticketBai, loc, draft(), signed);
    expect(record.renderHints).toEqual([
      { key: 'tbai_id', placement: 'footer_bottom', mandatory: true, kind: 'text', value: record.fiscalId },
      { key: 'qr', placement: 'footer_bottom', mandatory: true, kind: 'qr_url', value: record.qrData },
    ]);
  });

  it('chaining: the next invoice names the previous by series, number, date and 100 SignatureValue characters', () => {
    const first = validatedBuild(ticketBai, loc, draft(), signed).record;
    const second = validatedBuild(ticketBai, loc, draft({ metadata: { series: 'B' } }), {
      ...signed,
      transactionId: 'tx-2',
      chain: { seq: 2, number: 1, previous: { fingerprint: first.fingerprint, fiscalId: first.fiscalId, issuedAt: NOW.toISOString(), linkData: first.linkData } },
    }).record;
    const block = /<EncadenamientoFacturaAnterior>.*<\/EncadenamientoFacturaAnterior>/.exec(second.body)![0];
    expect(block).toBe(
      '<EncadenamientoFacturaAnterior><SerieFacturaAnterior>A</SerieFacturaAnterior><NumFacturaAnterior>1</NumFacturaAnterior>' +
        `<FechaExpedicionFacturaAnterior>15-01-2026</FechaExpedicionFacturaAnterior><SignatureValueFirmaFacturaAnterior>${first.fingerprint!.slice(0, 100)}</SignatureValueFirmaFacturaAnterior></EncadenamientoFacturaAnterior>`,
    );
    expect(text(second.body, 'SerieFactura')).toBe('B');
    expect(second.fingerprint).not.toBe(first.fingerprint);
    expectValidSigned(second.body);
  });

  it('refuses to chain to a previous record that left no link data', () => {
    expect(() =>
      validatedBuild(ticketBai, loc, draft(), { ...signed, chain: { seq: 2, previous: { fingerprint: 'abc', fiscalId: null, issuedAt: NOW.toISOString() } } }),
    ).toThrow(/previous record of the chain/);
  });

  it('refuses to build without a signing key, or without the issuer NIF', () => {
    expect(() => validatedBuild(ticketBai, loc, draft(), { signingKey: undefined })).toThrow(/no signing key/);
    // Validation refuses such a location first (a 400); the build refuses too, should it be reached.
    const valid = validatedBuild(ticketBai, loc, draft(), signed).tx;
    expect(() => ticketBai.build(buildInput({ ...loc, tax_id: null }, valid, signed))).toThrow(/no tax_id/);
  });

  it('a refund is a corrective invoice (R1 with a customer) carrying negative amounts', () => {
    const tx = draft({ type: 'refund', customer_context: { nif: 'B95123451', name: 'Cliente SA' }, metadata: { original_invoice_number: '7', original_issue_date: '14-01-2026' } });
    const { record } = validatedBuild(ticketBai, loc, tx, signed);
    expect(record.body).toContain('<FacturaSimplificada>N</FacturaSimplificada><FacturaEmitidaSustitucionSimplificada>N</FacturaEmitidaSustitucionSimplificada><FacturaRectificativa><Codigo>R1</Codigo><Tipo>I</Tipo></FacturaRectificativa>');
    expect(text(record.body, 'ImporteTotalFactura')).toBe('-12.10');
    expect(record.qrData).toContain('&i=-12.10&cr=');
    expectValidSigned(record.body);
  });

  it('sandbox accept echoes the TBAI id; reject:005 is a duplicate', async () => {
    const ok = validatedBuild(ticketBai, loc, draft(), signed);
    expect(await ticketBai.submit(stored(ok.record, ok.tx), submitCtx(loc))).toMatchObject({
      kind: 'accepted',
      response: { estado: '00', identificador_tbai: ok.record.fiscalId },
    });
    const dup = validatedBuild(ticketBai, loc, draft({ metadata: { sandbox_outcome: 'reject:005' } }), signed);
    expect((await ticketBai.submit(stored(dup.record, dup.tx), submitCtx(loc))).kind).toBe('duplicate');
  });

  describe('AnulaTicketBai', () => {
    const { tx, record } = validatedBuild(ticketBai, loc, draft(), { ...signed, chain: { seq: 5, previous: null } });
    const cancellation = (over: Partial<BuildInput> = {}): FiscalRecord =>
      ticketBai.build({
        transactionId: 'c1',
        kind: 'cancellation',
        tx,
        original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), documentNumber: record.documentNumber },
        location: loc,
        environment: 'test',
        now: new Date(NOW.getTime() + 3_600_000),
        chain: { seq: 6, previous: { fingerprint: record.fingerprint, fiscalId: record.fiscalId, issuedAt: NOW.toISOString(), linkData: record.linkData } },
        software: SOFTWARE,
        signingKey: key,
        ...over,
      });

    it('names the invoice by issuer, series, number and date; signed alone, outside the chain', () => {
      const cancel = cancellation();
      expect(ticketBai.capabilities.cancellationJoinsChain).toBe(false);
      expect(cancel).toMatchObject({ contentType: 'application/xml', placeholder: false, fiscalId: null, fingerprint: null, linkData: null, qrData: null, renderHints: [] });
      expect(cancel.body).toContain(
        '<IDFactura><Emisor><NIF>B12345674</NIF><ApellidosNombreRazonSocial>Ejemplo SL</ApellidosNombreRazonSocial></Emisor>' +
          '<CabeceraFactura><SerieFactura>A</SerieFactura><NumFactura>5</NumFactura><FechaExpedicionFactura>15-01-2026</FechaExpedicionFactura></CabeceraFactura></IDFactura>',
      );
      expect(cancel.body).not.toContain('Encadenamiento');
      expectValidSigned(cancel.body, 'es/ticketbai/anula_ticketbaiv1-2-2.xsd');
    });

    it('needs the original record and its number', () => {
      expect(() => cancellation({ original: undefined })).toThrow(/original record/);
      expect(() => cancellation({ original: { transactionId: TX_ID, fiscalId: null, tx: draft(), issuedAt: NOW.toISOString(), documentNumber: null } })).toThrow(/no document number/);
    });
  });
});
