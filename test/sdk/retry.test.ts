import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { FiscalTimeoutError, createFiscalClient } from '../../sdk/src/index.ts';
import { backoffMs, isRepeatable, retryAfterMs, retryingFetch } from '../../sdk/src/retry.ts';

/** The SDK's retry policy on its own, with a scripted fetch and a recorded sleep (no server needed). */
function scripted(answers: Array<number | 'network' | 'hang'>, retryAfter = '2', extra: Parameters<typeof retryingFetch>[1] = {}) {
  const seen: { method: string; key: string | null; body: string }[] = [];
  const sleeps: number[] = [];
  const base = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push({ method: req.method, key: req.headers.get('idempotency-key'), body: await req.text() });
    const a = answers.shift() ?? 200;
    if (a === 'network') throw new TypeError('fetch failed');
    // No answer: only the attempt's signal (its time limit) ends it, as fetch does.
    if (a === 'hang') return new Promise<Response>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason)));
    return new Response(JSON.stringify({ error: `status ${a}` }), { status: a, headers: a === 429 ? { 'retry-after': retryAfter } : {} });
  }) as typeof fetch;
  const f = retryingFetch(base, { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.5, sleep: async (ms) => void sleeps.push(ms), ...extra });
  return { f, seen, sleeps };
}

describe('SDK retry policy', () => {
  it('429: retried after Retry-After, the same body each time', async () => {
    const { f, seen, sleeps } = scripted([429, 429, 200]);
    const res = await f('http://x.test/v1/locations', { method: 'POST', body: '{"a":1}' });
    expect(res.status).toBe(200);
    expect(sleeps).toEqual([2000, 2000]);
    expect(seen.map((s) => s.body)).toEqual(['{"a":1}', '{"a":1}', '{"a":1}']);
  });

  it('5xx and network errors: retried for GET and for a POST with an Idempotency-Key, with growing backoff; a plain POST gets the 5xx', async () => {
    const get = scripted([503, 'network', 502, 200]);
    expect((await get.f('http://x.test/v1/locations')).status).toBe(200);
    expect(get.sleeps).toEqual([75, 150, 300]);

    const keyed = scripted([500, 200]);
    expect((await keyed.f('http://x.test/v1/transactions', { method: 'POST', body: '{}', headers: { 'idempotency-key': 'k1' } })).status).toBe(200);
    expect(keyed.seen.map((s) => s.key)).toEqual(['k1', 'k1']);

    const plain = scripted([500, 200]);
    expect((await plain.f('http://x.test/v1/locations', { method: 'POST', body: '{}' })).status).toBe(500);
    expect(plain.seen).toHaveLength(1);
    const plainNetwork = scripted(['network']);
    await expect(plainNetwork.f('http://x.test/v1/locations', { method: 'PATCH', body: '{}' })).rejects.toThrow('fetch failed');
  });

  it('other 4xx are never retried; after maxRetries the last answer is returned', async () => {
    for (const status of [400, 401, 403, 404, 409, 413, 415]) {
      const s = scripted([status, 200]);
      expect((await s.f('http://x.test/v1/transactions/1')).status).toBe(status);
      expect(s.seen).toHaveLength(1);
    }
    const s = scripted([503, 503, 503, 503, 200]);
    expect((await s.f('http://x.test/health')).status).toBe(503);
    expect(s.seen).toHaveLength(4);
  });

  it('Retry-After: seconds or an HTTP date; backoff capped', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(10_000 + 5_000).toUTCString(), 10_000)).toBe(5000);
    expect(retryAfterMs('soon')).toBeUndefined();
    // RFC 9110: delay-seconds is digits only; the obsolete date forms are GMT too.
    expect(retryAfterMs(' 3 ')).toBe(3000);
    expect(retryAfterMs('Wednesday, 21-Oct-15 07:28:05 GMT', Date.UTC(2015, 9, 21, 7, 28, 0))).toBe(5000);
    expect(retryAfterMs('Wed Oct 21 07:28:05 2015', Date.UTC(2015, 9, 21, 7, 28, 0))).toBe(5000);
    expect(retryAfterMs(new Date(5_000).toUTCString(), 10_000)).toBe(0);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(backoffMs(10, { baseDelayMs: 100, maxDelayMs: 1000, random: () => 1 })).toBe(1000);
    expect(isRepeatable(new Request('http://x.test', { method: 'DELETE' }))).toBe(true);
    expect(isRepeatable(new Request('http://x.test', { method: 'POST' }))).toBe(false);
  });

  it('a malformed Retry-After (1.5, -5, 0x10) is no Retry-After: the 429 waits the backoff, not nothing', async () => {
    // Date.parse reads "1.5" and "-5" as dates in 2001: that was a retry at once, again and again.
    for (const bad of ['1.5', '-5', '0x10']) {
      expect(retryAfterMs(bad), bad).toBeUndefined();
      const s = scripted([429, 429, 200], bad);
      expect((await s.f('http://x.test/v1/locations')).status).toBe(200);
      expect(s.sleeps, bad).toEqual([75, 150]);
    }
  });

  it('an attempt without an answer is aborted at timeoutMs: a repeatable request is retried, a plain POST rejects with FiscalTimeoutError at once', async () => {
    const get = scripted(['hang', 200], '2', { timeoutMs: 30 });
    expect((await get.f('http://x.test/v1/locations')).status).toBe(200);
    expect(get.seen).toHaveLength(2);
    expect(get.sleeps).toEqual([75]);

    const keyed = scripted(['hang', 'hang', 'hang', 'hang'], '2', { timeoutMs: 20 });
    const err = await keyed.f('http://x.test/v1/transactions', { method: 'POST', body: '{}', headers: { 'idempotency-key': 'k1' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FiscalTimeoutError);
    expect(err).toMatchObject({ timeoutMs: 20, message: 'no answer within 20 ms' });
    expect(keyed.seen.map((s) => s.key)).toEqual(['k1', 'k1', 'k1', 'k1']);

    const plain = scripted(['hang', 200], '2', { timeoutMs: 20 });
    await expect(plain.f('http://x.test/v1/locations', { method: 'POST', body: '{}' })).rejects.toBeInstanceOf(FiscalTimeoutError);
    expect(plain.seen).toHaveLength(1);
  });

  it('the caller\'s AbortSignal stops the call at once, also during a Retry-After wait', async () => {
    const controller = new AbortController();
    let asleep!: () => void;
    const sleeping = new Promise<void>((resolve) => (asleep = resolve));
    const base = (async () => new Response('{"error":"rate_limit_exceeded","retry_after":50}', { status: 429, headers: { 'retry-after': '50' } })) as typeof fetch;
    // A sleep that never ends by itself: only the abort can end the wait.
    const f = retryingFetch(base, { sleep: () => (asleep(), new Promise<void>(() => undefined)) });
    const call = f('http://x.test/v1/locations', { signal: controller.signal });
    await sleeping;
    controller.abort(new Error('caller gave up'));
    await expect(call).rejects.toThrow('caller gave up');
  });
});

describe('SDK time limit over HTTP', () => {
  /** A server that takes requests and never answers, or answers its headers and never ends the body. */
  async function silentServer(mode: 'no-answer' | 'stalled-body') {
    let requests = 0;
    const server = http.createServer((_req, res) => {
      requests++;
      if (mode === 'stalled-body') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"data":[');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
      requests: () => requests,
      close: () => new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    };
  }

  it('a call to a server that never answers rejects with FiscalTimeoutError (retry: false: one attempt), also when the body stalls', async () => {
    for (const mode of ['no-answer', 'stalled-body'] as const) {
      const server = await silentServer(mode);
      try {
        const fiscal = createFiscalClient({ baseUrl: server.url, apiKey: 'svc_test_x', retry: false, timeoutMs: 200 });
        const started = Date.now();
        const err = await fiscal.listLocations().catch((e: unknown) => e);
        expect(err, mode).toBeInstanceOf(FiscalTimeoutError);
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(server.requests()).toBe(1);
        // A GET is retried after a timed-out attempt (maxRetries 1: two attempts).
        const retrying = createFiscalClient({ baseUrl: server.url, apiKey: 'svc_test_x', retry: { maxRetries: 1, baseDelayMs: 1 }, timeoutMs: 200 });
        await expect(retrying.listLocations()).rejects.toBeInstanceOf(FiscalTimeoutError);
        expect(server.requests(), mode).toBe(mode === 'no-answer' ? 3 : 2);
        // The caller's own signal, passed per call, ends it before the client's limit (its reason, not a FiscalTimeoutError).
        const patient = createFiscalClient({ baseUrl: server.url, apiKey: 'svc_test_x', timeoutMs: 60_000 });
        const aborted = await patient.listLocations({ signal: AbortSignal.timeout(100) }).catch((e: unknown) => e);
        expect(aborted).toMatchObject({ name: 'TimeoutError' });
        expect(aborted).not.toBeInstanceOf(FiscalTimeoutError);
      } finally {
        await server.close();
      }
    }
  });
});
