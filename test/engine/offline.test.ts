import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createEngine } from '../../src/engine/index.ts';
import { GR_SUBSCRIPTION_KEY, locationBodies } from '../support/fixtures.ts';
import { startFakeAade, type FakeAade } from '../support/fake-aade.ts';
import { saleBody, saleLines } from '../support/transactions.ts';
import { cleanupDirs, ok, startService, tempDir, type LiveService } from './support.ts';

/*
 * Offline operation (issue #17 "Tests that prove it"): after init, the service and the
 * authority (the fake AADE myDATA, real HTTPS on 127.0.0.1, reached through the real
 * protocol client: `authority: "sandbox"`) go away; 1,000 sales are still processed
 * (stored, numbered, queued); when both come back on the same ports, the queue drains and
 * every document reaches the authority exactly once. The telemetry taken offline is kept
 * and delivered once the service is back.
 */
const SALES = Number(process.env.ENGINE_SALES ?? 1000);
let svc: LiveService;
let fake: FakeAade;
let key: string;
beforeAll(async () => {
  svc = await startService();
  ({ key } = await svc.t.signup());
  // The schema check of 1,000 documents is the AADE tests' business (greece-authority.test.ts): off here for speed.
  fake = await startFakeAade({ credentials: { userId: 'user1', subscriptionKey: GR_SUBSCRIPTION_KEY }, validateSchema: false });
});
afterAll(async () => {
  await fake?.close();
  await svc?.close();
  cleanupDirs();
});

it('1,000 sales offline, then the queue drains: every document reaches AADE once', { timeout: 240_000 }, async () => {
  const clock = new ManualClock(new Date());
  const e = createEngine({ clock, startWorker: false, worker: { concurrency: Number(process.env.ENGINE_CONC ?? 50), batchSize: Number(process.env.ENGINE_CONC ?? 50) } });
  const call = (method: string, params: Record<string, unknown> = {}) => e.call({ version: 1, method, params });
  ok(await call('init', {
    api_key: key, environment: 'sandbox', country: 'GR', service_url: svc.url, data_dir: tempDir(), agent_id: 'pos-offline',
    authority: 'sandbox', authority_base_urls: { 'gr-mydata:test': fake.url }, authority_ca: fake.caPem, telemetry_interval_seconds: 0,
  }));
  const loc = ok(await call('create_location', { ...locationBodies['gr-mydata'], country_config: { ...locationBodies['gr-mydata'].country_config, default_series: 'OFF' } })).id;

  // The network goes away.
  await svc.stop();
  await fake.refuse();

  const results: Record<string, any>[] = [];
  for (let i = 0; i < SALES; i += 100) {
    const batch = await Promise.all(Array.from({ length: Math.min(100, SALES - i) }, (_, j) =>
      call('process_transaction', { ...saleBody(loc, saleLines['gr-mydata']), timestamp: clock.now().toISOString(), idempotency_key: `sale-${i + j}`, ...(i + j < 10 ? {} : { inline_timeout_seconds: 0 }) })));
    results.push(...batch.map((r) => ok(r)));
  }
  // Every sale was answered with its signed, numbered record: the first ten tried AADE
  // inline (refused: myDATA's offline_pending, retried later), the others queued at once.
  expect(results).toHaveLength(SALES);
  expect(new Set(results.map((r) => r.id)).size).toBe(SALES);
  expect(results.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill('offline_pending'));
  for (const r of results.slice(10)) expect(r.status).toBe('pending_submission');
  expect(fake.requests.length).toBe(0);
  const offline = ok(await call('queue_status'));
  expect(offline).toMatchObject({ pending: SALES - 10, processing: 0, failed: 10, dead: 0, completed: 0 });
  expect(offline.alerts).toEqual([]); // seconds into a 7-day grace window
  // A telemetry round offline: the point is kept in the outbox.
  expect(ok(await call('send_telemetry'))).toEqual({ sent: 0, outbox: { points: 1, dropped: 0 } });

  const offlineAt = clock.now();
  // The network comes back, on the same ports; the retries fall due (2 s backoff, ±10 %).
  await svc.restart();
  await fake.normal();
  clock.advance(10_000);
  let status = offline;
  for (let round = 0; round < 20 && status.completed < SALES; round++) {
    const r = ok(await call('process_pending'));
    status = r.queue;
    clock.advance(10_000);
  }
  expect(status).toMatchObject({ completed: SALES, pending: 0, failed: 0, dead: 0, processing: 0, alerts: [] });
  // Exactly once at AADE: one registered document per sale, each sale holding its own MARK.
  // (A send whose answer was late — the fake shares this process's event loop with the
  // store — is sent again; AADE answers the UID's original MARK, registering nothing twice.)
  const sends = fake.requests.filter((r) => r.path.endsWith('/SendInvoices'));
  expect(sends.length).toBeGreaterThanOrEqual(SALES);
  expect(sends.length).toBeLessThan(SALES * 1.05);
  expect(fake.documents.size).toBe(SALES);
  const txs = (await Promise.all(results.map((r) => call('get_transaction', { id: r.id })))).map((r) => ok(r));
  for (const tx of txs) expect(tx.status).toBe('success');
  const marks = new Set(txs.map((tx) => tx.fiscal_id_upstream));
  expect(marks.size).toBe(SALES);
  expect(new Set([...fake.documents.values()].map((d) => d.mark))).toEqual(marks);
  // The telemetry taken offline reached the service once it was back, and left the outbox.
  const points = await svc.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM fleet_points WHERE agent_id = 'pos-offline' AND ts <= $1`, [offlineAt]);
  expect(Number(points.rows[0]!.n)).toBe(1);
  expect(ok(await call('queue_status')).telemetry_outbox.points).toBe(0);
  ok(await call('shutdown'));
});
