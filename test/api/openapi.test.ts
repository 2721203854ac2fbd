import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';

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

  it('GET /docs renders the reference page without a key', async () => {
    const res = await t.request({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toMatch(/swagger/i);
    const redirect = await t.request({ method: 'GET', url: '/docs' });
    expect([200, 302]).toContain(redirect.statusCode);
  });
});
