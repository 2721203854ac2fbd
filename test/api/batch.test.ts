import { PENDING_LROE } from '../../src/countries/es-ticketbai/statuses.ts';
import https from 'node:https';
import zlib from 'node:zlib';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { BatchProcessor } from '../../src/batch/types.ts';
import { ticketBaiIdentity } from '../../src/countries/es-ticketbai/lroe/identity.ts';
import { LROE_DOCUMENTS } from '../../src/countries/es-ticketbai/lroe/request.ts';
import { closeAuthorityConnections } from '../../src/countries/shared/authority-http.ts';
import { scheduleRecurringJobs } from '../../src/runtime.ts';
import { batchTransactionsRepo } from '../../src/store/repos/transactions-repo.ts';
import { startFakeAuthority, type FakeAuthority, type FakeRequest, type FakeResponse } from '../support/fake-authority.ts';
import { startFakeTicketBai, type FakeTicketBai } from '../support/fake-ticketbai.ts';
import { ES_NIF, configs } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm, type GeneratedCert } from '../support/p12.ts';
import { createTx, getTx, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, xsdValidate } from '../support/xml-tools.ts';

/*
 * The batch processors (spec "Batch"): Bizkaia TicketBAI records wait in `pending_batch`
 * and go to Batuz through the LROE (`spain/lroe`), on POST /v1/admin/process-pending or
 * the daily 02:00 UTC job. Stub mode answers per record from `sandbox_outcome`; authority
 * mode talks mutual TLS to the fake Batuz server (test/support/fake-ticketbai.ts), which
 * validates the LROE request and every TicketBAI file in it against the XSDs.
 */

const START = '2026-03-02T10:00:00.000Z';
const CERT_PASSWORD = 'pw';
const CERT_ID = 'lroe_cert';
/** The Batuz test environment's developer NIF (FORMATS.md §1.6): the files name the software's developer. */
const TEST_VENDOR_NIF = 'A99800005';

/** Error lines the apps log (the failure-rate alert is one). */
const logged: Array<{ level: number; msg: string; [k: string]: unknown }> = [];
const captureLog = (): FastifyBaseLogger =>
  pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) }) as unknown as FastifyBaseLogger;

/**
 * A gate in front of the fake Batuz: forwards every request (re-presenting the client
 * certificate), or holds it until released, so a test can look at the records while
 * their batch is in flight.
 */
interface Gate {
  url: string;
  hold(): void;
  release(): void;
  /** Forward the requests to the fake (which processes them) but answer the client 502 instead: the answer is lost. */
  loseAnswers(on: boolean): void;
  /** Resolves when the next request reaches the gate. */
  nextRequest(): Promise<void>;
  close(): Promise<void>;
}

async function startGate(target: FakeTicketBai, client: GeneratedCert): Promise<Gate> {
  let held: { promise: Promise<void>; open: () => void } | null = null;
  let arrived: (() => void) | null = null;
  let losing = false;
  const forward = (req: FakeRequest): Promise<FakeResponse> =>
    new Promise((resolve, reject) => {
      const gzip = String(req.headers['content-encoding'] ?? '').includes('gzip');
      const body = gzip ? zlib.gzipSync(req.body) : req.body;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (v !== undefined && !['host', 'content-length', 'connection', 'transfer-encoding'].includes(k)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      }
      const out = https.request(new URL(req.path, target.url), {
        method: req.method, headers: { ...headers, 'content-length': String(body.length) }, key: client.keyPem, cert: client.certPem, ca: target.caPem,
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const h: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined && !['content-length', 'connection', 'transfer-encoding', 'keep-alive', 'date'].includes(k)) h[k] = Array.isArray(v) ? v.join(', ') : v;
          }
          resolve({ status: res.statusCode ?? 502, headers: h, body: Buffer.concat(chunks) });
        });
      });
      out.on('error', reject);
      out.end(body);
    });
  const authority: FakeAuthority = await startFakeAuthority(async (req) => {
    arrived?.();
    if (held) await held.promise;
    const answer = await forward(req);
    return losing ? { status: 502, headers: { 'content-type': 'text/html' }, body: '<html><body>Bad Gateway</body></html>' } : answer;
  });
  return {
    url: authority.url,
    hold: () => {
      let open!: () => void;
      const promise = new Promise<void>((r) => (open = r));
      held = { promise, open };
    },
    release: () => {
      held?.open();
      held = null;
    },
    nextRequest: () => new Promise<void>((r) => (arrived = r)),
    loseAnswers: (on) => (losing = on),
    close: () => authority.close(),
  };
}

let fake: FakeTicketBai;
let gate: Gate;
let cert: GeneratedCert;
let p12: Buffer;
let clock: ManualClock;
let t: TestApp;

const appConfig = () => ({
  authorityBaseUrls: { 'es-ticketbai:test': gate.url },
  authorityCa: fake.caPem,
  batch: { timeoutMs: 5000 },
});

/**
 * The registered processors reduced to `spain/lroe` (then `o.processors`): this file tests
 * the batch service through LROE, and its counts, stats and schedule are LROE's alone. The
 * other registered processors have their own files (italy/corrispettivi:
 * test/api/corrispettivi.test.ts; france/closures: test/api/france-closures.test.ts).
 */
const onlyLroe = (r: BatchProcessor[]) => r.filter((p) => p.name === 'spain/lroe');

async function startApp(o: { clock: ManualClock; db?: TestApp['db']; processors?: (r: BatchProcessor[]) => BatchProcessor[] }): Promise<TestApp> {
  const processors = (r: BatchProcessor[]) => (o.processors ?? ((x: BatchProcessor[]) => x))(onlyLroe(r));
  const app = await startTestApp({
    clock: o.clock, random: () => 0.5, log: captureLog(), ...(o.db ? { db: o.db } : {}),
    config: { ...appConfig(), batch: { timeoutMs: 5000, processors } },
  });
  // The default software identity is Batuz's test producer (runtime.ts DEFAULT_SOFTWARE):
  // the files carry the developer NIF the TicketBAI schema requires.
  expect(app.rt.software.vendorTaxId).toBe(TEST_VENDOR_NIF);
  return app;
}

beforeAll(async () => {
  fake = await startFakeTicketBai();
  cert = generateCert({ subject: '/C=ES/serialNumber=VATES-B12345674/O=Ejemplo SL/CN=Sello Ejemplo' });
  p12 = exportP12(cert, CERT_PASSWORD);
  gate = await startGate(fake, cert);
  clock = new ManualClock(START);
  t = await startApp({ clock });
});
beforeEach(() => fake.reset());
afterAll(async () => {
  await t?.close();
  await closeAuthorityConnections();
  await gate?.close();
  await fake?.close();
});

// ---- helpers ----------------------------------------------------------------------------

const { certificate_id: _unused, ...bizkaiaStubConfig } = { ...configs.ticketbai, territory: 'bizkaia' };

/**
 * A Bizkaia location: without a certificate (the sandbox certificate signs), or with the
 * uploaded one. A natural person's NIF (Modelo 140) needs `lroe_epigrafe` (config.ts).
 */
async function bizkaia(app: TestApp, key: string, o: { withCert?: boolean | string; taxId?: string; epigrafe?: string } = {}): Promise<string> {
  const base = o.epigrafe === undefined ? bizkaiaStubConfig : { ...bizkaiaStubConfig, lroe_epigrafe: o.epigrafe };
  const country_config = o.withCert ? { ...base, certificate_id: o.withCert === true ? CERT_ID : o.withCert } : base;
  const res = await app.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { name: 'Taberna Bilbao', country: 'ES', address: 'Kale Nagusia 1, Bilbao', tax_id: o.taxId ?? ES_NIF, country_config },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

async function uploadCert(app: TestApp, key: string, certificateId = CERT_ID): Promise<void> {
  const { payload, headers } = uploadForm({ certificateId, password: CERT_PASSWORD, file: p12 });
  const res = await app.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
  expect(res.statusCode, res.body).toBe(201);
}

const sale = (loc: string, outcome?: string) => saleBody(loc, { metadata: outcome ? { sandbox_outcome: outcome } : {} });

async function created(app: TestApp, key: string, loc: string, o: { outcome?: string; authority?: boolean } = {}) {
  const res = await createTx(app, key, sale(loc, o.outcome), o.authority ? { 'x-svc-sandbox': 'authority' } : {});
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().status).toBe('pending_batch');
  return res.json() as { id: string; fiscal_id: string };
}

const processPending = (app: TestApp, key: string) => app.request({ method: 'POST', url: '/v1/admin/process-pending', key });

async function processed(app: TestApp, key: string) {
  const res = await processPending(app, key);
  expect(res.statusCode, res.body).toBe(200);
  const results = res.json().results;
  expect(results).toHaveLength(1);
  return results[0];
}

async function cancel(app: TestApp, key: string, id: string) {
  const res = await app.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function eventsOf(app: TestApp, txId: string): Promise<string[]> {
  return (await app.db.query<{ type: string }>(`SELECT type FROM events WHERE data->>'transaction_id' = $1 ORDER BY created_at, type`, [txId])).rows.map((r) => r.type);
}

async function fiscalRecord(app: TestApp, key: string, id: string): Promise<string> {
  const res = await app.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode).toBe(200);
  return res.body;
}

/** The LROE requests the fake received: root element and the TicketBAI files they carried, decoded. */
function lroeRequests(): Array<{ root: string; xml: string; files: string[] }> {
  return fake.requests
    .filter((r) => r.path === '/N3B4000M/aurkezpena')
    .map((r) => {
      const xml = r.body.toString('utf8');
      const root = /<(?:[A-Za-z0-9_]+:)?(LROEP[A-Za-z0-9]+Peticion)[\s>]/.exec(xml)![1]!;
      const files = [...xml.matchAll(/<(?:TicketBai|AnulacionTicketBai)>([^<]+)</g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8'));
      return { root, xml, files };
    });
}

const ZERO = { batches_created: 0, batches_retried: 0, accepted: 0, rejected: 0, failed: 0 };

// ---- stub mode --------------------------------------------------------------------------

describe('spain/lroe in the sandbox stub', () => {
  it('Bizkaia records wait in pending_batch (no submission job); process-pending sends them: success, completion events, one batch per issuer', async () => {
    const { key } = await t.signup();
    const company = await bizkaia(t, key);
    const person = await bizkaia(t, key, { taxId: '12345678Z', epigrafe: '6520' });
    const a = await created(t, key, company);
    const b = await created(t, key, company);
    const c = await created(t, key, person);
    expect((await t.request({ method: 'GET', url: '/v1/retry-queue', key })).json().total).toBe(0);

    const result = await processed(t, key);
    expect(result).toEqual({
      processor: 'spain/lroe', batches_created: 2, batches_retried: 0, accepted: 3, rejected: 0, failed: 0, errors_count: 0,
      duration_ms: expect.any(Number), failure_rate: 0, alert_triggered: false, run_id: expect.any(String), status: 'completed',
      registration_numbers: [], errors: [],
    });
    for (const tx of [a, b, c]) {
      const done = await getTx(t, key, tx.id);
      expect(done).toMatchObject({ status: 'success', fiscal_id: tx.fiscal_id, completed_at: START, submitted_at: START, error_message: null });
      expect(done.response_payload.batch).toEqual({ processor: 'spain/lroe', run_id: result.run_id, registration_number: null });
      expect(done.response_payload.authority).toMatchObject({ sandbox: true, outcome: 'accept', identificador_tbai: tx.fiscal_id });
      expect(await eventsOf(t, tx.id)).toEqual(['fiscalization.completed']);
    }
    expect(fake.requests).toHaveLength(0); // the stub answered

    const run = (await t.db.query('SELECT * FROM batch_runs WHERE id = $1', [result.run_id])).rows[0];
    expect(run).toMatchObject({ processor: 'spain/lroe', trigger: 'manual', status: 'completed', environment: 'test', accepted: 3, batches_created: 2 });

    // Nothing left: an empty run.
    expect(await processed(t, key)).toMatchObject({ ...ZERO, errors_count: 0, failure_rate: 0, alert_triggered: false });
  });

  it('sandbox_outcome: reject:<code> → failed_permanent with submit_error, a dead letter and a translation; error / timeout wait for the next run; the alert fires', async () => {
    const { key } = await t.signup();
    const loc = await bizkaia(t, key);
    const ok = await created(t, key, loc);
    const rejected = await created(t, key, loc, { outcome: 'reject:B4_2000020' });
    const busy = await created(t, key, loc, { outcome: 'error:B4_1000004' });
    const slow = await created(t, key, loc, { outcome: 'timeout' });
    logged.length = 0;

    const result = await processed(t, key);
    expect(result).toMatchObject({
      batches_created: 1, batches_retried: 1, accepted: 1, rejected: 1, failed: 2, errors_count: 2, failure_rate: 0.75, alert_triggered: true,
    });
    expect(result.errors).toEqual([
      { code: 'B4_1000004', message: expect.any(String), issuer_tax_id: ES_NIF, kind: 'alta', records: 1 },
      { code: 'timeout', message: expect.stringContaining('sandbox'), issuer_tax_id: ES_NIF, kind: 'alta', records: 1 },
    ]);
    // The spec has no event for the alert: it is logged as an error.
    expect(logged.filter((l) => l.msg === 'batch failure rate above the alert threshold')).toEqual([
      expect.objectContaining({ level: 50, processor: 'spain/lroe', failure_rate: 0.75, threshold: 0.2 }),
    ]);

    expect((await getTx(t, key, ok.id)).status).toBe('success');
    const failed = await getTx(t, key, rejected.id);
    // Refused as it is, and no batch sends it again: failed_permanent and its dead letter
    // (a `failed` record is one the spec says is being retried).
    // No AI configured: the message is written with the failure (spec "Failed submissions").
    expect(failed).toMatchObject({ status: 'failed_permanent', error_message: expect.any(String) });
    expect(failed.response_payload.submit_error).toEqual({ error_code: 'B4_2000020', raw_message: expect.any(String) });
    expect(failed.error_message).toBe(failed.response_payload.submit_error.raw_message); // a code outside the catalog
    expect(await eventsOf(t, rejected.id)).toEqual(['fiscalization.dead_letter']);
    const dead = (await t.db.query<{ data: Record<string, unknown> }>(`SELECT data FROM events WHERE data->>'transaction_id' = $1`, [rejected.id])).rows[0]!.data;
    expect(dead).toMatchObject({ entry_id: null, status: 'dead', attempt: 1, max_attempts: 1, last_error: expect.stringMatching(/^B4_2000020: /), transaction: { status: 'failed_permanent' } });
    for (const tx of [busy, slow]) expect((await getTx(t, key, tx.id)).status).toBe('pending_batch');

    // The next run takes only what still waits.
    expect(await processed(t, key)).toMatchObject({ batches_created: 1, accepted: 0, rejected: 0, failed: 2 });
  });

  it('a cancellation of a pending_batch record goes after it; the original becomes cancelled', async () => {
    const { key } = await t.signup();
    const loc = await bizkaia(t, key);
    const original = await created(t, key, loc);
    const c = await cancel(t, key, original.id);
    expect(c).toMatchObject({ type: 'cancellation', status: 'pending_batch', cancels_transaction_id: original.id });

    expect(await processed(t, key)).toMatchObject({ batches_created: 2, accepted: 2, failed: 0 });
    expect((await getTx(t, key, original.id)).status).toBe('cancelled');
    expect((await getTx(t, key, c.id)).status).toBe('success');
    expect(await eventsOf(t, c.id)).toEqual(['fiscalization.completed']);
  });

  it('a claim left by a run that died is taken again after the lease; a fresh one is not', async () => {
    const { key } = await t.signup();
    const loc = await bizkaia(t, key);
    const stale = await created(t, key, loc);
    const fresh = await created(t, key, loc);
    await t.db.query(`UPDATE transactions SET status = 'pending_lroe', updated_at = $2 WHERE id = $1`, [stale.id, new Date(Date.parse(START) - 2 * 3600_000)]);
    await t.db.query(`UPDATE transactions SET status = 'pending_lroe', updated_at = $2 WHERE id = $1`, [fresh.id, new Date(START)]);

    expect(await processed(t, key)).toMatchObject({ accepted: 1 });
    expect((await getTx(t, key, stale.id)).status).toBe('success');
    expect((await getTx(t, key, fresh.id)).status).toBe('pending_lroe');
  });

  it('the claim itself: overlapping claims on one store never take a record twice', async () => {
    const { key, accountId } = await t.signup();
    const loc = await bizkaia(t, key);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await created(t, key, loc)).id);
    const claim = () => batchTransactionsRepo.claim(t.db, {
      accountId, environment: 'test', system: 'es-ticketbai', now: clock.now(), staleBefore: new Date(Date.parse(START) - 3600_000), exclude: [], limit: 3, inBatch: PENDING_LROE,
    });
    const claimed = (await Promise.all(Array.from({ length: 12 }, claim))).flat().map((c) => c.t.id);
    expect(claimed.sort()).toEqual([...new Set(claimed)].sort());
    expect(claimed.sort()).toEqual([...ids].sort());
    expect(await batchTransactionsRepo.release(t.db, claimed, PENDING_LROE, clock.now())).toBe(20);
  });

  it('the claim hands each record\'s issuer as issued, read as the plug-ins take it (none for a record that kept none)', async () => {
    const { key, accountId } = await t.signup();
    const loc = await bizkaia(t, key);
    const kept = await created(t, key, loc);
    const older = await created(t, key, loc);
    // A record stored before the issuer was kept beside it (migration 0059).
    await t.db.query('UPDATE fiscal_records SET issuer = NULL WHERE transaction_id = $1', [older.id]);
    const claims = await batchTransactionsRepo.claim(t.db, {
      accountId, environment: 'test', system: 'es-ticketbai', now: clock.now(), staleBefore: new Date(Date.parse(START) - 3600_000), exclude: [], limit: 10, inBatch: PENDING_LROE,
    });
    const issuers = new Map(claims.map((c) => [c.t.id, c.issuer]));
    expect(issuers.get(kept.id)).toEqual({ name: 'Taberna Bilbao', address: 'Kale Nagusia 1, Bilbao', legalName: bizkaiaStubConfig.legal_name });
    expect(issuers.has(older.id)).toBe(true);
    expect(issuers.get(older.id)).toBeUndefined();
    await batchTransactionsRepo.release(t.db, claims.map((c) => c.t.id), PENDING_LROE, clock.now());
  });

  it('permissions: batch:write runs and reads stats; any key reads the schedule; a key of other countries does not run spain/lroe', async () => {
    const { key } = await t.signup();
    const make = async (permissions: string[]) => {
      const res = await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'restricted', permissions } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().key as string;
    };
    const reader = await make(['transactions:read']);
    for (const [method, url] of [['POST', '/v1/admin/process-pending'], ['GET', '/v1/admin/batch-stats']] as const) {
      const res = await t.request({ method, url, key: reader });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'insufficient permission: batch:write required' });
    }
    expect((await t.request({ method: 'GET', url: '/v1/batch/schedule', key: reader })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/v1/batch/schedule' })).statusCode).toBe(401);

    const batchOnly = await make(['batch:write']);
    expect((await processPending(t, batchOnly)).statusCode).toBe(200);
    // No processor of its countries here: nothing to run and nothing to count, not a 403
    // naming a country the key never asked about (platform audit).
    const france = await make(['batch:write', 'country:FR']);
    const res = await processPending(t, france);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ results: [] });
    const stats = await t.request({ method: 'GET', url: '/v1/admin/batch-stats', key: france });
    expect(stats.statusCode, stats.body).toBe(200);
    expect(stats.json()).toEqual({ stats: [] });
  });
});

// ---- against the fake Batuz -------------------------------------------------------------

describe('spain/lroe against Batuz (X-Svc-Sandbox: authority, the fake LROE server)', () => {
  const withSchemas = HAVE_SCHEMAS ? it : it.skip;

  async function authorityAccount() {
    const { key } = await t.signup();
    await uploadCert(t, key);
    return { key, loc: await bizkaia(t, key, { withCert: true }) };
  }

  withSchemas('records are pending_lroe while the batch is in flight; after it, success or failed_permanent per record; the fake got a schema-valid LROE request holding our signed files', async () => {
    const { key, loc } = await authorityAccount();
    const txs = [await created(t, key, loc, { authority: true }), await created(t, key, loc, { authority: true }), await created(t, key, loc, { authority: true })];
    const bodies = await Promise.all(txs.map((tx) => fiscalRecord(t, key, tx.id)));
    const refused = ticketBaiIdentity(bodies[1]!)!;
    fake.rejectWhen((inv) => (inv.number === refused.number ? { code: 'B4_2000020', message: 'La fecha de expedición no es válida' } : undefined));

    gate.hold();
    const arrived = gate.nextRequest();
    const call = processPending(t, key);
    await arrived;
    for (const tx of txs) expect((await getTx(t, key, tx.id)).status).toBe('pending_lroe');
    gate.release();
    const res = await call;
    expect(res.statusCode, res.body).toBe(200);
    const [result] = res.json().results;
    expect(result).toMatchObject({ batches_created: 1, batches_retried: 0, accepted: 2, rejected: 1, failed: 0, errors_count: 0, alert_triggered: true });
    expect(result.failure_rate).toBeCloseTo(1 / 3);
    expect(result.registration_numbers).toEqual([expect.stringMatching(/^2026-FAKE-\d{6}$/)]);

    const [first, second, third] = await Promise.all(txs.map((tx) => getTx(t, key, tx.id)));
    for (const ok of [first, third]) {
      expect(ok).toMatchObject({ status: 'success', completed_at: START });
      expect(ok.response_payload.batch).toEqual({ processor: 'spain/lroe', run_id: result.run_id, registration_number: result.registration_numbers[0] });
      expect(ok.response_payload.authority).toMatchObject({ estado_registro: 'Correcto', lroe_tipo_respuesta: 'Parcialmente correcto' });
      expect(ok.fiscal_id).toBe(ticketBaiIdentity(bodies[txs.findIndex((x) => x.id === ok.id)]!)!.tbaiId);
    }
    expect(second).toMatchObject({ status: 'failed_permanent', error_message: 'La fecha de expedición no es válida' });
    expect(second.response_payload.submit_error).toEqual({ error_code: 'B4_2000020', raw_message: 'La fecha de expedición no es válida' });

    // One LROE request, Modelo 240 alta, valid against its XSD, carrying exactly our signed files.
    expect(fake.xsdFailures).toEqual([]);
    const requests = lroeRequests();
    expect(requests.map((r) => r.root)).toEqual([LROE_DOCUMENTS['240'].alta.root]);
    expect(xsdValidate(requests[0]!.xml, `es/ticketbai/bizkaia-lroe/${LROE_DOCUMENTS['240'].alta.xsd}`).ok).toBe(true);
    expect(requests[0]!.files).toEqual(bodies);
    for (const file of requests[0]!.files) expect(xsdValidate(file, 'es/ticketbai/ticketbaiv1-2-2.xsd').ok).toBe(true);
    // Mutual TLS with the location's uploaded certificate.
    expect(fake.requests[0]!.clientCert.subject.CN).toBe('Sello Ejemplo');
  });

  withSchemas('the request names the issuer as its records were issued: a PATCH of the legal name before the batch does not rename them; records on either side of it go in two requests', async () => {
    const { key, loc } = await authorityAccount();
    const before = await created(t, key, loc, { authority: true });
    // Renamed after the first sale, before the batch; a second sale after it.
    const patched = await t.request({
      method: 'PATCH', url: `/v1/locations/${loc}`, key,
      payload: { country_config: { ...bizkaiaStubConfig, certificate_id: CERT_ID, legal_name: 'Nombre Nuevo SL' } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const after = await created(t, key, loc, { authority: true });
    const bodies = [await fiscalRecord(t, key, before.id), await fiscalRecord(t, key, after.id)];

    expect(await processed(t, key)).toMatchObject({ batches_created: 2, accepted: 2, rejected: 0, failed: 0 });
    for (const tx of [before, after]) expect((await getTx(t, key, tx.id)).status).toBe('success');
    // One request per name, each carrying the records issued under it (header and Cabecera alike).
    const sent = fake.requests.filter((r) => r.path === '/N3B4000M/aurkezpena').map((r) => JSON.parse(String(r.headers['eus-bizkaia-n3-data'])).inte.nrs);
    expect(sent).toEqual([bizkaiaStubConfig.legal_name, 'Nombre Nuevo SL']);
    const requests = lroeRequests();
    expect(requests.map((r) => /<ApellidosNombreRazonSocial>([^<]*)</.exec(r.xml)![1])).toEqual([bizkaiaStubConfig.legal_name, 'Nombre Nuevo SL']);
    expect(requests.map((r) => r.files)).toEqual([[bodies[0]], [bodies[1]]]);
  });

  withSchemas('a transport fault sends the batch back to pending_batch (retried); the next run delivers it', async () => {
    const { key, loc } = await authorityAccount();
    const txs = [await created(t, key, loc, { authority: true }), await created(t, key, loc, { authority: true })];
    fake.failWith(503);
    const down = await processed(t, key);
    expect(down).toMatchObject({ batches_created: 1, batches_retried: 1, accepted: 0, rejected: 0, failed: 2, failure_rate: 1, alert_triggered: true });
    expect(down.errors).toEqual([{ code: 'server_error', message: expect.stringContaining('503'), issuer_tax_id: ES_NIF, kind: 'alta', records: 2 }]);
    for (const tx of txs) expect((await getTx(t, key, tx.id)).status).toBe('pending_batch');

    fake.failWith(undefined);
    expect(await processed(t, key)).toMatchObject({ batches_created: 1, batches_retried: 0, accepted: 2, failed: 0 });
    for (const tx of txs) expect((await getTx(t, key, tx.id)).status).toBe('success');
  });

  withSchemas('an answer lost after Batuz registered the batch: the records wait, and the next run is answered B4_2000003 / B4_2000006: success, marked duplicate, sent once each per run', async () => {
    const { key, loc } = await authorityAccount();
    const txs = [await created(t, key, loc, { authority: true }), await created(t, key, loc, { authority: true })];
    gate.loseAnswers(true);
    try {
      const lost = await processed(t, key);
      expect(lost).toMatchObject({ batches_created: 1, batches_retried: 1, accepted: 0, rejected: 0, failed: 2 });
      expect(lost.errors).toEqual([expect.objectContaining({ code: 'server_error', records: 2 })]);
    } finally {
      gate.loseAnswers(false);
    }
    for (const tx of txs) {
      const waiting = await getTx(t, key, tx.id);
      expect(waiting.status).toBe('pending_batch');
      expect(await eventsOf(t, tx.id)).toEqual([]);
    }

    const again = await processed(t, key);
    expect(again).toMatchObject({ batches_created: 1, batches_retried: 0, accepted: 2, rejected: 0, failed: 0 });
    for (const tx of txs) {
      const done = await getTx(t, key, tx.id);
      expect(done).toMatchObject({ status: 'success', fiscal_id: tx.fiscal_id });
      expect(done.response_payload.duplicate).toBe(true);
      expect(done.response_payload.submit_error).toBeUndefined();
      expect(done.response_payload.authority).toMatchObject({ estado_registro: 'Incorrecto', codigo_error: 'B4_2000003' });
      expect(await eventsOf(t, tx.id)).toEqual(['fiscalization.completed']);
    }

    // The annulment likewise.
    const c = await cancel(t, key, txs[0]!.id);
    gate.loseAnswers(true);
    try {
      expect(await processed(t, key)).toMatchObject({ accepted: 0, failed: 1 });
    } finally {
      gate.loseAnswers(false);
    }
    expect(await processed(t, key)).toMatchObject({ accepted: 1, failed: 0, rejected: 0 });
    const done = await getTx(t, key, c.id);
    expect(done).toMatchObject({ status: 'success' });
    expect(done.response_payload.duplicate).toBe(true);
    expect((await getTx(t, key, txs[0]!.id)).status).toBe('cancelled');
    // Each record went once per run: twice in all.
    const sent = lroeRequests().flatMap((r) => r.files.map((f) => ticketBaiIdentity(f)!.number));
    expect(sent).toHaveLength(6);
  });

  withSchemas('a cancellation of a pending_batch record goes as an LROE anulación, after the alta', async () => {
    const { key, loc } = await authorityAccount();
    const original = await created(t, key, loc, { authority: true });
    const c = await cancel(t, key, original.id);
    expect(c.status).toBe('pending_batch');
    expect((await getTx(t, key, original.id)).status).toBe('pending_batch');

    expect(await processed(t, key)).toMatchObject({ batches_created: 2, accepted: 2, rejected: 0, failed: 0 });
    const requests = lroeRequests();
    expect(requests.map((r) => r.root)).toEqual([LROE_DOCUMENTS['240'].alta.root, LROE_DOCUMENTS['240'].anulacion.root]);
    expect(requests[1]!.files).toEqual([await fiscalRecord(t, key, c.id)]);
    expect(ticketBaiIdentity(requests[1]!.files[0]!)).toMatchObject({ kind: 'anulacion', nif: ES_NIF });
    expect(xsdValidate(requests[1]!.xml, `es/ticketbai/bizkaia-lroe/${LROE_DOCUMENTS['240'].anulacion.xsd}`).ok).toBe(true);
    expect(fake.xsdFailures).toEqual([]);
    expect((await getTx(t, key, c.id)).status).toBe('success');
    expect((await getTx(t, key, original.id)).status).toBe('cancelled');
  });

  withSchemas('an annulment waits while its invoice has not reached Batuz', async () => {
    const { key, loc } = await authorityAccount();
    const original = await created(t, key, loc, { authority: true });
    const c = await cancel(t, key, original.id);
    // The invoice is refused for now (retry later): its annulment must not go before it.
    fake.rejectWhen((inv) => (inv.kind === 'alta' ? { code: 'B4_1000004', message: 'Error técnico' } : undefined));
    const first = await processed(t, key);
    expect(first).toMatchObject({ batches_created: 1, batches_retried: 1, accepted: 0, failed: 2 });
    expect(first.errors.map((e: { code: string }) => e.code)).toEqual(['B4_1000004', 'lroe_original_pending']);
    expect(lroeRequests().map((r) => r.root)).toEqual([LROE_DOCUMENTS['240'].alta.root]);
    expect((await getTx(t, key, c.id)).status).toBe('pending_batch');

    fake.rejectWhen(undefined);
    expect(await processed(t, key)).toMatchObject({ batches_created: 2, accepted: 2 });
    expect((await getTx(t, key, original.id)).status).toBe('cancelled');
  });

  withSchemas('concurrent process-pending calls (two nodes on one store) never send a record twice', async () => {
    const { key, loc } = await authorityAccount();
    const txs = [];
    for (let i = 0; i < 6; i++) txs.push(await created(t, key, loc, { authority: true }));
    const other = await startApp({ clock, db: t.db });
    try {
      const answers = await Promise.all([processPending(t, key), processPending(other, key), processPending(t, key)]);
      for (const a of answers) expect(a.statusCode, a.body).toBe(200);
      const results = answers.map((a) => a.json().results[0]);
      expect(results.reduce((n, r) => n + r.accepted, 0)).toBe(6);
      expect(results.reduce((n, r) => n + r.failed + r.rejected, 0)).toBe(0);
    } finally {
      await other.close();
    }
    const sent = lroeRequests().flatMap((r) => r.files.map((f) => ticketBaiIdentity(f)!.number));
    expect(sent.sort()).toEqual([...new Set(sent)].sort());
    expect(sent).toHaveLength(6);
    for (const tx of txs) {
      const done = await getTx(t, key, tx.id);
      expect(done.status).toBe('success');
      expect(done.response_payload.duplicate).toBeUndefined();
      expect(await eventsOf(t, tx.id)).toEqual(['fiscalization.completed']);
    }
  });

  it('without its certificate the batch is held with the error and nothing is sent; a natural person without lroe_epigrafe is refused at location creation', async () => {
    const { key, loc } = await authorityAccount();
    const tx = await created(t, key, loc, { authority: true });
    expect((await t.request({ method: 'DELETE', url: `/v1/certificates/${CERT_ID}`, key })).statusCode).toBe(204);
    const noCert = await processed(t, key);
    expect(noCert).toMatchObject({ batches_created: 1, batches_retried: 1, failed: 1, errors_count: 1 });
    expect(noCert.errors[0]).toMatchObject({ code: 'certificate_missing', records: 1 });
    expect((await getTx(t, key, tx.id)).status).toBe('pending_batch');
    expect(fake.requests).toEqual([]);

    // A natural person's NIF means Modelo 140, whose altas need the activity's epigrafe:
    // asked for when the location is created, not found missing at batch time.
    const res = await t.request({
      method: 'POST', url: '/v1/locations', key,
      payload: { name: 'Autónomo Bilbao', country: 'ES', address: 'Kale Nagusia 2, Bilbao', tax_id: '12345678Z', country_config: bizkaiaStubConfig },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: "country_config.lroe_epigrafe is required for a Bizkaia ticketbai location whose tax_id is a natural person's NIF (LROE Modelo 140)",
    });
  });

  withSchemas('a natural person (Modelo 140) with lroe_epigrafe: the batch goes as LROE 140 Ingresos with the epigrafe, and Batuz accepts it', async () => {
    const { key } = await t.signup();
    await uploadCert(t, key, 'person_cert');
    const person = await bizkaia(t, key, { withCert: 'person_cert', taxId: '12345678Z', epigrafe: '6520' });
    const txs = [await created(t, key, person, { authority: true }), await created(t, key, person, { authority: true })];

    const result = await processed(t, key);
    expect(result).toMatchObject({ batches_created: 1, batches_retried: 0, accepted: 2, rejected: 0, failed: 0, errors_count: 0, errors: [] });
    for (const tx of txs) {
      const done = await getTx(t, key, tx.id);
      expect(done).toMatchObject({ status: 'success', fiscal_id: tx.fiscal_id });
      expect(done.response_payload.authority).toMatchObject({ estado_registro: 'Correcto' });
    }

    const requests = lroeRequests();
    expect(requests.map((r) => r.root)).toEqual([LROE_DOCUMENTS['140'].alta.root]);
    expect(xsdValidate(requests[0]!.xml, `es/ticketbai/bizkaia-lroe/${LROE_DOCUMENTS['140'].alta.xsd}`).ok).toBe(true);
    expect(fake.xsdFailures).toEqual([]);
    // One Ingreso per file, each with the location's activity heading.
    expect(requests[0]!.xml.match(/<Renta><DetalleRenta><Epigrafe>6520<\/Epigrafe><\/DetalleRenta><\/Renta>/g)).toHaveLength(2);
    expect(requests[0]!.files.map((f) => ticketBaiIdentity(f)!.nif)).toEqual(['12345678Z', '12345678Z']);
    expect(JSON.parse(String(fake.requests[0]!.headers['eus-bizkaia-n3-data']))).toMatchObject({ inte: { nif: '12345678Z' }, drs: { mode: '140' } });
  });
});

// ---- schedule, daily job, stats ------------------------------------------------------------

describe('the daily run, the schedule and the stats', () => {
  let timed: TestApp;
  let tclock: ManualClock;
  beforeAll(async () => {
    tclock = new ManualClock(START);
    timed = await startApp({ clock: tclock });
  });
  afterAll(() => timed?.close());

  it('GET /v1/batch/schedule: spain/lroe daily at 02:00 UTC, next_run_at from the clock', async () => {
    const { key } = await timed.signup();
    const schedule = async () => (await timed.request({ method: 'GET', url: '/v1/batch/schedule', key })).json();
    expect(await schedule()).toEqual({ schedule: [{ processor: 'spain/lroe', cron: '0 2 * * *', timezone: 'UTC', next_run_at: '2026-03-03T02:00:00.000Z', runs_on: 'schedule' }] });
    tclock.set('2026-03-03T01:59:59.000Z');
    expect((await schedule()).schedule[0].next_run_at).toBe('2026-03-03T02:00:00.000Z');
    tclock.set('2026-03-03T02:00:00.000Z');
    expect((await schedule()).schedule[0].next_run_at).toBe('2026-03-04T02:00:00.000Z');
    tclock.set('2026-03-03T10:00:00.000Z');
  });

  it('the scheduled job runs at 02:00 UTC for every account with records waiting, once whatever the nodes, and schedules the next day', async () => {
    const a = await timed.signup();
    const b = await timed.signup();
    const txA = await created(timed, a.key, await bizkaia(timed, a.key));
    const txB = await created(timed, b.key, await bizkaia(timed, b.key));

    await scheduleRecurringJobs(timed.rt);
    await scheduleRecurringJobs(timed.rt); // a second node starting
    const jobs = async () => (await timed.db.query<{ status: string; run_at: Date }>(
      `SELECT status, run_at FROM jobs WHERE kind = 'scheduled:batch:spain/lroe' ORDER BY created_at`)).rows;
    expect(await jobs()).toEqual([{ status: 'pending', run_at: new Date('2026-03-04T02:00:00.000Z') }]);

    await timed.worker.drain(); // before 02:00: nothing is sent
    expect((await getTx(timed, a.key, txA.id)).status).toBe('pending_batch');

    tclock.set('2026-03-04T02:00:00.000Z');
    await timed.worker.drain();
    expect((await getTx(timed, a.key, txA.id)).status).toBe('success');
    expect((await getTx(timed, b.key, txB.id)).status).toBe('success');
    const runs = (await timed.db.query<{ account_id: string; trigger: string; accepted: number }>(
      `SELECT account_id, trigger, accepted FROM batch_runs WHERE trigger = 'scheduled' ORDER BY account_id`)).rows;
    expect(runs).toEqual([a.accountId, b.accountId].sort().map((id) => ({ account_id: id, trigger: 'scheduled', accepted: 1 })));
    expect((await jobs()).map((j) => [j.status, j.run_at.toISOString()])).toEqual([
      ['completed', '2026-03-04T02:00:00.000Z'],
      ['pending', '2026-03-05T02:00:00.000Z'],
    ]);
  });

  it('GET /v1/admin/batch-stats: the counters of the last 24 hours, per processor', async () => {
    const { key } = await timed.signup();
    const stats = async () => {
      const res = await timed.request({ method: 'GET', url: '/v1/admin/batch-stats', key });
      expect(res.statusCode).toBe(200);
      return res.json().stats;
    };
    const since = (at: string) => new Date(Date.parse(at) - 86_400_000).toISOString();
    expect(await stats()).toEqual([{ processor: 'spain/lroe', ...ZERO, failure_rate: 0, since: since('2026-03-04T02:00:00.000Z') }]);

    const loc = await bizkaia(timed, key);
    await created(timed, key, loc);
    await created(timed, key, loc, { outcome: 'reject:B4_2000020' });
    await processed(timed, key);
    tclock.advance(3600_000);
    await created(timed, key, loc);
    await created(timed, key, loc, { outcome: 'error:B4_1000004' });
    await processed(timed, key);
    expect(await stats()).toEqual([{
      processor: 'spain/lroe', batches_created: 2, batches_retried: 1, accepted: 2, rejected: 1, failed: 1, failure_rate: 0.5,
      since: since('2026-03-04T03:00:00.000Z'),
    }]);

    // A day later the first run has left the window; the second is still in.
    tclock.advance(23.5 * 3600_000);
    expect(await stats()).toMatchObject([{ batches_created: 1, accepted: 1, rejected: 0, failed: 1, failure_rate: 0.5 }]);
  });
});

// ---- several processors --------------------------------------------------------------------

describe('several processors', () => {
  let multi: TestApp;
  const failing = (name: string, country: 'ES' | 'IT'): BatchProcessor => ({
    name, country, cron: '0 3 1 * *',
    scopesWithWork: async () => [],
    run: async (_scope, ctx) => {
      ctx.tally.batches_created += 1;
      throw new Error('boom');
    },
  });
  beforeAll(async () => {
    multi = await startApp({ clock: new ManualClock(START), processors: (r) => [...r, failing('spain/failing-test', 'ES'), failing('italy/failing-test', 'IT')] });
  });
  afterAll(() => multi?.close());

  it('207 when some processors succeed and others fail; 500 when every processor the key may run fails', async () => {
    const { key } = await multi.signup();
    const tx = await created(multi, key, await bizkaia(multi, key));
    const res = await processPending(multi, key);
    expect(res.statusCode, res.body).toBe(207);
    const results = res.json().results;
    expect(results.map((r: { processor: string; status: string }) => [r.processor, r.status])).toEqual([
      ['spain/lroe', 'completed'], ['spain/failing-test', 'failed'], ['italy/failing-test', 'failed'],
    ]);
    expect(results[0]).toMatchObject({ accepted: 1 });
    expect(results[1]).toMatchObject({ batches_created: 1, errors_count: 1, errors: [expect.objectContaining({ code: 'internal_error' })] });
    expect((await getTx(multi, key, tx.id)).status).toBe('success');

    // Failed runs are recorded too.
    const stats = (await multi.request({ method: 'GET', url: '/v1/admin/batch-stats', key })).json().stats;
    expect(stats.map((s: { processor: string; batches_created: number }) => [s.processor, s.batches_created])).toEqual([
      ['spain/lroe', 1], ['spain/failing-test', 1], ['italy/failing-test', 1],
    ]);
    const schedule = (await multi.request({ method: 'GET', url: '/v1/batch/schedule', key })).json().schedule;
    expect(schedule.map((s: { processor: string; next_run_at: string }) => [s.processor, s.next_run_at])).toEqual([
      ['spain/lroe', '2026-03-03T02:00:00.000Z'], ['spain/failing-test', '2026-04-01T03:00:00.000Z'], ['italy/failing-test', '2026-04-01T03:00:00.000Z'],
    ]);

    const italy = await multi.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'it', permissions: ['batch:write', 'country:IT'] } });
    const all = await processPending(multi, italy.json().key);
    expect(all.statusCode).toBe(500);
    expect(all.json()).toEqual({ error: 'batch processing failed: italy/failing-test' });
  });
});

describe('API reference', () => {
  it('the batch endpoints are in /openapi.json', async () => {
    const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    const post = doc.paths['/v1/admin/process-pending'].post;
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['200', '207', '500']));
    expect(JSON.stringify(post.responses['200'])).toContain('alert_triggered');
    expect(doc.paths['/v1/admin/batch-stats'].get).toBeDefined();
    expect(JSON.stringify(doc.paths['/v1/batch/schedule'].get.responses['200'])).toContain('next_run_at');
  });
});
