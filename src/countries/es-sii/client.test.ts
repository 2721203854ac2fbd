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

  describe('a duplicate answer without a CSV: one consultation (ConsultaLRFacturasEmitidas) reads it', () => {
    /** The SOAP body of the consultations the fake received, each validated there against ConsultaLR.xsd. */
    const consultaBodies = () => fake.consultas.map((r) => soapBodyContent(r.body.toString('utf8'))!);
    const expectFakeAnswerValid = () => {
      if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
      const v = xsdValidate(soapBodyContent(fake.lastAnswer!)!, 'es/sii/RespuestaConsultaLR.xsd');
      expect(v.ok, v.output).toBe(true);
    };

    it('alta 3000: the CSV of the registering submission becomes the fiscal id', async () => {
      const { tx, record } = sale({ ...party, invoice_number: 'T-1' });
      const first = await submit(record, tx);
      if (first.kind !== 'accepted') throw new Error(first.kind);
      fake.duplicateCsv = false;
      const again = await submit(record, tx);
      expect(again).toMatchObject({
        kind: 'duplicate', fiscalId: first.fiscalId,
        response: {
          CodigoErrorRegistro: '3000', CSVRegistrado: null,
          Consulta: { ResultadoConsulta: 'ConDatos', CSV: first.fiscalId, EstadoRegistro: 'Correcta', TimestampPresentacion: expect.stringMatching(/^\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2}$/) },
        },
      });
      expect(again.kind === 'duplicate' && again.warnings).toBeFalsy();
      // One consultation, to the same endpoint, with the same client certificate.
      expect(fake.consultas).toHaveLength(1);
      const req = fake.consultas[0]!;
      expect([req.method, req.path, req.headers.soapaction]).toEqual(['POST', SII_PATH, '""']);
      expect(req.clientCert.fingerprint256).toBe(ctx.clientKey!.certificate.fingerprint256);
      expect(consultaBodies()[0]).toContain('<sii:NumSerieFacturaEmisor>T-1</sii:NumSerieFacturaEmisor>');
      expectFakeAnswerValid();
    });

    it('an F1 with a counterparty, and an R1: the fake\'s consultation answers are schema-valid', async () => {
      for (const metadata of [{ ...party, invoice_number: 'F-9' }, { ...party, invoice_number: 'R-9', original_invoice_number: 'F-9', original_issue_date: '15-01-2026' }]) {
        const { tx, record } = sale(metadata, metadata.invoice_number === 'R-9' ? { type: 'refund' } : {});
        expect((await submit(record, tx)).kind).toBe('accepted');
        fake.duplicateCsv = false;
        expect(await submit(record, tx)).toMatchObject({ kind: 'duplicate', fiscalId: expect.stringMatching(/^[A-Z0-9]{16}$/) });
        expectFakeAnswerValid();
        fake.duplicateCsv = true;
      }
    });

    it('baja 3001: the CSV of the annulment becomes the fiscal id', async () => {
      const { tx, record } = sale(party);
      expect((await submit(record, tx)).kind).toBe('accepted');
      const baja = await sii.submit(bajaOf(tx, record), ctx);
      if (baja.kind !== 'accepted') throw new Error(baja.kind);
      fake.duplicateCsv = false;
      const twice = await sii.submit(bajaOf(tx, record), ctx);
      expect(twice).toMatchObject({
        kind: 'duplicate', fiscalId: baja.fiscalId,
        response: { operation: 'baja', CodigoErrorRegistro: '3001', Consulta: { CSV: baja.fiscalId, EstadoRegistro: 'Anulada' } },
      });
      expect(twice.kind === 'duplicate' && twice.warnings).toBeFalsy();
      expect(fake.consultas).toHaveLength(1);
      expectFakeAnswerValid();
    });

    it('baja 3001 when the consultation shows the alta\'s presentation: no fiscal id, the warning says why', async () => {
      const { tx, record } = sale({ ...party, invoice_number: 'F-2026-1' });
      const alta = await submit(record, tx);
      if (alta.kind !== 'accepted') throw new Error(alta.kind);
      expect((await sii.submit(bajaOf(tx, record), ctx)).kind).toBe('accepted');
      fake.duplicateCsv = false;
      fake.annulledPresentation = 'registration';
      const twice = await sii.submit(bajaOf(tx, record), ctx);
      expect(twice).toMatchObject({ kind: 'duplicate', response: { Consulta: { CSV: alta.fiscalId, EstadoRegistro: 'Anulada' } } });
      expect(twice.kind === 'duplicate' && twice.fiscalId).toBeFalsy();
      expect(twice.kind === 'duplicate' && twice.warnings).toEqual([
        expect.stringMatching(new RegExp(`^3001: AEAT already holds the annulment of this invoice, and its answer gives no CSV\\. AEAT's consultation shows invoice F-2026-1 of 15-01-2026 \\(period 2026/01\\) annulled but gives the CSV ${alta.fiscalId} of a submission older than the annulment .*\\. This answer sets no fiscal_id\\.$`)),
      ]);
    });

    it('the consultation fails (SOAP fault, 503): still a duplicate, no fiscal id, a warning; asked once, never retried', async () => {
      const { tx, record } = sale(party);
      expect((await submit(record, tx)).kind).toBe('accepted');
      fake.duplicateCsv = false;
      fake.setConsultaMode({ kind: 'fault', code: '3500', description: 'Error técnico de base de datos', server: true });
      const faulted = await submit(record, tx);
      expect(faulted).toMatchObject({ kind: 'duplicate', response: { CodigoErrorRegistro: '3000', Consulta: { error: 'SOAP fault env:Server: Codigo[3500].Error técnico de base de datos' } } });
      expect(faulted.kind === 'duplicate' && faulted.fiscalId).toBeUndefined();
      expect(faulted.kind === 'duplicate' && faulted.warnings).toEqual([
        "3000: AEAT already holds this invoice, and its answer gives no CSV. The CSV could not be read from AEAT's consultation service (ConsultaLRFacturasEmitidas): SOAP fault env:Server: Codigo[3500].Error técnico de base de datos. This answer sets no fiscal_id.",
      ]);
      expect(fake.consultas).toHaveLength(1);
      fake.setConsultaMode({ kind: 'unavailable' });
      const down = await submit(record, tx);
      expect(down.kind === 'duplicate' && down.warnings).toEqual([expect.stringContaining("could not be read from AEAT's consultation service (ConsultaLRFacturasEmitidas): HTTP 503 without a readable answer")]);
      expect(fake.consultas).toHaveLength(2);
    });

    it('a silent consultation ends within the attempt\'s time: the duplicate comes back, never a transport fault', async () => {
      const { tx, record } = sale(party);
      expect((await submit(record, tx)).kind).toBe('accepted');
      fake.duplicateCsv = false;
      fake.setConsultaMode({ kind: 'hang' });
      const started = Date.now();
      const outcome = await submit(record, tx, 'record', { ...ctx, timeoutMs: 1500 });
      expect(Date.now() - started).toBeLessThan(1500);
      expect(outcome).toMatchObject({ kind: 'duplicate', response: { Consulta: { error: expect.stringMatching(/^no answer from 127\.0\.0\.1:\d+ within/) } } });
      expect(outcome.kind === 'duplicate' && outcome.warnings?.[0]).toMatch(/^3000: .*The CSV could not be read/);
    });

    it('a duplicate answer that carries the CSV is not followed by a consultation', async () => {
      const { tx, record } = sale(party);
      expect((await submit(record, tx)).kind).toBe('accepted');
      expect((await submit(record, tx)).kind).toBe('duplicate');
      expect(fake.consultas).toHaveLength(0);
    });
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
