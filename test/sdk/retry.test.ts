import { describe, expect, it } from 'vitest';
import { backoffMs, isRepeatable, retryAfterMs, retryingFetch } from '../../sdk/src/retry.ts';

/** The SDK's retry policy on its own, with a scripted fetch and a recorded sleep (no server needed). */
function scripted(answers: Array<number | 'network'>) {
  const seen: { method: string; key: string | null; body: string }[] = [];
  const sleeps: number[] = [];
  const base = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push({ method: req.method, key: req.headers.get('idempotency-key'), body: await req.text() });
    const a = answers.shift() ?? 200;
    if (a === 'network') throw new TypeError('fetch failed');
    return new Response(JSON.stringify({ error: `status ${a}` }), { status: a, headers: a === 429 ? { 'retry-after': '2' } : {} });
  }) as typeof fetch;
  const f = retryingFetch(base, { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.5, sleep: async (ms) => void sleeps.push(ms) });
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
    expect(retryAfterMs(null)).toBeUndefined();
    expect(backoffMs(10, { baseDelayMs: 100, maxDelayMs: 1000, random: () => 1 })).toBe(1000);
    expect(isRepeatable(new Request('http://x.test', { method: 'DELETE' }))).toBe(true);
    expect(isRepeatable(new Request('http://x.test', { method: 'POST' }))).toBe(false);
  });
});
