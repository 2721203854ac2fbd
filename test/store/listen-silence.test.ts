import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { CHANGES_CHANNEL, createChangeFeed } from '../../src/store/change-feed.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';
import { STORE, createTestDatabase, openTestDb } from '../support/harness.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

/*
 * The LISTEN connection that goes silent (store/pg-listener.ts): a network black hole, a
 * middlebox that dropped it without a reset, a hung server. It reports no error and
 * delivers no notification, so the caches it invalidates (store/change-feed.ts) would
 * trust themselves meanwhile. A round trip every heartbeat period, not answered within
 * one, gives it up: the caches are reset and bypassed (not live) until a new connection
 * listens again. The proxy on 127.0.0.1 stops forwarding; no real network fault.
 */
const opened: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

async function until(what: string, cond: () => boolean, ms: number): Promise<number> {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now() - t0;
}

describe.runIf(STORE === 'postgres')('a LISTEN connection that goes silent (PostgreSQL)', () => {
  it('is seen within about two heartbeat periods: the change feed is reset and not live; once the server answers again it listens on a new connection and notifications arrive', async () => {
    const url = await createTestDatabase();
    const proxy = await startTcpProxy({ host: new URL(url).hostname, port: Number(new URL(url).port || 5432) });
    opened.push(proxy);
    const notifier = new pg.Client({ connectionString: url });
    await notifier.connect();
    opened.push({ close: () => notifier.end().catch(() => {}) });
    const db = await openPostgresDb(proxy.url(url), { listenHeartbeatMs: 300, connectionTimeoutMillis: 500 });
    opened.push(db);
    const feed = createChangeFeed(db);
    const invalidated: string[] = [];
    let resets = 0;
    feed.on('locations', (key) => void invalidated.push(key));
    feed.onReset(() => void resets++);
    const notify = (key: string) => notifier.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, `locations:${key}`]);

    await until('the feed is live', () => feed.live(), 5_000);
    await notify('before');
    await until('a notification arrives', () => invalidated.includes('before'), 2_000);

    // The proxy stops forwarding both ways: the socket stays open, nothing moves.
    proxy.blackhole(true);
    await notify('in-the-hole'); // lost for good: the reset stands for it
    const seenIn = await until('the silence is seen', () => resets === 1, 3_000);
    expect(seenIn).toBeLessThan(3 * 300 + 500);
    expect(feed.live()).toBe(false);
    expect(invalidated).not.toContain('in-the-hole');

    proxy.blackhole(false);
    await until('the feed listens again', () => feed.live(), 5_000);
    await notify('after');
    await until('notifications arrive again', () => invalidated.includes('after'), 2_000);
    // The heartbeat goes on: a healthy connection is not given up.
    await new Promise((r) => setTimeout(r, 1_000));
    expect([resets, feed.live()]).toEqual([1, true]);
    feed.close();
  });

  it('a connection whose answers no longer come back (the server still hears it) is seen the same way; the feed listens again on a new one', async () => {
    const url = await createTestDatabase();
    const proxy = await startTcpProxy({ host: new URL(url).hostname, port: Number(new URL(url).port || 5432) });
    opened.push(proxy);
    const notifier = new pg.Client({ connectionString: url });
    await notifier.connect();
    opened.push({ close: () => notifier.end().catch(() => {}) });
    const db = await openPostgresDb(proxy.url(url), { listenHeartbeatMs: 300, connectionTimeoutMillis: 500 });
    opened.push(db);
    const got: string[] = [];
    let resets = 0;
    const sub = db.subscribe('late_probe', { message: (p) => void got.push(p), reset: () => void resets++ });
    await until('live', () => sub.live, 5_000);
    // Only the answers are lost: the server hears the round trip, its answer never comes.
    proxy.blackhole(true, 'answers');
    await until('the silence is seen', () => resets === 1, 3_000);
    expect(sub.live).toBe(false);
    await notifier.query("SELECT pg_notify('late_probe', 'while-given-up')");
    proxy.blackhole(false);
    await until('live again', () => sub.live, 5_000);
    await notifier.query("SELECT pg_notify('late_probe', 'on-the-new-one')");
    await until('the new connection delivers', () => got.includes('on-the-new-one'), 2_000);
    expect(got).toEqual(['on-the-new-one']);
    sub.close();
  });
});

describe.runIf(STORE === 'pglite')('the embedded store', () => {
  it('has no LISTEN connection to go silent: notifications are its own backend\'s, always live', async () => {
    const db = await openTestDb();
    opened.push(db);
    const got: string[] = [];
    const sub = db.subscribe('silence_probe', { message: (p) => void got.push(p), reset: () => {} });
    await until('live', () => sub.live, 2_000);
    await db.query("SELECT pg_notify('silence_probe', 'x')");
    await until('delivered', () => got.includes('x'), 2_000);
    sub.close();
  });
});
