import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createEngine } from '../../src/engine/index.ts';
import { locationBody, saleBody, saleLines } from '../support/transactions.ts';
import { ok, tempDir, useLiveService } from './support.ts';

/*
 * The stdio host (`npm run engine`): one envelope per line in, one answer per line out, in
 * order, logs on stderr only, exit 0 at EOF. Its durability: `kill -9` while sales stream
 * in and the queue runs loses no sale it acknowledged (the durable PGlite store commits
 * before the answer is written; test/store/durability.test.ts proves the store itself).
 * And the Python example of docs/engine.md, run against the service.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const HOST = ['--import', 'tsx', path.join(ROOT, 'src/engine/stdio-host.ts')];
const live = useLiveService();

function startHost(): { child: ChildProcessWithoutNullStreams; lines: AsyncIterableIterator<string>; send(o: unknown): void; stderr(): string } {
  const child = spawn(process.execPath, HOST, { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info' } });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return { child, lines, send: (o) => child.stdin.write((typeof o === 'string' ? o : JSON.stringify(o)) + '\n'), stderr: () => err };
}
const next = async (lines: AsyncIterableIterator<string>) => JSON.parse((await lines.next()).value as string);
const exitOf = (child: ChildProcessWithoutNullStreams) => new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

describe('the stdio host', () => {
  it('answers line by line in order and exits 0 at EOF', { timeout: 60_000 }, async () => {
    const h = startHost();
    const dataDir = tempDir();
    h.send('not json');
    h.send({ version: 1, method: 'init', params: { api_key: live.key, environment: 'sandbox', country: 'PT', service_url: live.svc.url, data_dir: dataDir, telemetry_interval_seconds: 0 } });
    h.send({ version: 1, method: 'nope' });
    expect(await next(h.lines)).toMatchObject({ version: 1, error: { code: 'invalid_request' } });
    expect(ok(await next(h.lines)).country).toBe('PT');
    expect(await next(h.lines)).toMatchObject({ error: { code: 'unknown_method' } });
    h.send({ version: 1, method: 'create_location', params: locationBody('pt-saft') });
    const loc = ok(await next(h.lines)).id;
    // Pipelined: ten sales written at once, answered in the order asked.
    for (let i = 0; i < 10; i++) h.send({ version: 1, method: 'process_transaction', params: { ...saleBody(loc), idempotency_key: `k${i}` } });
    for (let i = 0; i < 10; i++) expect(ok(await next(h.lines)).idempotency_key).toBe(`k${i}`);
    const exit = exitOf(h.child);
    h.child.stdin.end();
    expect(await exit).toBe(0);
  });

  it('kill -9 mid-queue loses no acknowledged sale', { timeout: 90_000 }, async () => {
    const h = startHost();
    const dataDir = tempDir();
    // Greece through the sandbox stub: each sale answered at once (no inline wait) and
    // submitted by the host's worker in the background, so the kill lands mid-queue.
    const params = { api_key: live.key, environment: 'sandbox', country: 'GR', service_url: live.svc.url, data_dir: dataDir, telemetry_interval_seconds: 0 };
    h.send({ version: 1, method: 'init', params });
    ok(await next(h.lines));
    h.send({ version: 1, method: 'create_location', params: locationBody('gr-mydata') });
    const loc = ok(await next(h.lines)).id;
    // A stream of sales; the host is killed after 40 answers, with more still in flight.
    for (let i = 0; i < 80; i++) {
      h.send({ version: 1, method: 'process_transaction', params: { ...saleBody(loc, saleLines['gr-mydata']), idempotency_key: `s${i}`, inline_timeout_seconds: 0 } });
    }
    const acked: string[] = [];
    while (acked.length < 40) acked.push(ok(await next(h.lines)).id);
    const exit = exitOf(h.child);
    h.child.kill('SIGKILL');
    await exit;

    // Reopened: every acknowledged sale is there, and the queue still holds the ones the
    // worker had not finished: draining it settles all of them.
    // Two minutes on: the leases the killed worker held (60 s) have run out.
    const e = createEngine({ startWorker: false, clock: new ManualClock(new Date(Date.now() + 120_000)) });
    ok(await e.call({ version: 1, method: 'init', params }));
    for (const id of acked) expect(ok(await e.call({ version: 1, method: 'get_transaction', params: { id } })).id).toBe(id);
    const before = ok(await e.call({ version: 1, method: 'queue_status' }));
    expect(before.total).toBeGreaterThanOrEqual(acked.length);
    ok(await e.call({ version: 1, method: 'process_pending' }));
    for (const id of acked) expect(ok(await e.call({ version: 1, method: 'get_transaction', params: { id } })).status).toBe('success');
    expect(ok(await e.call({ version: 1, method: 'queue_status' }))).toMatchObject({ pending: 0, processing: 0, failed: 0, dead: 0 });
    ok(await e.call({ version: 1, method: 'shutdown' }));
  });
});

const hasPython = spawnSync('python3', ['--version']).status === 0;
describe.skipIf(!hasPython)('docs/examples/engine_stdio.py (skipped: python3 is not installed)', () => {
  it('runs the documented example against the service', { timeout: 60_000 }, async () => {
    const child = spawn('python3', [path.join(ROOT, 'docs/examples/engine_stdio.py')], {
      cwd: ROOT,
      env: {
        ...process.env, ENGINE_API_KEY: live.key, ENGINE_SERVICE_URL: live.svc.url, ENGINE_DATA_DIR: tempDir(),
        ENGINE_CMD: `${process.execPath} ${HOST.join(' ')}`,
      },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code, err).toBe(0);
    expect(out).toMatch(/^initialised for account [0-9a-f-]{36} online$/m);
    expect(out).toMatch(/^sale [0-9a-f-]{36} success \S+/m);
    expect(out).toMatch(/^queue \{"pending": 0/m);
  });
});
