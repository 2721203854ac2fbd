import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { SIGNING_ERRORS } from '../../src/services/signing-keys.ts';
import { startFakeAeatSii, soapBodyContent as siiBodyContent, type FakeAeatSii } from '../support/fake-aeat-sii.ts';
import { startFakeAeatVerifactu, soapBodyContent as verifactuBodyContent, VERIFACTU_PATH, type FakeAeatVerifactu } from '../support/fake-aeat-verifactu.ts';
import type { FakeRequest } from '../support/fake-authority.ts';
import { startFakeTicketBai, type FakeTicketBai } from '../support/fake-ticketbai.ts';
import { submissionEnvelope } from '../../src/countries/es-verifactu/soap.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';
import { embeddedCertificatePem, fingerprintOf, freshNif, postAsClient, tagText, uploadSpainCertificate, type UploadedCertificate } from '../support/spain.ts';
import { createTx, getTx, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xmlsecVerify, xsdValidate } from '../support/xml-tools.ts';

/*
 * Spain through the API against the fake authorities (real HTTPS servers on 127.0.0.1
 * that demand a TLS client certificate and validate what they receive against the
 * official XSDs): with a test key and `X-Svc-Sandbox: authority`, a record is built
 * (and for TicketBAI signed) with the location's uploaded certificate, stored, and sent
 * by the worker's submit job with that certificate as the TLS client certificate; the
 * authority's answer becomes the transaction's status.
 *
 * Every scenario gets its own account and issuer NIF: the fakes keep books per NIF
 * (VERI*FACTU checks each issuer's chain), as the real authorities do.
 */

let t: TestApp;
let clock: ManualClock;
let aeat: FakeAeatVerifactu;
let sii: FakeAeatSii;
let tbai: FakeTicketBai;

beforeAll(async () => {
  [aeat, sii, tbai] = await Promise.all([startFakeAeatVerifactu(), startFakeAeatSii(), startFakeTicketBai()]);
  // AEAT's usual 60 s flow-control pause would hold back every second record of an issuer:
  // off, except in the test about it.
  aeat.waitSeconds = 0;
  clock = new ManualClock(new Date());
  t = await startTestApp({
    clock,
    random: () => 0.5,
    config: {
      authorityBaseUrls: { 'es-verifactu:test': aeat.url, 'es-sii:test': sii.url, 'es-ticketbai:test': tbai.url },
      authorityCa: [...new Set([aeat.caPem, sii.caPem, tbai.caPem])].join('\n'),
    },
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([aeat?.close(), sii?.close(), tbai?.close()]);
});

const AUTHORITY = { 'x-svc-sandbox': 'authority' } as const;

const TBAI_ALTA_XSD = 'es/ticketbai/ticketbaiv1-2-2.xsd';
const TBAI_ANULA_XSD = 'es/ticketbai/anula_ticketbaiv1-2-2.xsd';

/** One Spanish system (and, for TicketBAI, territory) as the tests drive it. */
interface SystemCase {
  name: string;
  system: 'es-verifactu' | 'es-sii' | 'es-ticketbai';
  config: (certificateId: string | undefined) => Record<string, unknown>;
  metadata: Record<string, unknown>;
  requests: () => FakeRequest[];
  paths: { alta: string; annulment: string };
  /** What the authority validates: the SOAP body's element, or the posted TicketBAI file. */
  document: (req: FakeRequest) => string;
  xsd: { alta: string; annulment: string };
  /** The root element of the annulment document. */
  annulmentRoot: RegExp;
  /** The fake refuses every record with this code from now on / accepts again. */
  reject: (code: string, message: string) => void;
  normal: () => void;
  permanent: { code: string; message: string; raw: string };
  retriable: { code: string; message: string };
}

const verifactuCase: SystemCase = {
  name: 'VERI*FACTU',
  system: 'es-verifactu',
  config: (certificateId) => ({ system: 'verifactu', legal_name: 'Ejemplo Madrid SL', software_nif: 'B12345674', ...(certificateId ? { certificate_id: certificateId } : {}) }),
  metadata: {},
  requests: () => aeat.requests,
  paths: { alta: VERIFACTU_PATH, annulment: VERIFACTU_PATH },
  document: (req) => verifactuBodyContent(req.body.toString('utf8')) ?? '',
  xsd: { alta: 'es/verifactu/SuministroLR.xsd', annulment: 'es/verifactu/SuministroLR.xsd' },
  annulmentRoot: /<(\w+:)?RegistroAnulacion[\s>]/,
  reject: (code, description) => aeat.behave({ kind: 'reject', code, description }),
  normal: () => aeat.behave({ kind: 'normal' }),
  // 1104: invalid NumSerieFactura (validation: resending the same record cannot help).
  permanent: { code: '1104', message: 'Valor del campo NumSerieFactura incorrecto.', raw: 'Invalid NumSerieFactura (invoice series and number) value.' },
  // 3501: AEAT's technical database error: the same record may pass later.
  retriable: { code: '3501', message: 'Error técnico de base de datos.' },
};

const siiCase: SystemCase = {
  name: 'SII',
  system: 'es-sii',
  config: (certificateId) => ({ system: 'sii', legal_name: 'Ejemplo Sevilla SL', ...(certificateId ? { certificate_id: certificateId } : {}) }),
  metadata: { simplified: true },
  requests: () => sii.requests,
  paths: { alta: '/wlpl/SSII-FACT/ws/fe/SiiFactFEV1SOAP', annulment: '/wlpl/SSII-FACT/ws/fe/SiiFactFEV1SOAP' },
  document: (req) => siiBodyContent(req.body.toString('utf8')) ?? '',
  xsd: { alta: 'es/sii/SuministroLR.xsd', annulment: 'es/sii/SuministroLR.xsd' },
  annulmentRoot: /<(\w+:)?BajaLRFacturasEmitidas[\s>]/,
  reject: (code, description) => sii.setMode({ kind: 'reject', code, description }),
  normal: () => sii.setMode({ kind: 'normal' }),
  permanent: {
    code: '1116',
    message: 'El NIF no está identificado en el censo de la AEAT',
    raw: 'The NIF is not identified in the AEAT census. (AEAT: El NIF no está identificado en el censo de la AEAT)',
  },
  retriable: { code: '3501', message: 'Error técnico de base de datos' },
};

const ticketBaiCase = (territory: 'gipuzkoa' | 'araba'): SystemCase => ({
  name: `TicketBAI ${territory}`,
  system: 'es-ticketbai',
  config: (certificateId) => ({
    system: 'ticketbai', legal_name: 'Ejemplo Euskadi SL', territory, tbai_license: 'TBAIGIPRE00000000123',
    ...(certificateId ? { certificate_id: certificateId } : {}),
  }),
  metadata: {},
  requests: () => tbai.requests,
  paths: territory === 'gipuzkoa'
    ? { alta: '/sarrerak/alta', annulment: '/sarrerak/baja' }
    : { alta: '/TicketBAI/v1/facturas/', annulment: '/TicketBAI/v1/anulaciones/' },
  document: (req) => req.body.toString('utf8'),
  xsd: { alta: TBAI_ALTA_XSD, annulment: TBAI_ANULA_XSD },
  annulmentRoot: /^<(\w+:)?AnulaTicketBai[\s>]/,
  reject: (code, message) => tbai.rejectWhen(() => ({ code, message })),
  normal: () => tbai.rejectWhen(undefined),
  // Not a code the service knows as a duplicate or as retriable: a rejection.
  permanent: { code: '011', message: 'El certificado de firma no es válido', raw: 'El certificado de firma no es válido' },
  // 006 "servicio no disponible": retried.
  retriable: { code: '006', message: 'Servicio no disponible' },
});

const CASES: SystemCase[] = [verifactuCase, siiCase, ticketBaiCase('gipuzkoa'), ticketBaiCase('araba')];

interface Scenario {
  key: string;
  nif: string;
  cert: UploadedCertificate;
  loc: string;
}

/** A fresh account and issuer: its certificate (subject serialNumber = its NIF) and a location naming it. */
async function scenario(c: SystemCase): Promise<Scenario> {
  const { key } = await t.signup();
  const nif = freshNif();
  const cert = await uploadSpainCertificate(t, key, nif);
  expect(cert.view).toMatchObject({ certificate_id: cert.certificateId, nif });
  expect(cert.view.warnings).toBeUndefined();
  const res = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { name: `Tienda ${nif}`, country: 'ES', address: 'Calle Mayor 1', tax_id: nif, country_config: c.config(cert.certificateId) },
  });
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().warnings).toBeUndefined(); // the certificate's NIF is the location's
  return { key, nif, cert, loc: res.json().id };
}

const sale = (c: SystemCase, s: Scenario, metadata: Record<string, unknown> = {}) =>
  saleBody(s.loc, { timestamp: clock.now().toISOString(), metadata: { ...c.metadata, ...metadata } });

async function createAuthorityTx(c: SystemCase, s: Scenario, metadata: Record<string, unknown> = {}) {
  const res = await createTx(t, s.key, sale(c, s, metadata), AUTHORITY);
  expect(res.statusCode, res.body).toBe(201);
  const tx = res.json();
  expect(tx.status).toBe('pending');
  return tx;
}

async function fiscalRecord(key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

async function submitJob(id: string) {
  const { rows } = await t.db.query<{ status: string; attempt: number; run_at: Date }>(
    `SELECT status, attempt, run_at FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [id]);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

/** Runs the queue and returns the requests the fake received meanwhile. */
async function drainAndCollect(c: SystemCase): Promise<FakeRequest[]> {
  const before = c.requests().length;
  await t.worker.drain();
  return c.requests().slice(before);
}

function expectSchemaValid(doc: string, xsd: string): void {
  if (!HAVE_SCHEMAS) {
    console.warn(`spain-authority: ${SCHEMAS_MISSING_MESSAGE}`);
    return;
  }
  const v = xsdValidate(doc, xsd);
  expect(v.output).toMatch(/validates$/);
  expect(v.ok).toBe(true);
}

/** A TicketBAI file signed with the uploaded certificate: carried in KeyInfo, verified by xmlsec1. */
function expectSignedWith(xml: string, cert: UploadedCertificate): void {
  expect(fingerprintOf(embeddedCertificatePem(xml))).toBe(cert.fingerprint256);
  if (!HAVE_SCHEMAS) {
    console.warn(`spain-authority: xmlsec1 check skipped: ${SCHEMAS_MISSING_MESSAGE}`);
    return;
  }
  const v = xmlsecVerify(xml, { trustedCertPem: cert.cert.certPem });
  expect(v.output).toContain('SignedInfo References (ok/all): 3/3');
  expect(v.ok).toBe(true);
}

/** One request, on the right path, over mutual TLS with the uploaded certificate, carrying a schema-valid document. */
function expectDelivered(c: SystemCase, reqs: FakeRequest[], kind: 'alta' | 'annulment', s: Scenario): string {
  expect(reqs.map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${c.paths[kind]}`]);
  const req = reqs[0]!;
  expect(req.clientCert.fingerprint256).toBe(s.cert.fingerprint256);
  const doc = c.document(req);
  expect(doc).not.toBe('');
  expectSchemaValid(doc, c.xsd[kind]);
  if (kind === 'annulment') expect(doc).toMatch(c.annulmentRoot);
  else expect(doc).not.toMatch(c.annulmentRoot);
  return doc;
}

/** What each authority answered for an accepted record, as the transaction keeps it. */
function expectAcceptedBy(c: SystemCase, tx: Record<string, any>, s: Scenario, createdFiscalId: string | null): void {
  expect(tx.status).toBe('success');
  expect(tx.completed_at).toEqual(expect.any(String));
  expect(tx.response_payload.submit_error).toBeUndefined();
  expect(tx.response_payload.duplicate).toBeUndefined();
  const authority = tx.response_payload.authority;
  switch (c.system) {
    case 'es-verifactu': {
      // The CSV AEAT answered is the fiscal id.
      const csv = tagText(aeat.responses.at(-1)!, 'tikR:CSV');
      expect(csv).toMatch(/^FAKECSV\d{9}$/);
      expect(tx.fiscal_id).toBe(csv);
      expect(authority).toMatchObject({ EstadoEnvio: 'Correcto', EstadoRegistro: 'Correcto', CSV: csv, TiempoEsperaEnvio: 0 });
      break;
    }
    case 'es-sii': {
      const csv = tagText(sii.lastAnswer!, 'siiR:CSV');
      expect(csv).toMatch(/^[A-Z0-9]{16}$/);
      expect(tx.fiscal_id).toBe(csv);
      expect(authority).toMatchObject({ operation: 'alta', EstadoEnvio: 'Correcto', CSV: csv, EstadoRegistro: 'Correcto', CodigoErrorRegistro: null });
      break;
    }
    case 'es-ticketbai': {
      // The TBAI identifier is made locally (at creation) and echoed by the Hacienda.
      expect(createdFiscalId).toMatch(new RegExp(`^TBAI-${s.nif}-\\d{6}-[A-Za-z0-9+/]{13}-\\d{3}$`));
      expect(tx.fiscal_id).toBe(createdFiscalId);
      expect(authority).toMatchObject({ http_status: 200, estado: '00', identificador_tbai: createdFiscalId, csv: expect.stringMatching(/^TBAI[0-9a-f-]{36}$/), resultados_validacion: [] });
      break;
    }
  }
}

describe.each(CASES)('$name through the API with X-Svc-Sandbox: authority', (c) => {
  it('accepted: success with the authority\'s id; the fake received a schema-valid record over mutual TLS with the uploaded certificate', async () => {
    const s = await scenario(c);
    const created = await createAuthorityTx(c, s);
    const reqs = await drainAndCollect(c);
    const doc = expectDelivered(c, reqs, 'alta', s);

    const tx = await getTx(t, s.key, created.id);
    expectAcceptedBy(c, tx, s, created.fiscal_id);
    expect((await submitJob(created.id)).status).toBe('completed');

    // The document sent is the stored fiscal record, byte for byte (inside the SOAP body for AEAT).
    const record = await fiscalRecord(s.key, created.id);
    expect(doc).toContain(c.system === 'es-ticketbai' ? record : record.replace(/^<\?xml[^>]*>/, ''));
    if (c.system === 'es-ticketbai') {
      expect(doc).toBe(record);
      expect(tagText(doc, 'NIF')).toBe(s.nif);
      expectSignedWith(doc, s.cert);
    }
    // What the authority now holds.
    if (c.system === 'es-verifactu') {
      expect(aeat.held(s.nif).map((h) => [h.type, h.id.NumSerieFactura, h.estado])).toEqual([['Alta', 'A-1', 'Correcta']]);
    }
    if (c.system === 'es-sii') {
      expect([...sii.registered].filter(([k]) => k.startsWith(`${s.nif}|`)).map(([, csv]) => csv)).toEqual([tx.fiscal_id]);
    }
  });

  it('rejected with a non-retriable code: failed_permanent at once, submit_error, dead submit job', async () => {
    const s = await scenario(c);
    c.reject(c.permanent.code, c.permanent.message);
    try {
      const created = await createAuthorityTx(c, s);
      const before = c.requests().length;
      await t.worker.runOnce(); // the submission only, not the translation it enqueues
      expect(c.requests().length - before).toBe(1);
      const tx = await getTx(t, s.key, created.id);
      expect(tx.status).toBe('failed_permanent');
      expect(tx.response_payload.submit_error).toEqual({ error_code: c.permanent.code, raw_message: c.permanent.raw });
      expect(tx.completed_at).toBeNull();
      expect(await submitJob(created.id)).toMatchObject({ status: 'dead', attempt: 1 });
      // Nothing is retried, whatever the time.
      clock.advance(86_400_000);
      const more = await drainAndCollect(c);
      expect(more).toEqual([]);
      expect((await getTx(t, s.key, created.id)).status).toBe('failed_permanent');
    } finally {
      c.normal();
    }
  });

  it('rejected with a retriable code: failed, retried with backoff, success once the authority accepts', async () => {
    const s = await scenario(c);
    c.reject(c.retriable.code, c.retriable.message);
    let created: Record<string, any>;
    try {
      created = await createAuthorityTx(c, s);
      const reqs = await drainAndCollect(c);
      expect(reqs).toHaveLength(1);
      const tx = await getTx(t, s.key, created.id);
      expect(tx.status).toBe('failed');
      expect(tx.response_payload.submit_error).toEqual({ error_code: c.retriable.code, raw_message: expect.any(String) });
      expect(tx.error_message).toEqual(expect.any(String)); // translated meanwhile (the drain ran the job)
      const job = await submitJob(created.id);
      expect(job).toMatchObject({ status: 'failed', attempt: 1 });
      // The first retry: 2 s later (random 0.5: no jitter).
      expect(job.run_at.getTime() - clock.now().getTime()).toBe(2000);
      clock.set(job.run_at);
    } finally {
      c.normal();
    }
    const retry = await drainAndCollect(c);
    expectDelivered(c, retry, 'alta', s);
    const tx = await getTx(t, s.key, created.id);
    expectAcceptedBy(c, tx, s, created.fiscal_id);
    expect(tx.response_payload.submit_error).toBeUndefined();
    // The earlier attempt's error no longer describes the transaction.
    expect(tx.error_message).toBeNull();
    expect(await submitJob(created.id)).toMatchObject({ status: 'completed', attempt: 2 });
  });

  it('duplicate: the authority already holds the invoice → success, marked duplicate', async () => {
    const s = await scenario(c);
    if (c.system === 'es-ticketbai') {
      // The same signed file reached the Hacienda before (an attempt whose answer was lost).
      const created = await createAuthorityTx(c, s);
      const record = await fiscalRecord(s.key, created.id);
      const early = await postAsClient(`${tbai.url}${c.paths.alta}`, record, { certPem: s.cert.cert.certPem, keyPem: s.cert.cert.keyPem, caPem: tbai.caPem });
      expect(early.status).toBe(200);
      expect(tagText(early.body, 'Estado')).toBe('00');
      const reqs = await drainAndCollect(c);
      expect(reqs).toHaveLength(1);
      const tx = await getTx(t, s.key, created.id);
      expect(tx.status).toBe('success');
      expect(tx.fiscal_id).toBe(created.fiscal_id);
      expect(tx.response_payload).toMatchObject({
        duplicate: true,
        authority: { estado: '01', identificador_tbai: created.fiscal_id, resultados_validacion: [{ codigo: '005', descripcion: 'Factura ya recibida' }] },
      });
      return;
    }
    // AEAT: an invoice with the issuer, number and date it already holds. A second sale the
    // client numbers 'F-7' again never gets that far (409 at creation: AEAT's "duplicate"
    // would read as accepted and the sale would never be registered)…
    const first = await createAuthorityTx(c, s, { invoice_number: 'F-7' });
    await t.worker.drain();
    const firstTx = await getTx(t, s.key, first.id);
    expect(firstTx.status).toBe('success');
    const again = await createTx(t, s.key, sale(c, s, { invoice_number: 'F-7' }), AUTHORITY);
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json().error).toMatch(/^metadata\.invoice_number F-7 was already issued/);
    // …so AEAT holds it when our own record is sent again: an attempt whose answer was lost.
    await t.db.query("UPDATE transactions SET status = 'pending' WHERE id = $1", [first.id]);
    await t.db.query("UPDATE jobs SET status = 'pending', run_at = now() - interval '1 second' WHERE transaction_id = $1 AND kind = 'submit'", [first.id]);
    const reqs = await drainAndCollect(c);
    expect(reqs).toHaveLength(1);
    const tx = await getTx(t, s.key, first.id);
    expect(tx.status).toBe('success');
    expect(tx.response_payload.duplicate).toBe(true);
    expect(tx.response_payload.submit_error).toBeUndefined();
    if (c.system === 'es-verifactu') {
      expect(tx.response_payload.authority).toMatchObject({ EstadoEnvio: 'Incorrecto', EstadoRegistro: 'Incorrecto', CodigoErrorRegistro: '3000', RegistroDuplicado: { EstadoRegistroDuplicado: 'Correcta' } });
      expect(aeat.held(s.nif)).toHaveLength(1);
    } else {
      // SII names the registration it holds: its CSV becomes this transaction's fiscal id too.
      expect(tx.response_payload.authority).toMatchObject({ CodigoErrorRegistro: '3000', CSVRegistrado: firstTx.fiscal_id, EstadoRegistroDuplicado: 'Correcta' });
      expect(tx.fiscal_id).toBe(firstTx.fiscal_id);
    }
  });

  it('cancel: the annulment reaches the authority over mutual TLS and the original becomes cancelled', async () => {
    const s = await scenario(c);
    const original = await createAuthorityTx(c, s);
    await t.worker.drain();
    const accepted = await getTx(t, s.key, original.id);
    expect(accepted.status).toBe('success');
    const originalRecord = await fiscalRecord(s.key, original.id);

    const res = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key: s.key, payload: { reason: 'error en el importe' } });
    expect(res.statusCode, res.body).toBe(201);
    const cancellation = res.json();
    expect(cancellation).toMatchObject({ type: 'cancellation', status: 'pending', cancels_transaction_id: original.id });
    expect((await getTx(t, s.key, original.id)).status).toBe('success'); // until the authority confirms

    const reqs = await drainAndCollect(c);
    const doc = expectDelivered(c, reqs, 'annulment', s);
    const done = await getTx(t, s.key, cancellation.id);
    expect(done.status).toBe('success');
    const after = await getTx(t, s.key, original.id);
    expect(after).toMatchObject({ status: 'cancelled', cancellation_transaction_id: cancellation.id });

    switch (c.system) {
      case 'es-verifactu': {
        // RegistroAnulacion names the invoice and follows it in the issuer's chain.
        expect(/<(?:\w+:)?NumSerieFacturaAnulada>([^<]*)</.exec(doc)?.[1]).toBe('A-1');
        expect(aeat.held(s.nif).map((h) => [h.type, h.id.NumSerieFactura, h.cancelled])).toEqual([['Alta', 'A-1', true], ['Anulacion', 'A-1', false]]);
        expect(done.fiscal_id).toBe(tagText(aeat.responses.at(-1)!, 'tikR:CSV'));
        break;
      }
      case 'es-sii': {
        const numSerie = /<(?:\w+:)?NumSerieFacturaEmisor>([^<]*)</.exec(doc)?.[1];
        expect(numSerie).toBe(/<(?:\w+:)?NumSerieFacturaEmisor>([^<]*)</.exec(originalRecord)?.[1]);
        const key = [...sii.cancelled.keys()].find((k) => k.startsWith(`${s.nif}|`));
        expect(key).toBe(`${s.nif}|${numSerie}|${/<(?:\w+:)?FechaExpedicionFacturaEmisor>([^<]*)</.exec(originalRecord)?.[1]}`);
        expect(done.fiscal_id).toBe(sii.cancelled.get(key!));
        expect([...sii.registered.keys()].some((k) => k.startsWith(`${s.nif}|`))).toBe(false);
        break;
      }
      case 'es-ticketbai': {
        // AnulaTicketBai names the invoice by series, number and date, signed with the same certificate.
        for (const field of ['SerieFactura', 'NumFactura', 'FechaExpedicionFactura', 'NIF']) expect(tagText(doc, field)).toBe(tagText(originalRecord, field));
        expect(doc).toBe(await fiscalRecord(s.key, cancellation.id));
        expectSignedWith(doc, s.cert);
        expect(done.response_payload.authority).toMatchObject({ estado: '00', csv: expect.stringMatching(/^TBAI/) });
        break;
      }
    }

    // A second cancel returns the first; nothing more is sent.
    const again = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key: s.key });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(cancellation.id);
    expect(await drainAndCollect(c)).toEqual([]);
  });

  it('without an uploaded certificate: 400 before anything is stored or sent', async () => {
    const { key } = await t.signup();
    const nif = freshNif();
    const create = async (certificateId: string | undefined) => {
      const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { name: 'Sin certificado', country: 'ES', tax_id: nif, country_config: c.config(certificateId) } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    const none = await create(undefined);
    const missing = await create('never-uploaded');
    const before = c.requests().length;

    const r1 = await createTx(t, key, saleBody(none, { metadata: c.metadata }), AUTHORITY);
    expect(r1.statusCode).toBe(400);
    expect(r1.json()).toEqual({ error: SIGNING_ERRORS.authorityNeedsCertificate });
    const r2 = await createTx(t, key, saleBody(missing, { metadata: c.metadata }), AUTHORITY);
    expect(r2.statusCode).toBe(400);
    expect(r2.json()).toEqual({ error: 'certificate not found' });

    expect((await t.request({ method: 'GET', url: '/v1/transactions', key })).json().total).toBe(0);
    await t.worker.drain();
    expect(c.requests().length).toBe(before);
    // The stub (no header) works without a certificate.
    expect((await createTx(t, key, saleBody(none, { metadata: c.metadata }))).statusCode).toBe(201);
  });
});

describe('VERI*FACTU specifics', () => {
  it('flow control: after TiempoEsperaEnvio the next record of the issuer waits, then goes', async () => {
    const s = await scenario(verifactuCase);
    aeat.waitSeconds = 60;
    try {
      const first = await createAuthorityTx(verifactuCase, s);
      expect(await drainAndCollect(verifactuCase)).toHaveLength(1);
      expect((await getTx(t, s.key, first.id)).status).toBe('success');

      const second = await createAuthorityTx(verifactuCase, s);
      expect(await drainAndCollect(verifactuCase)).toEqual([]); // not sent: AEAT asked for 60 s
      // Flow control is not a failure: the record stays pending, no error, no translation,
      // and the deferred attempt does not count against the job's maximum.
      const held = await getTx(t, s.key, second.id);
      expect(held.status).toBe('pending');
      expect(held.response_payload.submit_error).toBeUndefined();
      expect(held.error_message).toBeNull();
      const job = await submitJob(second.id);
      expect(job.status).toBe('pending');
      expect(job.attempt).toBe(0);
      expect(job.run_at.getTime() - clock.now().getTime()).toBe(60_000);

      clock.set(job.run_at);
      expect(await drainAndCollect(verifactuCase)).toHaveLength(1);
      expect((await getTx(t, s.key, second.id)).status).toBe('success');
      expect(aeat.held(s.nif).map((h) => h.id.NumSerieFactura)).toEqual(['A-1', 'A-2']);
    } finally {
      aeat.waitSeconds = 0;
    }
  });

  /*
   * VERI*FACTU records form one chain per issuer, and AEAT takes them in generation order
   * only: each RegistroAnterior must name the last record it holds (FORMATS.md §2.4; the
   * fake answers 1180 otherwise, a non-retriable rejection). The submit jobs of a chain are
   * an ordered queue (store/repos/jobs-repo.ts): record 2 waits while record 1 waits for its retry.
   * Deterministic: record 1 meets an AEAT technical error (3501, retried in 2 s); record 2,
   * created meanwhile, must not overtake it.
   */
  it('a record is never sent before the record it chains to (an AEAT technical error on one record holds the next)', async () => {
    const s = await scenario(verifactuCase);
    verifactuCase.reject(verifactuCase.retriable.code, verifactuCase.retriable.message);
    let first: Record<string, any>;
    try {
      first = await createAuthorityTx(verifactuCase, s);
      await t.worker.drain();
      expect((await getTx(t, s.key, first.id)).status).toBe('failed');
    } finally {
      verifactuCase.normal();
    }
    const second = await createAuthorityTx(verifactuCase, s);
    await t.worker.drain();
    clock.set((await submitJob(first.id)).run_at);
    await t.worker.drain();
    const statuses = [(await getTx(t, s.key, first.id)).status, (await getTx(t, s.key, second.id)).status];
    expect(statuses).toEqual(['success', 'success']);
    expect(aeat.held(s.nif).map((h) => h.id.NumSerieFactura)).toEqual(['A-1', 'A-2']);
  });
  /*
   * An annulment that reached AEAT but whose answer was lost: sent again, AEAT answers 3001
   * ("ya ha sido dado de baja"): it holds exactly what the record asks for. That is the
   * annulment's duplicate (as 3000 is the alta's, TicketBAI 019 and LROE B4_2000006 the
   * annulments'): success, and the original cancelled; not a rejection that leaves the
   * original standing and dead-letters the cancellation.
   */
  it('an annulment sent again after a lost answer (AEAT 3001): success, marked duplicate; the original becomes cancelled', async () => {
    const s = await scenario(verifactuCase);
    const original = await createAuthorityTx(verifactuCase, s);
    await t.worker.drain();
    expect((await getTx(t, s.key, original.id)).status).toBe('success');
    const res = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key: s.key, payload: { reason: 'error' } });
    expect(res.statusCode, res.body).toBe(201);
    const cancellation = res.json();

    // The annulment reaches AEAT, whose answer never comes back to us.
    const record = (await fiscalRecord(s.key, cancellation.id)).replace(/^<\?xml[^>]*>/, '');
    const early = await postAsClient(`${aeat.url}${VERIFACTU_PATH}`, submissionEnvelope({ nif: s.nif, nombreRazon: 'Ejemplo Madrid SL' }, [record]),
      { certPem: s.cert.cert.certPem, keyPem: s.cert.cert.keyPem, caPem: aeat.caPem }, 'text/xml; charset=utf-8');
    expect(early.status).toBe(200);
    expect(tagText(early.body, 'tikR:EstadoRegistro')).toBe('Correcto');

    const reqs = await drainAndCollect(verifactuCase);
    expect(reqs).toHaveLength(1);
    expect(tagText(aeat.responses.at(-1)!, 'tikR:CodigoErrorRegistro')).toBe('3001');
    const done = await getTx(t, s.key, cancellation.id);
    expect(done.status).toBe('success');
    expect(done.response_payload.duplicate).toBe(true);
    expect(done.response_payload.submit_error).toBeUndefined();
    expect(done.response_payload.authority).toMatchObject({ EstadoRegistro: 'Incorrecto', CodigoErrorRegistro: '3001' });
    // No CSV in a refusal: the annulment's fiscal_id stays null, and the warning says why.
    expect(done.fiscal_id).toBeNull();
    expect(done.response_payload.warnings).toEqual([expect.stringMatching(/^3001: AEAT already holds this record\. .*this answer sets no fiscal_id\.$/)]);
    expect(await submitJob(cancellation.id)).toMatchObject({ status: 'completed', attempt: 1 });
    expect((await getTx(t, s.key, original.id))).toMatchObject({ status: 'cancelled', cancellation_transaction_id: cancellation.id });
    // AEAT holds one annulment.
    expect(aeat.held(s.nif).map((h) => h.type)).toEqual(['Alta', 'Anulacion']);
  });

  /** Sends our stored record to AEAT as another client would: AEAT registers it, and its answer never reaches the transaction. */
  async function lostAnswer(s: Scenario, id: string): Promise<void> {
    const record = (await fiscalRecord(s.key, id)).replace(/^<\?xml[^>]*>/, '');
    const early = await postAsClient(`${aeat.url}${VERIFACTU_PATH}`, submissionEnvelope({ nif: s.nif, nombreRazon: 'Ejemplo Madrid SL' }, [record]),
      { certPem: s.cert.cert.certPem, keyPem: s.cert.cert.keyPem, caPem: aeat.caPem }, 'text/xml; charset=utf-8');
    expect(early.status).toBe(200);
    expect(tagText(early.body, 'tikR:EstadoRegistro')).toBe('Correcto');
  }

  /*
   * AEAT's CSV belongs to a submission ("CSV asociado al envío", RespuestaSuministro.xsd), and
   * the one that registered a record sent again is the earlier one, whose answer was lost.
   * Its duplicate answer carries no CSV, and nothing returns it later (the consultation
   * service, RespuestaConsultaLR.xsd, gives a record's IdPeticion, no CSV): fiscal_id stays
   * null, and response_payload.warnings says why, naming the submission that registered it.
   */
  it('a sale sent again after a lost answer (AEAT 3000): success, marked duplicate, fiscal_id null and a warning that says why', async () => {
    const s = await scenario(verifactuCase);
    const created = await createAuthorityTx(verifactuCase, s);
    await lostAnswer(s, created.id);
    const registeredBy = aeat.held(s.nif)[0]!.idPeticion;

    expect(await drainAndCollect(verifactuCase)).toHaveLength(1);
    expect(tagText(aeat.responses.at(-1)!, 'tikR:CodigoErrorRegistro')).toBe('3000');
    expect(tagText(aeat.responses.at(-1)!, 'tikR:CSV')).toBeUndefined();
    const tx = await getTx(t, s.key, created.id);
    expect(tx).toMatchObject({ status: 'success', fiscal_id: null, error_message: null });
    expect(tx.response_payload.duplicate).toBe(true);
    expect(tx.response_payload.authority).toMatchObject({
      EstadoEnvio: 'Incorrecto', CodigoErrorRegistro: '3000', RegistroDuplicado: { IdPeticionRegistroDuplicado: registeredBy, EstadoRegistroDuplicado: 'Correcta' },
    });
    expect(tx.response_payload.warnings).toEqual([
      `3000: AEAT already holds this record, registered by its submission ${registeredBy}. AEAT gives a CSV only in the answer to the submission that registers a record, and neither this answer nor its consultation service returns it: this answer sets no fiscal_id.`,
    ]);
    expect(aeat.held(s.nif)).toHaveLength(1);
  });

  it('a duplicate inside a request that registers other records (ParcialmenteCorrecto): the request\'s CSV is not the duplicate\'s fiscal_id', async () => {
    const s = await scenario(verifactuCase);
    const first = await createAuthorityTx(verifactuCase, s);
    await lostAnswer(s, first.id);
    const second = await createAuthorityTx(verifactuCase, s);

    // One request carries both: A-1 again (3000), A-2 registered.
    expect(await drainAndCollect(verifactuCase)).toHaveLength(1);
    expect(aeat.submissions.at(-1)!.records).toEqual(['Alta A-1', 'Alta A-2']);
    const csv = aeat.submissions.at(-1)!.csv!;
    expect(tagText(aeat.responses.at(-1)!, 'tikR:EstadoEnvio')).toBe('ParcialmenteCorrecto');
    const [dup, ok] = await Promise.all([getTx(t, s.key, first.id), getTx(t, s.key, second.id)]);
    expect(ok).toMatchObject({ status: 'success', fiscal_id: csv });
    expect(dup).toMatchObject({ status: 'success', fiscal_id: null });
    expect(dup.response_payload).toMatchObject({ duplicate: true, authority: { CSV: csv, CodigoErrorRegistro: '3000' } });
    expect(dup.response_payload.warnings).toEqual([expect.stringMatching(/^3000: AEAT already holds this record, registered by its submission \d+\. .*this answer sets no fiscal_id\.$/)]);
  });

  it('3001 on an alta is not a duplicate: the invoice is annulled at AEAT, the alta is refused', async () => {
    const s = await scenario(verifactuCase);
    verifactuCase.reject('3001', 'El registro de facturación ya ha sido dado de baja.');
    try {
      const created = await createAuthorityTx(verifactuCase, s);
      await t.worker.runOnce();
      const tx = await getTx(t, s.key, created.id);
      expect(tx.status).toBe('failed_permanent');
      expect(tx.response_payload.submit_error).toMatchObject({ error_code: '3001' });
      expect(tx.response_payload.duplicate).toBeUndefined();
    } finally {
      verifactuCase.normal();
    }
  });
});

describe('SII specifics', () => {
  it('a void transaction submits the baja of the invoice it names (spec: "SII voiding submits a cancellation record")', async () => {
    const s = await scenario(siiCase);
    // The invoice first (AEAT refuses the baja of an invoice it does not hold: 3002).
    const invoice = await createAuthorityTx(siiCase, s, { invoice_number: 'F-2026-41', issue_date: '02-03-2026' });
    expect(await drainAndCollect(siiCase)).toHaveLength(1);
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${invoice.id}`, key: s.key })).json().status).toBe('success');
    const res = await createTx(t, s.key, saleBody(s.loc, {
      type: 'void', timestamp: clock.now().toISOString(),
      metadata: { original_invoice_number: 'F-2026-41', original_issue_date: '02-03-2026' },
    }), AUTHORITY);
    expect(res.statusCode, res.body).toBe(201);
    const sent = await drainAndCollect(siiCase);
    expect(sent).toHaveLength(1);
    const doc = siiCase.document(sent[0]!);
    expect(doc).toMatch(siiCase.annulmentRoot);
    expect(doc).toContain('<sii:NumSerieFacturaEmisor>F-2026-41</sii:NumSerieFacturaEmisor>');
    expect(doc).toContain('<sii:FechaExpedicionFacturaEmisor>02-03-2026</sii:FechaExpedicionFacturaEmisor>');
    expectSchemaValid(doc, siiCase.xsd.annulment);
    const tx = (await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}`, key: s.key })).json();
    expect(tx.status).toBe('success');
    expect(await fiscalRecord(s.key, tx.id)).toMatch(/^<siiLR:RegistroLRBajaExpedidas /);
  });

  /*
   * A baja sent again after a lost answer: AEAT answers 3001 (already cancelled). The CSV of
   * the first baja is optional in RespuestaExpedidaBajaType; without it the invoice is still
   * off the book, which is what the baja asks for: a duplicate, not a rejection.
   */
  it('a baja answered 3001 (already cancelled) without a CSV: success, marked duplicate; the original becomes cancelled', async () => {
    const s = await scenario(siiCase);
    const original = await createAuthorityTx(siiCase, s);
    await t.worker.drain();
    expect((await getTx(t, s.key, original.id)).status).toBe('success');
    const res = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key: s.key, payload: { reason: 'error' } });
    expect(res.statusCode, res.body).toBe(201);
    const cancellation = res.json();
    sii.setMode({ kind: 'reject', code: '3001', description: 'El registro de facturación ya ha sido dado de baja.' });
    try {
      // The baja, then one consultation for its CSV (this fake's book still holds the invoice
      // as Correcta: it refused the baja by order, so the consultation cannot confirm it).
      expect(await drainAndCollect(siiCase)).toHaveLength(2);
      expect(sii.consultas).toHaveLength(1);
    } finally {
      siiCase.normal();
    }
    const done = await getTx(t, s.key, cancellation.id);
    expect(done.status).toBe('success');
    expect(done.response_payload.duplicate).toBe(true);
    expect(done.response_payload.submit_error).toBeUndefined();
    expect(done.response_payload.authority).toMatchObject({ operation: 'baja', CodigoErrorRegistro: '3001' });
    expect(done.fiscal_id).toBeNull();
    expect(done.response_payload.warnings).toEqual([expect.stringMatching(/^3001: AEAT already holds the annulment of this invoice, and its answer gives no CSV\. AEAT answered that invoice .* is already annulled, but its consultation shows it Correcta\. This answer sets no fiscal_id\.$/)]);
    expect(await submitJob(cancellation.id)).toMatchObject({ status: 'completed', attempt: 1 });
    expect((await getTx(t, s.key, original.id)).status).toBe('cancelled');
  });

  /*
   * SII's duplicate answers (3000 on an alta, 3001 on a baja) may come without the CSV
   * (optional in RespuestaExpedidaType / RespuestaExpedidaBajaType). The client then asks
   * the consultation ConsultaLRFacturasEmitidas once, with the same certificate: its
   * DatosPresentacion carries the CSV of the registered record.
   */
  describe('a duplicate answer without a CSV: the consultation gives it', () => {
    /** Our record's first answer was lost: the transaction and its job back to pending, nothing stored from that answer. */
    async function loseAnswer(id: string): Promise<void> {
      await t.db.query("UPDATE transactions SET status = 'pending', fiscal_id = NULL, response_payload = '{}' WHERE id = $1", [id]);
      // Due by the app's clock (a manual one here), not the database's.
      await t.db.query("UPDATE jobs SET status = 'pending', run_at = $2 WHERE transaction_id = $1 AND kind = 'submit'", [id, new Date(clock.now().getTime() - 1000)]);
    }

    /** An invoice AEAT registered (fiscal_id its CSV), then its answer lost. */
    async function registeredThenLost(s: Scenario, invoiceNumber: string) {
      const created = await createAuthorityTx(siiCase, s, { invoice_number: invoiceNumber });
      await t.worker.drain();
      const first = await getTx(t, s.key, created.id);
      expect(first.status).toBe('success');
      expect(first.fiscal_id).toMatch(/^[A-Z0-9]{16}$/);
      await loseAnswer(created.id);
      return first;
    }

    /** The consultation the fake received: over mutual TLS with the uploaded certificate, schema-valid, for this invoice. */
    function expectConsulta(req: FakeRequest, s: Scenario, numSerie: string): void {
      expect(`${req.method} ${req.path}`).toBe(`POST ${siiCase.paths.alta}`);
      expect(req.clientCert.fingerprint256).toBe(s.cert.fingerprint256);
      const doc = siiBodyContent(req.body.toString('utf8'))!;
      expect(doc).toMatch(/^<siiLRC:ConsultaLRFacturasEmitidas /);
      expect(tagText(doc, 'sii:NIF')).toBe(s.nif);
      expect(tagText(doc, 'sii:NumSerieFacturaEmisor')).toBe(numSerie);
      expectSchemaValid(doc, 'es/sii/ConsultaLR.xsd');
    }

    it('alta answered 3000 without a CSV: success, duplicate, fiscal_id the CSV of the registering submission', async () => {
      const s = await scenario(siiCase);
      const first = await registeredThenLost(s, 'C-1');
      sii.duplicateCsv = false;
      try {
        const reqs = await drainAndCollect(siiCase);
        expect(reqs).toHaveLength(2);
        expectConsulta(reqs[1]!, s, 'C-1');
      } finally {
        sii.duplicateCsv = true;
      }
      const tx = await getTx(t, s.key, first.id);
      expect(tx.status).toBe('success');
      expect(tx.fiscal_id).toBe(first.fiscal_id);
      expect(tx.response_payload.duplicate).toBe(true);
      expect(tx.response_payload.warnings).toBeUndefined();
      expect(tx.response_payload.authority).toMatchObject({
        CodigoErrorRegistro: '3000', CSVRegistrado: null,
        Consulta: { ResultadoConsulta: 'ConDatos', CSV: first.fiscal_id, EstadoRegistro: 'Correcta' },
      });
      expect(await submitJob(first.id)).toMatchObject({ status: 'completed' });
    });

    it('alta answered 3000 without a CSV, the consultation fails: success, fiscal_id null, a warning; asked once', async () => {
      const s = await scenario(siiCase);
      const first = await registeredThenLost(s, 'C-2');
      sii.duplicateCsv = false;
      sii.setConsultaMode({ kind: 'fault', code: '3500', description: 'Error técnico de base de datos', server: true });
      try {
        const reqs = await drainAndCollect(siiCase);
        expect(reqs).toHaveLength(2); // the alta and one consultation: no retry of either
        expectConsulta(reqs[1]!, s, 'C-2');
      } finally {
        sii.duplicateCsv = true;
        sii.setConsultaMode({ kind: 'normal' });
      }
      const tx = await getTx(t, s.key, first.id);
      expect(tx.status).toBe('success');
      expect(tx.fiscal_id).toBeNull();
      expect(tx.response_payload.duplicate).toBe(true);
      expect(tx.response_payload.submit_error).toBeUndefined();
      expect(tx.response_payload.warnings).toEqual([
        "3000: AEAT already holds this invoice, and its answer gives no CSV. The CSV could not be read from AEAT's consultation service (ConsultaLRFacturasEmitidas): SOAP fault env:Server: Codigo[3500].Error técnico de base de datos. This answer sets no fiscal_id.",
      ]);
      expect(tx.response_payload.authority.Consulta).toEqual({ error: 'SOAP fault env:Server: Codigo[3500].Error técnico de base de datos' });
      expect(await submitJob(first.id)).toMatchObject({ status: 'completed' });
    });

    /** An invoice and its cancellation, both accepted; then the cancellation's answer lost. */
    async function cancelledThenLost(s: Scenario, invoiceNumber: string) {
      const original = await createAuthorityTx(siiCase, s, { invoice_number: invoiceNumber });
      await t.worker.drain();
      const res = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key: s.key, payload: { reason: 'error en el importe' } });
      expect(res.statusCode, res.body).toBe(201);
      await t.worker.drain();
      const cancellation = await getTx(t, s.key, res.json().id);
      expect(cancellation.status).toBe('success');
      expect(cancellation.fiscal_id).toBe(sii.cancelled.get(`${s.nif}|${invoiceNumber}|${/<sii:FechaExpedicionFacturaEmisor>([^<]*)</.exec(await fiscalRecord(s.key, original.id))?.[1]}`));
      expect((await getTx(t, s.key, original.id)).status).toBe('cancelled');
      await loseAnswer(cancellation.id);
      return { original, cancellation };
    }

    it('baja answered 3001 without a CSV: success, duplicate, fiscal_id the CSV of the annulment; the original stays cancelled', async () => {
      const s = await scenario(siiCase);
      const { original, cancellation } = await cancelledThenLost(s, 'C-3');
      sii.duplicateCsv = false;
      try {
        const reqs = await drainAndCollect(siiCase);
        expect(reqs).toHaveLength(2);
        expect(siiCase.document(reqs[0]!)).toMatch(siiCase.annulmentRoot);
        expectConsulta(reqs[1]!, s, 'C-3');
      } finally {
        sii.duplicateCsv = true;
      }
      const done = await getTx(t, s.key, cancellation.id);
      expect(done.status).toBe('success');
      expect(done.fiscal_id).toBe(cancellation.fiscal_id);
      expect(done.response_payload.duplicate).toBe(true);
      expect(done.response_payload.warnings).toBeUndefined();
      expect(done.response_payload.authority).toMatchObject({ operation: 'baja', CodigoErrorRegistro: '3001', Consulta: { CSV: cancellation.fiscal_id, EstadoRegistro: 'Anulada' } });
      expect((await getTx(t, s.key, original.id)).status).toBe('cancelled');
    });

    it('baja answered 3001 without a CSV, the consultation unavailable: success, fiscal_id null, a warning', async () => {
      const s = await scenario(siiCase);
      const { original, cancellation } = await cancelledThenLost(s, 'C-4');
      sii.duplicateCsv = false;
      sii.setConsultaMode({ kind: 'unavailable' });
      try {
        const reqs = await drainAndCollect(siiCase);
        expect(reqs).toHaveLength(2);
        expectConsulta(reqs[1]!, s, 'C-4');
      } finally {
        sii.duplicateCsv = true;
        sii.setConsultaMode({ kind: 'normal' });
      }
      const done = await getTx(t, s.key, cancellation.id);
      expect(done.status).toBe('success');
      expect(done.fiscal_id).toBeNull();
      expect(done.response_payload.duplicate).toBe(true);
      expect(done.response_payload.warnings).toEqual([
        expect.stringMatching(/^3001: AEAT already holds the annulment of this invoice, and its answer gives no CSV\. The CSV could not be read from AEAT's consultation service \(ConsultaLRFacturasEmitidas\): HTTP 503 without a readable answer/),
      ]);
      expect(await submitJob(cancellation.id)).toMatchObject({ status: 'completed' });
      expect((await getTx(t, s.key, original.id)).status).toBe('cancelled');
    });
  });

  it('3001 on an alta is a rejection (only a baja is satisfied by an invoice already off the book)', async () => {
    const s = await scenario(siiCase);
    sii.setMode({ kind: 'reject', code: '3001', description: 'El registro de facturación ya ha sido dado de baja.' });
    try {
      const created = await createAuthorityTx(siiCase, s);
      await t.worker.runOnce();
      const tx = await getTx(t, s.key, created.id);
      expect(tx.status).toBe('failed_permanent');
      expect(tx.response_payload.submit_error).toMatchObject({ error_code: '3001' });
    } finally {
      siiCase.normal();
    }
  });

  it('a void without the invoice it withdraws is a 400', async () => {
    const s = await scenario(siiCase);
    const res = await createTx(t, s.key, saleBody(s.loc, { type: 'void', metadata: { original_invoice_number: 'F-2026-41' } }), AUTHORITY);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'original_invoice_number and original_issue_date are required in metadata for an SII void (the baja names the invoice it withdraws)' });
  });
});

describe('certificates for Spain', () => {
  /*
   * Non-ASCII passwords (a Spanish one with ñ or an accent): forge derives the MAC key from
   * the BMPString but PBES2 keys from one byte per character, where OpenSSL uses UTF-8;
   * readPkcs12 opens the bags again with the UTF-8 bytes (src/certificates/pkcs12.ts).
   */
  const PASSWORD = 'contraseña-año';
  const upload = async (kind: 'modern' | '3des') => {
    const { key } = await t.signup();
    const nif = freshNif();
    const { payload, headers } = uploadForm({ certificateId: `c-${kind}`, password: PASSWORD, file: exportP12(generateCert({ subject: `/C=ES/serialNumber=IDCES-${nif}/CN=Ñandú` }), PASSWORD, kind) });
    return t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
  };

  it('a legacy (3DES) PKCS#12 with a non-ASCII password uploads', async () => {
    const res = await upload('3des');
    expect(res.statusCode, res.body).toBe(201);
  });

  it('a modern (OpenSSL 3 default, PBES2/AES) PKCS#12 with a non-ASCII password uploads', async () => {
    const res = await upload('modern');
    expect(res.statusCode, res.body).toBe(201);
  });

  it('a wrong non-ASCII password is still refused (the MAC decides)', async () => {
    const { key } = await t.signup();
    const file = exportP12(generateCert({ subject: `/C=ES/serialNumber=IDCES-${freshNif()}/CN=Ñandú` }), PASSWORD, 'modern');
    const { payload, headers } = uploadForm({ certificateId: 'c-wrong', password: 'contraseña-añp', file });
    const res = await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid PKCS#12 file or wrong password' });
  });
});
