import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_API_DOCS } from '../../src/countries/api-docs.ts';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import type { RateLimiter } from '../../src/ratelimit/limiter.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert } from '../support/p12.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * The SDK's types are the document's schemas: this test holds real answers of the service
 * (both stores) against the document it serves. For each answer: its status is one the
 * operation documents, its content type one of that status's, and its body validates
 * against the schema, with formats (uuid, date-time…), nullability and enums checked, and
 * no field the schema does not name (an undocumented field is missing from the SDK's types).
 */
type Schema = Record<string, any>;

let t: TestApp;
let doc: Schema;
let ajv: Ajv2020;
const compiled = new Map<string, ValidateFunction>();

/** Every object schema that lists its properties and says nothing of others gets `unevaluatedProperties: false`. */
function closeObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closeObjects);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as Schema).map(([p, s]) => [p, closeObjects(s)])) : closeObjects(v);
  if (out.properties && out.additionalProperties === undefined && out.unevaluatedProperties === undefined) out.unevaluatedProperties = false;
  return out;
}

function validatorFor(method: string, path: string, status: number, type: string): ValidateFunction | 'undocumented-status' | 'undocumented-type' | 'no-content' {
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path} is not in the document`);
  const res = op.responses[String(status)] ?? op.responses.default;
  if (!res) return 'undocumented-status';
  if (!res.content) return 'no-content';
  const media = res.content[type];
  if (!media) return 'undocumented-type';
  const id = `${method} ${path} ${status} ${type}`;
  let v = compiled.get(id);
  if (!v) {
    const text = JSON.stringify(closeObjects(media.schema ?? {})).replaceAll('"#/components/', '"doc#/components/');
    v = ajv.compile(JSON.parse(text));
    compiled.set(id, v);
  }
  return v;
}

const problems: string[] = [];
/** Checks one answer against the document; returns its JSON body. */
function conform(method: string, path: string, res: LightMyRequestResponse): any {
  const where = `${method} ${path} → ${res.statusCode}`;
  const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
  if (res.statusCode === 204 || res.body === '') {
    const v = validatorFor(method, path, res.statusCode, 'application/json');
    if (v === 'undocumented-status') problems.push(`${where}: status not documented`);
    return undefined;
  }
  const v = validatorFor(method, path, res.statusCode, type);
  if (v === 'undocumented-status') problems.push(`${where}: status not documented`);
  else if (v === 'undocumented-type') problems.push(`${where}: content type ${type} not documented`);
  else if (v === 'no-content') problems.push(`${where}: answers a ${type} body, the document declares none`);
  else if (type === 'application/json') {
    const body = res.json();
    if (!v(body)) problems.push(`${where}: ${ajv.errorsText(v.errors, { separator: '; ' })} — body ${res.body.slice(0, 300)}`);
    return body;
  }
  return type === 'application/json' ? res.json() : res.body;
}

beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
  ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateFormats: true }));
  ajv.addSchema({ $id: 'doc', components: doc.components ?? {} }, 'doc');
});
afterAll(() => t?.close());

const fr = SYSTEM_API_DOCS.find((d) => d.key === 'fr-nf525')!;

describe('real answers match the OpenAPI document (the SDK\'s types)', () => {
  it('accounts, keys, locations, transactions, webhooks, certificates, queues, errors', async () => {
    const call = async (method: string, path: string, url: string, opts: { key?: string; payload?: unknown; headers?: Record<string, string> } = {}) =>
      conform(method, path, await t.request({ method: method as 'GET', url, ...(opts.key ? { key: opts.key } : {}), ...(opts.payload !== undefined ? { payload: opts.payload as object } : {}), ...(opts.headers ? { headers: opts.headers } : {}) }));

    await call('GET', '/health', '/health');
    await call('GET', '/version', '/version');
    const signup = await call('POST', '/v1/accounts', '/v1/accounts', {
      payload: { name: 'Contract SL', billing_email: `contract-${crypto.randomUUID()}@example.com`, terms_accepted_at: '2026-01-01T00:00:00Z', privacy_policy_version: 'v1' },
    });
    const key = signup.api_key.key as string;
    await call('POST', '/v1/accounts', '/v1/accounts', { payload: { name: 'Dup', billing_email: signup.account.billing_email } });
    await call('POST', '/v1/accounts', '/v1/accounts', { payload: { billing_email: 'x@example.com' } });
    await call('GET', '/v1/account/status', '/v1/account/status', { key });
    await call('GET', '/v1/account/status', '/v1/account/status');
    await call('GET', '/v1/account/status', '/v1/account/status', { key: 'svc_test_nope' });
    await call('GET', '/v1/account/onboarding', '/v1/account/onboarding', { key });
    await call('GET', '/v1/account/usage', '/v1/account/usage', { key });
    const consent = await call('POST', '/v1/account/consents', '/v1/account/consents', { key, payload: { type: 'marketing', version: 'v3' } });
    await call('GET', '/v1/account/consents', '/v1/account/consents', { key });
    if (consent?.id) await call('DELETE', '/v1/account/consents/{id}', `/v1/account/consents/${consent.id}`, { key });
    await call('GET', '/v1/account/consents', '/v1/account/consents', { key });

    const restricted = await call('POST', '/v1/api-keys', '/v1/api-keys', { key, payload: { name: 'pos', permissions: ['transactions:read'] } });
    await call('GET', '/v1/api-keys', '/v1/api-keys', { key });
    await call('POST', '/v1/api-keys/{id}/rotate', `/v1/api-keys/${restricted.id}/rotate`, { key });
    await call('DELETE', '/v1/api-keys/{id}', `/v1/api-keys/${restricted.id}`, { key });
    await call('DELETE', '/v1/api-keys/{id}', `/v1/api-keys/${restricted.id}`, { key });
    await call('POST', '/v1/api-keys', '/v1/api-keys', { key, payload: { name: 'bad', permissions: ['nope:read'] } });
    await call('POST', '/v1/api-keys', '/v1/api-keys', { key, payload: { name: 'live', environment: 'live' } });
    await call('GET', '/v1/api-keys', '/v1/api-keys', { key });

    const location = await call('POST', '/v1/locations', '/v1/locations', { key, payload: fr.location });
    await call('POST', '/v1/locations', '/v1/locations', { key, payload: { name: 'Bar', country: 'ES' } });
    await call('GET', '/v1/locations', '/v1/locations', { key });
    await call('GET', '/v1/locations', '/v1/locations?status=bogus', { key });
    await call('GET', '/v1/locations/{id}', `/v1/locations/${location.id}`, { key });
    await call('GET', '/v1/locations/{id}', '/v1/locations/00000000-0000-4000-8000-000000000000', { key });
    await call('PATCH', '/v1/locations/{id}', `/v1/locations/${location.id}`, { key, payload: { name: 'Renamed' } });
    await call('GET', '/v1/locations/{id}/closures', `/v1/locations/${location.id}/closures`, { key });
    await call('GET', '/v1/locations/{id}/jet', `/v1/locations/${location.id}/jet`, { key });
    await call('GET', '/v1/locations/{id}/archives', `/v1/locations/${location.id}/archives`, { key });

    const sale = { ...fr.sale, location_id: location.id };
    const tx = await call('POST', '/v1/transactions', '/v1/transactions', { key, payload: sale, headers: { 'idempotency-key': 'contract-1' } });
    await call('POST', '/v1/transactions', '/v1/transactions', { key, payload: sale, headers: { 'idempotency-key': 'contract-1' } });
    await call('POST', '/v1/transactions', '/v1/transactions', { key, payload: { ...sale, total_amount: 1 }, headers: { 'idempotency-key': 'contract-1' } });
    await call('POST', '/v1/transactions', '/v1/transactions', { key, payload: { ...sale, items: [] } });
    await call('POST', '/v1/transactions/preview', '/v1/transactions/preview', { key, payload: sale });
    await call('GET', '/v1/transactions', '/v1/transactions', { key });
    await call('GET', '/v1/transactions', '/v1/transactions?status=success&limit=5', { key });
    await call('GET', '/v1/transactions/{id}', `/v1/transactions/${tx.id}`, { key });
    await call('GET', '/v1/transactions/{id}/fiscal-record', `/v1/transactions/${tx.id}/fiscal-record`, { key });
    await call('GET', '/v1/transactions/{id}/receipt', `/v1/transactions/${tx.id}/receipt`, { key });
    const cancel = await call('POST', '/v1/transactions/{id}/cancel', `/v1/transactions/${tx.id}/cancel`, { key, payload: { reason: 'mistake' } });
    await call('POST', '/v1/transactions/{id}/cancel', `/v1/transactions/${tx.id}/cancel`, { key, payload: {} });
    await call('POST', '/v1/transactions/{id}/cancel', `/v1/transactions/${cancel.id}/cancel`, { key, payload: {} });
    await call('GET', '/v1/transactions/{id}', `/v1/transactions/${cancel.id}`, { key });
    await call('GET', '/v1/transactions/{id}', '/v1/transactions/00000000-0000-4000-8000-000000000000', { key });

    // A Spanish sale whose submission fails: error_message and submit_error.
    const es = SYSTEM_API_DOCS.find((d) => d.key === 'es-verifactu')!;
    const esLoc = await call('POST', '/v1/locations', '/v1/locations', { key, payload: es.location });
    const failing = await call('POST', '/v1/transactions', '/v1/transactions', {
      key, payload: { ...es.sale, location_id: esLoc.id, metadata: { ...(es.sale as { metadata?: object }).metadata, sandbox_outcome: 'reject:1100' } },
    });
    for (let i = 0; i < 3; i++) await t.worker.drain();
    await call('GET', '/v1/transactions/{id}', `/v1/transactions/${failing.id}`, { key });
    await call('GET', '/v1/retry-queue', '/v1/retry-queue', { key });
    await call('GET', '/v1/retry-queue/stats', '/v1/retry-queue/stats', { key });
    await call('POST', '/v1/translations/errors', '/v1/translations/errors', { key, payload: { error_code: '1100', country: 'ES', system: 'verifactu' } });
    await call('POST', '/v1/translations/errors', '/v1/translations/errors', { key, payload: { country: 'ES' } });

    const hook = await call('POST', '/v1/webhooks', '/v1/webhooks', { key, payload: { url: 'https://example.com/hook', events: ['fiscalization.completed'], description: 'd' } });
    await call('POST', '/v1/webhooks', '/v1/webhooks', { key, payload: { url: 'nope', events: ['fiscalization.completed'] } });
    await call('GET', '/v1/webhooks', '/v1/webhooks', { key });
    await call('GET', '/v1/webhooks/{id}', `/v1/webhooks/${hook.id}`, { key });
    await call('PATCH', '/v1/webhooks/{id}', `/v1/webhooks/${hook.id}`, { key, payload: { enabled: false } });
    await call('POST', '/v1/webhooks/{id}/rotate-secret', `/v1/webhooks/${hook.id}/rotate-secret`, { key });
    await call('GET', '/v1/webhooks/{id}/deliveries', `/v1/webhooks/${hook.id}/deliveries`, { key });
    await call('DELETE', '/v1/webhooks/{id}', `/v1/webhooks/${hook.id}`, { key });

    const p12 = exportP12(generateCert(), 'pw');
    const form = new FormData();
    form.set('certificate', new Blob([new Uint8Array(p12)]), 'c.p12');
    form.set('password', 'pw');
    form.set('certificate_id', 'contract.cert');
    const formReq = new Request('http://x/', { method: 'POST', body: form });
    const upload = await t.request({
      method: 'POST', url: '/v1/certificates', key, payload: Buffer.from(await formReq.arrayBuffer()),
      headers: { 'content-type': formReq.headers.get('content-type')! },
    });
    conform('POST', '/v1/certificates', upload);
    await call('GET', '/v1/certificates', '/v1/certificates', { key });
    await call('DELETE', '/v1/certificates/{id}', '/v1/certificates/contract.cert', { key });
    await call('DELETE', '/v1/certificates/{id}', '/v1/certificates/contract.cert', { key });

    await call('POST', '/v1/admin/process-pending', '/v1/admin/process-pending', { key, payload: {} });
    await call('GET', '/v1/admin/batch-stats', '/v1/admin/batch-stats', { key });
    await call('GET', '/v1/batch/schedule', '/v1/batch/schedule', { key });
    await call('POST', '/v1/agents/{agent_id}/telemetry', '/v1/agents/pos-1/telemetry', {
      key, payload: { data_points: [{ timestamp: new Date().toISOString(), transactions_total: 10, transactions_failed: 0, queue_pending: 1, queue_dead: 0, storage_used_bytes: 1, storage_total_bytes: 10, adapter_versions: { a: '1' } }] },
    });
    await call('GET', '/v1/fleet/metrics', `/v1/fleet/metrics?account_id=${signup.account.id}`, { key });
    await call('GET', '/v1/fleet/metrics', `/v1/fleet/metrics?account_id=${signup.account.id}&range=2d`, { key });
    await call('GET', '/v1/subscriptions', '/v1/subscriptions', { key });
    await call('POST', '/v1/portal/sessions', '/v1/portal/sessions', { key });
    await call('GET', '/management/v1/keys', '/management/v1/keys', { key });
    await call('DELETE', '/v1/locations/{id}', `/v1/locations/${esLoc.id}`, { key });

    // What the JSON parser and the auth hook answer before any route: malformed, too large,
    // wrong content type, a live key while live mode is off.
    const early = [
      ['POST', '/v1/locations', await t.request({ method: 'POST', url: '/v1/locations', key, payload: '{"name":', headers: { 'content-type': 'application/json' } })],
      ['POST', '/v1/locations', await t.request({ method: 'POST', url: '/v1/locations', key, payload: 'name=x', headers: { 'content-type': 'text/plain' } })],
      ['POST', '/v1/webhooks', await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: JSON.stringify({ url: 'https://example.com', events: ['x'.repeat(2_000_000)] }), headers: { 'content-type': 'application/json' } })],
    ] as const;
    for (const [method, path, res] of early) conform(method, path, res);
    const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'live2', environment: 'live' } })).json().key as string;
    const liveRes = await t.request({ method: 'GET', url: '/v1/locations', key: live });
    conform('GET', '/v1/locations', liveRes);
    expect([...early.map(([, , r]) => r.statusCode), liveRes.statusCode]).toEqual([400, 415, 413, 403]);

    expect(problems).toEqual([]);
  });

  it('a 429 answer: `{error: "rate_limit_exceeded", retry_after}` and Retry-After, as documented', async () => {
    // Burst 1: the second request of the account is refused. Sign-ups keep their own bucket.
    const inner = createMemoryLimiter();
    const limiter: RateLimiter = {
      take: (k, spec, now) => inner.take(k, k.startsWith('signup:') ? spec : { requestsPerMinute: 1, burst: 1 }, now),
      close: () => inner.close(),
    };
    const limited = await startTestApp({ db: t.db, limiter });
    try {
      const { key } = await limited.signup();
      await limited.request({ method: 'GET', url: '/v1/account/status', key });
      const res = await limited.request({ method: 'GET', url: '/v1/account/status', key });
      expect(res.statusCode).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const before = problems.length;
      conform('GET', '/v1/account/status', res);
      expect(problems.slice(before)).toEqual([]);
    } finally {
      await limited.close();
    }
  });

  it('closed sets of the spec are enums in the document, so the SDK types them as unions', () => {
    const json = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content['application/json'].schema;
    const tx = json('/v1/transactions/{id}', 'get', '200').properties;
    expect(tx.type.enum).toEqual(['sale', 'refund', 'void', 'cancellation']);
    expect(tx.environment.enum).toEqual(['test', 'live']);
    expect(tx.status.enum).toEqual(expect.arrayContaining(['pending', 'processing', 'success', 'failed', 'failed_permanent', 'pending_lroe', 'cancelled']));
    // The list filter and the field take the same values.
    expect(tx.status.enum).toEqual(doc.paths['/v1/transactions'].get.parameters.find((p: { name: string }) => p.name === 'status').schema.enum);
    expect(json('/v1/locations/{id}', 'get', '200').properties.status.enum).toEqual(['active', 'inactive']);
    expect(json('/v1/account/status', 'get', '200').properties.status.enum).toEqual(['active', 'suspended', 'cancelled']);
    expect(json('/v1/retry-queue', 'get', '200').properties.data.items.properties.status.enum).toEqual(['pending', 'processing', 'completed', 'failed', 'dead']);
    expect(json('/v1/account/consents', 'post', '201').properties.type.enum).toEqual(['terms', 'privacy_policy', 'marketing', 'data_processing']);
  });
});
