import net from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.ts';
import { deriveKeys } from '../../src/crypto/master-key.ts';
import { CONTROL_IN_BODY, LONE_SURROGATE_IN_BODY, NOT_UTF8, NUL_IN_BODY, UNSUPPORTED_CHARSET, UNSUPPORTED_ENCODING, buildApp } from '../../src/http/app.ts';
import { TOO_DEEP_BODY } from '../../src/core/json-depth.ts';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';
import type { Db } from '../../src/store/db.ts';
import { createRuntime } from '../../src/runtime.ts';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { STORE, TEST_MASTER_KEY, createTestDatabase, startTestApp, type TestApp } from '../support/harness.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
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
    // saleBody's lines (French rates at a France location), the first one described.
    const body = (description: string) => {
      const sale = saleBody(loc);
      sale.items[0] = { ...sale.items[0]!, description };
      return JSON.stringify(sale);
    };
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
      // saleBody's lines for the location (French rates at France's), the first one described.
      const body = (description: string) => {
        const sale = saleBody(loc, { metadata: { ...saleMetadata[system] } });
        sale.items[0] = { ...sale.items[0]!, description };
        return JSON.stringify(sale);
      };
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

  it('a gzip or deflate body is inflated (the limit counts inflated bytes); another coding is a 415, a body that is not what it says a 400', async () => {
    const loc = await createLocation(t, key, 'fr-nf525');
    const body = JSON.stringify(saleBody(loc, { customer_context: { name: 'Café Ñandú' } }));
    const post = (encoding: string, payload: Buffer | string, url = '/v1/transactions/preview') =>
      t.request({ method: 'POST', url, headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': encoding }, payload });
    for (const [encoding, payload] of [['gzip', zlib.gzipSync(body)], ['GZIP', zlib.gzipSync(body)], ['x-gzip', zlib.gzipSync(body)], ['deflate', zlib.deflateSync(body)], ['identity', body]] as const) {
      const res = await post(encoding, payload);
      expect([res.statusCode, res.json().normalized?.customer_context?.name], `${encoding} ${res.body}`).toEqual([200, 'Café Ñandú']);
    }
    // Was 400 'strings in the body may not contain the NUL character' (gzip read as text).
    const created = await post('gzip', zlib.gzipSync(body), '/v1/transactions');
    expect(created.statusCode, created.body).toBe(201);
    for (const [encoding, payload] of [['br', zlib.brotliCompressSync(body)], ['gzip, br', body], ['compress', body]] as const) {
      expect([(await post(encoding, payload)).statusCode, (await post(encoding, payload)).json()], encoding).toEqual([415, { error: UNSUPPORTED_ENCODING }]);
    }
    for (const payload of [body, zlib.gzipSync(body).subarray(0, 40)]) {
      expect((await post('gzip', payload)).json()).toEqual({ error: 'request body is not valid gzip or deflate data' });
    }
    // 10 KB inflated from a few dozen bytes: over this app's 4 KB limit.
    const bomb = zlib.gzipSync(JSON.stringify({ name: 'x'.repeat(10_000) }));
    expect(bomb.length).toBeLessThan(200);
    expect([(await post('gzip', bomb, '/v1/locations')).statusCode, (await post('gzip', bomb, '/v1/locations')).json()]).toEqual([413, { error: 'request body too large' }]);
  });

  it('JSON in UTF-8 only: a charset parameter other than UTF-8 is a 415, bytes that are not UTF-8 a 400 (were read as U+FFFD); a BOM is ignored', async () => {
    const loc = await createLocation(t, key, 'fr-nf525');
    const body = JSON.stringify(saleBody(loc, { customer_context: { name: 'Café' } }));
    const post = (contentType: string, payload: Buffer | string) =>
      t.request({ method: 'POST', url: '/v1/transactions/preview', headers: { ...auth(), 'content-type': contentType }, payload });
    for (const ct of ['application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json; charset=UTF8', 'Application/JSON']) {
      const res = await post(ct, body);
      expect([res.statusCode, res.json().normalized?.customer_context?.name], ct).toEqual([200, 'Café']);
    }
    expect((await post('application/json', `\ufeff${body}`)).statusCode).toBe(200);
    for (const [ct, payload] of [['application/json; charset=iso-8859-1', Buffer.from(body, 'latin1')], ['application/json; charset=utf-16le', Buffer.from(body, 'utf16le')]] as const) {
      const res = await post(ct, payload);
      expect([res.statusCode, res.json()], ct).toEqual([415, { error: UNSUPPORTED_CHARSET }]);
    }
    const latin1 = await post('application/json', Buffer.from(body, 'latin1'));
    expect([latin1.statusCode, latin1.json()]).toEqual([400, { error: NOT_UTF8 }]);
  });

  it('a request line or headers too large for the HTTP parser (16 KB) is a JSON 431; a malformed request a JSON 400', async () => {
    const app = await buildApp(runtime(t.db));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as net.AddressInfo;
    const exchange = (request: string) => new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(request));
      let answer = '';
      socket.on('data', (c) => (answer += c)).on('close', () => resolve(answer)).on('error', reject);
    });
    try {
      for (const request of [
        `GET /v1/transactions?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
        `GET /v1/transactions HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      ]) {
        const answer = await exchange(request);
        expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
        expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toEqual({ error: 'request line and headers too large (at most 16 KB in all)' });
      }
      const garbage = await exchange('NOT HTTP\r\n\r\n');
      expect(garbage.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      expect(JSON.parse(garbage.split('\r\n\r\n')[1]!)).toEqual({ error: 'malformed HTTP request' });
    } finally {
      await app.close();
    }
  });

  it('HEAD on a GET route answers its status and headers without a body (auth and 404 included)', async () => {
    const ok = await t.request({ method: 'HEAD', url: '/v1/transactions', headers: auth() });
    expect([ok.statusCode, ok.body, ok.headers['x-ratelimit-limit']]).toEqual([200, '', '100']);
    expect((await t.request({ method: 'HEAD', url: '/v1/transactions' })).statusCode).toBe(401);
    expect((await t.request({ method: 'HEAD', url: '/v1/nothing-here' })).statusCode).toBe(404);
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

describe.runIf(STORE === 'postgres')('database connections lost (PostgreSQL behind a proxy the test controls)', () => {
  it('a connection cut while the create is on the wire: the pipe\'s, before the server saw it or after it ran it: 201, stored once (the ledger settles the outcome), the retry a replay; reads and writes 503 while it is down, and work again once it is back (no restart)', async () => {
    const url = await createTestDatabase();
    const proxy = await startTcpProxy({ host: new URL(url).hostname, port: Number(new URL(url).port || 5432) });
    const direct = await openPostgresDb(url);
    const db = await openPostgresDb(proxy.url(url), { connectionTimeoutMillis: 1000 });
    const app = await startTestApp({ db });
    try {
      const { key: k } = await app.signup();
      const loc = await createLocation(app, k, 'es-verifactu'); // a sale with a submission job
      const create = (idem: string) => app.request({ method: 'POST', url: '/v1/transactions', key: k, headers: { 'idempotency-key': idem }, payload: saleBody(loc) });
      const stored = async (idem: string) => (await direct.query<{ n: number; records: number; jobs: number }>(
        `SELECT count(*)::int AS n, (SELECT count(*)::int FROM fiscal_records r JOIN transactions x ON x.id = r.transaction_id WHERE x.idempotency_key = $1) AS records,
                (SELECT count(*)::int FROM jobs j JOIN transactions x ON x.id = j.transaction_id WHERE x.idempotency_key = $1) AS jobs
           FROM transactions WHERE idempotency_key = $1`, [idem])).rows[0]!;
      expect((await create('warm-up')).statusCode).toBe(201);
      const unavailable = { error: 'service temporarily unavailable: database unreachable' };

      // The pipe's connection is cut (the pool's stay up): the ledger learns under the
      // chain's lock whether the statement committed before it answers (ledger.ts
      // settleUnknown). Cut before it reached the server: not stored, so written then (201).
      const cut = proxy.cutOn(/cut-before-write/);
      const lost = await create('cut-before-write');
      await cut;
      expect(lost.statusCode, lost.body).toBe(201);
      expect(await stored('cut-before-write')).toEqual({ n: 1, records: 1, jobs: 1 });
      const again = await create('cut-before-write');
      expect([again.statusCode, again.json().id]).toEqual([200, lost.json().id]);
      expect(await stored('cut-before-write')).toEqual({ n: 1, records: 1, jobs: 1 });

      // A create on the locking path (the replay above left the series unknown to this
      // node), so that the next one goes on the pipe again.
      expect((await create('between')).statusCode).toBe(201);
      // The pipe's connection cut once the server has run the append: committed, its answer
      // lost. Found stored under the chain lock: 201 as committed, nothing twice; the
      // client's retry with the same key is a replay (200, the same id).
      const late = proxy.cutOn(/cut-after-write/, 'after');
      const unanswered = await create('cut-after-write');
      expect(await late).not.toMatch(/BEGIN/);
      expect(unanswered.statusCode, unanswered.body).toBe(201);
      expect(await stored('cut-after-write')).toEqual({ n: 1, records: 1, jobs: 1 });
      const retried = await create('cut-after-write');
      expect([retried.statusCode, retried.json().id]).toEqual([200, unanswered.json().id]);
      expect(await stored('cut-after-write')).toEqual({ n: 1, records: 1, jobs: 1 });

      // Everything down: reads, writes, health are 503, never 500.
      await proxy.down();
      for (const req of [
        () => app.request({ method: 'GET', url: '/v1/transactions', key: k }),
        () => create('while-down'),
        () => app.request({ method: 'GET', url: '/health' }),
      ]) {
        const res = await req();
        expect([res.statusCode, res.headers['retry-after'], res.json()]).toEqual([503, '5', unavailable]);
      }
      expect(await stored('while-down')).toEqual({ n: 0, records: 0, jobs: 0 });
      // Back, with the same pool: no restart.
      await proxy.up();
      expect((await app.request({ method: 'GET', url: '/v1/transactions', key: k })).statusCode).toBe(200);
      const after = await create('while-down');
      expect(after.statusCode, after.body).toBe(201);
      expect(await stored('while-down')).toEqual({ n: 1, records: 1, jobs: 1 });
    } finally {
      await app.close();
      await db.close();
      await direct.close();
      await proxy.close();
    }
  }, 30_000);
});
