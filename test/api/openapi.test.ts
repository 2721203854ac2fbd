import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_LOCATION_ID, SYSTEM_API_DOCS } from '../../src/countries/api-docs.ts';
import { SYSTEM_KEYS } from '../../src/countries/registry.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * Every route the app registered, from its own route table (printRoutes, not a list kept
 * by hand): routes added later (preview, receipts, metrics, portal…) are covered as they
 * come. HEAD/OPTIONS are Fastify's own; the routes below are left out of the document on
 * purpose (a route hidden with `schema.hide` must be added here, or it fails this test).
 */
// The reference itself, its page, and the merchant portal's HTML pages (docs/portal.md: a web UI, not API).
const UNDOCUMENTED = [/^\/openapi\.json$/, /^\/docs(\/|$)/, /^\/portal(\/|$)/];

function registeredRoutes(app: FastifyInstance): { method: string; url: string }[] {
  const out: { method: string; url: string }[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│   |    )*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    stack.length = m[1]!.length / 4;
    stack.push(m[2]!);
    for (const method of m[3]?.split(', ') ?? []) out.push({ method, url: stack.join('') });
  }
  return out.filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !UNDOCUMENTED.some((re) => re.test(r.url)));
}

type Operation = { operationId?: string; security?: unknown[]; parameters?: { in: string; name: string }[]; requestBody?: any; responses: Record<string, any> };
function operations(doc: any): { path: string; method: string; op: Operation }[] {
  return Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })));
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('API reference', () => {
  it('GET /openapi.json is an OpenAPI 3.1 document of every route, with bearer security', async () => {
    const res = await t.request({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [path, method] of [
      ['/v1/accounts', 'post'], ['/v1/account/status', 'get'], ['/v1/account/consents', 'get'], ['/v1/account/consents', 'post'],
      ['/v1/account/consents/{id}', 'delete'], ['/v1/account/onboarding', 'get'], ['/v1/account/usage', 'get'], ['/v1/api-keys', 'get'], ['/v1/api-keys', 'post'], ['/v1/api-keys/{id}', 'delete'],
      ['/v1/api-keys/{id}/rotate', 'post'], ['/v1/locations', 'get'], ['/v1/locations', 'post'], ['/v1/locations/{id}', 'get'],
      ['/v1/locations/{id}', 'patch'], ['/v1/locations/{id}', 'delete'], ['/health', 'get'], ['/version', 'get'],
      ['/v1/transactions', 'post'], ['/v1/transactions', 'get'], ['/v1/transactions/{id}', 'get'],
      ['/v1/transactions/{id}/fiscal-record', 'get'], ['/v1/transactions/{id}/cancel', 'post'],
      ['/v1/retry-queue', 'get'], ['/v1/retry-queue/stats', 'get'],
      ['/v1/webhooks', 'post'], ['/v1/webhooks', 'get'], ['/v1/webhooks/{id}', 'get'], ['/v1/webhooks/{id}', 'patch'],
      ['/v1/webhooks/{id}', 'delete'], ['/v1/webhooks/{id}/rotate-secret', 'post'], ['/v1/translations/errors', 'post'],
      ['/v1/certificates', 'post'], ['/v1/certificates', 'get'], ['/v1/certificates/{id}', 'delete'],
      ['/v1/admin/process-pending', 'post'], ['/v1/admin/batch-stats', 'get'], ['/v1/batch/schedule', 'get'],
      ['/v1/locations/{id}/corrispettivi', 'get'], ['/v1/locations/{id}/closures', 'get'], ['/v1/locations/{id}/jet', 'get'], ['/v1/locations/{id}/saft', 'get'],
      ['/v1/locations/{id}/archives', 'get'], ['/v1/locations/{id}/archives/{archive_id}', 'get'],
      ['/v1/portal/sessions', 'post'], ['/v1/portal/sessions/current', 'delete'], ['/management/v1/tokens', 'post'], ['/management/v1/keys', 'get'],
      ['/v1/agents/{agent_id}/telemetry', 'post'], ['/v1/fleet/metrics', 'get'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    // The paged inspector lists (France): limit/offset, the spec's list shape.
    const closures = doc.paths['/v1/locations/{id}/closures'].get;
    expect(closures.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['limit', 'offset']));
    expect(closures.responses['200'].content['application/json'].schema.required).toEqual(['data', 'total', 'limit', 'offset']);
    // A listed file's item: downloaded by its id, a file with its content type.
    const archive = doc.paths['/v1/locations/{id}/archives/{archive_id}'].get;
    expect(archive.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['id', 'archive_id']));
    expect(Object.keys(archive.responses['200'].content)).toEqual(['application/json']);
    expect(archive.responses['404']).toBeDefined();
    const create = doc.paths['/v1/locations'].post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(expect.arrayContaining(['name', 'country']));
    expect(create.responses['201']).toBeDefined();
    // The sandbox magic values and the placeholder marking are documented where integrators look.
    expect(JSON.stringify(doc.paths['/v1/transactions'].post)).toContain('sandbox_outcome');
    expect(JSON.stringify(doc.paths['/v1/transactions/{id}/fiscal-record'].get)).toContain('X-Fiscal-Record-Placeholder');
  });

  it('every registered route is in the document, with a unique stable operationId and its errors as {error} bodies', async () => {
    const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    const routes = registeredRoutes(t.app);
    expect(routes.length).toBeGreaterThan(50);
    for (const r of routes) {
      const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      expect(doc.paths[path]?.[r.method.toLowerCase()], `${r.method} ${path} is documented`).toBeDefined();
    }
    const ops = operations(doc);
    expect(ops.length).toBe(routes.length);
    const ids = ops.map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id)), 'every operationId is a camelCase name').toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // Stable names the SDK is built on.
    expect(doc.paths['/v1/transactions'].post.operationId).toBe('createTransaction');
    expect(doc.paths['/v1/locations/{id}'].patch.operationId).toBe('updateLocation');

    for (const { path, method, op } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      const codes = Object.keys(op.responses);
      expect(codes.some((c) => c.startsWith('2')), `${where}: a success response`).toBe(true);
      const expected = ['500', '503'];
      if (op.security?.length) expected.push('401', '403', '429');
      if (method === 'post' || method === 'patch') expected.push('400', '413', '415');
      if (path.includes('{')) expected.push('404');
      expect(codes, where).toEqual(expect.arrayContaining(expected));
      for (const code of codes.filter((c) => Number(c) >= 400)) {
        const res = op.responses[code];
        expect(res.description, `${where} ${code}: described`).not.toBe('Default Response');
        expect(res.content['application/json'].schema.properties.error, `${where} ${code}: an {error} body`).toMatchObject({ type: 'string' });
      }
      if (op.responses['429']) expect(op.responses['429'].headers?.['Retry-After'], `${where}: 429 Retry-After`).toBeDefined();
    }
  });

  it('the document is valid: OpenAPI 3.1 structure, every schema valid JSON Schema 2020-12, refs resolve, examples match their schemas', async () => {
    const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateFormats: true }));
    ajv.addSchema({ $id: 'doc', components: doc.components ?? {} }, 'doc');
    const compile = (schema: object, where: string) => {
      // Refs point at #/components/schemas/…: resolved against the document.
      const text = JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/');
      expect(ajv.validateSchema(JSON.parse(text)), `${where}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
      return ajv.compile(JSON.parse(text));
    };
    for (const { path, method, op } of operations(doc)) {
      const where = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) {
        expect(['query', 'path', 'header', 'cookie'], where).toContain(p.in);
        if (p.in === 'path') {
          expect(path, `${where}: path parameter ${p.name}`).toContain(`{${p.name}}`);
          expect((p as { required?: boolean }).required, `${where}: path parameter ${p.name} required`).toBe(true);
        }
      }
      for (const param of path.match(/\{[^}]+\}/g) ?? []) {
        expect(op.parameters?.some((p) => p.in === 'path' && `{${p.name}}` === param), `${where}: ${param} declared`).toBe(true);
      }
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) {
        const validate = compile(media.schema ?? {}, `${where} body ${type}`);
        for (const [name, ex] of Object.entries<any>(media.examples ?? {})) {
          expect(validate(ex.value), `${where} example ${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        }
      }
      for (const [code, res] of Object.entries<any>(op.responses)) {
        expect(typeof res.description, `${where} ${code}`).toBe('string');
        for (const [type, media] of Object.entries<any>(res.content ?? {})) compile(media.schema ?? {}, `${where} ${code} ${type}`);
      }
    }
  });

  it('an example location and sale for every fiscal system, each accepted by the service (201)', async () => {
    expect(SYSTEM_API_DOCS.map((d) => d.key)).toEqual([...SYSTEM_KEYS]);
    const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    const locationExamples = doc.paths['/v1/locations'].post.requestBody.content['application/json'].examples;
    const saleExamples = doc.paths['/v1/transactions'].post.requestBody.content['application/json'].examples;
    expect(Object.keys(locationExamples)).toEqual([...SYSTEM_KEYS]);
    expect(Object.keys(saleExamples)).toEqual([...SYSTEM_KEYS]);
    const { key } = await t.signup();
    for (const system of SYSTEM_KEYS) {
      const loc = await t.request({ method: 'POST', url: '/v1/locations', key, payload: locationExamples[system].value });
      expect(loc.statusCode, `${system} location: ${loc.body}`).toBe(201);
      expect(loc.json().system).toBe(system);
      const sale = { ...saleExamples[system].value };
      expect(sale.location_id).toBe(EXAMPLE_LOCATION_ID);
      const tx = await t.request({ method: 'POST', url: '/v1/transactions', key, payload: { ...sale, location_id: loc.json().id } });
      expect(tx.statusCode, `${system} sale: ${tx.body}`).toBe(201);
    }
  });

  it('typing the bodies in the document changed no validation and no message', async () => {
    const { key } = await t.signup();
    const fr = SYSTEM_API_DOCS.find((d) => d.key === 'fr-nf525')!;
    const loc = (await t.request({ method: 'POST', url: '/v1/locations', key, payload: fr.location })).json();
    const sale = { ...fr.sale, location_id: loc.id };
    const errorOf = async (url: string, payload: unknown) => {
      const res = await t.request({ method: 'POST', url, key, payload: payload as object });
      return [res.statusCode, res.json().error];
    };
    expect(await errorOf('/v1/transactions', { ...sale, items: [] })).toEqual([400, 'items must be a non-empty array']);
    expect(await errorOf('/v1/transactions', { ...sale, total_amount: (sale as unknown as { total_amount: number }).total_amount + 5 })).toEqual([400, 'pretax_amount + tax_amount must equal total_amount']);
    const { location_id: _omit, ...noLocation } = sale;
    expect(await errorOf('/v1/transactions', noLocation)).toEqual([400, "Key: 'CreateRequest.LocationID' Error:Field validation for 'LocationID' failed on the 'required' tag"]);
    expect(await errorOf('/v1/transactions', { ...sale, location_id: '00000000-0000-4000-8000-000000000000' })).toEqual([400, 'location not found']);
    expect(await errorOf('/v1/locations', { country: 'FR' })).toEqual([400, "Key: 'CreateRequest.Name' Error:Field validation for 'Name' failed on the 'required' tag"]);
    expect(await errorOf('/v1/locations', { name: 'Bar', country: 'ES' })).toEqual([400, 'Spain locations require country_config with system field (ticketbai, verifactu or sii)']);
    expect(await errorOf('/v1/locations', { name: 'Café', country: 'FR', country_config: { register_id: '73282932000074' } })).toEqual([400, 'country_config.legal_name is required for France locations']);
    // The guide form, which the documented canonical schema alone would not describe, is still accepted.
    const guide = { location_id: loc.id, type: 'sale', amount: 1210, currency: 'EUR', payment_method: 'cash', line_items: [{ description: 'Café', quantity: 1, unit_price: 1100, vat_rate: 1000 }] };
    const res = await t.request({ method: 'POST', url: '/v1/transactions', key, payload: guide });
    expect([res.statusCode, res.body]).toEqual([201, expect.any(String)]);
  });

  it('GET /docs renders the reference page without a key', async () => {
    const res = await t.request({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toMatch(/swagger/i);
    const redirect = await t.request({ method: 'GET', url: '/docs' });
    expect([200, 302]).toContain(redirect.statusCode);
  });
});
