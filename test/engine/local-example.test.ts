import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalHost, type LocalHost } from '../../src/engine/local-host.ts';
import { STORE } from '../support/harness.ts';
import { jsonClient } from './local-client.ts';

/*
 * docs/examples/local_sale.py, as docs/local-host.md tells a reader to run it: Python 3's
 * urllib against a running local host (in-process here), then the API checked for what the
 * script says it made. Asynchronous execFile: the host answers from this event loop.
 */
const SCRIPT = path.join(import.meta.dirname, '..', '..', 'docs', 'examples', 'local_sale.py');

describe.runIf(STORE === 'pglite')('docs/examples/local_sale.py (Python 3 urllib)', () => {
  let host: LocalHost;
  beforeAll(async () => {
    host = await startLocalHost({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'local-example-')), PORT: '0' }, { log: pino({ level: 'silent' }) });
  });
  afterAll(async () => host?.close());

  it('signs up, creates a location and a sale that reaches the (sandbox) authority', async () => {
    const { stdout } = await promisify(execFile)('python3', [SCRIPT, host.url], { timeout: 30_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop()!) as { api_key: string; location_id: string; transaction_id: string; status: string };
    expect(out.status).toBe('success');
    const api = jsonClient(host.url);
    const tx = await api.get(`/v1/transactions/${out.transaction_id}`, out.api_key);
    expect(tx.status).toBe(200);
    expect(tx.body).toMatchObject({ id: out.transaction_id, location_id: out.location_id, status: 'success', currency: 'EUR' });
    const loc = await api.get(`/v1/locations/${out.location_id}`, out.api_key);
    expect(loc.body).toMatchObject({ country: 'ES', tax_id: 'B12345674' });
    // process-pending ran: its batch runs are recorded (GET /v1/admin/batch-stats counts them).
    const runs = await host.runtime.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM batch_runs WHERE trigger = 'manual'`);
    expect(runs.rows[0]!.n).toBeGreaterThan(0);
  }, 30_000);
});
