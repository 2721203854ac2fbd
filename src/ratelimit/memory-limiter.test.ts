import { describe, expect, it } from 'vitest';
import { describeLimiterContract, T0, takeMany } from './limiter-contract.ts';
import { createMemoryLimiter } from './memory-limiter.ts';
import { RATE_LIMIT_TIERS } from './tiers.ts';

describeLimiterContract('memory', () => createMemoryLimiter());

describe('memory limiter: eviction', () => {
  const spec = RATE_LIMIT_TIERS.sandbox;

  it('sweeps out buckets that have filled up, and only those', async () => {
    const limiter = createMemoryLimiter({ sweepEvery: 10 });
    for (let i = 0; i < 9; i++) await limiter.take(`idle-${i}`, spec, T0);
    await takeMany(limiter, 'drained', spec, T0, 200);
    expect(limiter.size).toBe(10);

    // 60 s later the one-token buckets are full again; 'drained' still has 100 tokens to go.
    // The takes below reach the next sweep (10 takes after the last one).
    for (let i = 0; i < 10; i++) await limiter.take('active', spec, T0 + 60_000);
    expect(limiter.size).toBe(2); // 'drained' and 'active'

    // Eviction changed nothing for the kept bucket: 100 tokens refilled, no more.
    const rs = await takeMany(limiter, 'drained', spec, T0 + 60_000, 101);
    expect(rs.filter((r) => r.allowed).length).toBe(100);
  });

  it('treats an evicted key as a full bucket, as if never seen', async () => {
    const limiter = createMemoryLimiter({ sweepEvery: 1 });
    await limiter.take('a', spec, T0);
    await limiter.take('b', spec, T0 + 1000); // sweep: 'a' is full again, dropped
    expect(limiter.size).toBe(1);
    expect(await limiter.take('a', spec, T0 + 1000)).toMatchObject({ allowed: true, remaining: 199 });
  });

  it('stays bounded under many distinct keys', async () => {
    const limiter = createMemoryLimiter();
    // 100k keys, each used once, one per ms: a bucket is full 600 ms after its take.
    for (let i = 0; i < 100_000; i++) await limiter.take(`k${i}`, spec, T0 + i);
    expect(limiter.size).toBeLessThan(2_000);
  });

  it('close() drops every bucket', async () => {
    const limiter = createMemoryLimiter();
    await limiter.take('a', spec, T0);
    await limiter.close();
    expect(limiter.size).toBe(0);
  });
});
