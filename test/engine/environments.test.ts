import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createEngine } from '../../src/engine/index.ts';
import { locationBodies } from '../support/fixtures.ts';
import { saleBody } from '../support/transactions.ts';
import { cleanupDirs, ok, startService, tempDir, type LiveService } from './support.ts';

/*
 * One data_dir, first a sandbox session, then a production one (an integrator tests on the
 * device, then goes live on it). The test and live fleets are apart on the service
 * (test/api/fleet.test.ts): the engine must not carry its sandbox queue into the live
 * session's queue_status and telemetry, nor send the data points it took in sandbox with
 * the live key.
 */
let svc: LiveService;
let testKey: string;
let liveKey: string;
beforeAll(async () => {
  svc = await startService({ liveEnabled: true });
  ({ key: testKey } = await svc.t.signup());
  liveKey = (await svc.t.request({ method: 'POST', url: '/v1/api-keys', key: testKey, payload: { name: 'live', environment: 'live' } })).json().key;
});
afterAll(async () => {
  await svc?.close();
  cleanupDirs();
});

const fleet = async (key: string) => (await svc.t.request({ method: 'GET', url: '/v1/fleet/metrics?range=1h', key })).json();

it('a production session neither counts nor reports the sandbox session\'s queue and telemetry', { timeout: 60_000 }, async () => {
  // Behind the service's clock: the points the engine takes stay inside the metrics range.
  const clock = new ManualClock(new Date(Date.now() - 10 * 60_000));
  const e = createEngine({ clock, startWorker: false, random: () => 0.5 });
  const call = (method: string, params: Record<string, unknown> = {}) => e.call({ version: 1, method, params });
  const dir = tempDir();
  const base = { country: 'ES', service_url: svc.url, data_dir: dir, agent_id: 'pos-1', telemetry_interval_seconds: 0 };

  // Sandbox: one sale whose submission dies (retry_max 1), one still waiting.
  ok(await call('init', { ...base, api_key: testKey, environment: 'sandbox' }));
  ok(await call('queue_init', { retry_max: 1 }));
  clock.advance(1000); // the sales come after the point counting starts
  const loc = ok(await call('create_location', locationBodies['es-verifactu'])).id;
  const sale = (n: number) => ({ ...saleBody(loc), timestamp: clock.now().toISOString(), metadata: { sandbox_outcome: 'timeout', invoice_number: `T-${n}` }, inline_timeout_seconds: 0 });
  ok(await call('process_transaction', sale(1)));
  ok(await call('process_pending'));
  clock.advance(1000);
  ok(await call('process_transaction', sale(2)));
  expect(ok(await call('queue_status'))).toMatchObject({ pending: 1, dead: 1, total: 2 });
  // A point taken while the service is away stays in the outbox.
  await svc.stop();
  clock.advance(60_000);
  expect(ok(await call('send_telemetry'))).toMatchObject({ sent: 0, outbox: { points: 1 } });
  ok(await call('shutdown'));
  await svc.restart();

  // Production on the same data_dir.
  ok(await call('init', { ...base, api_key: liveKey, environment: 'production' }));
  expect(ok(await call('queue_status'))).toMatchObject({ pending: 0, processing: 0, completed: 0, failed: 0, dead: 0, total: 0, alerts: [] });
  clock.advance(60_000);
  const sent = ok(await call('send_telemetry'));
  expect(sent.sent).toBe(1); // its own point only
  const live = await fleet(liveKey);
  expect(live.queue).toEqual({ pending: 0, dead: 0 });
  expect(live.alerts.total).toBe(0);
  expect(live.transactions.total).toBe(0);
  ok(await call('shutdown'));

  // Back in sandbox: the point taken offline reaches the test fleet.
  ok(await call('init', { ...base, api_key: testKey, environment: 'sandbox' }));
  expect(ok(await call('queue_status'))).toMatchObject({ pending: 1, dead: 1, total: 2 });
  clock.advance(60_000);
  expect(ok(await call('send_telemetry')).sent).toBe(2); // the kept point and this one
  const test = await fleet(testKey);
  expect(test.transactions.total).toBe(2);
  expect(test.queue.dead).toBe(1);
  ok(await call('shutdown'));
});
