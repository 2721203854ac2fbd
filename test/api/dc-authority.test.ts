import crypto from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { documentoCommerciale } from '../../src/countries/it-dc/index.ts';
import { DC_POLL_AFTER_SECONDS, DC_POLL_ATTEMPTS, DC_POLL_HORIZON_SECONDS } from '../../src/countries/it-dc/response.ts';
import { startFakeAdeDocuments, ADE_DOCUMENTS_PATH, DCL_XSD, type FakeAdeDocuments } from '../support/fake-ade-documents.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';
import { createTx, getTx, locationBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, xsdValidate } from '../support/xml-tools.ts';
import { toSigningKey } from '../../src/certificates/signing-key.ts';

/*
 * Italy Documento Commerciale through the API against the fake AdE (real HTTPS on
 * 127.0.0.1 demanding a client certificate, validating each document against the
 * DocCommercialiLotteria XSD and checking its seal with xmlsec1): with a test key and
 * `X-Svc-Sandbox: authority` the worker sends the sealed document with the location's
 * seal certificate; AdE's IdOperazione becomes `fiscal_id_upstream`, the transaction
 * stays `pending` and a poll job fetches the result.
 */

let t: TestApp;
let clock: ManualClock;
let fake: FakeAdeDocuments;

beforeAll(async () => {
  fake = await startFakeAdeDocuments();
  clock = new ManualClock(new Date());
  t = await startTestApp({
    clock,
    random: () => 0.5,
    config: { authorityBaseUrls: { 'it-dc:test': fake.url }, authorityCa: fake.caPem },
  });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());

const AUTHORITY = { 'x-svc-sandbox': 'authority' } as const;
const PASSWORD = 'password-del-sigillo';

interface Scenario {
  key: string;
  loc: string;
  certPem: string;
  keyPem: string;
}

/** A fresh account, its uploaded seal certificate, and a DC location naming it. */
async function scenario(): Promise<Scenario> {
  const { key } = await t.signup();
  const certificateId = `seal-${crypto.randomUUID().slice(0, 8)}`;
  const cert = generateCert({ subject: '/C=IT/O=Bar Milano Srl/CN=Sigillo Bar Milano', days: 3650 });
  const { payload, headers } = uploadForm({ certificateId, password: PASSWORD, file: exportP12(cert, PASSWORD) });
  const up = await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
  expect(up.statusCode, up.body).toBe(201);
  const body = locationBody('it-dc') as { country_config: Record<string, unknown> };
  const res = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { ...body, country_config: { ...body.country_config, seal_certificate_id: certificateId } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { key, loc: res.json().id, certPem: cert.certPem, keyPem: cert.keyPem };
}

const ITEMS = [
  { description: 'Caffè', quantity: 2, unit_price: 100, tax_rate: 10, tax_amount: 20, total_amount: 220 },
  { description: 'Acqua', quantity: 1, unit_price: 100, tax_rate: 22, tax_amount: 22, total_amount: 122 },
];
const sale = (s: Scenario, metadata: Record<string, unknown> = {}) => ({
  location_id: s.loc, timestamp: clock.now().toISOString(), currency: 'EUR', payment_method: 'cash',
  items: ITEMS, pretax_amount: 300, tax_amount: 42, total_amount: 342, metadata,
});

async function createAuthorityTx(s: Scenario, metadata: Record<string, unknown> = {}) {
  const res = await createTx(t, s.key, sale(s, metadata), AUTHORITY);
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().status).toBe('pending');
  return res.json() as Record<string, any>;
}

/** Sends what is due, then lets the poll wait pass and asks for the result. */
async function sendThenPoll() {
  await t.worker.drain();
  clock.advance(DC_POLL_AFTER_SECONDS * 1000);
  await t.worker.drain();
}

const jobs = async (id: string) =>
  (await t.db.query<{ kind: string; status: string; attempt: number }>(
    'SELECT kind, status, attempt FROM jobs WHERE transaction_id = $1 ORDER BY created_at, kind', [id])).rows;

describe('Documento Commerciale against the fake AdE', () => {
  it('a sale: the sealed document is sent with the seal certificate, taken (pending, IdOperazione), then polled to success', async () => {
    const s = await scenario();
    const tx = await createAuthorityTx(s);
    expect(tx.fiscal_id).toBe('0001-0001');
    await t.worker.drain();
    const sent = await getTx(t, s.key, tx.id);
    expect(sent).toMatchObject({ status: 'pending', response_payload: { awaiting_result: true } });
    const [doc] = [...fake.documents.values()];
    expect(sent.fiscal_id_upstream).toBe(doc!.idOperazione);
    expect(doc!.numero).toBe('0001-0001');
    // The channel's client certificate is the seal certificate.
    const post = fake.requests.find((r) => r.method === 'POST' && r.path === ADE_DOCUMENTS_PATH)!;
    expect(post.clientCert.fingerprint256).toBe(new crypto.X509Certificate(s.certPem).fingerprint256);
    if (HAVE_SCHEMAS) expect(xsdValidate(doc!.xml, DCL_XSD).ok).toBe(true);

    clock.advance(DC_POLL_AFTER_SECONDS * 1000);
    await t.worker.drain();
    const done = await getTx(t, s.key, tx.id);
    expect(done).toMatchObject({ status: 'success', fiscal_id: '0001-0001', fiscal_id_upstream: doc!.idOperazione });
    expect(done.response_payload.authority ?? done.response_payload).toMatchObject({ Esito: 'AC' });
    // The record as sent.
    const rec = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}/fiscal-record`, key: s.key });
    expect(rec.statusCode).toBe(200);
    expect(rec.headers['content-type']).toMatch(/^application\/xml/);
    expect(rec.body).toBe(doc!.xml);
  });

  it('the register\'s chain: each document names the previous one\'s fingerprint; numbers count on', async () => {
    const s = await scenario();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createAuthorityTx(s)).id as string);
    await sendThenPoll();
    const bodies = await Promise.all(ids.map(async (id) => (await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key: s.key })).body));
    const sigDigest = (xml: string) =>
      crypto.createHash('sha256').update(Buffer.from(/<ds:SignatureValue[^>]*>([^<]+)</.exec(xml)![1]!, 'base64')).digest('hex');
    expect(bodies.map((b) => /<NumeroProgressivo>([^<]+)</.exec(b)![1])).toEqual(['0001-0001', '0001-0002', '0001-0003']);
    expect(bodies[0]).not.toContain('<fc:Previous>');
    expect(bodies[1]).toContain(`<fc:Previous>${sigDigest(bodies[0]!)}</fc:Previous>`);
    expect(bodies[2]).toContain(`<fc:Previous>${sigDigest(bodies[1]!)}</fc:Previous>`);
    for (const id of ids) expect((await getTx(t, s.key, id)).status).toBe('success');
  });

  it('a result SC: failed with the spec code 0200 and AdE\'s errors kept', async () => {
    const s = await scenario();
    fake.rejectNumber('0001-0001', [{ codice: '00308', descrizione: 'Dati di pagamento incoerenti' }]);
    const tx = await createAuthorityTx(s);
    await sendThenPoll();
    const failed = await getTx(t, s.key, tx.id);
    expect(failed.status).toBe('failed');
    expect(failed.response_payload.submit_error).toMatchObject({ error_code: '0200' });
    expect(JSON.stringify(failed.response_payload)).toContain('00308');
  });

  it('a result not ready yet: still pending after a poll, success on a later one', async () => {
    const s = await scenario();
    fake.pendingPolls(1);
    const tx = await createAuthorityTx(s);
    await sendThenPoll();
    expect((await getTx(t, s.key, tx.id))).toMatchObject({ status: 'pending', response_payload: { awaiting_result: true } });
    expect((await jobs(tx.id)).find((j) => j.kind === 'poll_result')).toMatchObject({ attempt: 1 });
    expect([...fake.documents.values()][0]!.polls).toBe(1);
    clock.advance(DC_POLL_AFTER_SECONDS * 1000);
    await t.worker.drain();
    expect((await getTx(t, s.key, tx.id)).status).toBe('success');
  });

  it('a result that takes long: polled with growing waits for 48 h (still pending after a day), then failed_permanent with a dead letter', async () => {
    const s = await scenario();
    fake.pendingPolls(100_000);
    const tx = await createAuthorityTx(s);
    const sentAt = clock.now().getTime();
    await t.worker.drain();
    const pollJob = async () =>
      (await t.db.query<{ status: string; attempt: number; max_attempts: number; run_at: Date }>(
        `SELECT status, attempt, max_attempts, run_at FROM jobs WHERE transaction_id = $1 AND kind = 'poll_result'`, [tx.id])).rows[0]!;
    expect((await pollJob()).max_attempts).toBe(DC_POLL_ATTEMPTS);
    const waits: number[] = [];
    let dayChecked = false;
    for (let i = 0; i < 200; i++) {
      const job = await pollJob();
      if (job.status === 'dead') break;
      // A day after the send AdE may still answer: the document is still waiting for it.
      if (!dayChecked && job.run_at.getTime() - sentAt > 24 * 3600_000) {
        expect((await getTx(t, s.key, tx.id)).status).toBe('pending');
        dayChecked = true;
      }
      waits.push(job.run_at.getTime() - clock.now().getTime());
      clock.set(job.run_at);
      await t.worker.drain();
    }
    expect(dayChecked).toBe(true);
    expect([...fake.documents.values()][0]!.polls).toBe(DC_POLL_ATTEMPTS);
    // 60 s at first, then growing, never more than an hour apart.
    expect(waits.slice(0, 10).every((w) => w === 60_000)).toBe(true);
    expect(Math.max(...waits)).toBe(3600_000);
    const failed = await getTx(t, s.key, tx.id);
    expect(failed).toMatchObject({ status: 'failed_permanent', response_payload: { submit_error: { error_code: 'result_not_available' } } });
    expect(new Date(failed.updated_at).getTime() - sentAt).toBeGreaterThanOrEqual(DC_POLL_HORIZON_SECONDS * 1000);
    const dead = await t.db.query<{ type: string }>(`SELECT type FROM events WHERE data->>'transaction_id' = $1 AND type = 'fiscalization.dead_letter'`, [tx.id]);
    expect(dead.rows).toHaveLength(1);
  }, 60_000);

  it('429 and an outage are retried (0429, 0500); once AdE answers the document goes through', async () => {
    const s = await scenario();
    fake.setMode('rateLimited');
    const tx = await createAuthorityTx(s);
    await t.worker.drain();
    // `failed` with a retry scheduled (the spec: failed → retried with backoff).
    let row = await getTx(t, s.key, tx.id);
    expect(row.status).toBe('failed');
    expect(row.response_payload.submit_error).toMatchObject({ error_code: '0429' });
    fake.setMode('outage');
    clock.advance(3600_000);
    await t.worker.drain();
    row = await getTx(t, s.key, tx.id);
    expect(row.status).toBe('failed');
    expect(row.response_payload.submit_error).toMatchObject({ error_code: '0500' });
    expect((await jobs(tx.id)).find((j) => j.kind === 'submit')).toMatchObject({ attempt: 2 });
    fake.setMode('normal');
    clock.advance(3600_000);
    await sendThenPoll();
    expect((await getTx(t, s.key, tx.id)).status).toBe('success');
  });

  it('403: the certificate is not authorised: failed at once with 0403', async () => {
    const s = await scenario();
    fake.setMode('unauthorized');
    const tx = await createAuthorityTx(s);
    await t.worker.drain();
    const failed = await getTx(t, s.key, tx.id);
    expect(failed.status).toBe('failed');
    expect(failed.response_payload.submit_error).toMatchObject({ error_code: '0403' });
  });

  it('cancel: a documento di annullo, the next number of the register, naming the cancelled document; sent and polled too', async () => {
    const s = await scenario();
    const tx = await createAuthorityTx(s);
    await sendThenPoll();
    const res = await t.request({ method: 'POST', url: `/v1/transactions/${tx.id}/cancel`, key: s.key, headers: AUTHORITY, payload: {} });
    expect(res.statusCode, res.body).toBe(201);
    const cancel = res.json();
    expect(cancel.fiscal_id).toBe('0001-0002');
    await sendThenPoll();
    const doc = [...fake.documents.values()].find((d) => d.numero === '0001-0002')!;
    expect(doc.xml).toMatch(/<ResoAnnullo><Tipologia>A<\/Tipologia><DataOra>[^<]+<\/DataOra><Progressivo>0001-0001<\/Progressivo><Dispositivo><MatrTrasm>[^<]+<\/MatrTrasm><\/Dispositivo><\/ResoAnnullo>/);
    expect((await getTx(t, s.key, cancel.id)).status).toBe('success');
  });

  it('the same document sent twice (an answer lost on the way) is a duplicate: success, nothing refused', async () => {
    const s = await scenario();
    const tx = await createAuthorityTx(s);
    await t.worker.drain();
    const rec = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}/fiscal-record`, key: s.key });
    const clientKey = toSigningKey({ privateKeyPem: s.keyPem, certificatePem: s.certPem, chainPem: [] }, 'uploaded');
    const again = await documentoCommerciale.submit(
      { transactionId: tx.id, kind: 'record', body: rec.body, contentType: 'application/xml', fiscalId: tx.fiscal_id, tx: {} as never },
      { environment: 'test', mode: 'authority', location: {} as never, now: clock.now(), timeoutMs: 5000, attempt: 2, clientKey, authorityCa: fake.caPem, authorityBaseUrl: fake.url, pacing: { notBefore: async () => null, hold: async () => undefined } },
    );
    expect(again).toMatchObject({ kind: 'duplicate' });
    expect(fake.refusals.map((r) => r.code)).toEqual(['00306']);
  });
});

describe('Documento Commerciale with test keys (the stub answers AdE\'s XML through the same reader)', () => {
  const stubScenario = async () => {
    const { key } = await t.signup();
    const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: locationBody('it-dc') });
    expect(res.statusCode, res.body).toBe(201);
    return { key, loc: res.json().id as string, certPem: '', keyPem: '' };
  };

  it.each([
    ['accept', 'success', null],
    ['reject:0100', 'failed', '0100'],
    ['reject:0403', 'failed', '0403'],
    ['reject:0200', 'failed', '0200'],
    ['reject:00306', 'success', null],
  ] as const)('sandbox_outcome %s → %s', async (outcome, status, code) => {
    const s = await stubScenario();
    const res = await createTx(t, s.key, sale(s, { sandbox_outcome: outcome }));
    expect(res.statusCode, res.body).toBe(201);
    clock.advance(1000);
    await t.worker.drain();
    clock.advance(1000);
    await t.worker.drain();
    const row = await getTx(t, s.key, res.json().id);
    expect(row.status).toBe(status);
    if (code) expect(row.response_payload.submit_error).toMatchObject({ error_code: code });
    // The retry queue tells the same story: a refused document's entry is dead (at the send
    // for 0100/0403, at the result poll for 0200), an accepted one's completed.
    const queue = (await t.request({ method: 'GET', url: '/v1/retry-queue?limit=100', key: s.key })).json().data
      .filter((e: { transaction_id: string }) => e.transaction_id === row.id);
    if (code) expect(queue.filter((e: { status: string }) => e.status === 'dead')).toEqual([expect.objectContaining({ last_error: expect.stringMatching(new RegExp(`^${code}: `)) })]);
    else expect(queue.map((e: { status: string }) => e.status).every((st: string) => st === 'completed')).toBe(true);
    // The stub's record is sealed with the account's sandbox certificate, like a real one.
    const rec = await t.request({ method: 'GET', url: `/v1/transactions/${row.id}/fiscal-record`, key: s.key });
    expect(rec.body).toContain('<ds:SignatureValue');
  });
});
