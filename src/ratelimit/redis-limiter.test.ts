/**
 * Against a real Redis (REDIS_URL, default redis://127.0.0.1:6379). An unreachable Redis
 * FAILS this file; set SKIP_REDIS_TESTS=1 to skip it on a machine without one.
 * Every key lives under a prefix unique to this run and is deleted afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BucketSpec, RateLimiter, TakeResult } from './limiter.ts';
import { describeLimiterContract, T0 } from './limiter-contract.ts';
import { createMemoryLimiter } from './memory-limiter.ts';
import { createRedisLimiter } from './redis-limiter.ts';
import { RATE_LIMIT_TIERS } from './tiers.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN_PREFIX = `test:ratelimit:${process.pid}:${randomBytes(4).toString('hex')}:`;
// Fail fast instead of ioredis's endless reconnects: a dead Redis must fail the run quickly.
const FAST_FAIL: RedisOptions = { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 };

async function connect(): Promise<Redis> {
  const client = new Redis(REDIS_URL, FAST_FAIL);
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    client.disconnect();
    throw new Error(`Redis unreachable at ${REDIS_URL} (set SKIP_REDIS_TESTS=1 to skip these tests): ${String(err)}`);
  }
  return client;
}

describe.skipIf(process.env.SKIP_REDIS_TESTS === '1')('redis limiter', () => {
  // Two connections stand for two service nodes sharing the buckets.
  let nodeA: Redis;
  let nodeB: Redis;
  let limiterA: RateLimiter;
  let limiterB: RateLimiter;

  beforeAll(async () => {
    nodeA = await connect();
    nodeB = await connect();
    limiterA = createRedisLimiter(nodeA, { keyPrefix: RUN_PREFIX });
    limiterB = createRedisLimiter(nodeB, { keyPrefix: RUN_PREFIX });
  });

  afterAll(async () => {
    if (!nodeA) return;
    const keys = await nodeA.keys(`${RUN_PREFIX}*`);
    if (keys.length > 0) await nodeA.del(...keys);
    await limiterA.close();
    await limiterB.close();
    // close() leaves a client it was given open: the owner (here) quits it.
    expect(nodeA.status).toBe('ready');
    await nodeA.quit();
    await nodeB.quit();
  });

  describeLimiterContract('redis', () => limiterA);

  it('two nodes share one bucket: 500 concurrent takes on a burst of 200 allow exactly 200', async () => {
    const spec = RATE_LIMIT_TIERS.sandbox;
    const takes = Array.from({ length: 500 }, (_, i) => (i % 2 === 0 ? limiterA : limiterB).take('shared', spec, T0));
    const results = await Promise.all(takes);
    const allowed = results.filter((r) => r.allowed);
    expect(allowed.length).toBe(200);
    // Each token went to exactly one request.
    expect(allowed.map((r) => r.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(results.filter((r) => !r.allowed).every((r) => r.retryAfterSeconds === 20)).toBe(true); // T0 is 20 s before a minute boundary
    // Both nodes see the refill of the shared bucket, once.
    expect((await limiterB.take('shared', spec, T0 + 600)).allowed).toBe(true);
    expect((await limiterA.take('shared', spec, T0 + 600)).allowed).toBe(false);
  });

  it('agrees with the memory store on a long random sequence (the two implementations of the math)', async () => {
    const memory = createMemoryLimiter();
    const specs: BucketSpec[] = [RATE_LIMIT_TIERS.sandbox, { requestsPerMinute: 7, burst: 3 }, { requestsPerMinute: 1, burst: 2 }];
    // mulberry32: a seeded generator, so a failure replays identically.
    let seed = 42;
    const rand = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
    let now = T0;
    const seen: [TakeResult, TakeResult][] = [];
    for (let i = 0; i < 2000; i++) {
      const r = rand();
      if (r < 0.05) now -= Math.floor(rand() * 30_000); // a node whose clock is behind
      else if (r < 0.07) now += Math.floor(rand() * 600_000); // idle
      else now += Math.floor(rand() * 700);
      const key = `agree-${Math.floor(rand() * 3)}`;
      const spec = specs[Math.floor(rand() * specs.length)]!; // tier changes included
      const at = now + rand(); // fractional ms too
      seen.push([await memory.take(key, spec, at), await (rand() < 0.5 ? limiterA : limiterB).take(key, spec, at)]);
    }
    for (const [fromMemory, fromRedis] of seen) expect(fromRedis).toEqual(fromMemory);
    // The sequence must exercise both outcomes to prove anything.
    expect(seen.some(([m]) => m.allowed)).toBe(true);
    expect(seen.some(([m]) => !m.allowed)).toBe(true);
  });

  it('stores the bucket in one hash that expires once it would be full again', async () => {
    const spec = RATE_LIMIT_TIERS.sandbox;
    await limiterA.take('ttl', spec, T0);
    const key = `${RUN_PREFIX}ttl`;
    expect(await nodeA.hgetall(key)).toEqual({ u: String(199 * 60_000), t: String(T0) });
    // 600 ms to full + 60 s margin.
    const pttl = await nodeA.pttl(key);
    expect(pttl).toBeGreaterThan(60_000);
    expect(pttl).toBeLessThanOrEqual(60_600);
  });

  it('re-sends the script when Redis does not have it cached (NOSCRIPT)', async () => {
    const forgetful = {
      evalsha: () => Promise.reject(new Error('NOSCRIPT No matching script. Please use EVAL.')),
      eval: (...args: Parameters<Redis['eval']>) => nodeA.eval(...args),
    } as unknown as Redis;
    const limiter = createRedisLimiter(forgetful, { keyPrefix: RUN_PREFIX });
    expect(await limiter.take('noscript', RATE_LIMIT_TIERS.sandbox, T0)).toMatchObject({ allowed: true, remaining: 199 });
  });

  it('opens and quits its own connection when given a URL', async () => {
    const limiter = createRedisLimiter(REDIS_URL, { keyPrefix: RUN_PREFIX });
    expect(await limiter.take('by-url', RATE_LIMIT_TIERS.sandbox, T0)).toMatchObject({ allowed: true, remaining: 199 });
    // Same bucket through the shared connection: the URL limiter really wrote to Redis.
    expect((await limiterA.take('by-url', RATE_LIMIT_TIERS.sandbox, T0)).remaining).toBe(198);
    await limiter.close();
  });
});
