import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createEngine } from '../../src/engine/index.ts';
import { locationBodies } from '../support/fixtures.ts';
import { saleBody } from '../support/transactions.ts';
import { ok, tempDir, useLiveService } from './support.ts';

/*
 * The local queue with a manual clock (spec "Embedded local queue"): a submission that
 * fails (the sandbox stub's `timeout`, a transient failure) is retried after 2 s, 4 s,
 * 8 s… and is `dead` after retry_max attempts; a record not yet submitted raises
 * warning_75pct, critical_90pct and breached_100pct as its submission window (VERI*FACTU:
 * 4 days, through the plug-in's submissionWindowDays) elapses.
 */
const live = useLiveService();

const DAY = 86_400_000;

it('backoff 2 s doubling, dead after retry_max; deadline alert levels', { timeout: 60_000 }, async () => {
  const clock = new ManualClock(new Date());
  const e = createEngine({ clock, startWorker: false, random: () => 0.5 });
  const call = (method: string, params: Record<string, unknown> = {}) => e.call({ version: 1, method, params });
  ok(await call('init', { api_key: live.key, environment: 'sandbox', country: 'ES', service_url: live.svc.url, data_dir: tempDir(), telemetry_interval_seconds: 0 }));
  ok(await call('queue_init', { retry_max: 4 }));
  const loc = ok(await call('create_location', locationBodies['es-verifactu'])).id;
  const failing = (n: number) => ({
    ...saleBody(loc), timestamp: clock.now().toISOString(), metadata: { sandbox_outcome: 'timeout', invoice_number: `F-${n}` }, inline_timeout_seconds: 0,
  });

  const sale = ok(await call('process_transaction', failing(1)));
  expect(sale.status).toBe('pending_submission');
  expect(ok(await call('queue_status'))).toMatchObject({ pending: 1, failed: 0, total: 1 });
  // jobs_run counts every job of the drain (a failure's event and translation jobs too).
  expect(ok(await call('process_pending')).jobs_run).toBeGreaterThanOrEqual(1); // attempt 1 fails
  expect(ok(await call('queue_status'))).toMatchObject({ pending: 0, failed: 1, dead: 0 });
  for (const delay of [2000, 4000, 8000]) {
    clock.advance(delay - 100);
    expect(ok(await call('process_pending')).jobs_run, `not before ${delay} ms`).toBe(0);
    clock.advance(100);
    expect(ok(await call('process_pending')).jobs_run, `at ${delay} ms`).toBeGreaterThanOrEqual(1);
    expect(ok(await call('queue_status')).failed + ok(await call('queue_status')).dead).toBe(1);
  }
  // The fourth attempt was the last (retry_max 4).
  expect(ok(await call('queue_status'))).toMatchObject({ pending: 0, failed: 0, dead: 1, total: 1, alerts: [] });
  // catch_up makes a waiting retry due at once (after an outage), as the local host's process-pending.
  const waiting = ok(await call('process_transaction', failing(9)));
  ok(await call('process_pending'));
  expect(ok(await call('process_pending')).jobs_run, 'its retry waits 2 s').toBe(0);
  const caught = ok(await call('process_pending', { catch_up: true }));
  expect(caught).toMatchObject({ brought_forward: 1 });
  expect(caught.jobs_run).toBeGreaterThanOrEqual(1);
  const refused = await call('process_pending', { catch_up: 'yes' });
  expect('error' in refused ? refused.error : undefined).toEqual({ code: 'invalid_params', message: 'catch_up must be a boolean' });
  expect(ok(await call('get_transaction', { id: waiting.id })).status).toBe('pending_submission');
  expect(ok(await call('get_transaction', { id: sale.id })).status).toBe('failed_permanent');

  // A record left in the queue: alerts as its 4-day window elapses.
  ok(await call('queue_init', { retry_max: 20 }));
  const open = ok(await call('process_transaction', failing(2)));
  expect(open.deadline_at).toBe(new Date(new Date(open.created_at).getTime() + 4 * DAY).toISOString());
  const at = (pct: number) => clock.set(new Date(new Date(open.created_at).getTime() + (4 * DAY * pct) / 100));
  const alerts = async () => ok(await call('queue_status')).alerts as Array<Record<string, unknown>>;
  // The open record's alert, and the dead one's: it surely misses its window, so it keeps
  // its alert (created a few seconds earlier: the same levels).
  const of = async (id: string) => (await alerts()).find((a) => a.transaction_id === id);
  at(74);
  expect(await of(open.id)).toBeUndefined();
  at(75);
  expect(await of(open.id)).toEqual({ transaction_id: open.id, country: 'ES', system: 'es-verifactu', deadline: open.deadline_at, pct_elapsed: 75, level: 'warning_75pct' });
  expect(await of(sale.id)).toMatchObject({ level: 'warning_75pct' });
  at(90);
  expect(await of(open.id)).toMatchObject({ pct_elapsed: 90, level: 'critical_90pct' });
  at(120);
  expect(await of(open.id)).toMatchObject({ pct_elapsed: 120, level: 'breached_100pct' });
  expect(await of(sale.id)).toMatchObject({ level: 'breached_100pct' });
  expect(ok(await call('get_transaction', { id: sale.id })).status).toBe('failed_permanent');
  ok(await call('shutdown'));
});

it('the queue\'s defaults come from FISCALIZATION_SUBMISSION_RETRY_MAX / _DELAY (spec Limits: "(engine)"); queue_init overrides them', async () => {
  const saved = { max: process.env.FISCALIZATION_SUBMISSION_RETRY_MAX, delay: process.env.FISCALIZATION_SUBMISSION_RETRY_DELAY };
  process.env.FISCALIZATION_SUBMISSION_RETRY_MAX = '3';
  process.env.FISCALIZATION_SUBMISSION_RETRY_DELAY = '7';
  try {
    const e = createEngine({ startWorker: false });
    const call = (method: string, params: Record<string, unknown> = {}) => e.call({ version: 1, method, params });
    ok(await call('init', { api_key: live.key, environment: 'sandbox', country: 'ES', service_url: live.svc.url, data_dir: tempDir(), telemetry_interval_seconds: 0 }));
    expect(ok(await call('queue_status')).retry_max).toBe(3);
    expect(ok(await call('queue_init', {}))).toMatchObject({ retry_max: 3, retry_delay_seconds: 7 });
    expect(ok(await call('queue_init', { retry_max: 9 }))).toMatchObject({ retry_max: 9, retry_delay_seconds: 7 });
    ok(await call('shutdown'));
  } finally {
    if (saved.max === undefined) delete process.env.FISCALIZATION_SUBMISSION_RETRY_MAX; else process.env.FISCALIZATION_SUBMISSION_RETRY_MAX = saved.max;
    if (saved.delay === undefined) delete process.env.FISCALIZATION_SUBMISSION_RETRY_DELAY; else process.env.FISCALIZATION_SUBMISSION_RETRY_DELAY = saved.delay;
  }
});

/** An engine on a stopped clock with no worker, provisioned against the service, and a VERI*FACTU location. */
async function verifactuEngine() {
  const clock = new ManualClock(new Date());
  const e = createEngine({ clock, startWorker: false });
  const call = (method: string, params: Record<string, unknown> = {}) => e.call({ version: 1, method, params });
  ok(await call('init', { api_key: live.key, environment: 'sandbox', country: 'ES', service_url: live.svc.url, data_dir: tempDir(), telemetry_interval_seconds: 0 }));
  const loc = ok(await call('create_location', locationBodies['es-verifactu'])).id as string;
  return { clock, call, loc };
}

it('a sale waiting in the local queue is pending_submission, and cancellable: its cancellation goes behind it, the original is cancelled once both are accepted', { timeout: 60_000 }, async () => {
  const { clock, call, loc } = await verifactuEngine();
  const sale = ok(await call('process_transaction', { ...saleBody(loc), timestamp: clock.now().toISOString(), inline_timeout_seconds: 0 }));
  expect(sale.status).toBe('pending_submission');
  const cancellation = ok(await call('cancel_transaction', { id: sale.id }));
  expect(cancellation).toMatchObject({ type: 'cancellation', status: 'pending_submission', cancels_transaction_id: sale.id });
  expect(ok(await call('get_transaction', { id: sale.id }))).toMatchObject({ status: 'pending_submission', cancellation_transaction_id: cancellation.id });
  ok(await call('process_pending'));
  expect(ok(await call('get_transaction', { id: cancellation.id })).status).toBe('success');
  expect(ok(await call('get_transaction', { id: sale.id })).status).toBe('cancelled');
  ok(await call('shutdown'));
});

it('a refused cancellation annulled nothing: get_transaction names no cancellation until the next one is issued, which it then names', { timeout: 60_000 }, async () => {
  const { clock, call, loc } = await verifactuEngine();
  const sale = ok(await call('process_transaction', { ...saleBody(loc), timestamp: clock.now().toISOString(), inline_timeout_seconds: 0 }));
  ok(await call('process_pending'));
  expect(ok(await call('get_transaction', { id: sale.id })).status).toBe('success');
  const refused = ok(await call('cancel_transaction', { id: sale.id, sandbox_outcome: 'reject:4102' }));
  expect(ok(await call('get_transaction', { id: sale.id })).cancellation_transaction_id).toBe(refused.id);
  ok(await call('process_pending'));
  expect(ok(await call('get_transaction', { id: refused.id }))).toMatchObject({ status: 'failed_permanent', cancels_transaction_id: sale.id });
  expect(ok(await call('get_transaction', { id: sale.id }))).toMatchObject({ status: 'success', cancellation_transaction_id: null });
  const accepted = ok(await call('cancel_transaction', { id: sale.id }));
  expect(accepted).toMatchObject({ idempotency_key: `cancel:${sale.id}:2`, cancels_transaction_id: sale.id });
  expect(ok(await call('get_transaction', { id: sale.id })).cancellation_transaction_id).toBe(accepted.id);
  ok(await call('process_pending'));
  expect(ok(await call('get_transaction', { id: sale.id }))).toMatchObject({ status: 'cancelled', cancellation_transaction_id: accepted.id });
  ok(await call('shutdown'));
});
