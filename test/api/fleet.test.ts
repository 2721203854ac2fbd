import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.ts';
import { ManualClock, openTestDb, startTestApp, type TestApp } from '../support/harness.ts';

/*
 * POST /v1/agents/{agent_id}/telemetry and GET /v1/fleet/metrics, on both stores.
 * The clock is manual: the data points are placed in time relative to it, so the ranges
 * and the series buckets are exact.
 */
const NOW = '2026-03-10T12:00:00.000Z';
let db: Db;
let clock: ManualClock;
let t: TestApp;
let key: string;
let accountId: string;

beforeAll(async () => {
  db = await openTestDb();
  clock = new ManualClock(NOW);
  t = await startTestApp({ db, clock });
  ({ key, accountId } = await t.signup());
});
afterAll(async () => {
  await t?.close();
  await db?.close();
});

const at = (minutesAgo: number) => new Date(Date.parse(NOW) - minutesAgo * 60_000).toISOString();
const point = (minutesAgo: number, over: Record<string, unknown> = {}) => ({
  timestamp: at(minutesAgo), transactions_total: 10, transactions_failed: 0, queue_pending: 1, queue_dead: 0,
  storage_used_bytes: 1000, storage_total_bytes: 10_000, adapter_versions: { alpha: '1.0.0' }, ...over,
});
const send = (agent: string, data_points: unknown, k = key) =>
  t.request({ method: 'POST', url: `/v1/agents/${encodeURIComponent(agent)}/telemetry`, key: k, payload: { data_points } as object });
const metrics = (query: string, k = key) => t.request({ method: 'GET', url: `/v1/fleet/metrics${query}`, key: k });
const fresh = async () => (await t.signup()).key;

const VERSIONS = 'adapter_versions must be an object of system names (1-50 characters) to version strings (1-100 characters)';

describe('POST /v1/agents/{agent_id}/telemetry: validation', () => {
  const cases: Array<[string, unknown, string]> = [
    ['no data_points', undefined, 'data_points is required'],
    ['empty batch', [], 'data_points must be an array of 1 to 100 data points'],
    ['101 points', Array.from({ length: 101 }, (_, i) => point(i)), 'data_points must be an array of 1 to 100 data points'],
    ['not an array', { a: 1 }, 'data_points must be an array of 1 to 100 data points'],
    ['missing timestamp', [{ ...point(1), timestamp: undefined }], 'timestamp is required'],
    ['bad timestamp', [point(1, { timestamp: 'yesterday' })], 'timestamp must be an RFC 3339 date-time'],
    ['future timestamp', [point(-6)], 'timestamp must not be more than 5 minutes in the future'],
    ['negative total', [point(1, { transactions_total: -1 })], 'transactions_total must be an integer from 0 to 1000000000'],
    ['fractional failed', [point(1, { transactions_failed: 1.5 })], 'transactions_failed must be an integer from 0 to 1000000000'],
    // Beyond any POS between two readings; at 2^53 the account's hourly sums overflowed (500).
    ['huge total', [point(1, { transactions_total: Number.MAX_SAFE_INTEGER })], 'transactions_total must be an integer from 0 to 1000000000'],
    ['clock reset', [point(1, { timestamp: '1970-01-01T00:00:00Z' })], 'timestamp must not be before 2020-01-01 (is the agent\'s clock set?)'],
    ['year 1', [point(1, { timestamp: '0001-01-01T00:00:00Z' })], 'timestamp must not be before 2020-01-01 (is the agent\'s clock set?)'],
    ['string count', [point(1, { queue_pending: '3' })], 'queue_pending must be a non-negative integer'],
    ['missing queue_dead', [{ ...point(1), queue_dead: undefined }], 'queue_dead is required'],
    ['failed > total', [point(1, { transactions_total: 2, transactions_failed: 3 })], 'transactions_failed must not exceed transactions_total'],
    ['used > total', [point(1, { storage_used_bytes: 11_000 })], 'storage_used_bytes must not exceed storage_total_bytes'],
    ['versions not strings', [point(1, { adapter_versions: { alpha: 1 } })], VERSIONS],
    ['versions an array', [point(1, { adapter_versions: ['1.0'] })], VERSIONS],
    ['version too long', [point(1, { adapter_versions: { alpha: 'v'.repeat(101) } })], VERSIONS],
    ['system name too long', [point(1, { adapter_versions: { ['s'.repeat(51)]: '1' } })], VERSIONS],
    ['missing versions', [{ ...point(1), adapter_versions: undefined }], 'adapter_versions is required'],
    ['point not an object', ['x'], 'data_points must hold objects'],
    ['deadline without message', [point(1, { deadline_alerts: [{ system: 'alpha' }] })], 'deadline_alerts.message is required'],
    ['deadline bad due_at', [point(1, { deadline_alerts: [{ system: 'alpha', message: 'm', due_at: 'soon' }] })], 'deadline_alerts.due_at must be an RFC 3339 date-time'],
  ];
  it.each(cases)('%s → 400', async (_name, points, message) => {
    const res = await send('agent-v', points);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: message });
  });

  it('a NUL in agent_id (or any path or query parameter) → 400, never a 500', async () => {
    const res = await send('a\u0000b', [point(1)]);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: 'path and query parameters may not contain the NUL character (%00)' });
  });

  it('agent_id longer than 255 characters → 400; 255 is accepted', async () => {
    const long = await send('a'.repeat(256), [point(1)]);
    expect(long.statusCode).toBe(400);
    expect(long.json()).toEqual({ error: 'agent_id must be 1-255 characters' });
    expect((await send('a'.repeat(255), [point(1)])).statusCode).toBe(202);
    // Far longer, and 255 characters outside the BMP (510 UTF-16 units): the route's own rule, not the router's.
    expect((await send('a'.repeat(900), [point(1)])).json()).toEqual({ error: 'agent_id must be 1-255 characters' });
    expect((await send('😀'.repeat(255), [point(1)])).statusCode).toBe(202);
    const empty = await t.request({ method: 'POST', url: '/v1/agents//telemetry', key, payload: { data_points: [point(1)] } });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({ error: 'agent_id must be 1-255 characters' });
  });

  it('a rejected batch stores nothing', async () => {
    const k = await fresh();
    expect((await send('agent-x', [point(2), point(1, { transactions_failed: 99 })], k)).statusCode).toBe(400);
    const m = (await metrics('?range=1h', k)).json();
    expect(m.agents.total).toBe(0);
    expect(m.transactions.total).toBe(0);
  });

  it('401 without a key, 403 with a key lacking fleet:write / fleet:read', async () => {
    expect((await t.request({ method: 'POST', url: '/v1/agents/a/telemetry', payload: { data_points: [point(1)] } })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: '/v1/fleet/metrics' })).statusCode).toBe(401);
    const reader = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'reader', permissions: ['fleet:read'] } })).json().key;
    const writer = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'writer', permissions: ['fleet:write'] } })).json().key;
    expect((await send('agent-p', [point(1)], reader)).statusCode).toBe(403);
    expect((await send('agent-p', [point(1)], writer)).statusCode).toBe(202);
    expect((await metrics('', writer)).statusCode).toBe(403);
    expect((await metrics('', reader)).statusCode).toBe(200);
  });
});

describe('GET /v1/fleet/metrics: errors', () => {
  it('400 invalid range', async () => {
    for (const r of ['2h', '', '24H', '1d']) {
      const res = await metrics(`?range=${encodeURIComponent(r)}`);
      expect(res.statusCode, r).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid range' });
    }
  });
  it('400 account_id not a uuid; 403 another account', async () => {
    const bad = await metrics('?account_id=nope');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'account_id must be a uuid' });
    const other = await t.signup();
    const res = await metrics(`?account_id=${other.accountId}`);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: "cannot read another account's fleet metrics" });
    const mine = await metrics(`?account_id=${accountId.toUpperCase()}&range=1h`);
    expect(mine.statusCode).toBe(200);
    expect(mine.json().account_id).toBe(accountId);
  });
});

describe('ingestion and metrics', () => {
  it('aggregates totals, error rates, storage and the series; a resent point counts once', async () => {
    const { key: k, accountId: acc } = await t.signup();
    // Two agents, points 5 and 35 minutes ago (two 1-minute buckets in 1h; one 15-minute bucket each in 6h).
    const a = await send('pos-1', [point(35, { transactions_total: 40, transactions_failed: 2 }), point(5, { transactions_total: 60, transactions_failed: 3, queue_pending: 4, storage_used_bytes: 2000 })], k);
    expect(a.statusCode, a.body).toBe(202);
    expect(a.json()).toMatchObject({ agent_id: 'pos-1', accepted: 2, duplicates: 0, alerts: [] });
    expect((await send('pos-2', [point(5, { transactions_total: 100, transactions_failed: 5, storage_total_bytes: 30_000 })], k)).statusCode).toBe(202);
    // Resent: skipped, counters unchanged.
    const again = await send('pos-1', [point(5, { transactions_total: 60, transactions_failed: 3 })], k);
    expect(again.json()).toMatchObject({ accepted: 0, duplicates: 1 });

    const m = (await metrics(`?account_id=${acc}&range=1h`, k)).json();
    expect(m).toMatchObject({
      account_id: acc, environment: 'test', range: '1h', bucket_seconds: 60,
      agents: { total: 2, active: 2 },
      transactions: { total: 200, failed: 10, error_rate: 0.05 },
      queue: { pending: 5, dead: 0 },
      storage: { used_bytes: 3000, total_bytes: 40_000, utilization: 0.075, agents_over_90_percent: 0 },
      alerts: { total: 0 },
    });
    expect(m.series).toHaveLength(61); // 12:00-60min … 12:00 inclusive
    const nonEmpty = m.series.filter((b: { transactions_total: number }) => b.transactions_total > 0);
    expect(nonEmpty).toEqual([
      { timestamp: at(35), transactions_total: 40, transactions_failed: 2, error_rate: 0.05, agents: 1 },
      { timestamp: at(5), transactions_total: 160, transactions_failed: 8, error_rate: 0.05, agents: 2 },
    ]);
    // 24h reads the hourly sums: same totals, one bucket per hour.
    const day = (await metrics('?range=24h', k)).json();
    expect(day.transactions).toEqual({ total: 200, failed: 10, error_rate: 0.05 });
    expect(day.bucket_seconds).toBe(3600);
    expect(day.series.reduce((n: number, b: { transactions_total: number }) => n + b.transactions_total, 0)).toBe(200);
    // Both agents reported in the 11:00 hour (pos-1 twice, and its resend counted no one twice).
    expect(day.series.filter((b: { transactions_total: number }) => b.transactions_total > 0)).toEqual([
      { timestamp: '2026-03-10T11:00:00.000Z', transactions_total: 200, transactions_failed: 10, error_rate: 0.05, agents: 2 },
    ]);
    expect((await metrics('?range=6h', k)).json()).toMatchObject({ bucket_seconds: 3600, transactions: { total: 200 } });
    // Default range is 24h.
    expect((await metrics('', k)).json().range).toBe('24h');
    // Another account sees none of it.
    const other = (await metrics('?range=30d')).json();
    expect(JSON.stringify(other)).not.toContain('pos-1');
  });

  it('an older point does not overwrite the latest gauges', async () => {
    const k = await fresh();
    await send('g', [point(5, { queue_pending: 7 })], k);
    await send('g', [point(50, { queue_pending: 99 })], k);
    const m = (await metrics('?range=1h', k)).json();
    expect(m.queue.pending).toBe(7);
    expect(m.transactions.total).toBe(20);
  });

  it('points older than the range are left out', async () => {
    const k = await fresh();
    await send('old', [point(3 * 60)], k);
    const hour = (await metrics('?range=1h', k)).json();
    expect(hour.transactions.total).toBe(0);
    expect(hour.agents).toEqual({ total: 1, active: 0 });
    expect((await metrics('?range=6h', k)).json().transactions.total).toBe(10);
  });
});

describe('anomaly detection', () => {
  it('error-rate spike against the agent\'s own baseline, not against a fixed rate', async () => {
    const k = await fresh();
    // Baseline: two hours ago, 2 % failures over 500 transactions.
    expect((await send('noisy', [point(150, { transactions_total: 500, transactions_failed: 10 })], k)).statusCode).toBe(202);
    // 8 % now: more than three times its baseline and over +10 points? no: 0.08 < 0.12 → no alert.
    const calm = await send('noisy', [point(30, { transactions_total: 100, transactions_failed: 8 })], k);
    expect(calm.json().alerts).toEqual([]);
    // 30 % now: a spike.
    const spike = await send('noisy', [point(10, { transactions_total: 100, transactions_failed: 30 })], k);
    expect(spike.json().alerts).toEqual([expect.objectContaining({ type: 'error_rate_spike', observed_at: at(10) })]);
    expect(spike.json().alerts[0].message).toMatch(/30\.0 %.*baseline of 2\.0 %/);
    // An agent that always fails 40 %: 40 % is its normal, no alert.
    await send('flaky', [point(150, { transactions_total: 500, transactions_failed: 200 })], k);
    expect((await send('flaky', [point(10, { transactions_total: 100, transactions_failed: 40 })], k)).json().alerts).toEqual([]);
    // Too few transactions to say anything.
    expect((await send('tiny', [point(10, { transactions_total: 5, transactions_failed: 5 })], k)).json().alerts).toEqual([]);
  });

  it('new dead queue entries, storage over 90 %, engine deadline alerts; shown in metrics', async () => {
    const k = await fresh();
    const first = await send('edge', [
      point(20, { queue_dead: 0 }),
      point(15, { queue_dead: 2, storage_used_bytes: 9_500 }),
      point(10, { queue_dead: 3, storage_used_bytes: 9_600, deadline_alerts: [{ system: 'alpha', message: 'record 42 must be sent within 2 hours', due_at: '2026-03-10T14:00:00Z' }] }),
    ], k);
    expect(first.statusCode, first.body).toBe(202);
    expect(first.json().alerts.map((a: { type: string }) => a.type).sort()).toEqual(['dead_queue_entries', 'deadline', 'storage_high']);
    // Still 3 dead, still 96 %: no new alerts (a condition is one alert, not one per batch).
    const same = await send('edge', [point(5, { queue_dead: 3, storage_used_bytes: 9_600 })], k);
    expect(same.json().alerts).toEqual([]);
    // One more dead entry: alert again.
    const more = await send('edge', [point(1, { queue_dead: 4, storage_used_bytes: 9_600 })], k);
    expect(more.json().alerts).toEqual([expect.objectContaining({ type: 'dead_queue_entries', message: '4 dead queue entries (was 3)' })]);

    const m = (await metrics('?range=1h', k)).json();
    expect(m.alerts.total).toBe(4);
    expect(m.alerts.by_type).toEqual({ error_rate_spike: 0, dead_queue_entries: 2, storage_high: 1, deadline: 1 });
    expect(m.alerts.recent[0]).toMatchObject({ agent_id: 'edge', type: 'dead_queue_entries', value: 4, threshold: 3, observed_at: at(1) });
    expect(m.alerts.recent.find((a: { type: string }) => a.type === 'deadline').message).toBe('alpha: record 42 must be sent within 2 hours (due 2026-03-10T14:00:00.000Z)');
    expect(m.storage.agents_over_90_percent).toBe(1);
    expect(m.queue.dead).toBe(4);
    // The resent batch re-raises nothing.
    const resent = await send('edge', [point(1, { queue_dead: 4, storage_used_bytes: 9_600 })], k);
    expect(resent.json()).toMatchObject({ accepted: 0, duplicates: 1, alerts: [] });
  });
});

describe('concurrent batches of one new agent', () => {
  it('are applied one after the other: every point counted, a condition announced once', async () => {
    const k = await fresh();
    const batches = Array.from({ length: 8 }, (_, i) => [point(30 - i, { storage_used_bytes: 9_500, queue_dead: 1 })]);
    const answers = await Promise.all(batches.map((b) => send('racer', b, k)));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(8).fill(202));
    const m = (await metrics('?range=1h', k)).json();
    expect(m.transactions.total).toBe(80);
    expect(m.alerts.by_type).toMatchObject({ storage_high: 1, dead_queue_entries: 1 });
    expect(m.agents).toEqual({ total: 1, active: 1 });
  });
});

describe('accounts are apart', () => {
  it('two accounts\' agents of one name never mix', async () => {
    const a = await t.signup();
    const b = await t.signup();
    await send('till-1', [point(5, { transactions_total: 10, queue_dead: 0 })], a.key);
    const fromB = await send('till-1', [point(5, { transactions_total: 30, transactions_failed: 30, queue_dead: 9 })], b.key);
    // B's point at the same agent and time is B's own (not a duplicate of A's), and its alerts are B's.
    expect(fromB.json()).toMatchObject({ accepted: 1, duplicates: 0 });
    const ma = (await metrics(`?account_id=${a.accountId}&range=1h`, a.key)).json();
    expect(ma.transactions).toEqual({ total: 10, failed: 0, error_rate: 0 });
    expect(ma.queue.dead).toBe(0);
    expect(ma.alerts.total).toBe(0);
    expect((await metrics(`?account_id=${a.accountId}&range=1h`, b.key)).statusCode).toBe(403);
    const mb = (await metrics('?range=1h', b.key)).json();
    expect(mb.transactions.total).toBe(30);
    expect(mb.alerts.total).toBe(2);
  });
});

describe('test and live fleets are apart', () => {
  it('a live key sees none of the test agents', async () => {
    const live = await startTestApp({ db, clock, liveEnabled: true });
    try {
      const { key: k } = await live.signup();
      const liveKey = (await live.request({ method: 'POST', url: '/v1/api-keys', key: k, payload: { name: 'live', environment: 'live' } })).json().key;
      await live.request({ method: 'POST', url: '/v1/agents/a/telemetry', key: k, payload: { data_points: [point(5)] } });
      const m = (await live.request({ method: 'GET', url: '/v1/fleet/metrics?range=1h', key: liveKey })).json();
      expect(m.environment).toBe('live');
      expect(m.agents.total).toBe(0);
    } finally {
      await live.close();
    }
  });
});
