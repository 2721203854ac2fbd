import { describe, expect, it } from 'vitest';
import { createFallbackLimiter } from './fallback-limiter.ts';
import type { BucketSpec, RateLimiter, TakeResult } from './limiter.ts';
import { describeLimiterContract, T0 } from './limiter-contract.ts';
import { createMemoryLimiter } from './memory-limiter.ts';

const spec: BucketSpec = { requestsPerMinute: 60, burst: 3 };

/** A shared store whose behaviour the test switches: answering (a memory store), failing, or never answering. */
function switchable() {
  const inner = createMemoryLimiter();
  let mode: 'ok' | 'fail' | 'hang' = 'ok';
  let calls = 0;
  const limiter: RateLimiter = {
    take(key, s, now): Promise<TakeResult> {
      calls++;
      if (mode === 'fail') return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
      if (mode === 'hang') return new Promise(() => {});
      return inner.take(key, s, now);
    },
    close: () => inner.close(),
  };
  return { limiter, set: (m: typeof mode) => void (mode = m), calls: () => calls };
}

// Answering, it is the shared store itself: the contract holds through the wrapper.
describeLimiterContract('fallback (shared store answering)', () => createFallbackLimiter(createMemoryLimiter(), createMemoryLimiter()));

describe('fallback limiter: the shared store unreachable', () => {
  it('a failing store: the node\'s own buckets answer (still limiting), told once; not asked again for retryAfterMs; back to it once it answers', async () => {
    const store = switchable();
    const events: string[] = [];
    const limiter = createFallbackLimiter(store.limiter, createMemoryLimiter(), {
      retryAfterMs: 200, onDown: (err) => events.push(`down: ${(err as Error).message}`), onUp: () => events.push('up'),
    });
    expect((await limiter.take('a', spec, T0)).remaining).toBe(2); // the shared store's bucket

    store.set('fail');
    const during = [];
    for (let i = 0; i < 4; i++) during.push(await limiter.take('a', spec, T0));
    // The node's bucket starts full: 3 allowed, then refused. Limited, never an error.
    expect(during.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(during[3]!.retryAfterSeconds).toBeGreaterThan(0);
    expect(events).toEqual(['down: connect ECONNREFUSED 127.0.0.1:6379']);
    expect(store.calls()).toBe(2); // the first failure; the next three went straight to the node's bucket

    store.set('ok');
    await new Promise((r) => setTimeout(r, 250));
    const back = await limiter.take('a', spec, T0);
    expect(back.remaining).toBe(1); // the shared bucket again (it had 2 left)
    expect(events).toEqual(['down: connect ECONNREFUSED 127.0.0.1:6379', 'up']);
    expect(store.calls()).toBe(3);
    await limiter.close();
  });

  it('a store that never answers: each take waits at most timeoutMs, then the node\'s bucket answers', async () => {
    const store = switchable();
    store.set('hang');
    let downs = 0;
    const limiter = createFallbackLimiter(store.limiter, createMemoryLimiter(), { timeoutMs: 100, retryAfterMs: 10_000, onDown: () => downs++ });
    const started = Date.now();
    const r = await limiter.take('b', spec, T0);
    expect(r.allowed).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(Date.now() - started).toBeLessThan(1_000);
    // Within retryAfterMs nobody waits again.
    const quick = Date.now();
    await limiter.take('b', spec, T0);
    expect(Date.now() - quick).toBeLessThan(50);
    expect(downs).toBe(1);
  });

  it('an invalid bucket is a bug, not an outage: it throws as the stores do', async () => {
    const limiter = createFallbackLimiter(createMemoryLimiter(), createMemoryLimiter());
    await expect(limiter.take('c', { requestsPerMinute: 0, burst: 1 }, T0)).rejects.toThrow(RangeError);
  });
});
