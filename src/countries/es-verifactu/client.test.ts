/**
 * The VERI*FACTU client against the fake AEAT (test/support/fake-aeat-verifactu.ts): a
 * real HTTPS server with mutual TLS that validates requests against SuministroLR.xsd,
 * keeps the chain and answers per RespuestaSuministro.xsd.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAeatVerifactu, soapBodyContent, VERIFACTU_PATH, type FakeAeatVerifactu } from '../../../test/support/fake-aeat-verifactu.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import { closeAuthorityConnections } from '../shared/authority-http.ts';
import { NOW, buildInput, draft, fixedSigningKey, line, location, memoryPacing, stored, validatedBuild } from '../shared/test-fixtures.ts';
import { TransportError, type LocationForFiscal, type StoredRecord, type SubmitContext } from '../types.ts';
import { createVerifactuClient, pacingKey, verifactuEndpoint, type VerifactuClient } from './client.ts';
import { goldenChain } from './golden-cases.ts';
import { verifactu } from './index.ts';

const key = fixedSigningKey();
const loc = location('es-verifactu');
let fake: FakeAeatVerifactu;
let client: VerifactuClient;
/** The core's wait memory as the contexts carry it (in memory here; the database in the service). */
let pacing: ReturnType<typeof memoryPacing>;

beforeEach(async () => {
  fake = await startFakeAeatVerifactu();
  client = createVerifactuClient();
  pacing = memoryPacing();
});
afterEach(async () => {
  await fake.close();
});
afterAll(async () => {
  await closeAuthorityConnections();
});

const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

function ctx(over: Partial<SubmitContext> = {}, location: LocationForFiscal = loc): SubmitContext {
  return {
    environment: 'test', mode: 'authority', location, now: NOW, timeoutMs: 5000, attempt: 1,
    clientKey: key, authorityCa: fake.caPem, authorityBaseUrl: fake.url, pacing, ...over,
  };
}

/** The first alta of the chain, stored as the core stores it. */
function firstRecord(): StoredRecord {
  const { tx, record } = validatedBuild(verifactu, loc, draft());
  return stored(record, tx);
}

/** The Cabecera/ObligadoEmision/NombreRazon of the n-th request the fake received. */
const cabeceraName = (n: number): string | undefined => {
  const cabecera = /<sfLR:Cabecera>[\s\S]*?<\/sfLR:Cabecera>/.exec(fake.requests[n]!.body.toString('utf8'))?.[0] ?? '';
  return /<sf:NombreRazon>([^<]*)<\/sf:NombreRazon>/.exec(cabecera)?.[1];
};

describe('VERI*FACTU endpoint', () => {
  it('the WSDL\'s VerifactuSOAP per environment; authorityBaseUrl replaces scheme and host', () => {
    expect(verifactuEndpoint({ environment: 'test' })).toBe('https://prewww1.aeat.es/wlpl/TIKE-CONT/ws/SistemaFacturacion/VerifactuSOAP');
    expect(verifactuEndpoint({ environment: 'live' })).toBe('https://www1.agenciatributaria.gob.es/wlpl/TIKE-CONT/ws/SistemaFacturacion/VerifactuSOAP');
    expect(verifactuEndpoint({ environment: 'live', authorityBaseUrl: 'https://127.0.0.1:8443/' })).toBe(`https://127.0.0.1:8443${VERIFACTU_PATH}`);
  });
});

describe('VERI*FACTU client against the fake AEAT', () => {
  it('accepted: the CSV is the fiscal id; SOAP 1.1 over mutual TLS with the issuer certificate', async () => {
    const out = await client.submit(firstRecord(), ctx());
    expect(out).toMatchObject({ kind: 'accepted', fiscalId: 'FAKECSV000000001', response: { EstadoEnvio: 'Correcto', EstadoRegistro: 'Correcto', TiempoEsperaEnvio: 60 } });
    const req = fake.requests[0]!;
    expect(req.path).toBe(VERIFACTU_PATH);
    expect(req.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(req.headers.soapaction).toBe('""');
    expect(req.clientCert.fingerprint256).toBe(key.certificate.fingerprint256);
    expect(fake.held('B12345674')).toHaveLength(1);
  });

  it.skipIf(!HAVE_SCHEMAS)(HAVE_SCHEMAS ? 'the fake\'s answers are valid RespuestaSuministro.xsd' : SCHEMAS_MISSING_MESSAGE, async () => {
    await client.submit(firstRecord(), ctx());
    const result = xsdValidate(soapBodyContent(fake.responses[0]!)!, 'es/verifactu/RespuestaSuministro.xsd');
    expect(result.ok, result.output).toBe(true);
  });

  it('a whole chain (F2, F2, F1, R5, R1, anulación, F2 with an exempt line, F1 with recargo de equivalencia) is accepted record after record', async () => {
    fake.waitSeconds = 0;
    const outcomes = [];
    for (const c of goldenChain()) {
      outcomes.push(await client.submit(stored(c.record, c.tx, c.kind, c.transactionId), ctx()));
    }
    expect(outcomes.map((o) => o.kind)).toEqual(['accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'accepted']);
    expect(outcomes.every((o) => o.kind === 'accepted' && o.warnings === undefined)).toBe(true); // every huella recomputed by the fake
    const held = fake.held('B12345674');
    expect(held.map((h) => `${h.type} ${h.id.NumSerieFactura}`)).toEqual(['Alta A-1', 'Alta A-2', 'Alta A-3', 'Alta RA-4', 'Alta RA-5', 'Anulacion A-1', 'Alta A-7', 'Alta A-8']);
    expect(held[0]!.cancelled).toBe(true);
  });

  it('a broken chain is rejected (1180)', async () => {
    fake.waitSeconds = 0;
    await client.submit(firstRecord(), ctx());
    // A second record that names no previous record (as if the chain head were lost).
    const { tx, record } = validatedBuild(verifactu, loc, draft(), {
      chain: { seq: 2, previous: { fingerprint: 'F'.repeat(64), fiscalId: null, issuedAt: NOW.toISOString(), linkData: { IDEmisorFactura: 'B12345674', NumSerieFactura: 'A-1', FechaExpedicionFactura: '15-01-2026' } } },
    });
    expect(await client.submit(stored(record, tx), ctx())).toMatchObject({ kind: 'rejected', code: '1180', message: 'Error in the Encadenamiento (chaining) block.' });
  });

  it('the same invoice twice: duplicate (3000), not a rejection', async () => {
    fake.waitSeconds = 0;
    const rec = firstRecord();
    expect((await client.submit(rec, ctx())).kind).toBe('accepted');
    expect(await client.submit(rec, ctx())).toMatchObject({
      kind: 'duplicate',
      response: { CodigoErrorRegistro: '3000', RegistroDuplicado: { EstadoRegistroDuplicado: 'Correcta' } },
    });
  });

  it('a rejection with a code', async () => {
    fake.behave({ kind: 'reject', code: '1104', description: 'El valor del campo NumSerieFactura es incorrecto.' });
    expect(await client.submit(firstRecord(), ctx())).toMatchObject({
      kind: 'rejected', code: '1104', message: 'Invalid NumSerieFactura (invoice series and number) value.',
      response: { EstadoEnvio: 'Incorrecto', DescripcionErrorRegistro: 'El valor del campo NumSerieFactura es incorrecto.' },
    });
    expect(fake.held('B12345674')).toHaveLength(0);
  });

  it('a technical error code is retried later', async () => {
    fake.behave({ kind: 'reject', code: '3501' });
    expect(await client.submit(firstRecord(), ctx())).toMatchObject({ kind: 'retry_later', code: '3501', retryAfterSeconds: 60 });
  });

  it('AceptadoConErrores: accepted, with the warning', async () => {
    fake.behave({ kind: 'acceptWithErrors', code: '2001' });
    expect(await client.submit(firstRecord(), ctx())).toMatchObject({
      kind: 'accepted', fiscalId: 'FAKECSV000000001',
      warnings: ['2001: Accepted with errors: the NIF of the Destinatarios block is not identified in the AEAT census.'],
    });
  });

  it('a wrong huella is accepted with error 2000, as AEAT does', async () => {
    const rec = firstRecord();
    const tampered = { ...rec, body: rec.body.replace(/<sf:Huella>[0-9A-F]{64}<\/sf:Huella><\/sf:RegistroAlta>$/, `<sf:Huella>${'0'.repeat(64)}</sf:Huella></sf:RegistroAlta>`) };
    expect(tampered.body).not.toBe(rec.body);
    expect(await client.submit(tampered, ctx())).toMatchObject({ kind: 'accepted', warnings: [expect.stringMatching(/^2000: /)] });
  });

  it.skipIf(!HAVE_SCHEMAS)(HAVE_SCHEMAS ? 'a request the schema refuses gets a SOAP fault (HTTP 500): rejected 4102, not a transport fault' : SCHEMAS_MISSING_MESSAGE, async () => {
    const rec = firstRecord();
    const invalid = { ...rec, body: rec.body.replace(/<sf:DescripcionOperacion>[^<]*<\/sf:DescripcionOperacion>/, '') };
    const out = await client.submit(invalid, ctx());
    expect(out).toMatchObject({ kind: 'rejected', code: '4102', response: { soap_fault: { faultcode: 'env:Client' } } });
  });

  it('HTTP 503 without a SOAP answer → TransportError', async () => {
    fake.behave({ kind: 'unavailable' });
    const err = await client.submit(firstRecord(), ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('http_5xx');
  });

  it('a server that hangs → TransportError timeout', async () => {
    fake.behave({ kind: 'hang' });
    const err = await client.submit(firstRecord(), ctx({ timeoutMs: 300 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('timeout');
  });

  it('TiempoEsperaEnvio is honoured per issuer: nothing is sent before it elapses', async () => {
    fake.waitSeconds = 60;
    const chain = goldenChain();
    const rec = (i: number) => stored(chain[i]!.record, chain[i]!.tx, chain[i]!.kind, chain[i]!.transactionId);
    expect((await client.submit(rec(0), ctx({ now: at(0) }))).kind).toBe('accepted');
    // Remembered in the context's pacing, under the issuer's key (es-verifactu:<NIF>:<environment>).
    expect([...pacing.held]).toEqual([['es-verifactu:B12345674:test', at(60)]]);
    expect(await client.submit(rec(1), ctx({ now: at(10) }))).toMatchObject({ kind: 'retry_later', code: 'WAIT_TIME', retryAfterSeconds: 50 });
    expect(fake.requests).toHaveLength(1);
    // Another issuer is not held back.
    const other = location('es-verifactu');
    other.tax_id = 'B64717838';
    const otherRec = validatedBuild(verifactu, other, draft());
    expect((await client.submit(stored(otherRec.record, otherRec.tx), ctx({ now: at(10) }, other))).kind).toBe('accepted');
    // Once the wait has elapsed the record goes.
    expect((await client.submit(rec(1), ctx({ now: at(60) }))).kind).toBe('accepted');
    expect(fake.requests).toHaveLength(3);
  });

  it('the wait lives in the context\'s pacing, not in the client: another client (another worker) sharing it waits too', async () => {
    fake.waitSeconds = 60;
    const chain = goldenChain();
    const rec = (i: number) => stored(chain[i]!.record, chain[i]!.tx, chain[i]!.kind, chain[i]!.transactionId);
    expect((await client.submit(rec(0), ctx({ now: at(0) }))).kind).toBe('accepted');
    const otherWorker = createVerifactuClient();
    expect(await otherWorker.submit(rec(1), ctx({ now: at(30) }))).toMatchObject({ kind: 'retry_later', code: 'WAIT_TIME', flowControl: true, retryAfterSeconds: 30 });
    expect(fake.requests).toHaveLength(1);
    // A wait another worker was given meanwhile is honoured by this one as well.
    await pacing.hold(pacingKey('B12345674', 'test'), at(90));
    expect(await client.submit(rec(1), ctx({ now: at(60) }))).toMatchObject({ kind: 'retry_later', code: 'WAIT_TIME', retryAfterSeconds: 30 });
    expect((await otherWorker.submit(rec(1), ctx({ now: at(90) }))).kind).toBe('accepted');
    expect(fake.requests).toHaveLength(2);
  });

  it('an answer without a wait records nothing', async () => {
    fake.waitSeconds = 0;
    expect((await client.submit(firstRecord(), ctx())).kind).toBe('accepted');
    expect(pacing.held.size).toBe(0);
  });

  it('without a client certificate AEAT refuses the connection (HTTP 403): rejected, auth', async () => {
    const out = await client.submit(firstRecord(), ctx({ clientKey: undefined }));
    expect(out).toMatchObject({ kind: 'rejected', code: 'HTTP_403' });
    expect(verifactu.codes.HTTP_403?.category).toBe('auth');
  });

  it('a stored placeholder (JSON) is not sent', async () => {
    const out = await client.submit({ ...firstRecord(), body: '{"placeholder":true}', contentType: 'application/json' }, ctx());
    expect(out).toMatchObject({ kind: 'rejected', code: 'INVALID_RECORD' });
    expect(fake.requests).toHaveLength(0);
  });

  it('the plug-in: stub mode answers in-process, authority mode talks to AEAT', async () => {
    expect((await verifactu.submit(firstRecord(), { ...ctx(), mode: 'stub' })).kind).toBe('accepted');
    expect(fake.requests).toHaveLength(0);
    expect(await verifactu.submit(firstRecord(), ctx())).toMatchObject({ kind: 'accepted', fiscalId: 'FAKECSV000000001' });
    expect(fake.requests).toHaveLength(1);
  });
});

describe('the fake AEAT applies AEAT\'s business validations of an alta (what validateTransaction now refuses first)', () => {
  /** A record built as the service would build it, without the transaction checks (as before them). */
  function unchecked(over: Parameters<typeof draft>[0], metadata: Record<string, unknown>): StoredRecord {
    const tx = draft({ ...over, metadata: { series: 'A', ...metadata } });
    return stored(verifactu.build(buildInput(loc, tx)), tx);
  }
  const big = { items: [line({ unit_price: 8_264_462_810, tax_amount: 1_735_537_190, total_amount: 10_000_000_000 })], pretax_amount: 8_264_462_810, tax_amount: 1_735_537_190, total_amount: 10_000_000_000 };

  const cases: [string, string, Parameters<typeof draft>[0], Record<string, unknown>][] = [
    ['a 5 % line on a record issued in 2026', '1194', {
      items: [line({ tax_rate: 5, tax_amount: 50, total_amount: 1050 })], pretax_amount: 1000, tax_amount: 50, total_amount: 1050 }, { invoice_type: 'F2' }],
    ['the issuer as its own recipient', '1193', { customer_context: { nif: 'B12345674', name: 'Ejemplo SL' } }, { invoice_type: 'F1' }],
    ['an R3 naming an EU VAT number', '1191', { type: 'refund', customer_context: { tax_id: 'DE123456789', name: 'Kunde GmbH' } }, { invoice_type: 'R3' }],
    ['an F1 without a recipient', '1189', {}, { invoice_type: 'F1' }],
    ['an F2 above 3,000', '1150', big, { invoice_type: 'F2' }],
  ];
  it.each(cases)('%s is refused (%s)', async (_, code, over, metadata) => {
    fake.waitSeconds = 0;
    expect(await client.submit(unchecked(over, metadata), ctx())).toMatchObject({ kind: 'rejected', code });
    expect(fake.held('B12345674')).toEqual([]);
  });

  it('an invoice of 100,000,000 or more without Macrodato S is refused (1139); as built, with it, accepted', async () => {
    fake.waitSeconds = 0;
    const built = unchecked({ ...big, customer_context: { nif: 'A58818501', name: 'Cliente SA' } }, { invoice_type: 'F1' });
    expect(built.body).toContain('<sf:Macrodato>S</sf:Macrodato>');
    // Macrodato is not in the huella (FORMATS.md §2.1): the record stays whole without it.
    const without = { ...built, body: built.body.replace('<sf:Macrodato>S</sf:Macrodato>', '') };
    expect(await client.submit(without, ctx())).toMatchObject({ kind: 'rejected', code: '1139' });
    expect((await client.submit(built, ctx())).kind).toBe('accepted');
  });
});

describe('the fake AEAT reads Subsanacion / RechazoPrevio as AEAT does (alta por rechazo, subsanación)', () => {
  const tx = draft({ metadata: { invoice_number: '77' } });
  /** The refused first record of A-77, as the core hands it to the next build (BuildInput.earlierIssues). */
  const refusedEarlier = [{ transactionId: '00000000-0000-4000-8000-000000000077', issuedAt: NOW.toISOString(), documentNumber: 'A-77', status: 'failed_permanent' }];
  const FLAGS = '<sf:Subsanacion>S</sf:Subsanacion><sf:RechazoPrevio>X</sf:RechazoPrevio>';
  /** A-77 built on `previous` (null: the first the fake holds), issued again after a refusal or not. */
  const a77 = (again: boolean, previous: { fingerprint: string | null; linkData?: Record<string, string> | null } | null = null, seconds = 0) =>
    validatedBuild(verifactu, loc, tx, {
      now: at(seconds),
      chain: { seq: 1, previous: previous && { fingerprint: previous.fingerprint, fiscalId: null, issuedAt: NOW.toISOString(), linkData: previous.linkData ?? null } },
      ...(again ? { earlierIssues: refusedEarlier } : {}),
    }).record;
  const submit = (body: string) => client.submit({ ...stored(a77(false), tx), body }, ctx());

  beforeEach(() => {
    fake.waitSeconds = 0;
  });

  it('A-77 refused, then issued again as the service builds it (S/X): accepted; a plain alta would have been too (AEAT keeps no refused record)', async () => {
    fake.refuseRecord = (r) => (r.NumSerieFactura === 'A-77' && fake.submissions.length === 0 ? { code: '1104' } : undefined);
    expect(await client.submit(stored(a77(false), tx), ctx())).toMatchObject({ kind: 'rejected', code: '1104' });
    expect(fake.held('B12345674')).toEqual([]);
    const again = a77(true, null, 60);
    expect(again.body).toContain(FLAGS);
    expect((await client.submit(stored(again, tx), ctx())).kind).toBe('accepted');
    expect(fake.held('B12345674').map((h) => h.id.NumSerieFactura)).toEqual(['A-77']);
  });

  it('a plain alta of an invoice refused before is judged as any alta: accepted', async () => {
    fake.refuseRecord = (r) => (r.NumSerieFactura === 'A-77' && fake.submissions.length === 0 ? { code: '1104' } : undefined);
    expect((await client.submit(stored(a77(false), tx), ctx())).kind).toBe('rejected');
    expect((await client.submit(stored(a77(false, null, 60), tx), ctx())).kind).toBe('accepted');
  });

  it('RechazoPrevio X or S without Subsanacion S: refused, 1153 / 1161 with AEAT\'s texts', async () => {
    const body = a77(true).body;
    expect(await submit(body.replace('<sf:Subsanacion>S</sf:Subsanacion>', ''))).toMatchObject({ kind: 'rejected', code: '1153' });
    expect(await submit(body.replace('<sf:Subsanacion>S</sf:Subsanacion><sf:RechazoPrevio>X', '<sf:RechazoPrevio>S'))).toMatchObject({ kind: 'rejected', code: '1161' });
    expect(fake.responses.at(-2)).toContain('solo podrá incluirse el campo RechazoPrevio con valor X si se ha informado el campo Subsanacion y tiene el valor S.');
    expect(fake.responses.at(-1)).toContain('no podrá incluirse el campo RechazoPrevio con valor S si no se ha informado del campo Subsanacion o tiene el valor N.');
    expect(fake.held('B12345674')).toEqual([]);
  });

  it('a subsanación (S/N, S/S) of an invoice AEAT does not hold: 3002', async () => {
    const body = a77(true).body;
    expect(await submit(body.replace('<sf:RechazoPrevio>X</sf:RechazoPrevio>', ''))).toMatchObject({ kind: 'rejected', code: '3002' });
    expect(await submit(body.replace('<sf:RechazoPrevio>X', '<sf:RechazoPrevio>S'))).toMatchObject({ kind: 'rejected', code: '3002' });
  });

  it('S/X of an invoice AEAT holds: duplicate (3000); S/N of it: accepted, it replaces the one held', async () => {
    const first = a77(false);
    expect((await client.submit(stored(first, tx), ctx())).kind).toBe('accepted');
    const reissued = a77(true, first, 60);
    expect(await client.submit(stored(reissued, tx), ctx())).toMatchObject({ kind: 'duplicate', response: { CodigoErrorRegistro: '3000' } });
    const correction = { ...reissued, body: reissued.body.replace('<sf:RechazoPrevio>X</sf:RechazoPrevio>', '') };
    expect((await client.submit(stored(correction, tx), ctx())).kind).toBe('accepted');
    expect(fake.held('B12345674').map((h) => [h.id.NumSerieFactura, h.huella, h.corrected ?? false])).toEqual([
      ['A-77', first.fingerprint, true], ['A-77', correction.fingerprint, false],
    ]);
  });
});

describe('VERI*FACTU client: a live request never names the placeholder issuer 000000000', () => {
  const bare: LocationForFiscal = { ...loc, tax_id: null };
  /** A record of a location without tax_id (a test key may build one: the sandbox placeholder). */
  const bareRecord = () => {
    const { tx, record } = validatedBuild(verifactu, bare, draft());
    expect(record.body).toContain('<sf:IDEmisorFactura>000000000</sf:IDEmisorFactura>');
    return stored(record, tx, 'record', 'bare-1');
  };

  it('live, location without tax_id: every record refused for good (MISSING_ISSUER_NIF), nothing sent', async () => {
    const out = await client.submitMany([bareRecord()], ctx({ environment: 'live' }, bare));
    expect(out).toEqual({ kind: 'records', outcomes: [expect.objectContaining({ kind: 'rejected', code: 'MISSING_ISSUER_NIF' })] });
    expect(await verifactu.submit(bareRecord(), ctx({ environment: 'live' }, bare))).toMatchObject({ kind: 'rejected', code: 'MISSING_ISSUER_NIF' });
    expect(verifactu.codes.MISSING_ISSUER_NIF).toMatchObject({ category: 'configuration', retriable: false });
    expect(fake.requests).toHaveLength(0);
  });

  it('live: a record that names the placeholder is refused on its own, the others of the request go', async () => {
    const out = await client.submitMany([bareRecord(), firstRecord()], ctx({ environment: 'live' }));
    if (out.kind !== 'records') throw new Error(out.kind);
    expect(out.outcomes.map((o) => (o.kind === 'rejected' ? o.code : o.kind))).toEqual(['MISSING_ISSUER_NIF', 'accepted']);
    expect(fake.submissions.map((x) => x.records)).toEqual([['Alta A-1']]);
    expect(fake.requests[0]!.body.toString('utf8')).not.toContain('000000000');
  });

  it('test keys keep the placeholder (sandbox rehearsal): the request goes as before', async () => {
    await client.submitMany([bareRecord()], ctx({}, bare));
    expect(fake.requests).toHaveLength(1);
  });
});

describe('VERI*FACTU submitMany: several records of one issuer in one request', () => {
  const chainRecords = () => goldenChain().map((c) => stored(c.record, c.tx, c.kind, c.transactionId));
  const names = ['Alta A-1', 'Alta A-2', 'Alta A-3', 'Alta RA-4', 'Alta RA-5', 'Anulacion A-1', 'Alta A-7', 'Alta A-8'];

  it('the whole chain in ONE request, in order: one Cabecera, each record answered by its own line, one CSV', async () => {
    const out = await client.submitMany(chainRecords(), ctx());
    expect(fake.requests).toHaveLength(1);
    expect(fake.submissions).toEqual([{ nif: 'B12345674', records: names, csv: 'FAKECSV000000001' }]);
    const body = soapBodyContent(fake.requests[0]!.body.toString('utf8'))!;
    expect(body.match(/<sfLR:Cabecera>/g)).toHaveLength(1);
    if (HAVE_SCHEMAS) expect(xsdValidate(body, 'es/verifactu/SuministroLR.xsd').ok).toBe(true);
    expect(out.kind).toBe('records');
    if (out.kind !== 'records') return;
    expect(out.outcomes).toHaveLength(8);
    expect(out.outcomes.every((o) => o.kind === 'accepted' && o.fiscalId === 'FAKECSV000000001' && o.warnings === undefined)).toBe(true);
    expect(fake.held('B12345674').map((h) => `${h.type} ${h.id.NumSerieFactura}`)).toEqual(names);
  });

  it('one record refused: that record gets its code; the records chained after it are refused by AEAT\'s chain check (1180)', async () => {
    fake.refuseRecord = (r) => (r.type === 'Alta' && r.NumSerieFactura === 'A-3' ? { code: '1104' } : undefined);
    const out = await client.submitMany(chainRecords(), ctx());
    expect(out.kind).toBe('records');
    if (out.kind !== 'records') return;
    expect(out.outcomes.map((o) => (o.kind === 'rejected' ? o.code : o.kind))).toEqual(['accepted', 'accepted', '1104', '1180', '1180', '1180', '1180', '1180']);
    expect(fake.held('B12345674').map((h) => h.id.NumSerieFactura)).toEqual(['A-1', 'A-2']);
  });

  it('the last record refused, the others registered', async () => {
    fake.refuseRecord = (r) => (r.type === 'Alta' && r.NumSerieFactura === 'A-8' ? { code: '1104' } : undefined);
    const out = await client.submitMany(chainRecords(), ctx());
    if (out.kind !== 'records') throw new Error(out.kind);
    expect(out.outcomes.map((o) => (o.kind === 'rejected' ? o.code : o.kind))).toEqual(['accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'accepted', '1104']);
  });

  it('flow control concerns the whole request: nothing is sent, one outcome for the request', async () => {
    const [first, ...rest] = chainRecords();
    expect((await client.submit(first!, ctx({ now: at(0) }))).kind).toBe('accepted');
    expect(await client.submitMany(rest, ctx({ now: at(15) }))).toEqual({
      kind: 'request',
      outcome: expect.objectContaining({ kind: 'retry_later', code: 'WAIT_TIME', flowControl: true, retryAfterSeconds: 45 }),
    });
    expect(fake.requests).toHaveLength(1);
    const after = await client.submitMany(rest, ctx({ now: at(60) }));
    expect(after.kind === 'records' && after.outcomes.every((o) => o.kind === 'accepted')).toBe(true);
    expect(fake.submissions.map((s) => s.records.length)).toEqual([1, 7]);
  });

  it('a SOAP Fault or HTTP 429 answers for the request as a whole; HTTP 503 is a TransportError', async () => {
    fake.faultRequest = (records) => (records.length > 1 ? '4102' : undefined);
    expect(await client.submitMany(chainRecords(), ctx())).toMatchObject({ kind: 'request', outcome: { kind: 'rejected', code: '4102' } });
    fake.faultRequest = undefined;
    fake.behave({ kind: 'rateLimited', retryAfterSeconds: 30 });
    expect(await client.submitMany(chainRecords(), ctx())).toMatchObject({ kind: 'request', outcome: { kind: 'retry_later', code: 'HTTP_429', retryAfterSeconds: 30 } });
    fake.behave({ kind: 'unavailable' });
    await expect(client.submitMany(chainRecords(), ctx())).rejects.toMatchObject({ name: 'TransportError', code: 'http_5xx' });
    expect(fake.held('B12345674')).toHaveLength(0);
  });

  it('a stored placeholder among the records is refused on its own; the others go', async () => {
    const [a, b] = chainRecords();
    const out = await client.submitMany([a!, { ...a!, transactionId: 'x', body: '{"placeholder":true}' }, b!], ctx());
    if (out.kind !== 'records') throw new Error(out.kind);
    expect(out.outcomes.map((o) => (o.kind === 'rejected' ? o.code : o.kind))).toEqual(['accepted', 'INVALID_RECORD', 'accepted']);
    expect(fake.submissions[0]!.records).toEqual(['Alta A-1', 'Alta A-2']);
  });

  it('the Cabecera names the issuer as the records were issued (StoredRecord.issuer), not the location now; else (older records) the location', async () => {
    fake.waitSeconds = 0;
    const [a, b, c] = chainRecords();
    const asIssued = { name: 'Shop', address: null, legalName: 'Nombre Emitido SL' };
    const renamed = location('es-verifactu', { legal_name: 'Nombre Nuevo SL' });
    const out = await client.submitMany([{ ...a!, issuer: asIssued }, { ...b!, issuer: asIssued }], ctx({}, renamed));
    expect(out.kind === 'records' && out.outcomes.every((o) => o.kind === 'accepted')).toBe(true);
    expect(cabeceraName(0)).toBe('Nombre Emitido SL');
    // No legal name when issued: the location's name as it was.
    await client.submit({ ...c!, issuer: { name: 'Tienda Vieja', address: null, legalName: null } }, ctx({}, renamed));
    expect(cabeceraName(1)).toBe('Tienda Vieja');
    // A record stored before the issuer was kept: the location as it stands.
    const [, , , d] = chainRecords();
    await client.submit(d!, ctx({}, renamed));
    expect(cabeceraName(2)).toBe('Nombre Nuevo SL');
  });

  it('records issued under another name than the first\'s are not sent with it: flow control (NEXT_REQUEST), sent in a request of their own', async () => {
    fake.waitSeconds = 0;
    const [a, b, c, d] = chainRecords();
    const before = { name: 'Shop', address: null, legalName: 'Nombre Antiguo SL' };
    const after = { name: 'Shop', address: null, legalName: 'Nombre Nuevo SL' };
    const out = await client.submitMany([{ ...a!, issuer: before }, { ...b!, issuer: before }, { ...c!, issuer: after }, { ...d!, issuer: before }], ctx());
    if (out.kind !== 'records') throw new Error(out.kind);
    expect(out.outcomes.map((o) => (o.kind === 'retry_later' ? `${o.code}${o.flowControl ? ' (flow control)' : ''}` : o.kind))).toEqual([
      'accepted', 'accepted', 'NEXT_REQUEST (flow control)', 'NEXT_REQUEST (flow control)',
    ]);
    expect(fake.submissions.map((x) => x.records)).toEqual([['Alta A-1', 'Alta A-2']]);
    expect(cabeceraName(0)).toBe('Nombre Antiguo SL');
    // The next request starts with the renamed one, under its name.
    const next = await client.submitMany([{ ...c!, issuer: after }, { ...d!, issuer: before }], ctx());
    expect(next.kind === 'records' && next.outcomes.map((o) => o.kind)).toEqual(['accepted', 'retry_later']);
    expect(cabeceraName(1)).toBe('Nombre Nuevo SL');
    expect(fake.submissions.map((x) => x.records)).toEqual([['Alta A-1', 'Alta A-2'], ['Alta A-3']]);
  });

  it('1 to 1,000 records per request (SuministroLR.xsd)', async () => {
    const [a] = chainRecords();
    await expect(client.submitMany([], ctx())).rejects.toThrow(RangeError);
    await expect(client.submitMany(Array.from({ length: 1001 }, () => a!), ctx())).rejects.toThrow(RangeError);
    expect(verifactu.capabilities.maxRecordsPerRequest).toBe(1000);
  });

  it('the plug-in in stub mode answers each record as submit would, nothing sent', async () => {
    const records = chainRecords();
    const out = await verifactu.submitMany!(records, { ...ctx(), mode: 'stub' });
    const single = await Promise.all(records.map((r) => verifactu.submit(r, { ...ctx(), mode: 'stub' })));
    expect(out).toEqual({ kind: 'records', outcomes: single });
    expect(new Set(single.map((o) => (o.kind === 'accepted' ? o.fiscalId : null))).size).toBe(8);
    expect(fake.requests).toHaveLength(0);
  });
});
