import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sdi } from './index.ts';
import { SDICOOP_PATH, SDICOOP_SOAP_ACTION, parseSdiCoopResponse, sdiCoopOutcomeOf, sdicoopEndpoint, sdicoopRequestOf } from './sdicoop.ts';
import { TransportError, type StoredRecord, type SubmitContext } from '../types.ts';
import { authorityPost, closeAuthorityConnections } from '../shared/authority-http.ts';
import { draft, fixedSigningKey, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { FATTURAPA_FSM10_XSD, FATTURAPA_XSD, startFakeSdi, type FakeSdi } from '../../../test/support/fake-sdi.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import { semplificataNoteCases } from './golden-cases.ts';

const loc = location('it-sdi');
const record = (): StoredRecord => {
  const tx = draft({ metadata: { invoice_number: '2026/7' } });
  const { record: r } = validatedBuild(sdi, loc, tx);
  return stored(r, tx);
};

describe('SdICoop endpoint', () => {
  it('test and production hosts; a base URL replaces scheme and host only', () => {
    expect(sdicoopEndpoint({ environment: 'test' })).toBe('https://testservizi.fatturapa.it/ricevi_file');
    expect(sdicoopEndpoint({ environment: 'live' })).toBe('https://servizi.fatturapa.it/ricevi_file');
    expect(sdicoopEndpoint({ environment: 'test', authorityBaseUrl: 'https://127.0.0.1:8443/x/y' })).toBe(`https://127.0.0.1:8443${SDICOOP_PATH}`);
  });
});

describe('SdICoop answers', () => {
  const env = (inner: string) =>
    `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${inner}</s:Body></s:Envelope>`;
  const risposta = (errore = '') =>
    env(`<t:rispostaSdIRiceviFile xmlns:t="http://www.fatturapa.gov.it/sdi/ws/trasmissione/v1.0/types"><IdentificativoSdI>111</IdentificativoSdI><DataOraRicezione>2026-01-15T10:00:00Z</DataOraRicezione>${errore}</t:rispostaSdIRiceviFile>`);

  it('no Errore: sent, IdentificativoSdI as reference and upstream id', () => {
    expect(sdiCoopOutcomeOf(parseSdiCoopResponse(risposta()))).toEqual({
      kind: 'sent', reference: '111', upstreamId: '111', response: { IdentificativoSdI: '111', DataOraRicezione: '2026-01-15T10:00:00Z' },
    });
  });

  it('EI01 and EI03 are rejections, EI02 retried later', () => {
    expect(sdiCoopOutcomeOf(parseSdiCoopResponse(risposta('<Errore>EI01</Errore>')))).toMatchObject({ kind: 'rejected', code: 'EI01', response: { Errore: 'EI01' } });
    expect(sdiCoopOutcomeOf(parseSdiCoopResponse(risposta('<Errore>EI03</Errore>')))).toMatchObject({ kind: 'rejected', code: 'EI03' });
    expect(sdiCoopOutcomeOf(parseSdiCoopResponse(risposta('<Errore>EI02</Errore>')))).toMatchObject({ kind: 'retry_later', code: 'EI02' });
    expect(sdi.codes.EI02).toMatchObject({ retriable: true });
    expect(sdi.codes.EI01).toMatchObject({ retriable: false });
    expect(sdi.codes.EI03).toMatchObject({ retriable: false, category: 'auth' });
  });

  it('a client fault is a rejection, a server fault a transport error; not an answer throws', () => {
    expect(sdiCoopOutcomeOf(parseSdiCoopResponse(env('<s:Fault><faultcode>s:Client</faultcode><faultstring>bad</faultstring></s:Fault>'))))
      .toMatchObject({ kind: 'rejected', code: 'SOAP_FAULT', response: { faultstring: 'bad' } });
    expect(() => sdiCoopOutcomeOf(parseSdiCoopResponse(env('<s:Fault><faultcode>s:Server</faultcode><faultstring>down</faultstring></s:Fault>'))))
      .toThrow(TransportError);
    expect(() => parseSdiCoopResponse('<html>busy</html>')).toThrow(/no SOAP/);
    expect(() => parseSdiCoopResponse(risposta().replace('111', 'abc'))).toThrow(/IdentificativoSdI/);
  });
});

describe('SdICoop client against a fake SdI (mutual TLS, schema-checked)', () => {
  let fake: FakeSdi;
  let ctx: SubmitContext;

  beforeAll(async () => {
    fake = await startFakeSdi();
    ctx = { ...submitCtx(loc, 'authority'), authorityBaseUrl: fake.url, authorityCa: fake.caPem, clientKey: fixedSigningKey() };
  });
  afterAll(async () => {
    await closeAuthorityConnections();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('taken: sent with the IdentificativoSdI; the file travels base64 inline under its SdI name', async () => {
    const rec = record();
    const outcome = await sdi.submit(rec, ctx);
    const id = fake.received.at(-1)?.identificativoSdI;
    expect(id).toMatch(/^[0-9]{1,12}$/);
    expect(outcome).toMatchObject({ kind: 'sent', reference: id, upstreamId: id, response: { IdentificativoSdI: id, DataOraRicezione: expect.any(String) } });
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(SDICOOP_PATH);
    expect(req.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(req.headers.soapaction).toBe(`"${SDICOOP_SOAP_ACTION}"`);
    expect(req.clientCert.fingerprint256).toBe(ctx.clientKey!.certificate.fingerprint256);
    expect(fake.received.at(-1)).toMatchObject({ nomeFile: 'IT01234567897_00001.xml', file: rec.body });
    if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
    expect(xsdValidate(rec.body, FATTURAPA_XSD).ok).toBe(true);
  });

  it('a fattura semplificata (TD07, FSM10) is sent as every SdI file and taken: the fake checks it against Schema_VFSM10.xsd', async () => {
    const tx = draft({ metadata: { invoice_number: 'FS-2026/7', tipo_documento: 'TD07' }, customer_context: { codice_fiscale: 'RSSMRA85T10A562S' } });
    const { record: r } = validatedBuild(sdi, loc, tx);
    const rec = stored(r, tx);
    expect(rec.body.startsWith('<p:FatturaElettronicaSemplificata ')).toBe(true);
    expect(await sdi.submit(rec, ctx)).toMatchObject({ kind: 'sent' });
    expect(fake.received.at(-1)).toMatchObject({ nomeFile: 'IT01234567897_00001.xml', file: rec.body });
    if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
    expect(xsdValidate(rec.body, FATTURAPA_FSM10_XSD).ok).toBe(true);
    // What we built before: TD07 inside a 1.2.2 document, which the schema refuses (SdI scarto 00200).
    const ordinary = rec.body.replace(/FatturaElettronicaSemplificata/g, 'FatturaElettronica').replace('fatture/v1.0', 'fatture/v1.2');
    expect(await sdi.submit({ ...rec, body: ordinary }, ctx)).toMatchObject({ kind: 'rejected', code: 'SOAP_FAULT', response: { faultstring: expect.stringMatching(/^00200/) } });
  });

  it('its notes (TD08 cancelling a TD07, a refund asked as TD07, the TD09 reversing it) are FSM10 files too, taken: valid against Schema_VFSM10.xsd', async () => {
    const [note, refund, debit] = semplificataNoteCases(loc);
    const files = [stored(note!.record, note!.tx, 'cancellation'), stored(refund!.record, refund!.tx), stored(debit!.record, debit!.tx, 'cancellation')];
    for (const rec of files) {
      expect(rec.body).toMatch(/^<p:FatturaElettronicaSemplificata [^>]*versione="FSM10">/);
      expect(await sdi.submit(rec, ctx)).toMatchObject({ kind: 'sent' });
      expect(fake.received.at(-1)).toMatchObject({ nomeFile: rec.fiscalId, file: rec.body });
    }
    expect(files.map((f) => f.body.match(/<TipoDocumento>(TD0\d)<\/TipoDocumento>/)![1])).toEqual(['TD08', 'TD08', 'TD09']);
    if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
    for (const rec of files) expect(xsdValidate(rec.body, FATTURAPA_FSM10_XSD).ok).toBe(true);
  });

  it('taken on a retry (attempt 2): marked resend, as SdI may hold a copy from the attempt whose answer was lost', async () => {
    const first = await sdi.submit(record(), ctx);
    expect(first.kind === 'sent' && first.response.resend).toBeFalsy();
    fake.reset();
    expect(await sdi.submit(record(), { ...ctx, attempt: 2 })).toMatchObject({ kind: 'sent', response: { resend: true } });
  });

  it('an invoice the fake finds schema-invalid: rejected SOAP_FAULT', async () => {
    if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
    const rec = record();
    const outcome = await sdi.submit({ ...rec, body: rec.body.replace('<TipoDocumento>TD01</TipoDocumento>', '<TipoDocumento>TD99</TipoDocumento>') }, ctx);
    expect(outcome).toMatchObject({ kind: 'rejected', code: 'SOAP_FAULT', response: { faultstring: expect.stringMatching(/^00200/) } });
  });

  it('EI02 (service unavailable): retry_later; EI03: rejected', async () => {
    fake.setMode('unavailable');
    expect(await sdi.submit(record(), ctx)).toMatchObject({ kind: 'retry_later', code: 'EI02' });
    fake.setMode('unauthorized');
    expect(await sdi.submit(record(), ctx)).toMatchObject({ kind: 'rejected', code: 'EI03' });
  });

  it('outage: HTTP 503 and a cut connection are transport errors', async () => {
    fake.setMode('outage');
    await expect(sdi.submit(record(), ctx)).rejects.toMatchObject({ name: 'TransportError', code: 'http_5xx' });
    fake.setMode('reset');
    await expect(sdi.submit(record(), ctx)).rejects.toBeInstanceOf(TransportError);
  });

  it('no client certificate: HTTP 403, rejected', async () => {
    expect(await sdi.submit(record(), { ...ctx, clientKey: undefined })).toMatchObject({ kind: 'rejected', code: 'HTTP_403' });
  });

  it('the fake answers EI01 to an empty file (a request the client never sends): rejected', async () => {
    const res = await authorityPost({
      url: sdicoopEndpoint(ctx), headers: { 'content-type': 'text/xml; charset=utf-8' }, body: sdicoopRequestOf('IT01234567897_00001.xml', ''),
      clientKey: ctx.clientKey, ca: ctx.authorityCa, timeoutMs: 5000,
    });
    expect(sdiCoopOutcomeOf(parseSdiCoopResponse(res.body))).toMatchObject({ kind: 'rejected', code: 'EI01', response: { Errore: 'EI01' } });
  });

  it('not a FatturaPA file: rejected without a request', async () => {
    const rec = record();
    expect(await sdi.submit({ ...rec, body: '' }, ctx)).toMatchObject({ kind: 'rejected', code: 'NOT_FATTURAPA_FILE' });
    expect(fake.requests).toHaveLength(0);
  });
});
