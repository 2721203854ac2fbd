import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createEngine } from '../../src/engine/index.ts';
import type { EngineResponse } from '../../src/engine/engine.ts';
import { DATA_DIR_LOCK_FILE } from '../../src/store/data-dir-lock.ts';
import { openDb } from '../../src/store/open.ts';
import { locationBodies } from '../support/fixtures.ts';
import { saleBody } from '../support/transactions.ts';
import { ok, tempDir, useLiveService } from './support.ts';

/*
 * What keeps an engine's data safe and its licence honoured: one process (or engine) per
 * data directory, the token checked at every fiscal call, and a failed re-init that leaves
 * the running session alone.
 */
const live = useLiveService();
/** The envelope's error, or undefined for a result. */
const errorOf = (r: EngineResponse) => ('error' in r ? r.error : undefined);
const DAY = 86_400_000;
const initParams = (dataDir: string, over: Record<string, unknown> = {}) => ({
  api_key: live.key, environment: 'sandbox', country: 'ES', service_url: live.svc.url, data_dir: dataDir, telemetry_interval_seconds: 0, ...over,
});

it('a second engine on the same data_dir is refused (store_error, naming the holder); after shutdown it may open it, and nothing is lost', async () => {
  const dir = tempDir();
  const a = createEngine({ startWorker: false });
  const b = createEngine({ startWorker: false });
  ok(await a.call({ version: 1, method: 'init', params: initParams(dir) }));
  const loc = ok(await a.call({ version: 1, method: 'create_location', params: locationBodies['es-verifactu'] })).id;
  const sale = ok(await a.call({ version: 1, method: 'process_transaction', params: { ...saleBody(loc), timestamp: new Date().toISOString(), inline_timeout_seconds: 0 } }));
  expect(fs.readFileSync(path.join(dir, DATA_DIR_LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));

  const refused = await b.call({ version: 1, method: 'init', params: initParams(dir) });
  expect(errorOf(refused)).toMatchObject({ code: 'store_error' });
  expect(errorOf(refused)!.message).toContain(`data_dir ${dir} is in use by another engine or local host (process ${process.pid}`);

  ok(await a.call({ version: 1, method: 'shutdown' }));
  expect(fs.existsSync(path.join(dir, DATA_DIR_LOCK_FILE))).toBe(false);
  ok(await b.call({ version: 1, method: 'init', params: initParams(dir) }));
  expect(ok(await b.call({ version: 1, method: 'get_transaction', params: { id: sale.id } })).id).toBe(sale.id);
  ok(await b.call({ version: 1, method: 'shutdown' }));
});

it('the token is the licence: past its expiry a running engine fiscalizes nothing new (token_expired), reads still answer', async () => {
  const clock = new ManualClock(new Date());
  const e = createEngine({ clock, startWorker: false });
  const call = (method: string, params: Record<string, unknown> = {}) => e.call({ version: 1, method, params });
  const started = ok(await call('init', initParams(tempDir())));
  const loc = ok(await call('create_location', locationBodies['es-verifactu'])).id;
  const sale = ok(await call('process_transaction', { ...saleBody(loc), timestamp: clock.now().toISOString(), inline_timeout_seconds: 0 }));
  clock.set(new Date(new Date(started.token_expires_at as string).getTime() + DAY));
  for (const [method, params] of [
    ['process_transaction', { ...saleBody(loc), timestamp: clock.now().toISOString() }],
    ['create_location', locationBodies['es-verifactu']],
    ['cancel_transaction', { id: sale.id }],
  ] as const) {
    const res = await call(method, params);
    expect(errorOf(res), method).toEqual({ code: 'token_expired', message: 'the offline token has expired: connect to the service and call init again' });
  }
  expect(ok(await call('get_transaction', { id: sale.id })).id).toBe(sale.id);
  expect(ok(await call('queue_status')).total).toBeGreaterThanOrEqual(1);
  ok(await call('shutdown'));
});

it('a re-init that fails (the service unreachable, no cached token for it) leaves the running session as it was', async () => {
  const dir = tempDir();
  const e = createEngine({ startWorker: false });
  const call = (method: string, params: Record<string, unknown> = {}) => e.call({ version: 1, method, params });
  ok(await call('init', initParams(dir)));
  const failed = await call('init', initParams(dir, { country: 'FR', service_url: 'http://127.0.0.1:9' }));
  expect(errorOf(failed)).toMatchObject({ code: 'network_unavailable' });
  expect(ok(await call('queue_status')).total).toBe(0);
  ok(await call('shutdown'));
});

it('Embedded-Local has no scheduler: a running engine schedules no recurring job (the integrator calls process_pending)', async () => {
  const dir = tempDir();
  const e = createEngine();
  ok(await e.call({ version: 1, method: 'init', params: initParams(dir) }));
  ok(await e.call({ version: 1, method: 'shutdown' }));
  const db = await openDb({ dataDir: path.join(dir, 'store') });
  try {
    expect((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE kind LIKE 'scheduled:%'")).rows[0]!.n).toBe(0);
  } finally {
    await db.close();
  }
});
