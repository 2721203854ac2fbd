import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.ts';
import { deriveKeys } from '../../src/crypto/master-key.ts';
import { CONTROL_IN_BODY, LONE_SURROGATE_IN_BODY, NUL_IN_BODY, buildApp } from '../../src/http/app.ts';
import { TOO_DEEP_BODY } from '../../src/core/json-depth.ts';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';
import type { Db } from '../../src/store/db.ts';
import { createRuntime } from '../../src/runtime.ts';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { TEST_MASTER_KEY, startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, saleBody, saleMetadata } from '../support/transactions.ts';

/** A runtime over a given store, for apps the test builds itself. */
function runtime(db: Db, log = pino({ level: 'silent' })) {
  return createRuntime({
    db, clock: systemClock, keys: deriveKeys(TEST_MASTER_KEY), limiter: createMemoryLimiter(),
    log: log as unknown as FastifyBaseLogger, config: { liveEnabled: false, mode: 'cloud' },
  });
}

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp({ app: { bodyLimitBytes: 4096 } });
  ({ key } = await t.signup());
});
afterAll(() => t.close());

const auth = () => ({ authorization: `Bearer ${key}` });

describe('error responses are {error: string} with the right status, never a 500 for bad input', () => {
  it('400 malformed JSON', async () => {
    const res = await t.request({ method: 'POST', url: '/v1/locations', headers: { ...auth(), 'content-type': 'application/json' }, payload: '{"name": "x",' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'malformed JSON body' });
  });

  it('400 for a NUL character in a string (the store cannot hold one), escaped or raw; an escaped backslash before u0000 is plain text', async () => {
    const loc = await createLocation(t, key, 'fr-nf525');
    const body = (description: string) => JSON.stringify(saleBody(loc, { items: [
      { description, quantity: 1, unit_price: 1200, tax_rate: 10, tax_amount: 120, total_amount: 1320 },
      { description: 'Vino', quantity: 2, unit_price: 300, tax_rate: 21, tax_amount: 126, total_amount: 726 },
    ] }));
    const post = (payload: string) => t.request({ method: 'POST', url: '/v1/transactions', headers: { ...auth(), 'content-type': 'application/json' }, payload });
    for (const payload of [body('Men\u0000u'), body('Men\u0000u').replace('\\u0000', '\u0000'), JSON.stringify({ name: 'Shop\u0000' })]) {
      const res = await post(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: NUL_IN_BODY });
    }
    const plain = await post(body('a backslash then u0000: \\u0000'));
    expect(plain.statusCode).toBe(201);
    const stored = await t.db.query<{ d: string }>(`SELECT normalized->'items'->0->>'description' AS d FROM transactions WHERE id = $1`, [plain.json().id]);
    expect(stored.rows[0]!.d).toBe('a backslash then u0000: \\u0000');
  });

  it('400 for a character XML cannot carry (C0 controls but tab, LF, CR; U+FFFE, U+FFFF), escaped or raw, for every system; tab, newlines and an escaped backslash pass', async () => {
    const post = (payload: string) => t.request({ method: 'POST', url: '/v1/transactions', headers: { ...auth(), 'content-type': 'application/json' }, payload });
    for (const system of ['es-ticketbai', 'es-sii', 'pt-saft', 'fr-nf525'] as const) {
      const loc = await createLocation(t, key, system);
      const body = (description: string) => JSON.stringify(saleBody(loc, { metadata: { ...saleMetadata[system] }, items: [
        { description, quantity: 1, unit_price: 1200, tax_rate: 10, tax_amount: 120, total_amount: 1320 },
        { description: 'Vino', quantity: 2, unit_price: 300, tax_rate: 21, tax_amount: 126, total_amount: 726 },
      ] }));
      for (const payload of [body('bell\u0007'), body('Men\u0001u'), body('x\u000b\u000c\u001f'), body('bom \ufffe'), body('raw \uffff').replace('\\uffff', '\uffff'), JSON.stringify({ name: 'Shop\u0008' })]) {
        const res = await post(payload);
        expect([res.statusCode, res.json()], `${system} ${payload.slice(0, 60)}`).toEqual([400, { error: CONTROL_IN_BODY }]);
      }
      for (const ok of ['tab\tand\nnewline\r', 'a backslash then u0001: \\u0001']) {
        const res = await post(body(ok));
        expect(res.statusCode, `${system} ${res.body}`).toBe(201);
      }
    }
  });

  it('400 for a lone UTF-16 surrogate (escaped: UTF-8 cannot carry one), in a value or a key; a pair, escaped or raw, and an escaped backslash pass', async () => {
    const post = (payload: string) => t.request({ method: 'POST', url: '/v1/transactions', headers: { ...auth(), 'content-type': 'application/json' }, payload });
    const loc = await createLocation(t, key, 'pt-saft');
    const body = (name: string) => JSON.stringify(saleBody(loc, { metadata: { ...saleMetadata['pt-saft'] }, customer_context: { name } }));
    // JSON.stringify writes a lone surrogate as its escape (well-formed JSON.stringify).
    for (const payload of [body('Cliente \ud83d'), body('\ude00 first'), body('reversed \ude00\ud83d'), JSON.stringify({ ['k\ud800']: 1, name: 'Shop' })]) {
      expect(payload).toMatch(/\\ud[89a-f]/i);
      const res = await post(payload);
      expect([res.statusCode, res.json()], payload.slice(-80)).toEqual([400, { error: LONE_SURROGATE_IN_BODY }]);
    }
    for (const ok of [body('emoji 😀'), body('emoji 😀').replace('😀', '\\ud83d\\ude00'), body('a backslash then ud83d: \\ud83d')]) {
      const res = await post(ok);
      expect(res.statusCode, `${ok.slice(-80)} ${res.body}`).toBe(201);
    }
  });

  it('400 for a body nested deeper than 64 levels (the idempotency hash overflowed the stack at ~3,000: a 500), on create and preview alike', async () => {
    // This file's app takes 4 KB bodies: 1,500 levels fit, 65 are enough to be refused.
    const loc = await createLocation(t, key, 'fr-nf525');
    const deep = (n: number) => JSON.stringify(saleBody(loc)).replace(/}$/, `,"metadata":{"x":${'['.repeat(n)}1${']'.repeat(n)}}}`);
    for (const url of ['/v1/transactions', '/v1/transactions/preview']) {
      const res = await t.request({ method: 'POST', url, headers: { ...auth(), 'content-type': 'application/json' }, payload: deep(1500) });
      expect([res.statusCode, res.json()], url).toEqual([400, { error: TOO_DEEP_BODY }]);
    }
    const res = await t.request({ method: 'POST', url: '/v1/transactions', headers: { ...auth(), 'content-type': 'application/json' }, payload: deep(63) });
    expect([res.statusCode, res.json()]).toEqual([400, { error: TOO_DEEP_BODY }]);
    // 60 levels in metadata (62 with the body and metadata objects) is still a sale.
    const ok = await t.request({ method: 'POST', url: '/v1/transactions', headers: { ...auth(), 'content-type': 'application/json' }, payload: deep(60) });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('400 when the body is JSON but not an object, or missing where required', async () => {
    const arr = await t.request({ method: 'POST', url: '/v1/locations', headers: { ...auth(), 'content-type': 'application/json' }, payload: '[1,2]' });
    expect(arr.statusCode).toBe(400);
    expect(arr.json()).toEqual({ error: 'request body must be a JSON object' });
    const empty = await t.request({ method: 'POST', url: '/v1/locations', headers: { ...auth(), 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error).toBe("Key: 'CreateRequest.Name' Error:Field validation for 'Name' failed on the 'required' tag");
  });

  it('strips __proto__ from bodies (no prototype pollution)', async () => {
    const res = await t.request({
      method: 'POST', url: '/v1/account/consents', headers: { ...auth(), 'content-type': 'application/json' },
      payload: '{"type":"marketing","version":"v1","__proto__":{"polluted":true}}',
    });
    expect(res.statusCode).toBe(201);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('an empty body with a JSON content type is accepted where no body is needed', async () => {
    const created = await t.request({ method: 'POST', url: '/v1/api-keys', headers: auth(), payload: { name: 'x' } });
    const rot = await t.request({ method: 'POST', url: `/v1/api-keys/${created.json().id}/rotate`, headers: { ...auth(), 'content-type': 'application/json' }, payload: '' });
    expect(rot.statusCode).toBe(200);
  });

  it('404 JSON for an unknown route', async () => {
    const res = await t.request({ method: 'GET', url: '/v1/nothing-here?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'route not found: GET /v1/nothing-here' });
  });

  it('413 for a body over the limit', async () => {
    const res = await t.request({ method: 'POST', url: '/v1/locations', headers: { ...auth(), 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(10_000), country: 'FR' }) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'request body too large' });
  });

  it('415 for a body that is not JSON', async () => {
    const res = await t.request({ method: 'POST', url: '/v1/locations', headers: { ...auth(), 'content-type': 'text/plain' }, payload: 'name=x' });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({ error: 'unsupported content type: send application/json' });
  });

  it('a route throwing unexpectedly answers a generic 500 and logs the cause', async () => {
    const logs: string[] = [];
    const dest = { write: (line: string) => logs.push(line) };
    // Routes may still be added before the app is ready: the test adds one that fails.
    const app = await buildApp(runtime(t.db, pino({ level: 'error' }, dest)));
    app.get('/boom', { config: { public: true } }, async () => {
      throw new Error('secret internal detail');
    });
    const res = await app.inject({ method: 'GET', url: '/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal server error' });
    expect(logs.join('\n')).toContain('secret internal detail');
    await app.close();
  });

  it('a path parameter too long for the router is still a JSON 404 with a request id', async () => {
    const res = await t.request({ method: 'GET', url: `/v1/locations/${'a'.repeat(1100)}`, headers: auth() });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'not found' });
    // Up to 1,024 UTF-16 units the route answers itself.
    expect((await t.request({ method: 'GET', url: `/v1/locations/${'a'.repeat(300)}`, headers: auth() })).json()).toEqual({ error: 'location not found' });
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('a path parameter that is not a UUID is a 404, not a database error', async () => {
    for (const url of ['/v1/locations/abc', "/v1/locations/'%20OR%201=1", '/v1/locations/00000000-0000-0000-0000-00000000000g']) {
      const res = await t.request({ method: 'GET', url, headers: auth() });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'location not found' });
    }
  });
});

describe('database unreachable', () => {
  it('503 with Retry-After, on health and on authenticated routes', async () => {
    // A port with nothing listening: every connection attempt is refused.
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const db = await openPostgresDb(`postgres://postgres@127.0.0.1:${port}/none`, { connectionTimeoutMillis: 1000 });
    const app = await buildApp(runtime(db));
    try {
      for (const req of [
        { method: 'GET' as const, url: '/health' },
        { method: 'GET' as const, url: '/v1/locations', headers: { authorization: `Bearer ${key}` } },
        { method: 'POST' as const, url: '/v1/accounts', payload: { name: 'x', billing_email: 'x@example.com' } },
      ]) {
        const res = await app.inject(req);
        expect(res.statusCode, req.url).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.json()).toEqual({ error: 'service temporarily unavailable: database unreachable' });
      }
    } finally {
      await app.close();
      await db.close();
    }
  });
});
