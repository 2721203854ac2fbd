import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { SELLER_CODICE_FISCALE_INVALID } from '../../src/countries/it-sdi/metadata.ts';
import { startFakeSdi, SDI_FAKE_PATH, FATTURAPA_FSM10_XSD, FATTURAPA_XSD, type FakeSdi } from '../support/fake-sdi.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';
import { createTx, getTx, locationBody, saleBody, saleMetadata } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';

/*
 * Italy SDI through the API against the fake SdI (real HTTPS on 127.0.0.1 that demands
 * a TLS client certificate and validates the FatturaPA against the 1.2.2 XSD): with a
 * test key and `X-Svc-Sandbox: authority`, the worker sends the stored FatturaPA with
 * SdICoop SdIRiceviFile, using the location's uploaded certificate; SdI's
 * IdentificativoSdI becomes `fiscal_id_upstream` and the transaction waits (`pending`)
 * for the notification.
 */

let t: TestApp;
let clock: ManualClock;
let fake: FakeSdi;

beforeAll(async () => {
  fake = await startFakeSdi();
  clock = new ManualClock(new Date());
  t = await startTestApp({
    clock,
    random: () => 0.5,
    config: { authorityBaseUrls: { 'it-sdi:test': fake.url }, authorityCa: fake.caPem },
  });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const AUTHORITY = { 'x-svc-sandbox': 'authority' } as const;
const PASSWORD = 'password-del-certificato';

interface Scenario {
  key: string;
  loc: string;
  fingerprint256: string;
}

/** A fresh account, its uploaded certificate, and an it-sdi location naming it. */
async function scenario(config: Record<string, unknown> = {}): Promise<Scenario> {
  const { key } = await t.signup();
  const certificateId = `cert-it-${crypto.randomUUID().slice(0, 8)}`;
  const cert = generateCert({ subject: '/C=IT/serialNumber=TINIT-01234567897/CN=Trasmittente Test', days: 3650 });
  const { payload, headers } = uploadForm({ certificateId, password: PASSWORD, file: exportP12(cert, PASSWORD) });
  const up = await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
  expect(up.statusCode, up.body).toBe(201);
  const body = locationBody('it-sdi') as { country_config: Record<string, unknown> };
  const res = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { ...body, country_config: { ...body.country_config, certificate_id: certificateId, ...config } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { key, loc: res.json().id, fingerprint256: new crypto.X509Certificate(cert.certPem).fingerprint256 };
}

async function createAuthorityTx(s: Scenario, over: Record<string, unknown> = {}) {
  const res = await createTx(t, s.key, saleBody(s.loc, { timestamp: clock.now().toISOString(), metadata: saleMetadata['it-sdi'], customer_context: { codice_fiscale: 'RSSMRA85T10A562S' }, ...over }), AUTHORITY);
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().status).toBe('pending');
  return res.json() as Record<string, any>;
}

async function submitJob(id: string) {
  const { rows } = await t.db.query<{ status: string; attempt: number; run_at: Date }>(
    `SELECT status, attempt, run_at FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [id]);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

async function drainAndCollect() {
  const before = fake.requests.length;
  const received = fake.received.length;
  await t.worker.drain();
  return { requests: fake.requests.slice(before), received: fake.received.slice(received) };
}

/** Sent and taken: pending, awaiting the notification, IdentificativoSdI kept as fiscal_id_upstream. */
async function expectTaken(s: Scenario, id: string, fileName: string, got: Awaited<ReturnType<typeof drainAndCollect>>) {
  expect(got.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${SDI_FAKE_PATH}`]);
  expect(got.requests[0]!.clientCert.fingerprint256).toBe(s.fingerprint256);
  const file = got.received[0]!;
  expect(file.nomeFile).toBe(fileName);
  expect(file.identificativoSdI).toMatch(/^[0-9]{1,12}$/);
  const xsd = file.file.startsWith('<p:FatturaElettronicaSemplificata') ? FATTURAPA_FSM10_XSD : FATTURAPA_XSD;
  if (HAVE_SCHEMAS) expect(xsdValidate(file.file, xsd).ok).toBe(true);
  else console.warn(`sdi-authority: ${SCHEMAS_MISSING_MESSAGE}`);
  const tx = await getTx(t, s.key, id);
  expect(tx.status).toBe('pending');
  expect(tx.fiscal_id).toBe(fileName);
  expect(tx.fiscal_id_upstream).toBe(file.identificativoSdI);
  expect(tx.response_payload).toMatchObject({
    authority: { IdentificativoSdI: file.identificativoSdI, DataOraRicezione: expect.any(String) },
    awaiting_notification: true,
  });
  expect(tx.response_payload.submit_error).toBeUndefined();
  return tx;
}

describe('it-sdi through the API with X-Svc-Sandbox: authority (SdICoop SdIRiceviFile)', () => {
  it('taken by SdI: pending, fiscal_id_upstream = IdentificativoSdI, the answer kept; sent over mutual TLS with the uploaded certificate', async () => {
    const s = await scenario();
    const created = await createAuthorityTx(s);
    expect(created.fiscal_id).toMatch(/^IT01234567897_[0-9A-Z]{5}\.xml$/);
    await expectTaken(s, created.id, created.fiscal_id, await drainAndCollect());
    expect(await submitJob(created.id)).toMatchObject({ status: 'completed', attempt: 1 });
  });

  it('a buyer without partita IVA or codice fiscale: 400 on the way to SdI (it would discard it, 00417), nothing stored or sent; the stub still takes it', async () => {
    const s = await scenario();
    const body = saleBody(s.loc, { timestamp: clock.now().toISOString(), metadata: saleMetadata['it-sdi'] });
    const refused = await createTx(t, s.key, body, AUTHORITY);
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().error).toBe(
      'customer_context.tax_id (partita IVA) or customer_context.codice_fiscale is required for SDI invoices sent to the SdI test service (X-Svc-Sandbox: authority): SdI refuses a buyer without either (00417)',
    );
    const stored = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE location_id = $1', [s.loc]);
    expect(stored.rows[0]!.n).toBe(0);
    expect((await drainAndCollect()).received).toHaveLength(0);
    // The sandbox stub (no header) keeps the spec's minimal request.
    const stub = await createTx(t, s.key, body);
    expect(stub.statusCode, stub.body).toBe(201);
  });

  it('a seller codice fiscale with a wrong check digit (registration takes the spec\'s 11-16 alphanumerics): 400 on the way to SdI (00302), the stub still takes it; PATCHed right, SdI takes it', async () => {
    // 01234567897 is the fixture's partita IVA (valid); ...98 has the wrong check digit.
    const s = await scenario({ codice_fiscale: '01234567898' });
    const body = saleBody(s.loc, { timestamp: clock.now().toISOString(), metadata: saleMetadata['it-sdi'], customer_context: { codice_fiscale: 'RSSMRA85T10A562S' } });
    const refused = await createTx(t, s.key, body, AUTHORITY);
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().error).toBe(SELLER_CODICE_FISCALE_INVALID);
    const stored = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE location_id = $1', [s.loc]);
    expect(stored.rows[0]!.n).toBe(0);
    expect((await createTx(t, s.key, body)).statusCode).toBe(201);
    const loc = (await t.request({ method: 'GET', url: `/v1/locations/${s.loc}`, key: s.key })).json();
    const patched = await t.request({ method: 'PATCH', url: `/v1/locations/${s.loc}`, key: s.key, payload: { country_config: { ...loc.country_config, codice_fiscale: '01234567897' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    const taken = await createAuthorityTx(s);
    await expectTaken(s, taken.id, taken.fiscal_id, await drainAndCollect());
  });

  it('a fattura semplificata (TD07): the FSM10 file goes the same way, under the same file name, and SdI takes it', async () => {
    const s = await scenario();
    const created = await createAuthorityTx(s, {
      customer_context: { codice_fiscale: 'RSSMRA85T10A562S' },
      metadata: { ...saleMetadata['it-sdi'], tipo_documento: 'TD07' },
    });
    expect(created.fiscal_id).toMatch(/^IT01234567897_[0-9A-Z]{5}\.xml$/);
    const got = await drainAndCollect();
    expect(got.received[0]!.file.startsWith('<p:FatturaElettronicaSemplificata ')).toBe(true);
    expect(got.received[0]!.file).toContain('<FormatoTrasmissione>FSM10</FormatoTrasmissione>');
    await expectTaken(s, created.id, created.fiscal_id, got);
    expect(await submitJob(created.id)).toMatchObject({ status: 'completed', attempt: 1 });
  });

  it('EI02 (service unavailable): failed, retried with backoff, taken on the retry', async () => {
    const s = await scenario();
    fake.setMode('unavailable');
    let created: Record<string, any>;
    try {
      created = await createAuthorityTx(s);
      const got = await drainAndCollect();
      expect(got.requests).toHaveLength(1);
      const tx = await getTx(t, s.key, created.id);
      expect(tx.status).toBe('failed');
      expect(tx.response_payload.submit_error).toMatchObject({ error_code: 'EI02' });
      expect(tx.fiscal_id_upstream).toBeNull();
      const job = await submitJob(created.id);
      expect(job).toMatchObject({ status: 'failed', attempt: 1 });
      clock.set(job.run_at);
    } finally {
      fake.setMode('normal');
    }
    await expectTaken(s, created.id, created.fiscal_id, await drainAndCollect());
    expect(await submitJob(created.id)).toMatchObject({ status: 'completed', attempt: 2 });
  });

  it('an invalid invoice (the stored file altered) refused by the fake: failed_permanent, the failure recorded, not retried', async () => {
    if (!HAVE_SCHEMAS) return console.warn(`sdi-authority: ${SCHEMAS_MISSING_MESSAGE}`);
    const s = await scenario();
    const created = await createAuthorityTx(s);
    const upd = await t.db.query(
      `UPDATE fiscal_records SET body = replace(body, '<TipoDocumento>TD01</TipoDocumento>', '<TipoDocumento>TD99</TipoDocumento>') WHERE transaction_id = $1`,
      [created.id]);
    expect(upd.rowCount).toBe(1);
    const got = await drainAndCollect();
    expect(got.requests).toHaveLength(1);
    expect(got.received[0]!.identificativoSdI).toBeUndefined();
    const tx = await getTx(t, s.key, created.id);
    expect(tx.status).toBe('failed_permanent');
    expect(tx.response_payload.submit_error).toMatchObject({ error_code: 'SOAP_FAULT' });
    expect(tx.fiscal_id_upstream).toBeNull();
    expect(await submitJob(created.id)).toMatchObject({ status: 'dead', attempt: 1 });
    clock.advance(86_400_000);
    expect((await drainAndCollect()).requests).toEqual([]);
  });

  it.each(['outage', 'reset'] as const)('%s (HTTP 503, connection cut): retried, taken once SdI is back', async (mode) => {
    const s = await scenario();
    fake.setMode(mode);
    let created: Record<string, any>;
    try {
      created = await createAuthorityTx(s);
      const got = await drainAndCollect();
      expect(got.requests).toHaveLength(1);
      const tx = await getTx(t, s.key, created.id);
      expect(tx.fiscal_id_upstream).toBeNull();
      expect(tx.status).toBe('failed');
      expect(tx.response_payload.submit_error).toMatchObject({ error_code: expect.any(String) });
      const job = await submitJob(created.id);
      expect(job).toMatchObject({ status: 'failed', attempt: 1 });
      clock.set(job.run_at);
    } finally {
      fake.setMode('normal');
    }
    await expectTaken(s, created.id, created.fiscal_id, await drainAndCollect());
    expect(await submitJob(created.id)).toMatchObject({ status: 'completed', attempt: 2 });
  });
});
