import { describe, expect, it } from 'vitest';
import { InvalidatingCache } from './invalidating-cache.ts';

const options = (over: Partial<{ live: () => boolean; ttlMs: number; maxEntries: number }> = {}) => ({ live: () => true, ttlMs: 60_000, maxEntries: 100, ...over });

describe('InvalidatingCache', () => {
  it('loads once, then serves from memory until invalidated', async () => {
    const cache = new InvalidatingCache<string, number>(options());
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get('k', load)).toBe(1);
    expect(await cache.get('k', load)).toBe(1);
    cache.invalidate('k');
    expect(await cache.get('k', load)).toBe(2);
  });

  it('a load overtaken by an invalidation does not store the row it read', async () => {
    const cache = new InvalidatingCache<string, string>(options());
    let release!: () => void;
    const slow = cache.get('k', () => new Promise<string>((r) => (release = () => r('old row'))));
    cache.invalidate('k'); // the row changed while it was being read
    release();
    expect(await slow).toBe('old row'); // that caller gets what it read…
    expect(await cache.get('k', async () => 'new row')).toBe('new row'); // …but nobody after it
  });

  it('is bypassed while the change feed is not live', async () => {
    let live = false;
    const cache = new InvalidatingCache<string, number>(options({ live: () => live }));
    let loads = 0;
    const load = async () => ++loads;
    await cache.get('k', load);
    await cache.get('k', load);
    expect(loads).toBe(2);
    expect(cache.size).toBe(0);
    live = true;
    await cache.get('k', load);
    await cache.get('k', load);
    expect(loads).toBe(3);
  });

  it('keeps only what `keep` accepts (no negative entries)', async () => {
    const cache = new InvalidatingCache<string, number[]>(options());
    let loads = 0;
    const load = async () => (++loads, []);
    await cache.get('unknown', load, (rows) => rows.length > 0);
    await cache.get('unknown', load, (rows) => rows.length > 0);
    expect(loads).toBe(2);
  });

  it('expires entries after the TTL, and bounds its size', async () => {
    const cache = new InvalidatingCache<string, number>(options({ ttlMs: 0, maxEntries: 2 }));
    let loads = 0;
    await cache.get('a', async () => ++loads);
    await cache.get('a', async () => ++loads);
    expect(loads).toBe(2); // TTL 0: never served
    const bounded = new InvalidatingCache<string, string>(options({ maxEntries: 2 }));
    for (const k of ['a', 'b', 'c']) await bounded.get(k, async () => k);
    expect(bounded.size).toBe(2);
    expect(await bounded.get('a', async () => 'reloaded')).toBe('reloaded'); // the oldest went first
  });

  it('invalidateWhere drops every matching entry', async () => {
    const cache = new InvalidatingCache<string, { account: string }>(options());
    await cache.get('k1', async () => ({ account: 'A' }));
    await cache.get('k2', async () => ({ account: 'B' }));
    cache.invalidateWhere((v) => v.account === 'A');
    expect(await cache.get('k1', async () => ({ account: 'reloaded' }))).toEqual({ account: 'reloaded' });
    expect(await cache.get('k2', async () => ({ account: 'reloaded' }))).toEqual({ account: 'B' });
  });
});
