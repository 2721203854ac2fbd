import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.ts';
import { LOCK_FILE, startLocalHost, type LocalHost } from '../../src/engine/local-host.ts';
import { startFakeAeatVerifactu, type FakeAeatVerifactu } from '../support/fake-aeat-verifactu.ts';
import { STORE } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';
import { CERT_PASSWORD, freshNif } from '../support/spain.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cafeSale, eventually, jsonClient, localEnv, startChild, verifactuLocation } from './local-client.ts';

/*
 * The local host (src/engine/local-host.ts, `npm run local`): the API over the embedded
 * store in DATA_DIR, no scheduler, process-pending run by the integrator. It is an
 * embedded-store host by definition (DATABASE_URL is refused), so it runs once, in the
 * pglite project; the postgres project only checks the refusals.
 */
const ROOT = path.join(import.meta.dirname, '..', '..');
const MAIN = path.join(ROOT, 'src', 'main.ts');
const made: string[] = [];
/** A temporary folder, removed after the file's tests (a PGlite data directory is ~40 MB). */
const tmp = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});
const runLocal = (dataDir: string, extra: NodeJS.ProcessEnv = {}) =>
  startChild(process.execPath, ['--import', 'tsx', MAIN, 'local'], localEnv(dataDir, extra), { cwd: ROOT });

describe('npm run local', () => {
  it('is `main.ts local`', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.local).toBe('node --import tsx src/main.ts local');
  });

  it.runIf(STORE === 'pglite')('serves the API on the embedded store in DATA_DIR and keeps its data across a restart', async () => {
    const dataDir = tmp('local-host-');
    let host = await runLocal(dataDir);
    let ids: { key: string; location: string; tx: string };
    try {
      expect(host.output()).toContain(`data in ${dataDir}`);
      // The same getting-started line as `npm start`: the reference and the sign-up call.
      expect(host.output()).toContain(`local host listening at ${host.url}: reference ${host.url}/docs`);
      expect(host.output()).toContain(`To begin, POST ${host.url}/v1/accounts`);
      const api = jsonClient(host.url);
      expect((await api.get('/health')).body).toEqual({ status: 'ok', store: 'pglite', database: 'ok' });
      const { key: rootKey } = await api.signup();
      const created = await api.post('/v1/api-keys', { name: 'caja 1', environment: 'test' }, rootKey);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const key = created.body.key as string;
      expect(key).toMatch(/^svc_test_/);
      const loc = await api.post('/v1/locations', verifactuLocation(), key);
      expect(loc.status, JSON.stringify(loc.body)).toBe(201);
      const tx = await api.post('/v1/transactions', cafeSale(loc.body.id), key);
      expect(tx.status, JSON.stringify(tx.body)).toBe(201);
      // The sandbox authority answers at once: sent inline or by the in-process worker.
      const done = await eventually(async () => {
        const r = await api.get(`/v1/transactions/${tx.body.id}`, key);
        return r.body.status === 'success' ? r.body : undefined;
      });
      expect(done).toMatchObject({ id: tx.body.id, location_id: loc.body.id, currency: 'EUR' });
      const pending = await api.post('/v1/admin/process-pending', {}, key);
      expect(pending.status, JSON.stringify(pending.body)).toBe(200);
      // Every registered batch processor, run in sequence, each finished.
      expect(pending.body.results.map((r: { processor: string }) => r.processor)).toContain('spain/lroe');
      for (const r of pending.body.results) expect(r).toMatchObject({ status: 'completed', errors_count: 0 });
      ids = { key, location: loc.body.id, tx: tx.body.id };
    } finally {
      expect(await host.stop()).toBe(0);
    }
    expect(fs.existsSync(path.join(dataDir, 'master.key'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).toBe(false); // released on a clean stop

    host = await runLocal(dataDir);
    try {
      const api = jsonClient(host.url);
      const again = await api.get(`/v1/transactions/${ids.tx}`, ids.key);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ id: ids.tx, status: 'success', location_id: ids.location });
      expect((await api.get(`/v1/locations/${ids.location}`, ids.key)).body.id).toBe(ids.location);
    } finally {
      expect(await host.stop()).toBe(0);
    }
  }, 200_000);

  it('refuses the settings it cannot honour, naming them (exit code 78 from main.ts)', async () => {
    const refused = (env: Record<string, string>) => startLocalHost({ DATA_DIR: tmp('local-refused-'), PORT: '0', ...env }).then(() => 'started', (e: Error) => e);
    const pgErr = await refused({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' });
    expect(pgErr).toBeInstanceOf(ConfigError);
    expect((pgErr as Error).message).toContain('the local command runs on the embedded store in DATA_DIR: unset DATABASE_URL');
    expect(((await refused({ REDIS_URL: 'redis://127.0.0.1:6379' })) as Error).message).toContain('unset REDIS_URL');
    expect(((await refused({ WORKERS_IN_PROCESS: 'false' })) as Error).message).toContain('unset WORKERS_IN_PROCESS');
  });
});

describe.runIf(STORE === 'pglite')('local host in-process: no scheduler, process-pending catches the queue up', () => {
  let aeat: FakeAeatVerifactu;
  let receiver: WebhookReceiver;
  let host: LocalHost;
  let dataDir: string;

  beforeAll(async () => {
    [aeat, receiver] = await Promise.all([startFakeAeatVerifactu(), startWebhookReceiver()]);
    aeat.waitSeconds = 0;
    dataDir = tmp('local-inproc-');
    // The lock of a host that died without releasing it (kill -9): a process that is gone.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    fs.writeFileSync(path.join(dataDir, LOCK_FILE), `${gone}\n`);
    const caFile = path.join(tmp('local-ca-'), 'ca.pem');
    fs.writeFileSync(caFile, aeat.caPem);
    host = await startLocalHost({
      DATA_DIR: dataDir, PORT: '0',
      AUTHORITY_URL_ES_VERIFACTU_TEST: aeat.url, AUTHORITY_CA_FILE: caFile,
      // A failed submission waits an hour before the worker retries it by itself: only
      // process-pending can send it again within the test.
      FISCALIZATION_SUBMISSION_RETRY_DELAY: '3600',
    }, { log: pino({ level: 'silent' }) });
  }, 120_000);
  afterAll(async () => {
    await host?.close();
    await Promise.all([aeat?.close(), receiver?.close()]);
  });

  const recurringJobs = async () =>
    (await host.runtime.deps.db.query<{ kind: string }>(`SELECT kind FROM jobs WHERE kind LIKE 'scheduled:%' ORDER BY kind`)).rows.map((r) => r.kind);
  const submitJob = async (txId: string) =>
    (await host.runtime.deps.db.query<{ status: string; attempt: number; run_at: Date }>(`SELECT status, attempt, run_at FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [txId])).rows[0];

  it('took over the stale lock of a dead host, and refuses a second host on the same DATA_DIR', async () => {
    expect(fs.readFileSync(path.join(dataDir, LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
    const second = await startLocalHost({ DATA_DIR: dataDir, PORT: '0' }, { log: pino({ level: 'silent' }) }).then(
      async (h) => {
        await h.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(ConfigError);
    expect((second as Error).message).toContain(`DATA_DIR ${dataDir} is in use by another local host or engine (process ${process.pid}`);
    // The first host is unharmed.
    expect((await jsonClient(host.url).get('/health')).body.database).toBe('ok');
  });

  it('schedules no recurring job (batch processors, certificate expiry, e-mail outbox)', async () => {
    expect(host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // The cloud host would have scheduled these at start-up (runtime.ts scheduleRecurringJobs).
    expect(await recurringJobs()).toEqual([]);
    // And its schedule announces no run: only process-pending runs them.
    const api = jsonClient(host.url);
    const { key } = await api.signup();
    const schedule = (await api.get('/v1/batch/schedule', key)).body.schedule as { processor: string; next_run_at: unknown; runs_on: string }[];
    expect(schedule.map((e) => e.processor)).toContain('spain/lroe');
    for (const e of schedule) expect(e).toMatchObject({ next_run_at: null, runs_on: 'process_pending' });
  });

  it('after an authority outage, process-pending sends the waiting submission at once and delivers its webhook to 127.0.0.1', async () => {
    const api = jsonClient(host.url);
    const { key } = await api.signup();
    const nif = freshNif();
    const cert = generateCert({ subject: `/C=ES/serialNumber=IDCES-${nif}/CN=Firmante ${nif}`, days: 3650 });
    const form = uploadForm({ certificateId: `cert-${nif}`, password: CERT_PASSWORD, file: exportP12(cert, CERT_PASSWORD) });
    const up = await api.post('/v1/certificates', form.payload, key, form.headers);
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    const loc = await api.post('/v1/locations', verifactuLocation(nif, { certificate_id: `cert-${nif}` }), key);
    expect(loc.status, JSON.stringify(loc.body)).toBe(201);
    // http:// to loopback: allowed by default in local mode (WEBHOOK_ALLOW_INSECURE).
    const hook = await api.post('/v1/webhooks', { url: receiver.url, events: ['fiscalization.completed'] }, key);
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    receiver.secret = hook.body.secret;

    aeat.behave({ kind: 'unavailable' });
    const tx = await api.post('/v1/transactions', cafeSale(loc.body.id), key, { 'x-svc-sandbox': 'authority' });
    expect(tx.status, JSON.stringify(tx.body)).toBe(201);
    // The worker tried once and scheduled the retry an hour (±10 %) later.
    const failed = await eventually(async () => {
      const j = await submitJob(tx.body.id);
      return j?.status === 'failed' ? j : undefined;
    });
    expect(failed.attempt).toBe(1);
    expect(failed.run_at.getTime() - Date.now()).toBeGreaterThan(50 * 60_000);
    expect((await api.get(`/v1/transactions/${tx.body.id}`, key)).body.status).not.toBe('success');
    expect(receiver.received).toHaveLength(0);
    // The local queue over HTTP, as the engine's queue_status: the waiting entry, no alert
    // yet (its 4-day window has barely begun), the retry maximum from config.
    const queue = await api.get('/v1/local/queue', key);
    expect(queue.status, JSON.stringify(queue.body)).toBe(200);
    expect(queue.body).toMatchObject({ failed: 1, dead: 0, alerts: [], retry_max: 20 });

    aeat.behave({ kind: 'normal' });
    const before = aeat.requests.length;
    const res = await api.post('/v1/admin/process-pending', {}, key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Answered only once the queue was drained: the record went, the webhook too.
    expect(aeat.requests.length).toBe(before + 1);
    expect(await submitJob(tx.body.id)).toMatchObject({ status: 'completed', attempt: 2 });
    expect((await api.get(`/v1/transactions/${tx.body.id}`, key)).body.status).toBe('success');
    // The fact under both its names (DECISIONS "Events and webhooks").
    expect(receiver.received.map((r) => [r.path, r.json.event, r.json.transaction_id ?? r.json.data?.transaction_id]).sort()).toEqual([
      [new URL(receiver.url).pathname, 'fiscalization.completed', tx.body.id], [new URL(receiver.url).pathname, 'transaction.fiscalized', tx.body.id],
    ]);
    for (const r of receiver.received) expect(r.check(receiver.secret!).all).toBe(true);
    expect(await recurringJobs()).toEqual([]);
  }, 60_000);

  // docs/examples/local_sale.py, as docs/local-host.md tells a reader to run it (asynchronous
  // execFile: the host answers from this event loop), then the API checked for what it made.
  it('docs/examples/local_sale.py (Python 3 urllib) signs up, creates a location and a sale that reaches the authority', async () => {
    const { stdout } = await promisify(execFile)('python3', [path.join(ROOT, 'docs', 'examples', 'local_sale.py'), host.url], { timeout: 30_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop()!) as { api_key: string; location_id: string; transaction_id: string; status: string };
    expect(out.status).toBe('success');
    const api = jsonClient(host.url);
    const tx = await api.get(`/v1/transactions/${out.transaction_id}`, out.api_key);
    expect(tx.status).toBe(200);
    expect(tx.body).toMatchObject({ id: out.transaction_id, location_id: out.location_id, status: 'success', currency: 'EUR' });
    expect((await api.get(`/v1/locations/${out.location_id}`, out.api_key)).body).toMatchObject({ country: 'ES', tax_id: 'B12345674' });
    // It ran process-pending: the manual batch runs of its account are recorded.
    const { accountId } = (await host.runtime.deps.db.query<{ accountId: string }>('SELECT account_id AS "accountId" FROM locations WHERE id = $1', [out.location_id])).rows[0]!;
    const runs = await host.runtime.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM batch_runs WHERE trigger = 'manual' AND account_id = $1`, [accountId]);
    expect(runs.rows[0]!.n).toBeGreaterThan(0);
  }, 30_000);
});
