import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/index.ts';
import { locationBodies } from '../support/fixtures.ts';
import { saleBody, saleLines } from '../support/transactions.ts';
import { ok, tempDir, useLiveService } from './support.ts';

/**
 * The embedded engine's envelope with wrong params for every method, initialised on a
 * live service: every answer is a result or an error with a code the spec lists, never
 * `internal_error` (the engine's 500) nor `store_error` (bad input must not reach the
 * store as a failure). Fixed inputs: a failure names its call. Well-formed envelopes:
 * envelope.test.ts.
 */
const BAD: readonly unknown[] = [
  null, true, 0, -1, 1.5, 1e308, '', ' ', 'x'.repeat(70_000), '\u202e\ud83d\ude00é', 'bell\u0007', '\ufffe', '../../etc', '%00', [], [null], {}, { a: { b: [] } }, 'not-a-uuid',
  '00000000-0000-4000-8000-000000000000', '2026-02-30T25:61:00Z',
];

const live = useLiveService();

describe('the engine with wrong params: never internal_error or store_error', () => {
  it('every method, each param of a valid call set wrong in turn', async () => {
    const e = createEngine({ startWorker: false });
    const call = (method: string, params?: unknown) => e.call({ version: 1, method, ...(params === undefined ? {} : { params }) });
    const init = { api_key: live.key, environment: 'sandbox', country: 'GR', service_url: live.svc.url, data_dir: tempDir(), agent_id: 'pos-1', telemetry_interval_seconds: 0 };
    ok(await call('init', init));
    const loc = ok(await call('create_location', locationBodies['gr-mydata'])).id as string;
    const sale = ok(await call('process_transaction', { ...saleBody(loc, saleLines['gr-mydata']), idempotency_key: 'fuzz-sale' })).id as string;
    const valid: Record<string, Record<string, unknown>> = {
      create_location: { ...locationBodies['gr-mydata'] },
      update_location: { id: loc, name: 'Νέο' },
      get_location: { id: loc },
      process_transaction: { ...saleBody(loc, saleLines['gr-mydata']), idempotency_key: 'fuzz' },
      get_transaction: { id: sale },
      get_fiscal_record: { id: sale },
      cancel_transaction: { id: sale, reason: 'r' },
      upload_certificate: { certificate: 'MIIB', password: 'pw', certificate_id: 'c1' },
      queue_init: { retry_max: 3, retry_delay_seconds: 2, backoff_cap_seconds: 60 },
      process_pending: {}, list_certificates: {}, queue_status: {}, send_telemetry: {},
    };
    const failures: string[] = [];
    let n = 0;
    for (const [method, base] of Object.entries(valid)) {
      const variants: unknown[] = [{}, ...BAD.filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))];
      for (const [param, value] of Object.entries(base)) {
        for (const v of BAD) variants.push({ ...base, [param]: v, ...(method === 'process_transaction' && param !== 'idempotency_key' ? { idempotency_key: `fuzz-${n++}` } : {}) });
        if (value !== null && typeof value === 'object') variants.push({ ...base, [param]: { ...value, extra: 'x' } });
      }
      for (const params of variants) {
        const r = await call(method, params);
        const code = (r as { error?: { code: string } }).error?.code;
        if (code === 'internal_error' || code === 'store_error') failures.push(`${method} ${JSON.stringify(params).slice(0, 200)} → ${JSON.stringify(r).slice(0, 200)}`);
      }
    }
    // The session still works after all that.
    expect(ok(await call('get_transaction', { id: sale })).id).toBe(sale);
    expect(failures).toEqual([]);
    ok(await call('shutdown'));
  }, 300_000);
});
