import pg from 'pg';
import type { NotificationListener, Subscription } from './db.ts';

/** Pause before the listening connection is opened again after it dropped. */
const RECONNECT_MS = 1_000;

/**
 * How often the listening connection is checked with a round trip (`SELECT 1`), and how
 * long its answer may take. A connection that went silent (a network black hole, a
 * middlebox that dropped it without a reset, a hung server) delivers no notification and
 * reports no error: without the check the caches it invalidates would trust themselves
 * for as long as the kernel keeps the dead socket. So a cache is stale for at most about
 * two periods; the check costs one trivial statement per period per node.
 */
export const DEFAULT_LISTEN_HEARTBEAT_MS = 5_000;

/**
 * LISTEN/NOTIFY for the PostgreSQL adapter: one dedicated connection per Db (not a pool
 * client: a pooled connection is shared, and LISTEN belongs to a session), listening on
 * every channel somebody subscribed to.
 *
 * When the connection drops, notifications sent meanwhile are lost for good: every
 * listener is told to `reset` (forget what it cached) and subscriptions report
 * `live = false` until the connection is back and listening again, so caches bypass
 * themselves rather than serve rows they can no longer hear about.
 *
 * A connection that goes silent drops too, once seen: a round trip every `heartbeatMs`
 * that is not answered within `heartbeatMs` gives the connection up (the same path: reset,
 * not live, a new connection), and TCP keepalive is on (a peer gone for good is seen by
 * the kernel; NAT and firewall entries stay alive between notifications).
 */
export function createPgListener(connectionString: string, bounds: {
  connectionTimeoutMillis?: number; readTimeoutMs?: number | undefined;
  /** The period of the round-trip check and its answer's wait (0: no check). Default DEFAULT_LISTEN_HEARTBEAT_MS. */
  heartbeatMs?: number | undefined;
} = {}) {
  const heartbeatMs = bounds.heartbeatMs ?? DEFAULT_LISTEN_HEARTBEAT_MS;
  const channels = new Map<string, Set<NotificationListener>>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let live = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const quote = (channel: string) => `"${channel.replaceAll('"', '""')}"`;

  function lost(): void {
    clearInterval(heartbeat);
    heartbeat = undefined;
    const wasLive = live;
    live = false;
    client = null;
    if (wasLive) for (const set of channels.values()) for (const l of set) l.reset();
    if (!closed && channels.size > 0 && !retry) {
      retry = setTimeout(() => {
        retry = undefined;
        void connect();
      }, RECONNECT_MS);
      retry.unref();
    }
  }

  async function connect(): Promise<void> {
    if (closed || client || connecting) return connecting ?? undefined;
    connecting = (async () => {
      // Bounded like the store's other connections: a server that accepts and never answers
      // fails the attempt (and the next one comes RECONNECT_MS later), rather than leaving it
      // pending for good (and `close` waiting on it).
      const c = new pg.Client({
        connectionString, connectionTimeoutMillis: bounds.connectionTimeoutMillis ?? 0, ...(bounds.readTimeoutMs ? { query_timeout: bounds.readTimeoutMs } : {}),
        keepAlive: true, keepAliveInitialDelayMillis: heartbeatMs > 0 ? heartbeatMs : 10_000,
      });
      c.on('error', () => {
        if (client === c) lost();
      });
      c.on('end', () => {
        if (client === c) lost();
      });
      c.on('notification', (n) => {
        const set = channels.get(n.channel);
        if (set && n.payload !== undefined) for (const l of set) l.message(n.payload);
      });
      try {
        await c.connect();
        // Every channel subscribed so far, including any added while this ran.
        const listened = new Set<string>();
        for (let pending = [...channels.keys()]; pending.length > 0; pending = [...channels.keys()].filter((ch) => !listened.has(ch))) {
          for (const channel of pending) {
            await c.query(`LISTEN ${quote(channel)}`);
            listened.add(channel);
          }
        }
        if (closed) {
          await c.end();
          return;
        }
        client = c;
        live = true;
        watch(c);
      } catch {
        c.end().catch(() => {});
        lost();
      }
    })().finally(() => {
      connecting = null;
    });
    return connecting;
  }

  /**
   * Checks the live connection with a round trip every heartbeatMs; one not answered in
   * time (or failing) gives it up: `lost` resets the listeners and reconnects, and the
   * socket is destroyed (nothing more is read from it: a late notification on a connection
   * given up would be delivered after the reset, to caches that no longer expect it).
   */
  function watch(c: pg.Client): void {
    if (heartbeatMs <= 0) return;
    let pending = false;
    heartbeat = setInterval(() => {
      if (client !== c || pending) return;
      pending = true;
      c.query({ text: 'SELECT 1', query_timeout: heartbeatMs } as pg.QueryConfig).then(
        () => void (pending = false),
        () => {
          if (client !== c) return;
          lost();
          (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
          c.end().catch(() => {});
        },
      );
    }, heartbeatMs);
    heartbeat.unref();
  }

  return {
    subscribe(channel: string, listener: NotificationListener): Subscription {
      let set = channels.get(channel);
      const fresh = !set;
      if (!set) channels.set(channel, (set = new Set()));
      set.add(listener);
      // A channel added while connected: LISTEN on it too (not live for it until then).
      let ready = !fresh;
      if (client && fresh) {
        client.query(`LISTEN ${quote(channel)}`).then(() => (ready = true), () => {});
      } else {
        ready = true;
        void connect();
      }
      return {
        get live() {
          return live && ready;
        },
        close() {
          set.delete(listener);
        },
      };
    },
    async close(): Promise<void> {
      closed = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      await connecting;
      const c = client;
      client = null;
      live = false;
      await c?.end().catch(() => {});
    },
  };
}
