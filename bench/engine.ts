import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, expectStatus, signup } from './lib/api.ts';
import { forkServer } from './lib/fork-server.ts';
import { fmt, markdownTable, publishReport } from './lib/report.ts';
import { createEngine } from '../src/engine/index.ts';

/**
 * Engine benchmark (issue #17 "Done when"): `process_transaction` through the library host
 * (fiscalCall on its embedded PGlite store in a data_dir) beside the service's
 * `POST /v1/transactions` (the real service in a child process, bench/servers/service.ts,
 * on a file-backed PGlite store), same run, same requests (a France NF525 sale: signed and
 * chained locally, nothing to submit), same number of calls in flight.
 *
 * Both stores are durable (PGlite with DurableNodeFS). The engine runs in this process
 * (as in a POS program); the service in its own, reached over HTTP on 127.0.0.1.
 * Env: BENCH_ENGINE_CALLS (default 2000), BENCH_ENGINE_CONCURRENCY (default 10), BENCH_WARMUP_CALLS (default 100).
 */
const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVICE = path.join(HERE, 'servers', 'service.ts');
const RESULTS_DIR = path.join(HERE, 'results');

const CALLS = Number(process.env.BENCH_ENGINE_CALLS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_ENGINE_CONCURRENCY ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP_CALLS ?? 100);

const franceLocation = { name: 'Bench Café', country: 'FR', country_config: { legal_name: 'Acme SARL', register_id: '73282932000074' } };
const sale = (loc: string) => ({
  location_id: loc, timestamp: new Date().toISOString(), currency: 'EUR', payment_method: 'card',
  items: [{ description: 'Café', quantity: 2, unit_price: 150, tax_rate: 10, tax_amount: 30, total_amount: 330 }],
  pretax_amount: 300, tax_amount: 30, total_amount: 330,
});

interface Result { scenario: string; calls: number; concurrency: number; seconds: number; perSecond: number; p50: number; p95: number; p99: number; max: number }

/** Closed loop: `concurrency` callers, each calling again as soon as answered. */
async function run(scenario: string, n: number, one: () => Promise<void>): Promise<Result> {
  const lat: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < n) {
      next++;
      const t = performance.now();
      await one();
      lat.push(performance.now() - t);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p: number) => Math.round(lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]! * 100) / 100;
  return { scenario, calls: n, concurrency: CONCURRENCY, seconds: Math.round(seconds * 100) / 100, perSecond: Math.round(n / seconds), p50: q(0.5), p95: q(0.95), p99: q(0.99), max: q(1) };
}

export async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-engine-'));
  const server = await forkServer(SERVICE, { BENCH_STORE: 'pglite', DATA_DIR: path.join(tmp, 'service') });
  const engine = createEngine();
  try {
    const base = server.baseUrl;
    const key = await signup(base);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const httpLoc = (await expectStatus(call(base, 'POST', '/v1/locations', headers, JSON.stringify(franceLocation)), 201, 'location')).id as string;

    const init = await engine.call({ version: 1, method: 'init', params: { api_key: key, environment: 'sandbox', country: 'FR', service_url: base, data_dir: path.join(tmp, 'engine'), telemetry_interval_seconds: 0 } });
    if (!('result' in init)) throw new Error(`engine init: ${JSON.stringify(init.error)}`);
    const loc = await engine.call({ version: 1, method: 'create_location', params: franceLocation });
    if (!('result' in loc)) throw new Error(`engine location: ${JSON.stringify(loc.error)}`);
    const engineLoc = loc.result.id as string;

    const engineOne = async () => {
      const r = await engine.call({ version: 1, method: 'process_transaction', params: sale(engineLoc) });
      if (!('result' in r)) throw new Error(`process_transaction: ${JSON.stringify(r.error)}`);
    };
    const httpOne = async () => {
      const r = await call(base, 'POST', '/v1/transactions', headers, JSON.stringify(sale(httpLoc)));
      if (r.status !== 201) throw new Error(`POST /v1/transactions: ${r.status} ${r.text.slice(0, 300)}`);
    };
    await run('warm-up', WARMUP, engineOne);
    await run('warm-up', WARMUP, httpOne);
    const results = [
      await run('engine process_transaction (fiscalCall, embedded PGlite)', CALLS, engineOne),
      await run('service POST /v1/transactions (HTTP, PGlite)', CALLS, httpOne),
    ];
    const md = [
      `## Engine benchmark (${startedAt})`, '',
      `France NF525 sales, ${CALLS} calls, ${CONCURRENCY} in flight, after ${WARMUP} warm-up calls each; ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}.`, '',
      markdownTable(['scenario', 'calls/s', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
        results.map((r) => [r.scenario, fmt.int(r.perSecond), fmt.ms(r.p50), fmt.ms(r.p95), fmt.ms(r.p99), fmt.ms(r.max)]), [false, true, true, true, true, true]),
    ].join('\n');
    publishReport(RESULTS_DIR, 'engine', startedAt, { startedAt, calls: CALLS, concurrency: CONCURRENCY, loadavg: os.loadavg(), results }, md);
  } finally {
    await engine.call({ version: 1, method: 'shutdown' });
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
