import net from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { STORE, TEST_MASTER_KEY, createTestDatabase } from './support/harness.ts';

let pgUrl = '';
beforeAll(async () => {
  if (STORE === 'postgres') pgUrl = await createTestDatabase();
});

/**
 * The CLI as a user runs it (`npm start` = `main.ts serve`): boots on the configured
 * store, answers HTTP, stops cleanly on SIGTERM, and keeps its data across a restart.
 */
const MAIN = path.join(import.meta.dirname, '..', 'src', 'main.ts');

function env(dataDir: string): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  delete base.DATABASE_URL;
  delete base.MASTER_KEY;
  return STORE === 'postgres' ? { ...base, DATABASE_URL: pgUrl, MASTER_KEY: TEST_MASTER_KEY.toString('hex') } : base;
}

async function serve(dataDir: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve'], { env: { ...env(dataDir), ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listen line within 30 s:\n${out}`)), 30_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${out}`)));
  });
  return { child, url, output: () => out };
}

/** Waits (up to 10 s) for the process output to match. */
async function waitForOutput(output: () => string, re: RegExp): Promise<RegExpExecArray | null> {
  for (let i = 0; i < 100; i++) {
    const m = re.exec(output());
    if (m) return m;
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

describe('main serve', () => {
  it('starts with no set-up, serves the API, stops on SIGTERM, keeps data across restarts', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-'));
    let { child, url, output } = await serve(dataDir);
    let key: string;
    let frLocation = '';
    try {
      // `npm start` says where it listens and how to begin: the reference and the sign-up call.
      const ready = await waitForOutput(output, /API ready at (http:\/\/127\.0\.0\.1:\d+)[^"]*/);
      expect(ready?.[1]).toBe(url);
      expect(ready?.[0]).toContain(`${url}/docs`);
      expect(ready?.[0]).toContain(`POST ${url}/v1/accounts`);
      const health = await (await fetch(`${url}/health`)).json();
      expect(health).toEqual({ status: 'ok', store: STORE, database: 'ok' });
      const signup = await fetch(`${url}/v1/accounts`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Restart SL', billing_email: `restart-${Date.now()}-${Math.random()}@example.com` }),
      });
      expect(signup.status).toBe(201);
      expect(signup.headers.get('x-request-id')).toBeTruthy();
      key = ((await signup.json()) as { api_key: { key: string } }).api_key.key;
      // A French sale: this process journals its start in the register's JET (and, on SIGTERM, its stop).
      const post = (p: string, body: unknown) => fetch(`${url}${p}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const loc = await post('/v1/locations', { name: 'Café', country: 'FR', country_config: { legal_name: 'Exemple SAS', register_id: '73282932000074' } });
      expect(loc.status).toBe(201);
      frLocation = ((await loc.json()) as { id: string }).id;
      const sale = await post('/v1/transactions', {
        location_id: frLocation, timestamp: new Date().toISOString(), currency: 'EUR', payment_method: 'card',
        items: [{ description: 'Café', quantity: 1, unit_price: 150, tax_rate: 10, tax_amount: 15, total_amount: 165 }], pretax_amount: 150, tax_amount: 15, total_amount: 165,
      });
      expect(sale.status).toBe(201);
    } finally {
      expect(await stop(child)).toBe(0);
    }
    if (STORE === 'pglite') expect(fs.existsSync(path.join(dataDir, 'master.key'))).toBe(true);

    ({ child, url } = await serve(dataDir));
    try {
      const status = await fetch(`${url}/v1/account/status`, { headers: { authorization: `Bearer ${key}` } });
      expect(status.status).toBe(200);
      // The SIGTERM was journaled: software start, then its clean stop (NF525 JET codes 01, 02).
      const jet = (await (await fetch(`${url}/v1/locations/${frLocation}/jet`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Array<{ code: string }> };
      expect(jet.data.map((e) => e.code).reverse()).toEqual(['01', '02']);
    } finally {
      expect(await stop(child)).toBe(0);
    }
  }, 120_000);

  it('serve (workers in-process) submits a transaction in the background; on PostgreSQL a separate `worker` process can do it instead', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-tx-'));
    const apart = STORE === 'postgres';
    const { child, url } = await serve(dataDir, apart ? { WORKERS_IN_PROCESS: 'false' } : {});
    // The worker serves its own /metrics (it has no API server): METRICS_PORT.
    const metricsPort = apart ? await freePort() : 0;
    const worker = apart ? spawn(process.execPath, ['--import', 'tsx', MAIN, 'worker'], { env: { ...env(dataDir), METRICS_PORT: String(metricsPort) }, stdio: ['ignore', 'pipe', 'pipe'] }) : null;
    try {
      const post = async (p: string, body: unknown, key?: string) => {
        const res = await fetch(`${url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      };
      const key = (await post('/v1/accounts', { name: 'Worker SL', billing_email: `w-${Date.now()}-${Math.random()}@example.com` })).body.api_key.key;
      const loc = await post('/v1/locations', { name: 'Madrid', country: 'ES', tax_id: 'B12345674', country_config: { system: 'verifactu', legal_name: 'Worker SL', software_nif: 'B12345674' } }, key);
      expect(loc.status).toBe(201);
      const tx = await post('/v1/transactions', {
        location_id: loc.body.id, timestamp: '2026-03-02T09:30:00Z', currency: 'EUR', payment_method: 'card',
        items: [{ description: 'Café', quantity: 1, unit_price: 200, tax_rate: 10 }], pretax_amount: 200, tax_amount: 20, total_amount: 220,
      }, key);
      expect(tx.status).toBe(201);
      let status = tx.body.status;
      for (let i = 0; i < 100 && status !== 'success'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = ((await (await fetch(`${url}/v1/transactions/${tx.body.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { status: string }).status;
      }
      expect(status).toBe('success');
      if (apart) {
        // The submission was the worker's: its counter is on the worker's /metrics.
        const scrape = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        expect(scrape).toMatch(/^fiscal_submissions_total\{[^}]*system="es-verifactu"[^}]*\} [1-9]/m);
      }
    } finally {
      worker?.kill('SIGTERM');
      expect(await stop(child)).toBe(0);
    }
  }, 120_000);

  it.runIf(STORE === 'pglite')('the worker command refuses the embedded store', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-bad-'));
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'worker'], { env: env(dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    expect(await new Promise((r) => child.once('exit', r))).toBe(78);
    expect(err).toContain('the worker command needs DATABASE_URL');
  }, 60_000);

  it('refuses to start on a bad setting, naming it', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-bad-'));
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve'], { env: { ...env(dataDir), PORT: 'abc' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(78);
    expect(err).toContain('configuration error: PORT must be an integer');
  }, 60_000);
});

/** A port nothing listens on now (the kernel's pick, released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}
