import fs from 'node:fs';
import path from 'node:path';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { TOO_DEEP_BODY } from '../../src/core/json-depth.ts';
import { CONTROL_IN_BODY, LONE_SURROGATE_IN_BODY, NUL_IN_BODY } from '../../src/core/body-strings.ts';
import { createEngine, fiscalCall } from '../../src/engine/index.ts';
import { TOKEN_FILE } from '../../src/engine/token.ts';
import { generateMasterKey } from '../../src/crypto/master-key.ts';
import { locationBodies } from '../support/fixtures.ts';
import { saleBody, saleLines } from '../support/transactions.ts';
import { cleanupDirs, ok, startService, tempDir, type LiveService } from './support.ts';
import { exportP12, generateCert } from '../support/p12.ts';
import { CERT_ERRORS } from '../../src/services/certificates.ts';

/*
 * The envelope of fiscalCall (spec "Embedded engine call envelope"): every method, every
 * error code, init's token exchange and cache. The engine runs on PGlite in a temporary
 * data_dir; the service it provisions from is a real HTTP server on 127.0.0.1 (either store).
 */
let svc: LiveService;
let key: string;
let accountId: string;
beforeAll(async () => {
  svc = await startService();
  ({ key, accountId } = await svc.t.signup());
});
afterAll(async () => {
  await svc?.close();
  cleanupDirs();
});

const initParams = (dataDir: string, over: Record<string, unknown> = {}) => ({
  api_key: key, environment: 'sandbox', country: 'GR', service_url: svc.url, data_dir: dataDir, agent_id: 'pos-1', telemetry_interval_seconds: 0, ...over,
});
const call = (e: ReturnType<typeof createEngine>, method: string, params?: Record<string, unknown>) => e.call({ version: 1, method, ...(params ? { params } : {}) });
const code = (r: any) => r.error?.code;

describe('the envelope, before init', () => {
  const e = createEngine({ startWorker: false });
  it('maps malformed envelopes to stable codes and never throws', async () => {
    const notJson = await e.call('{not json');
    expect(typeof notJson).toBe('string');
    expect(JSON.parse(notJson)).toEqual({ version: 1, error: { code: 'invalid_request', message: 'the request is not valid JSON' } });
    const deep = await e.call(`{"version":1,"method":"init","params":{"x":${'['.repeat(5000)}${']'.repeat(5000)}}}`);
    expect(JSON.parse(deep)).toEqual({ version: 1, error: { code: 'invalid_request', message: TOO_DEEP_BODY } });
    expect(code(await e.call(JSON.parse('[1,2]')))).toBe('invalid_request');
    expect(code(await e.call(null as never))).toBe('invalid_request');
    expect(code(await e.call({ method: 'init' }))).toBe('invalid_request');
    expect(await e.call({ version: 2, method: 'init', params: {} })).toEqual({
      version: 1, error: { code: 'unsupported_version', message: 'unsupported envelope version 2: this engine speaks version 1' },
    });
    expect(code(await e.call({ version: 1 }))).toBe('invalid_request');
    expect(await e.call({ version: 1, method: 'explode' })).toEqual({ version: 1, error: { code: 'unknown_method', message: 'unknown method "explode"' } });
    expect(code(await e.call({ version: 1, method: '__proto__' }))).toBe('unknown_method');
    expect(code(await e.call({ version: 1, method: 'queue_status', params: [1] }))).toBe('invalid_params');
    // Params as an object: what JSON could carry, else the same codes as the string form (they were internal_error).
    let nested: Record<string, unknown> = {};
    const top = nested;
    for (let i = 0; i < 20_000; i++) nested = (nested.x = {}) as Record<string, unknown>;
    expect(await e.call({ version: 1, method: 'process_transaction', params: { metadata: top } })).toEqual({ version: 1, error: { code: 'invalid_request', message: TOO_DEEP_BODY } });
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(await e.call({ version: 1, method: 'process_transaction', params: { metadata: cyclic } })).toEqual({ version: 1, error: { code: 'invalid_params', message: 'params must hold JSON values only (found a cycle)' } });
    expect(await e.call({ version: 1, method: 'process_transaction', params: { metadata: { n: 10n } } })).toEqual({ version: 1, error: { code: 'invalid_params', message: 'params must hold JSON values only (found a bigint)' } });
    // Strings as the HTTP body parser holds them: no NUL, no XML-forbidden control, no lone
    // surrogate, in values or keys, in the object form and the string form alike.
    const refused = (message: string) => ({ version: 1, error: { code: 'validation_error', message } });
    expect(await e.call({ version: 1, method: 'process_transaction', params: { items: [{ description: 'Men\u0000u' }] } })).toEqual(refused(NUL_IN_BODY));
    expect(await e.call({ version: 1, method: 'process_transaction', params: { metadata: { note: 'bell\u0007' } } })).toEqual(refused(CONTROL_IN_BODY));
    expect(await e.call({ version: 1, method: 'process_transaction', params: { customer_context: { name: 'Cliente \ud83d' } } })).toEqual(refused(LONE_SURROGATE_IN_BODY));
    expect(await e.call({ version: 1, method: 'process_transaction', params: { metadata: { ['k\udc00']: 1 } } })).toEqual(refused(LONE_SURROGATE_IN_BODY));
    expect(JSON.parse(await e.call(JSON.stringify({ version: 1, method: 'process_transaction', params: { metadata: { x: '\ud800' } } })))).toEqual(refused(LONE_SURROGATE_IN_BODY));
    expect(code(await e.call({ version: 1, method: 'queue_status', params: { note: 'tab\tnewline\n emoji 😀' } }))).toBe('not_initialized');
    // The same object twice (not a cycle) is fine: it reaches the method (not initialised here).
    const shared = { k: 1 };
    expect(code(await e.call({ version: 1, method: 'queue_status', params: { a: shared, b: shared } }))).toBe('not_initialized');
    // A string in, a string out, for a valid envelope too.
    expect(JSON.parse(await e.call(JSON.stringify({ version: 1, method: 'queue_status' })))).toMatchObject({ error: { code: 'not_initialized' } });
  });

  it('answers not_initialized for every method but init', async () => {
    for (const m of ['process_transaction', 'get_transaction', 'get_fiscal_record', 'cancel_transaction', 'process_pending', 'queue_init', 'queue_status', 'send_telemetry',
      'create_location', 'update_location', 'get_location']) {
      expect(code(await call(e, m, { id: 'x' })), m).toBe('not_initialized');
    }
    expect(ok(await call(e, 'shutdown'))).toEqual({ shutdown: true }); // idempotent
  });

  it('checks init params before any network call', async () => {
    const dir = tempDir();
    expect(await call(e, 'init', initParams(dir, { api_key: undefined }))).toEqual({ version: 1, error: { code: 'invalid_params', message: 'api_key is required' } });
    expect(code(await call(e, 'init', initParams(dir, { environment: 'staging' })))).toBe('invalid_params');
    expect(code(await call(e, 'init', initParams(dir, { country: 'XX' })))).toBe('invalid_params');
    expect(code(await call(e, 'init', initParams(dir, { service_url: 'ftp://x' })))).toBe('invalid_params');
    // A base URL with a path: the service answers 404, a configuration error (not network_unavailable).
    const pathed = await call(e, 'init', initParams(dir, { service_url: `${svc.url}/v1` }));
    expect(pathed).toMatchObject({ error: { code: 'invalid_params', message: expect.stringMatching(/^service_url does not lead to the service \(HTTP 404: .*\): give the service's base URL, without a path$/) } });
    expect(code(await call(e, 'init', initParams(dir, { authority: 'real' })))).toBe('invalid_params');
    expect(await call(e, 'init', initParams(dir, { signing_device: { module: '/usr/lib/softhsm/libsofthsm2.so' } }))).toEqual({
      version: 1, error: { code: 'invalid_params', message: 'signing_device.token_label: token_label is required (a string)' },
    });
    // Spec Authentication §6: a test key with production, a live key with sandbox.
    const unreachable = 'http://127.0.0.1:9';
    expect(await call(e, 'init', initParams(dir, { environment: 'production', service_url: unreachable }))).toEqual({
      version: 1, error: { code: 'environment_mismatch', message: 'API key does not match environment production: production needs a svc_live_ key' },
    });
    expect(code(await call(e, 'init', initParams(dir, { api_key: 'svc_live_' + 'a'.repeat(40), service_url: unreachable })))).toBe('environment_mismatch');
    expect(code(await call(e, 'init', initParams(dir, { service_url: unreachable })))).toBe('network_unavailable');
    // A data_dir that cannot be a directory.
    const file = path.join(tempDir(), 'a-file');
    fs.writeFileSync(file, 'x');
    expect(code(await call(e, 'init', initParams(file)))).toBe('store_error');
    expect(e.initialized).toBe(false);
  });

  it('maps 401 and 403 from provisioning', async () => {
    const dir = tempDir();
    const unknown = await call(e, 'init', initParams(dir, { api_key: 'svc_test_' + 'Z'.repeat(40) }));
    expect(code(unknown)).toBe('unauthorized');
    const res = await svc.t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { permissions: ['transactions:write', 'country:IT'] } });
    expect(res.statusCode, res.body).toBe(201);
    const italyOnly = await call(e, 'init', initParams(dir, { api_key: res.json().key }));
    expect(italyOnly).toEqual({ version: 1, error: { code: 'forbidden', message: 'API key is not allowed to act in country GR' } });
    expect(fs.existsSync(path.join(dir, TOKEN_FILE))).toBe(false);
  });
});

describe('an initialised engine', () => {
  const clock = new ManualClock(new Date());
  const e = createEngine({ clock, startWorker: false });
  const dir = tempDir();
  let loc: string;
  let sale: Record<string, any>;

  it('init exchanges the key for a verified token, cached in data_dir', async () => {
    const r = ok(await call(e, 'init', initParams(dir)));
    expect(r).toMatchObject({ agent_id: 'pos-1', account_id: accountId, environment: 'sandbox', country: 'GR', offline: false });
    const cache = JSON.parse(fs.readFileSync(path.join(dir, TOKEN_FILE), 'utf8'));
    expect(cache).not.toHaveProperty('api_key');
    expect(JSON.stringify(cache)).not.toContain(key);
    const { payload } = await jose.jwtVerify(cache.token, jose.createLocalJWKSet(cache.jwks), { algorithms: ['EdDSA'] });
    expect(payload).toMatchObject({ account_id: accountId, countries: ['GR'], agent_id: 'pos-1', environment: 'sandbox' });
    expect(r.token_expires_at).toBe(new Date(payload.exp! * 1000).toISOString());
    expect(fs.existsSync(path.join(dir, 'master.key'))).toBe(true);
  });

  it('certificates: a PKCS#12 in base64 stored as POST /v1/certificates stores it; its refusals are the API\'s', async () => {
    const cert = generateCert({ subject: '/C=GR/O=Engine Test/CN=ENGINE TEST' });
    const p12 = exportP12(cert, 'secret');
    const stored = ok(await call(e, 'upload_certificate', { certificate_id: 'pos-cert', password: 'secret', certificate: p12.toString('base64') }));
    expect(stored).toMatchObject({ certificate_id: 'pos-cert' });
    expect(ok(await call(e, 'list_certificates')).data.map((c: { certificate_id: string }) => c.certificate_id)).toEqual(['pos-cert']);
    expect(await call(e, 'upload_certificate', { certificate_id: 'pos-cert', password: 'secret', certificate: p12.toString('base64') }))
      .toEqual({ version: 1, error: { code: 'conflict', message: CERT_ERRORS.duplicate } });
    expect(await call(e, 'upload_certificate', { certificate_id: 'other', password: 'wrong', certificate: p12.toString('base64') }))
      .toEqual({ version: 1, error: { code: 'validation_error', message: CERT_ERRORS.badPassword } });
    expect(await call(e, 'upload_certificate', { certificate_id: 'other', password: 'secret' }))
      .toEqual({ version: 1, error: { code: 'validation_error', message: CERT_ERRORS.fileRequired } });
    expect(code(await call(e, 'upload_certificate', { certificate_id: 'other', password: 'secret', certificate: '%%%' }))).toBe('invalid_params');
  });

  it('locations: the HTTP API\'s bodies, validation and answers', async () => {
    const missing = await call(e, 'create_location', { country: 'GR' });
    const http = await svc.t.request({ method: 'POST', url: '/v1/locations', key, payload: { country: 'GR' } });
    expect(missing).toEqual({ version: 1, error: { code: 'validation_error', message: http.json().error } });
    const badConfig = await call(e, 'create_location', { ...locationBodies['gr-mydata'], country_config: { afm: '1' } });
    const httpBad = await svc.t.request({ method: 'POST', url: '/v1/locations', key, payload: { ...locationBodies['gr-mydata'], country_config: { afm: '1' } } });
    expect(badConfig).toEqual({ version: 1, error: { code: 'validation_error', message: httpBad.json().error } });
    expect(code(await call(e, 'create_location', locationBodies['it-sdi']))).toBe('forbidden'); // the token's one country

    const created = ok(await call(e, 'create_location', locationBodies['gr-mydata']));
    expect(created).toMatchObject({ account_id: accountId, country: 'GR', system: 'gr-mydata', status: 'active' });
    expect(created.country_config.subscription_key).not.toBe(locationBodies['gr-mydata'].country_config.subscription_key); // masked, as HTTP
    loc = created.id;
    expect(ok(await call(e, 'get_location', { id: loc }))).toEqual(created);
    const patched = ok(await call(e, 'update_location', { id: loc, name: 'Νέο όνομα' }));
    expect(patched.name).toBe('Νέο όνομα');
    expect(code(await call(e, 'update_location', { id: loc, status: 'closed' }))).toBe('validation_error');
    expect(code(await call(e, 'get_location', { id: '00000000-0000-4000-8000-000000000000' }))).toBe('not_found');
    expect(code(await call(e, 'get_location', {}))).toBe('invalid_params');
  });

  it('process_transaction, get_transaction, cancel_transaction', async () => {
    const body = saleBody(loc, saleLines['gr-mydata']);
    sale = ok(await call(e, 'process_transaction', { ...body, idempotency_key: 'sale-1' }));
    expect(sale).toMatchObject({ location_id: loc, account_id: accountId, idempotency_key: 'sale-1', status: 'success', environment: 'test', system: 'gr-mydata', amount: 2100 });
    expect(typeof sale.created_at).toBe('string');
    expect(ok(await call(e, 'process_transaction', { ...body, idempotency_key: 'sale-1' })).id).toBe(sale.id); // replay
    expect(await call(e, 'process_transaction', { ...body, payment_method: 'cash', idempotency_key: 'sale-1' })).toEqual({
      version: 1, error: { code: 'conflict', message: 'idempotency key already used with a different request' },
    });
    const invalid = await call(e, 'process_transaction', { ...body, items: [] });
    expect(code(invalid)).toBe('validation_error');
    expect(code(await call(e, 'process_transaction', { ...body, idempotency_key: 7 }))).toBe('invalid_params');
    // Out of range: invalid_params naming the param, not the HTTP header it stands for (was validation_error
    // "X-Fiscalization-Timeout must be …" / "Idempotency-Key must be …").
    const badParam = (message: string) => ({ version: 1, error: { code: 'invalid_params', message } });
    for (const v of [11, -1, '5']) {
      expect(await call(e, 'process_transaction', { ...body, inline_timeout_seconds: v })).toEqual(badParam('inline_timeout_seconds must be a number from 0 to 10'));
    }
    for (const v of ['', 'k'.repeat(256)]) {
      expect(await call(e, 'process_transaction', { ...body, idempotency_key: v })).toEqual(badParam('idempotency_key must be a string of 1-255 characters'));
    }
    expect(await call(e, 'process_transaction', { ...body, idempotency_key: `cancel:${sale.id}` }))
      .toEqual(badParam('idempotency_key may not start with "cancel:": the engine keys cancellations so'));
    expect(ok(await call(e, 'get_transaction', { id: sale.id }))).toEqual(sale);
    expect(code(await call(e, 'get_transaction', { id: '00000000-0000-4000-8000-000000000000' }))).toBe('not_found');
    expect(code(await call(e, 'cancel_transaction', { id: sale.id, reason: 'x'.repeat(501) }))).toBe('invalid_params');
    const cancel = ok(await call(e, 'cancel_transaction', { id: sale.id, reason: 'customer left' }));
    expect(cancel).toMatchObject({ type: 'cancellation', cancels_transaction_id: sale.id });
    expect(ok(await call(e, 'cancel_transaction', { id: sale.id })).id).toBe(cancel.id); // idempotent
    expect(code(await call(e, 'cancel_transaction', { id: cancel.id }))).toBe('conflict');
  });

  it('queue_init, queue_status, process_pending', async () => {
    expect(code(await call(e, 'queue_init', { retry_max: 0 }))).toBe('invalid_params');
    expect(ok(await call(e, 'queue_init', { retry_max: 5, retry_delay_seconds: 3 }))).toEqual({ retry_max: 5, retry_delay_seconds: 3, backoff_cap_seconds: 21600 });
    const status = ok(await call(e, 'queue_status'));
    expect(status).toMatchObject({ pending: 0, processing: 0, failed: 0, dead: 0, alerts: [], retry_max: 5 });
    expect(status.total).toBe(status.completed);
    expect(status.completed).toBeGreaterThanOrEqual(2);
    const pending = ok(await call(e, 'process_pending'));
    expect(pending).toMatchObject({ jobs_run: 0, batch: [], queue: { pending: 0 } });
  });

  it('a second init offline (service stopped) reuses the cached token; shutdown ends the session', async () => {
    expect(ok(await call(e, 'shutdown'))).toEqual({ shutdown: true });
    expect(code(await call(e, 'get_transaction', { id: sale.id }))).toBe('not_initialized');
    await svc.stop();
    try {
      const again = ok(await call(e, 'init', initParams(dir)));
      expect(again).toMatchObject({ account_id: accountId, offline: true });
      expect(ok(await call(e, 'get_transaction', { id: sale.id })).status).toBe('cancelled');
      expect(ok(await call(e, 'queue_status')).retry_max).toBe(5); // queue_init kept in data_dir
      expect(ok(await call(e, 'shutdown'))).toEqual({ shutdown: true });
      // Past the token's expiry, with the service still down: token_expired.
      clock.advance(31 * 24 * 3600_000);
      expect(code(await call(e, 'init', initParams(dir)))).toBe('token_expired');
      // Another country than the cached token's: it needs the service.
      expect(code(await call(e, 'init', initParams(dir, { country: 'ES' })))).toBe('network_unavailable');
    } finally {
      await svc.restart();
    }
    // The service back: the same engine provisions again (the cached token is for GR, this asks for none other).
    clock.advance(-31 * 24 * 3600_000);
    expect(ok(await call(e, 'init', initParams(dir))).offline).toBe(true);
    expect(ok(await call(e, 'shutdown'))).toEqual({ shutdown: true });
    // A store set up with another master key is refused, not overwritten.
    fs.writeFileSync(path.join(dir, 'master.key'), generateMasterKey() + '\n');
    const wrongKey = await call(e, 'init', initParams(dir));
    expect(code(wrongKey)).toBe('store_error');
    expect((wrongKey as { error: { message: string } }).error.message).toMatch(/MASTER_KEY does not match/);
  });
});

describe('the token cache\'s seal', () => {
  it('a cache changed outside the engine (its own keys and a token signed with them) is not used: re-provisioned online, unauthorized offline', async () => {
    const clock = new ManualClock(new Date());
    const e = createEngine({ clock, startWorker: false });
    const dir = tempDir();
    ok(await call(e, 'init', initParams(dir)));
    ok(await call(e, 'shutdown'));
    const file = path.join(dir, TOKEN_FILE);
    const genuine = fs.readFileSync(file, 'utf8');
    const cache = JSON.parse(genuine);
    expect(cache.seal).toMatch(/^[0-9a-f]{64}$/);
    // The forgery: a key pair of one's own in place of the service's, a token valid for a year.
    const { publicKey, privateKey } = await jose.generateKeyPair('EdDSA', { extractable: true });
    const jwk = { ...(await jose.exportJWK(publicKey)), kid: 'forged', alg: 'EdDSA' };
    const claims = (await jose.decodeJwt(cache.token)) as Record<string, unknown>;
    const forged = await new jose.SignJWT({ ...claims, exp: Math.floor(clock.now().getTime() / 1000) + 365 * 86_400 })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'forged' }).sign(privateKey);
    const tampered = { ...cache, token: forged, jwks: { keys: [jwk] }, expires_at: new Date(clock.now().getTime() + 365 * 86_400_000).toISOString() };
    fs.writeFileSync(file, JSON.stringify(tampered));
    // Online: the service issues a genuine token again (the forged one is not reused).
    const online = ok(await call(e, 'init', initParams(dir)));
    expect(online.offline).toBe(false);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).token).not.toBe(forged);
    ok(await call(e, 'shutdown'));
    // Offline: no licence. The seal dropped altogether is no better.
    await svc.stop();
    try {
      fs.writeFileSync(file, JSON.stringify(tampered));
      const refused = await call(e, 'init', initParams(dir));
      expect(code(refused)).toBe('unauthorized');
      expect((refused as { error: { message: string } }).error.message).toMatch(/does not match its seal/);
      const { seal: _seal, ...unsealed } = tampered;
      fs.writeFileSync(file, JSON.stringify(unsealed));
      expect(code(await call(e, 'init', initParams(dir)))).toBe('unauthorized');
      // The genuine cache still works offline.
      fs.writeFileSync(file, genuine);
      expect(ok(await call(e, 'init', initParams(dir))).offline).toBe(true);
      ok(await call(e, 'shutdown'));
    } finally {
      await svc.restart();
    }
  });
});

describe('the telemetry timer', () => {
  it('reports to the service on its own, every telemetry_interval_seconds', { timeout: 30_000 }, async () => {
    const e = createEngine({ startWorker: false });
    ok(await call(e, 'init', initParams(tempDir(), { agent_id: 'pos-timer', telemetry_interval_seconds: 1 })));
    try {
      const count = async () => Number((await svc.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM fleet_points WHERE agent_id = 'pos-timer'`)).rows[0]!.n);
      const until = Date.now() + 15_000;
      while ((await count()) < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
      expect(await count()).toBeGreaterThanOrEqual(2);
    } finally {
      ok(await call(e, 'shutdown'));
    }
  });
});

describe('fiscalCall (the package export)', () => {
  it('is the same envelope, object in object out, string in string out', async () => {
    expect(await fiscalCall({ version: 1, method: 'queue_status' })).toEqual({ version: 1, error: { code: 'not_initialized', message: 'the engine is not initialised: call init first' } });
    expect(JSON.parse(await fiscalCall('{"version":1,"method":"nope"}'))).toMatchObject({ error: { code: 'unknown_method' } });
  });
});
