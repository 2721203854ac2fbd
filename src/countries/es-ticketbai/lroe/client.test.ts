import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SAMPLE_NIF, officialSample, sampleVariant, startFakeTicketBai, type FakeTicketBai } from '../../../../test/support/fake-ticketbai.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE } from '../../../../test/support/xml-tools.ts';
import { authorityPost, closeAuthorityConnections } from '../../shared/authority-http.ts';
import { fixedSigningKey } from '../../shared/test-fixtures.ts';
import { TransportError } from '../../types.ts';
import { sendLroeBatch, type LroeBatchInput, type LroeClientContext } from './client.ts';
import { LroeInputError, buildLroeHttpRequest, lroeSubmissionUrl } from './request.ts';

/** These tests send the official samples (beside the schemas) through an XSD-checking fake. */
const withSamples = (name: string, fn: () => Promise<void>) => (HAVE_SCHEMAS ? it(name, fn) : it.skip(`${name} (${SCHEMAS_MISSING_MESSAGE})`, fn));

const COMPANY_NIF = 'B12345674';
const COMPANY_NAME = 'Ejemplo SL';

/** Sample 01 (or 02) as invoice `n` of the company. */
const companyAlta = (n: number, over: { date?: string } = {}): string =>
  sampleVariant(officialSample(n % 2 === 0 ? 'alta-02' : 'alta-01'), { nif: COMPANY_NIF, number: String(n), ...over });
const companyAnulacion = (n: number): string => sampleVariant(officialSample('anulacion-02'), { nif: COMPANY_NIF, number: String(n) });

describe('Batuz LROE client against the fake authority', () => {
  let fake: FakeTicketBai;
  const key = fixedSigningKey();
  const ctx = (over: Partial<LroeClientContext> = {}): LroeClientContext => ({
    environment: 'test',
    authorityBaseUrl: fake.url,
    authorityCa: fake.caPem,
    clientKey: key,
    timeoutMs: 10_000,
    ...over,
  });
  const batch = (records: string[], over: Partial<LroeBatchInput> = {}): LroeBatchInput => ({
    issuerNif: COMPANY_NIF,
    issuerName: COMPANY_NAME,
    kind: 'alta',
    records: records.map((xml, i) => ({ transactionId: `tx-${i + 1}`, xml })),
    ...over,
  });

  beforeAll(async () => {
    fake = await startFakeTicketBai();
  });
  beforeEach(() => fake.reset());
  afterAll(async () => {
    await closeAuthorityConnections();
    await fake.close();
  });

  withSamples('a company batch (Modelo 240) is accepted record by record, with the registration number', async () => {
    const r = await sendLroeBatch(batch([companyAlta(1), companyAlta(2)]), ctx());
    expect(fake.xsdFailures).toEqual([]);
    expect(r.model).toBe('240');
    expect(r.records.map((x) => [x.transactionId, x.outcome.kind])).toEqual([
      ['tx-1', 'accepted'],
      ['tx-2', 'accepted'],
    ]);
    expect(r.registrationNumber).toMatch(/^2024-FAKE-\d{6}$/);
    expect(r.records[0]!.registrationNumber).toBe(r.registrationNumber);
    expect(r.records[0]!.outcome).toMatchObject({ fiscalId: r.records[0]!.identity!.tbaiId });
    expect(r.requests).toEqual([expect.objectContaining({ year: 2024, records: 2, httpStatus: 200, tipoRespuesta: 'Correcto' })]);

    // What went on the wire.
    const req = fake.requests.at(-1)!;
    expect(req.path).toBe('/N3B4000M/aurkezpena');
    expect(req.headers['content-encoding']).toBe('gzip');
    expect(req.headers['content-type']).toBe('application/octet-stream');
    expect(req.headers['accept-encoding']).toBe('gzip');
    expect(req.headers['eus-bizkaia-n3-version']).toBe('1.0');
    expect(req.headers['eus-bizkaia-n3-content-type']).toBe('application/xml');
    expect(JSON.parse(String(req.headers['eus-bizkaia-n3-data']))).toEqual({
      con: 'LROE',
      apa: '1.1',
      inte: { nif: COMPANY_NIF, nrs: COMPANY_NAME },
      drs: { mode: '240', ejer: '2024' },
    });
    expect(req.body.toString('utf8')).toBe(r.requests[0]!.xml);
    expect(req.clientCert.fingerprint256).toBe(key.certificate.fingerprint256);
  });

  withSamples('an individual (Modelo 140) sends Ingresos with the activity epigrafe', async () => {
    const r = await sendLroeBatch(
      batch([officialSample('alta-01'), officialSample('alta-02')], { issuerNif: SAMPLE_NIF, issuerName: 'GEZURREZKO JAULKITZAILEA - EMISOR FICTICIO', renta: { epigrafe: '6520' } }),
      ctx(),
    );
    expect(fake.xsdFailures).toEqual([]);
    expect(r.model).toBe('140');
    expect(r.records.map((x) => x.outcome.kind)).toEqual(['accepted', 'accepted']);
    expect(r.records[0]!.outcome).toMatchObject({ fiscalId: 'TBAI-99999974E-290224-Yl3mXsALUBz6H-135' });
  });

  withSamples('an individual without an epigrafe is refused before anything is sent', async () => {
    const err = await sendLroeBatch(batch([officialSample('alta-01')], { issuerNif: SAMPLE_NIF, issuerName: 'X' }), ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LroeInputError);
    expect(fake.requests).toHaveLength(0);
  });

  withSamples('records sent again are duplicates (B4_2000003), not failures', async () => {
    await sendLroeBatch(batch([companyAlta(1)]), ctx());
    const r = await sendLroeBatch(batch([companyAlta(1), companyAlta(2)]), ctx());
    expect(r.requests[0]!.tipoRespuesta).toBe('Parcialmente correcto');
    expect(r.records.map((x) => x.outcome.kind)).toEqual(['duplicate', 'accepted']);
  });

  withSamples('chosen records rejected: "Parcialmente correcto", per-record codes', async () => {
    fake.rejectWhen(({ number }) => (number === '2' ? { code: 'B4_2000063', message: 'La licencia TicketBAI no está registrada' } : undefined));
    const r = await sendLroeBatch(batch([companyAlta(1), companyAlta(2), companyAlta(3)]), ctx());
    expect(r.requests[0]!.tipoRespuesta).toBe('Parcialmente correcto');
    expect(r.records.map((x) => x.outcome.kind)).toEqual(['accepted', 'rejected', 'accepted']);
    expect(r.records[1]!.outcome).toMatchObject({ code: 'B4_2000063', message: 'La licencia TicketBAI no está registrada' });
  });

  withSamples('every record rejected: "Incorrecto" with B4_1000002 and the accented message intact', async () => {
    fake.rejectWhen(() => ({ code: 'B4_2000070', message: 'La firma no cumple la política' }));
    const r = await sendLroeBatch(batch([companyAlta(1), companyAlta(2)]), ctx());
    expect(r.requests[0]).toMatchObject({
      tipoRespuesta: 'Incorrecto',
      codigo: 'B4_1000002',
      mensaje: 'Todos los registros incluidos en la petición son incorrectos',
    });
    expect(r.records.map((x) => x.outcome)).toEqual([
      expect.objectContaining({ kind: 'rejected', code: 'B4_2000070' }),
      expect.objectContaining({ kind: 'rejected', code: 'B4_2000070' }),
    ]);
  });

  withSamples('anulación: AnulacionPeticion accepted once, then a duplicate (B4_2000006)', async () => {
    await sendLroeBatch(batch([companyAlta(2)]), ctx());
    const first = await sendLroeBatch(batch([companyAnulacion(2)], { kind: 'anulacion' }), ctx());
    expect(fake.xsdFailures).toEqual([]);
    expect(first.records[0]!.outcome.kind).toBe('accepted');
    const again = await sendLroeBatch(batch([companyAnulacion(2)], { kind: 'anulacion' }), ctx());
    expect(again.records[0]!.outcome.kind).toBe('duplicate');
    const unknown = await sendLroeBatch(batch([companyAnulacion(99)], { kind: 'anulacion' }), ctx());
    expect(unknown.records[0]!.outcome).toMatchObject({ kind: 'rejected', code: 'B4_2000004' });
  });

  withSamples('splits a batch into requests of at most maxPerRequest files, and by issue year', async () => {
    const r = await sendLroeBatch(
      batch([companyAlta(1), companyAlta(2), companyAlta(3), companyAlta(4, { date: '02-01-2025' })], { maxPerRequest: 2 }),
      ctx(),
    );
    expect(r.requests.map((q) => [q.year, q.records])).toEqual([
      [2024, 2],
      [2024, 1],
      [2025, 1],
    ]);
    expect(fake.requests).toHaveLength(3);
    expect(JSON.parse(String(fake.requests[2]!.headers['eus-bizkaia-n3-data'])).drs.ejer).toBe('2025');
    expect(r.records.every((x) => x.outcome.kind === 'accepted')).toBe(true);
    expect(new Set(r.records.map((x) => x.registrationNumber)).size).toBe(3);
  });

  withSamples('records that cannot go are rejected locally; the others are sent', async () => {
    const r = await sendLroeBatch(
      batch([companyAlta(1), companyAnulacion(1), sampleVariant(officialSample('alta-01'), { nif: 'A99800005' }), 'not xml', companyAlta(5, { date: '01-01-2023' })], {
        year: 2024,
      }),
      ctx(),
    );
    expect(r.records.map((x) => (x.outcome.kind === 'rejected' ? x.outcome.code : x.outcome.kind))).toEqual([
      'accepted',
      'lroe_wrong_document',
      'lroe_issuer_mismatch',
      'lroe_unreadable_record',
      'lroe_year_mismatch',
    ]);
    expect(r.requests).toHaveLength(1);
  });

  withSamples('the fake checks what it receives: a TicketBAI that does not validate fails its record only', async () => {
    const broken = companyAlta(2).replace('<IDVersionTBAI>1.2</IDVersionTBAI>', '<IDVersionTBAI>9.9</IDVersionTBAI>');
    const r = await sendLroeBatch(batch([companyAlta(1), broken]), ctx());
    expect(r.records.map((x) => (x.outcome.kind === 'rejected' ? x.outcome.code : x.outcome.kind))).toEqual(['accepted', 'FAKE_TBAI_XSD']);
    expect(fake.xsdFailures.join('\n')).toMatch(/IDVersionTBAI/);
  });

  withSamples('the fake applies Batuz\'s business rule: a rectificativa naming no corrected invoice fails its record (B4_2000045)', async () => {
    const corrective = (n: number, named: boolean) =>
      companyAlta(n).replace(
        /(<FacturaEmitidaSustitucionSimplificada>N<\/FacturaEmitidaSustitucionSimplificada>)/,
        '$1<FacturaRectificativa><Codigo>R5</Codigo><Tipo>I</Tipo></FacturaRectificativa>' +
          (named ? '<FacturasRectificadasSustituidas><IDFacturaRectificadaSustituida><NumFactura>1</NumFactura><FechaExpedicionFactura>29-02-2024</FechaExpedicionFactura></IDFacturaRectificadaSustituida></FacturasRectificadasSustituidas>' : ''),
      );
    const r = await sendLroeBatch(batch([corrective(1, false), corrective(2, true)]), ctx());
    expect(fake.xsdFailures).toEqual([]);
    expect(r.records.map((x) => (x.outcome.kind === 'rejected' ? x.outcome.code : x.outcome.kind))).toEqual(['B4_2000045', 'accepted']);
  });

  withSamples('the fake applies Batuz\'s business rule: a recipient NIF whose control character is wrong fails its record (B4_2000011)', async () => {
    const withRecipient = (n: number, nif: string) =>
      companyAlta(n).replace(
        /(<\/Emisor>)/,
        `$1<Destinatarios><IDDestinatario><NIF>${nif}</NIF><ApellidosNombreRazonSocial>Cliente Ejemplo SA</ApellidosNombreRazonSocial></IDDestinatario></Destinatarios>`,
      );
    const r = await sendLroeBatch(batch([withRecipient(1, 'B95123452'), withRecipient(2, 'B95123451')]), ctx());
    expect(fake.xsdFailures).toEqual([]);
    expect(r.records.map((x) => (x.outcome.kind === 'rejected' ? x.outcome.code : x.outcome.kind))).toEqual(['B4_2000011', 'accepted']);
  });

  withSamples('the fake checks what it receives: an LROE request off its XSD is refused as a whole', async () => {
    const req = buildLroeHttpRequest({ model: '240', kind: 'alta', issuerNif: COMPANY_NIF, issuerName: COMPANY_NAME, year: 2024, files: [companyAlta(1)] });
    const bad = req.xml.replace('<Version>1.0</Version>', '<Version>2.0</Version>');
    const res = await authorityPost({
      url: lroeSubmissionUrl('test', fake.url),
      headers: req.headers,
      body: gzipSync(Buffer.from(bad)),
      clientKey: key,
      ca: fake.caPem,
      timeoutMs: 5000,
    });
    expect(res.headers['eus-bizkaia-n3-tipo-respuesta']).toBe('Incorrecto');
    expect(res.headers['eus-bizkaia-n3-codigo-respuesta']).toBe('FAKE_XSD');
  });

  it('503 without an LROE answer is a transport fault', async () => {
    fake.failWith(503);
    const err = await sendLroeBatch(batch([fakeAlta(1)]), ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('server_error');
  });

  it('a silent Batuz times out', async () => {
    fake.hang(true);
    const err = await sendLroeBatch(batch([fakeAlta(1)]), ctx({ timeoutMs: 300 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('timeout');
  });

  it('without a client certificate Batuz refuses: every record rejected http_403', async () => {
    const r = await sendLroeBatch(batch([fakeAlta(1), fakeAlta(2)]), ctx({ clientKey: undefined }));
    expect(r.records.map((x) => (x.outcome.kind === 'rejected' ? x.outcome.code : x.outcome.kind))).toEqual(['http_403', 'http_403']);
    expect(r.registrationNumber).toBeNull();
  });

  withSamples('a transport fault after a part was answered keeps that part and retries the rest', async () => {
    // One file per request: the fake answers the first two requests, then goes silent.
    let calls = 0;
    fake.rejectWhen(() => {
      calls += 1;
      if (calls === 2) fake.hang(true);
      return undefined;
    });
    const r = await sendLroeBatch(batch([companyAlta(1), companyAlta(2), companyAlta(3)], { maxPerRequest: 1 }), ctx({ timeoutMs: 500 }));
    expect(r.records.map((x) => x.outcome.kind)).toEqual(['accepted', 'accepted', 'retry_later']);
    expect(r.records[2]!.outcome).toMatchObject({ code: 'timeout' });
  });
});

/** A minimal alta the client can read (no XSD needed: these tests never reach a per-file check). */
function fakeAlta(n: number): string {
  return (
    '<T:TicketBai xmlns:T="urn:ticketbai:emision"><Sujetos><Emisor><NIF>B12345674</NIF><ApellidosNombreRazonSocial>Ejemplo SL</ApellidosNombreRazonSocial></Emisor></Sujetos>' +
    `<Factura><CabeceraFactura><SerieFactura>S</SerieFactura><NumFactura>${n}</NumFactura><FechaExpedicionFactura>01-03-2024</FechaExpedicionFactura></CabeceraFactura></Factura></T:TicketBai>`
  );
}
