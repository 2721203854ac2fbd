import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sii } from './index.ts';
import { SII_PATH, siiEndpoint } from './client.ts';
import { TransportError, type FiscalRecord, type StoredRecord, type SubmitContext, type TransactionDraft } from '../types.ts';
import { closeAuthorityConnections } from '../shared/authority-http.ts';
import { NOW, TX_ID, draft, fixedSigningKey, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { soapBodyContent, startFakeAeatSii, type FakeAeatSii } from '../../../test/support/fake-aeat-sii.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';

const loc = location('es-sii');
const party = { counterparty_nif: 'A13585625', counterparty_name: 'Cliente Ejemplo SA' };

describe('SII endpoint', () => {
  it('test and production hosts of SuministroFactEmitidas.wsdl; a base URL replaces scheme and host only', () => {
    expect(siiEndpoint({ environment: 'test' })).toBe('https://prewww1.aeat.es/wlpl/SSII-FACT/ws/fe/SiiFactFEV1SOAP');
    expect(siiEndpoint({ environment: 'live' })).toBe('https://www1.agenciatributaria.gob.es/wlpl/SSII-FACT/ws/fe/SiiFactFEV1SOAP');
    expect(siiEndpoint({ environment: 'test', authorityBaseUrl: 'https://127.0.0.1:8443/ignored/path' })).toBe(`https://127.0.0.1:8443${SII_PATH}`);
  });
});

describe('SII client against a fake AEAT (mutual TLS, schema-checked)', () => {
  let fake: FakeAeatSii;
  let ctx: SubmitContext;

  beforeAll(async () => {
    fake = await startFakeAeatSii();
    ctx = { ...submitCtx(loc, 'authority'), authorityBaseUrl: fake.url, authorityCa: fake.caPem, clientKey: fixedSigningKey() };
  });
  afterAll(async () => {
    await closeAuthorityConnections();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const sale = (metadata: Record<string, unknown>, over: Partial<TransactionDraft> = {}) => validatedBuild(sii, loc, draft({ metadata, ...over }));
  const submit = (record: FiscalRecord, tx: TransactionDraft, kind: 'record' | 'cancellation' = 'record', c: SubmitContext = ctx) =>
    sii.submit(stored(record, tx, kind), c);

  function bajaOf(tx: TransactionDraft, record: FiscalRecord): StoredRecord {
    const baja = sii.build({
      transactionId: '99999999-8888-4777-8666-555555555555', kind: 'cancellation', tx,
      original: { transactionId: TX_ID, fiscalId: null, tx, issuedAt: NOW.toISOString(), documentNumber: record.documentNumber ?? null },
      location: loc, environment: 'test', now: NOW, chain: { seq: 1, previous: null },
      software: { name: 'fiscal-api', version: '0.1.0', vendorTaxId: 'A99800005' },
    });
    return stored(baja, tx, 'cancellation', '99999999-8888-4777-8666-555555555555');
  }

  it('accepted: the CSV is the fiscal id; the message is a schema-valid SOAP 1.1 request', async () => {
    const { tx, record } = sale({ simplified: true, invoice_number: 'T-1' });
    const outcome = await submit(record, tx);
    expect(outcome).toMatchObject({ kind: 'accepted', fiscalId: expect.stringMatching(/^[A-Z0-9]{16}$/), response: { EstadoEnvio: 'Correcto', EstadoRegistro: 'Correcto' } });
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(SII_PATH);
    expect(req.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(req.headers.soapaction).toBe('""');
    expect(req.clientCert.fingerprint256).toBe(ctx.clientKey!.certificate.fingerprint256);
    // The stored record travels byte for byte, after the A0 header of the holder.
    const sent = req.body.toString('utf8');
    expect(sent).toContain(record.body);
    expect(sent).toContain('<sii:Titular>\n    <sii:NombreRazon>Ejemplo SL</sii:NombreRazon>\n    <sii:NIF>B12345674</sii:NIF>\n  </sii:Titular>\n  <sii:TipoComunicacion>A0</sii:TipoComunicacion>');
    expect(fake.registered.get(`B12345674|T-1|15-01-2026`)).toBe(outcome.kind === 'accepted' ? outcome.fiscalId : '');
    if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
    // The fake answers per RespuestaSuministro.xsd.
    const answer = xsdValidate(soapBodyContent(fake.lastAnswer!)!, 'es/sii/RespuestaSuministro.xsd');
    expect(answer.ok, answer.output).toBe(true);
  });

  it('ParcialmenteCorrecto (AceptadoConErrores): accepted with a warning', async () => {
    fake.setMode({ kind: 'accept_with_errors', code: '2011', description: 'El NIF de la contraparte no está censado' });
    const { tx, record } = sale(party);
    expect(await submit(record, tx)).toMatchObject({
      kind: 'accepted',
      fiscalId: expect.stringMatching(/^[A-Z0-9]{16}$/),
      warnings: ["2011: Accepted with errors: the counterparty's NIF is not registered in the AEAT census."],
      response: { EstadoEnvio: 'ParcialmenteCorrecto', EstadoRegistro: 'AceptadoConErrores', CodigoErrorRegistro: '2011' },
    });
  });

  it('Incorrecto: rejected with the code; a technical code is retried', async () => {
    fake.setMode({ kind: 'reject', code: '1117', description: 'El NIF no está identificado. NIF:A13585625. NOMBRE_RAZON:Cliente Ejemplo SA' });
    const { tx, record } = sale(party);
    expect(await submit(record, tx)).toMatchObject({ kind: 'rejected', code: '1117', message: expect.stringContaining('NOMBRE_RAZON:Cliente Ejemplo SA'), response: { EstadoEnvio: 'Incorrecto', CSV: null } });
    fake.setMode({ kind: 'reject', code: '3501', description: 'Error técnico de base de datos' });
    expect(await submit(record, tx)).toMatchObject({ kind: 'retry_later', code: '3501' });
  });

  it('a resent invoice is a duplicate (3000) carrying the CSV of the first', async () => {
    const { tx, record } = sale({ simplified: true });
    const first = await submit(record, tx);
    expect(first.kind).toBe('accepted');
    const again = await submit(record, tx);
    expect(again).toEqual(expect.objectContaining({ kind: 'duplicate', fiscalId: first.kind === 'accepted' ? first.fiscalId : 'x' }));
  });

  it('baja: cancels a registered invoice; again is a duplicate; an unknown invoice is refused (3002)', async () => {
    const { tx, record } = sale(party);
    const unknown = await sii.submit(bajaOf(tx, record), ctx);
    expect(unknown).toMatchObject({ kind: 'rejected', code: '3002' });
    expect(await submit(record, tx)).toMatchObject({ kind: 'accepted' });
    const baja = await sii.submit(bajaOf(tx, record), ctx);
    expect(baja).toMatchObject({ kind: 'accepted', fiscalId: expect.stringMatching(/^[A-Z0-9]{16}$/), response: { operation: 'baja' } });
    expect(fake.lastBody).toContain('<siiLR:BajaLRFacturasEmitidas');
    expect(fake.lastBody).not.toContain('TipoComunicacion');
    const twice = await sii.submit(bajaOf(tx, record), ctx);
    expect(twice).toMatchObject({ kind: 'duplicate', fiscalId: baja.kind === 'accepted' ? baja.fiscalId : 'x' });
  });

  it('a message the schema refuses gets a SOAP fault 4102 (HTTP 500): rejected', async () => {
    if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
    const { tx, record } = sale({ simplified: true });
    const broken = { ...record, body: record.body.replace('<sii:TipoFactura>F2</sii:TipoFactura>', '<sii:TipoFactura>F9</sii:TipoFactura>') };
    expect(await submit(broken, tx)).toMatchObject({ kind: 'rejected', code: '4102', message: expect.stringContaining('TipoFactura'), response: { faultcode: 'env:Client' } });
  });

  it('header errors come as SOAP faults; a Server fault is retried', async () => {
    const { tx, record } = sale({ simplified: true });
    fake.setMode({ kind: 'fault', code: '4104', description: 'Error en la cabecera. El valor del campo NIF del bloque Titular no está identificado.' });
    expect(await submit(record, tx)).toMatchObject({ kind: 'rejected', code: '4104' });
    fake.setMode({ kind: 'fault', code: '3500', description: 'Error técnico de base de datos', server: true });
    expect(await submit(record, tx)).toMatchObject({ kind: 'retry_later', code: '3500' });
  });

  it('503 without a SOAP answer is a transport error', async () => {
    fake.setMode({ kind: 'unavailable' });
    const { tx, record } = sale({ simplified: true });
    const err = await submit(record, tx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'http_5xx' });
  });

  it('a silent AEAT times out (TransportError timeout)', async () => {
    fake.setMode({ kind: 'hang' });
    const { tx, record } = sale({ simplified: true });
    const err = await submit(record, tx, 'record', { ...ctx, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'timeout' });
  });

  it('without a client certificate AEAT refuses the connection: auth rejection', async () => {
    const { tx, record } = sale({ simplified: true });
    const outcome = await submit(record, tx, 'record', { ...ctx, clientKey: undefined });
    expect(outcome).toMatchObject({ kind: 'rejected', code: 'HTTP_403', response: { http_status: 403 } });
    expect(sii.codes[outcome.kind === 'rejected' ? outcome.code : '']?.category).toBe('auth');
  });

  it('an unknown server certificate is a TLS transport error', async () => {
    const { tx, record } = sale({ simplified: true });
    const err = await submit(record, tx, 'record', { ...ctx, authorityCa: undefined }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'tls_error' });
  });

  it('a record that is not an SII record is not sent', async () => {
    const { tx, record } = sale({ simplified: true });
    const placeholder = { ...record, body: '{"placeholder":true}', contentType: 'application/json' as const };
    expect(await submit(placeholder, tx)).toMatchObject({ kind: 'rejected', code: 'NOT_SII_RECORD' });
    // An alta stored as a cancellation is refused too.
    expect(await submit(record, tx, 'cancellation')).toMatchObject({ kind: 'rejected', code: 'NOT_SII_RECORD' });
    expect(fake.requests).toHaveLength(0);
  });

  it('live: a location without tax_id is refused for good (MISSING_ISSUER_NIF), never sent as holder 000000000', async () => {
    const bare = { ...loc, tax_id: null };
    const { tx, record } = validatedBuild(sii, bare, draft({ metadata: { simplified: true } }));
    expect(record.body).toContain('<sii:NIF>000000000</sii:NIF>'); // the test-key placeholder
    expect(await submit(record, tx, 'record', { ...ctx, environment: 'live', location: bare })).toMatchObject({ kind: 'rejected', code: 'MISSING_ISSUER_NIF' });
    expect(sii.codes.MISSING_ISSUER_NIF).toMatchObject({ category: 'configuration', retriable: false });
    expect(fake.requests).toHaveLength(0);
  });

  it('stub mode still answers in-process', async () => {
    const { tx, record } = sale({ simplified: true });
    expect(await submit(record, tx, 'record', submitCtx(loc))).toMatchObject({ kind: 'accepted', response: { sandbox: true } });
    expect(fake.requests).toHaveLength(0);
  });
});
