/**
 * An in-process cache of rows the request path reads on every call (API keys, locations),
 * kept correct by invalidation rather than by expiry: the store tells us when a row changes
 * (store/change-feed.ts), and the TTL is only a safety net.
 *
 * Two races are closed here:
 * - a load that started before an invalidation must not store what it read (it may be the
 *   old row): every invalidation bumps a generation, and a load stores its value only if the
 *   generation did not move while it ran;
 * - while the change feed is not live (not yet listening, or its connection dropped and
 *   notifications may be lost), nothing is served from or stored in the cache.
 */
export interface InvalidatingCacheOptions {
  /** Whether invalidations are being received now. */
  live: () => boolean;
  /** Upper bound of an entry's life, whatever happens (real time). */
  ttlMs: number;
  /** Entries kept; the oldest goes first. */
  maxEntries: number;
}

export class InvalidatingCache<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>();
  private generation = 0;

  constructor(private readonly opts: InvalidatingCacheOptions) {}

  /** The cached value, or `load()`'s (stored when `keep(value)` says so and no invalidation intervened). */
  async get(key: K, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    if (!this.opts.live()) return load();
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) return hit.value;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation && this.opts.live() && keep(value)) {
      this.entries.delete(key);
      if (this.entries.size >= this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
      this.entries.set(key, { value, expires: Date.now() + this.opts.ttlMs });
    }
    return value;
  }

  invalidate(key: K): void {
    this.generation++;
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (an account's keys when its status changes). */
  invalidateWhere(match: (value: V) => boolean): void {
    this.generation++;
    for (const [key, e] of this.entries) if (match(e.value)) this.entries.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
