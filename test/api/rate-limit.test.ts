import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createRedisLimiter } from '../../src/ratelimit/redis-limiter.ts';
import { createRateLimiter } from '../../src/ratelimit/index.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
import type { Db } from '../../src/store/db.ts';
import { openTestDb, startTestApp, type TestApp } from '../support/harness.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let db: Db;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(() => db.close());

/** Spends the sandbox burst (200) through `apps` in turn; returns the last response. */
async function drain(apps: TestApp[], key: string, n: number) {
  let last;
  for (let i = 0; i < n; i++) {
    last = await apps[i % apps.length]!.request({ method: 'GET', url: '/v1/account/status', key });
    expect(last.statusCode, `request ${i + 1}`).toBe(200);
  }
  return last!;
}

describe('rate limit (in memory, one node)', () => {
  it('burst of 200 for a test key, then 429 with the spec body and Retry-After (to the minute boundary); refill at 100/min', async () => {
    const clock = new ManualClock('2026-03-01T12:00:45.000Z'); // 15 s before a minute boundary
    const t = await startTestApp({ db, clock });
    try {
      const { key } = await t.signup();
      const first = await t.request({ method: 'GET', url: '/v1/account/status', key });
      expect(first.headers['x-ratelimit-limit']).toBe('100');
      expect(first.headers['x-ratelimit-remaining']).toBe('199');
      expect(Number(first.headers['x-ratelimit-reset'])).toBe(Math.ceil(clock.now().getTime() / 1000) + 1); // full again 0.6 s later
      const last = await drain([t], key, 199);
      expect(last.headers['x-ratelimit-remaining']).toBe('0');

      const refused = await t.request({ method: 'GET', url: '/v1/account/status', key });
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toEqual({ error: 'rate_limit_exceeded', retry_after: 15 });
      expect(refused.headers['retry-after']).toBe('15');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');

      clock.advance(599);
      expect((await t.request({ method: 'GET', url: '/v1/account/status', key })).statusCode).toBe(429);
      clock.advance(1); // 600 ms = one token at 100/min
      expect((await t.request({ method: 'GET', url: '/v1/account/status', key })).statusCode).toBe(200);
      expect((await t.request({ method: 'GET', url: '/v1/account/status', key })).statusCode).toBe(429);

      clock.advance(60_000); // 100 tokens back
      const back = await t.request({ method: 'GET', url: '/v1/account/status', key });
      expect(back.headers['x-ratelimit-remaining']).toBe('99');
      clock.advance(3_600_000); // capped at the burst
      expect((await t.request({ method: 'GET', url: '/v1/account/status', key })).headers['x-ratelimit-remaining']).toBe('199');

      // Another account has its own bucket.
      const other = await t.signup();
      expect((await t.request({ method: 'GET', url: '/v1/account/status', key: other.key })).headers['x-ratelimit-remaining']).toBe('199');
    } finally {
      await t.close();
    }
  });

  it('headers are on every authenticated response, errors included; public routes have none', async () => {
    const t = await startTestApp({ db });
    try {
      const { key } = await t.signup();
      const notFound = await t.request({ method: 'GET', url: '/v1/locations/00000000-0000-4000-8000-000000000000', key });
      expect(notFound.statusCode).toBe(404);
      expect(notFound.headers['x-ratelimit-limit']).toBe('100');
      const health = await t.request({ method: 'GET', url: '/health' });
      expect(health.headers['x-ratelimit-limit']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('sign-up is limited per client address (burst 20)', async () => {
    const t = await startTestApp({ db });
    try {
      const addr = `192.0.2.${crypto.randomInt(1, 255)}`;
      const codes: number[] = [];
      for (let i = 0; i < 21; i++) {
        const res = await t.request({ method: 'POST', url: '/v1/accounts', remoteAddress: addr, payload: { name: 'x', billing_email: `${crypto.randomUUID()}@example.com` } });
        codes.push(res.statusCode);
      }
      expect(codes.slice(0, 20).every((c) => c === 201)).toBe(true);
      expect(codes[20]).toBe(429);
    } finally {
      await t.close();
    }
  });
});

describe('rate limit shared through Redis (two nodes)', () => {
  it('two API nodes on one Redis share one bucket: 200 in all, then 429 on both', async () => {
    const prefix = `test:rl:${crypto.randomUUID()}:`;
    const clock = new ManualClock('2026-03-01T12:00:45.000Z');
    const a = await startTestApp({ db, clock, limiter: createRedisLimiter(REDIS_URL, { keyPrefix: prefix }) });
    const b = await startTestApp({ db, clock, limiter: createRedisLimiter(REDIS_URL, { keyPrefix: prefix }) });
    try {
      const { key } = await a.signup();
      await drain([a, b], key, 200);
      for (const node of [a, b]) {
        const res = await node.request({ method: 'GET', url: '/v1/account/status', key });
        expect(res.statusCode).toBe(429);
        expect(res.json()).toEqual({ error: 'rate_limit_exceeded', retry_after: 15 });
      }
      clock.advance(600);
      expect((await b.request({ method: 'GET', url: '/v1/account/status', key })).statusCode).toBe(200);
      expect((await a.request({ method: 'GET', url: '/v1/account/status', key })).statusCode).toBe(429);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('Redis unreachable (REDIS_URL set)', () => {
  it('requests go on, limited by the node\'s own buckets (never a 500, never held); a warning once; shared again once Redis is back, no restart', async () => {
    const target = new URL(REDIS_URL);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const prefix = `test:rl:${crypto.randomUUID()}:`;
    const logs: string[] = [];
    const log = { warn: (_o: object, m: string) => void logs.push(`warn: ${m}`), info: (_o: object, m: string) => void logs.push(`info: ${m}`) };
    // The production wiring (cli/store.ts), Redis behind a proxy the test can take away.
    const limiter = createRateLimiter({ redisUrl: `redis://127.0.0.1:${proxy.port}`, keyPrefix: prefix, log, timeoutMs: 300 });
    const clock = new ManualClock('2026-03-01T12:00:45.000Z');
    const t = await startTestApp({ db, clock, limiter });
    const status = () => t.request({ method: 'GET', url: '/v1/account/status', key });
    let key = '';
    try {
      ({ key } = await t.signup());
      const accountId = (await status()).json().account_id as string;
      const shared = async () => Number(await (await import('ioredis')).Redis.prototype.hget.call(direct, `${prefix}acct:${accountId}:test`, 'u'));
      const direct = new (await import('ioredis')).Redis(REDIS_URL);
      try {
        const before = await shared();
        expect((await status()).headers['x-ratelimit-remaining']).toBe('198');
        expect(await shared()).toBeLessThan(before); // the bucket is Redis's

        // Redis refuses connections: every request is answered, with its rate headers.
        await proxy.down();
        for (let i = 0; i < 3; i++) {
          // Bounded (the limiter waits 300 ms for Redis here); loose enough for a busy CI machine.
          const started = Date.now();
          const res = await status();
          expect([res.statusCode, Date.now() - started < 5_000], res.body).toEqual([200, true]);
          expect(res.headers['x-ratelimit-limit']).toBe('100');
        }
        // Sign-up (public, limited per address) too.
        expect((await t.request({ method: 'POST', url: '/v1/accounts', payload: { name: 'Bar', billing_email: `${crypto.randomUUID()}@example.com` }, remoteAddress: '10.9.9.9' })).statusCode).toBe(201);
        expect(logs.filter((l) => l.startsWith('warn'))).toHaveLength(1);

        // Back: after the retry pause the shared bucket is used again.
        await proxy.up();
        await new Promise((r) => setTimeout(r, 1_200));
        let res = await status();
        for (let i = 0; i < 20 && !logs.some((l) => l.startsWith('info')); i++) {
          await new Promise((r) => setTimeout(r, 200));
          res = await status();
        }
        expect(res.statusCode).toBe(200);
        expect(logs.at(-1)).toBe('info: rate-limit store (REDIS_URL) reachable again: limits are shared again');
        const seen = await shared();
        await status();
        expect(await shared()).toBe(seen - 60_000); // one token, taken in Redis

        // Redis accepts the connection and never answers: held at most the timeout.
        proxy.blackhole(true);
        await new Promise((r) => setTimeout(r, 1_100)); // the retry pause since the last failure is over anyway
        const started = Date.now();
        res = await status();
        expect([res.statusCode, Date.now() - started < 5_000]).toEqual([200, true]);
      } finally {
        direct.disconnect();
      }
    } finally {
      proxy.blackhole(false);
      await t.close();
      await proxy.close();
    }
  }, 30_000);
});
