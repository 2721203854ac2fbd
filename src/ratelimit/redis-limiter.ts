import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { lazyImport } from '../core/lazy-import.ts';
import {
  assertValidSpec,
  type BucketSpec,
  describeTake,
  normalizeNow,
  type RateLimiter,
  type TakeResult,
  TOKEN_SCALE,
} from './limiter.ts';

/**
 * Buckets in Redis, shared by every node of the service.
 *
 * Each take is ONE Lua script (read the hash {u: units, t: ts}, refill, take, write back,
 * set the expiry). Redis runs a script atomically, so takes from any number of nodes on the
 * same account are serialised and the account gets exactly its limit, not limit x nodes.
 *
 * The time is the caller's `nowMs`, not Redis's TIME: tests can drive the clock, and the
 * math stays identical to the memory store. The price is that nodes must have synchronised
 * clocks (NTP). Skew is harmless in one direction by construction: the script ignores a
 * timestamp older than the stored one (no refill backwards, and the later time is kept so
 * nothing is credited twice), so a node running behind only sees fewer tokens, and a node
 * running ahead grants at most its skew's worth of refill early.
 *
 * The Lua below repeats `takeToken` from limiter.ts (same operations, same order, all on
 * exact integers in doubles) and returns the raw state; `describeTake` then computes the
 * headers in TypeScript. The two MUST agree: redis-limiter.test.ts replays one random
 * sequence of takes on both stores and compares every result.
 */
const TAKE_SCRIPT = `
local key = KEYS[1]
local rpm = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local marginMs = tonumber(ARGV[4])
local scale = tonumber(ARGV[5])
local cap = burst * scale

-- refill(): a missing key is a full bucket (never used, or expired because it was full)
local units, ts
local stored = redis.call('HMGET', key, 'u', 't')
if stored[1] and stored[2] then
  units = math.min(tonumber(stored[1]), cap)
  ts = tonumber(stored[2])
  if now > ts then
    local elapsed = math.min(now - ts, math.ceil((cap - units) / rpm))
    units = math.min(cap, units + elapsed * rpm)
    ts = now
  end
else
  units = cap
  ts = now
end

-- takeToken()
local allowed = 0
if units >= scale then
  units = units - scale
  allowed = 1
end

-- string.format('%d') writes the integers back exactly, whatever Redis's float formatting.
redis.call('HSET', key, 'u', string.format('%d', units), 't', string.format('%d', ts))
-- Keep the key until the bucket would be full again (measured from the bucket's time,
-- which may be ahead of now), plus a margin for clock skew between nodes and Redis.
-- After that, deleting it changes nothing: a missing key reads as a full bucket.
local toFull = math.ceil((cap - units) / rpm)
redis.call('PEXPIRE', key, (ts - now) + toFull + marginMs)
return {allowed, units, ts}
`;

const TAKE_SCRIPT_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

export interface RedisLimiterOptions {
  /** Prefix of every bucket key (default "ratelimit:"). */
  keyPrefix?: string;
  /** Extra key lifetime beyond the time to full, in ms (default 60 s), covering clock skew. */
  expiryMarginMs?: number;
  /**
   * Given a URL: told of the connection's errors (refused, reset; ioredis reconnects by
   * itself). Without a listener ioredis prints every failed reconnect to stderr.
   */
  onConnectionError?: (err: Error) => void;
  /** Given a URL: a command not answered within this many ms fails (default 2 s; a hung Redis must not pile up commands). */
  commandTimeoutMs?: number;
}

/**
 * A limiter on Redis. Given a URL, it opens (and on close, quits) its own connection;
 * given a client, it uses it and leaves closing it to the owner.
 *
 * When Redis is unreachable, `take` rejects (after ioredis's retries); whether to fail open
 * or closed is the HTTP layer's decision, not this module's.
 */
export function createRedisLimiter(redis: Redis | string, opts: RedisLimiterOptions = {}): RateLimiter {
  const ownsClient = typeof redis === 'string';
  // Given a URL, the client (and ioredis) comes with the first take (core/lazy-import.ts).
  // A few retries only: a rate-limit check must not hold a request for ioredis's default 20.
  const open = typeof redis === 'string'
    ? lazyImport(async () => {
      const client = new (await import('ioredis')).Redis(redis, { maxRetriesPerRequest: 2, commandTimeout: opts.commandTimeoutMs ?? 2_000 });
      client.on('error', opts.onConnectionError ?? (() => {}));
      return client;
    })
    : async () => redis;
  let opening: Promise<Redis> | undefined;
  const clientOf = () => (opening = open());
  const keyPrefix = opts.keyPrefix ?? 'ratelimit:';
  const marginMs = Math.max(0, Math.floor(opts.expiryMarginMs ?? 60_000));

  async function runScript(key: string, args: (string | number)[]): Promise<unknown> {
    const client = await clientOf();
    try {
      return await client.evalsha(TAKE_SCRIPT_SHA, 1, key, ...args);
    } catch (err) {
      // First use on this Redis, or after a restart / SCRIPT FLUSH / failover: EVAL sends
      // the body once and caches it under the same SHA for the next calls.
      if (err instanceof Error && err.message.startsWith('NOSCRIPT')) {
        return client.eval(TAKE_SCRIPT, 1, key, ...args);
      }
      throw err;
    }
  }

  return {
    async take(key: string, spec: BucketSpec, nowMs: number): Promise<TakeResult> {
      assertValidSpec(spec);
      const now = normalizeNow(nowMs);
      const reply = await runScript(keyPrefix + key, [spec.requestsPerMinute, spec.burst, now, marginMs, TOKEN_SCALE]);
      if (!Array.isArray(reply) || reply.length !== 3 || !reply.every((v) => typeof v === 'number')) {
        throw new Error(`unexpected rate-limit script reply: ${JSON.stringify(reply)}`);
      }
      const [allowed, units, tsMs] = reply as [number, number, number];
      return describeTake({ units, tsMs }, allowed === 1, spec, now);
    },

    async close(): Promise<void> {
      // A client being opened by a take in flight is quit too, once it exists.
      // With Redis gone, QUIT cannot be sent: the connection is dropped instead.
      const client = ownsClient && opening ? await opening.catch(() => undefined) : undefined;
      await client?.quit().catch(() => client.disconnect());
    },
  };
}
