import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Subscription } from './db.ts';

/** The channel migration 0013's triggers notify: payload `<table>:<key>`. */
export const CHANGES_CHANNEL = 'svc_changes';

export type ChangedTable = 'api_keys' | 'accounts' | 'locations' | 'subscriptions';

/**
 * Row changes of the tables the request path caches, as the database's triggers report
 * them (migrations 0013, 0022): api_keys by lookup handle, accounts and locations by id,
 * subscriptions by account id. Every writer is seen — this node, another node, an
 * operator's SQL — once its transaction commits. Caches register what to drop; `reset`
 * (notifications possibly lost) drops all.
 */
export interface ChangeFeed {
  /** Whether changes are being received now (else caches must not be trusted). */
  live(): boolean;
  on(table: ChangedTable, invalidate: (key: string) => void): void;
  onReset(reset: () => void): void;
  /**
   * Resolves once every change committed before the call has been received here: a NOTIFY
   * of our own goes through the same queue, which delivers in commit order (tests, and
   * anything that must read its own out-of-band write through a cache).
   */
  sync(timeoutMs?: number): Promise<void>;
  close(): void;
}

export function createChangeFeed(db: Db, log?: Pick<FastifyBaseLogger, 'warn'>): ChangeFeed {
  const handlers = new Map<string, ((key: string) => void)[]>();
  const resets: (() => void)[] = [];
  const waiting = new Map<string, () => void>();
  handlers.set('sync', [(token) => waiting.get(token)?.()]);
  const sub: Subscription = db.subscribe(CHANGES_CHANNEL, {
    message(payload) {
      const colon = payload.indexOf(':');
      const table = payload.slice(0, colon);
      const key = payload.slice(colon + 1);
      for (const h of handlers.get(table) ?? []) h(key);
    },
    reset() {
      log?.warn('change notifications interrupted: in-process caches dropped and bypassed until they are back');
      for (const r of resets) r();
    },
  });
  return {
    live: () => sub.live,
    on(table, invalidate) {
      handlers.set(table, [...(handlers.get(table) ?? []), invalidate]);
    },
    onReset(reset) {
      resets.push(reset);
    },
    async sync(timeoutMs = 5_000) {
      if (!sub.live) return; // nothing is cached while the feed is down
      const token = randomUUID();
      let timer: NodeJS.Timeout | undefined;
      const arrived = new Promise<void>((resolve, reject) => {
        waiting.set(token, resolve);
        timer = setTimeout(() => reject(new Error(`change feed: no notification within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await db.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, `sync:${token}`]);
        await arrived;
      } finally {
        clearTimeout(timer);
        waiting.delete(token);
      }
    },
    close: () => sub.close(),
  };
}
