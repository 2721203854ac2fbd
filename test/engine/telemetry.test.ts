import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createTelemetry } from '../../src/engine/telemetry.ts';
import type { QueueStatus } from '../../src/engine/queue.ts';
import type { Db } from '../../src/store/db.ts';
import { transactionsRepo } from '../../src/store/repos/transactions-repo.ts';
import { openTestDb } from '../support/harness.ts';
import { cleanupDirs, tempDir } from './support.ts';

/*
 * The engine's telemetry outbox (src/engine/telemetry.ts) on the store (both stores): points
 * kept while the service is unreachable, bounded (oldest dropped and counted), sent in
 * batches of at most 100 and removed only after a 202. The receiving endpoint here is a
 * plain HTTP server that answers what the test says (the real endpoint is exercised by
 * test/engine/offline.test.ts).
 */
let db: Db;
let server: http.Server;
let url: string;
let answer = 202;
const batches: Array<{ data_points: Array<Record<string, unknown>> }> = [];
const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const ACCOUNT = '11111111-1111-4111-8111-111111111111';

beforeAll(async () => {
  db = await openTestDb();
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (answer === 202) batches.push(JSON.parse(body));
      res.writeHead(answer, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await db?.close();
  cleanupDirs();
});

const queue = (over: Partial<QueueStatus> = {}): QueueStatus => ({ pending: 2, processing: 0, completed: 5, failed: 1, dead: 1, total: 9, alerts: [], ...over });

it('keeps points while refused, sends them in batches of at most 100 after a 202, bounded offline', async () => {
  await db.query('DELETE FROM engine_telemetry');
  const clock = new ManualClock('2026-03-02T10:00:00Z');
  const dataDir = tempDir();
  const t = createTelemetry({ db, clock, log, dataDir, accountId: ACCOUNT, environment: 'test', serviceUrl: url, agentId: 'pos-9', apiKey: 'svc_test_x', maxOutbox: 120 });
  for (let i = 0; i < 130; i++) {
    clock.advance(1000);
    await t.collect(queue());
  }
  // 130 taken, 120 kept: the 10 oldest dropped and counted.
  expect(await t.outbox()).toEqual({ points: 120, dropped: 10 });
  answer = 503;
  expect(await t.flush()).toBe(0);
  expect(await t.outbox()).toMatchObject({ points: 120 });
  answer = 202;
  const sent = await t.flush();
  expect(sent).toBe(120);
  expect(batches.map((b) => b.data_points.length)).toEqual([100, 20]);
  expect(await t.outbox()).toMatchObject({ points: 0 });
  const first = batches[0]!.data_points[0]!;
  expect(first.timestamp).toBe('2026-03-02T10:00:11.000Z'); // the 11th point: the oldest kept
  expect(first).toMatchObject({ queue_pending: 3, queue_dead: 1, transactions_total: 0 });
  expect(first.storage_total_bytes as number).toBeGreaterThanOrEqual(first.storage_used_bytes as number);
  expect(Object.keys(first.adapter_versions as object)).toContain('es-verifactu');
});

it('carries the deadline alerts as the fleet\'s deadline_alerts', async () => {
  batches.length = 0;
  await db.query('DELETE FROM engine_telemetry');
  const clock = new ManualClock('2026-03-02T10:00:00Z');
  const t = createTelemetry({ db, clock, log, dataDir: tempDir(), accountId: ACCOUNT, environment: 'test', serviceUrl: url, agentId: 'pos-9', apiKey: 'svc_test_x' });
  const alert = { transaction_id: 't-1', country: 'ES', system: 'es-verifactu', deadline: '2026-03-03T10:00:00.000Z', pct_elapsed: 80, level: 'warning_75pct' as const };
  const point = await t.collect(queue({ alerts: [alert] }));
  expect(point.deadline_alerts).toEqual([{ system: 'es-verifactu', due_at: alert.deadline, message: expect.stringContaining('80% of its submission window elapsed (warning_75pct)') }]);
  expect(await t.flush()).toBe(1);
  expect(batches[0]!.data_points[0]!.deadline_alerts).toHaveLength(1);
});

it('counts from the last point taken, across a restart: the sales between the last point and a shutdown are not lost', async () => {
  await db.query('DELETE FROM engine_telemetry');
  const dataDir = tempDir();
  const clock = new ManualClock('2026-03-02T10:00:00Z');
  const spy = vi.spyOn(transactionsRepo, 'countCreatedBetween');
  try {
    const first = createTelemetry({ db, clock, log, dataDir, accountId: ACCOUNT, environment: 'test', serviceUrl: url, agentId: 'pos-7', apiKey: 'svc_test_x' });
    clock.set('2026-03-02T10:05:00Z');
    await first.collect(queue());
    // Shut down at 10:07 (sales made meanwhile), started again at 10:30.
    clock.set('2026-03-02T10:30:00Z');
    const second = createTelemetry({ db, clock, log, dataDir, accountId: ACCOUNT, environment: 'test', serviceUrl: url, agentId: 'pos-7', apiKey: 'svc_test_x' });
    clock.set('2026-03-02T10:35:00Z');
    await second.collect(queue());
    expect(spy.mock.calls.map((c) => [c[2].toISOString(), c[3].toISOString()])).toEqual([
      ['2026-03-02T10:00:00.000Z', '2026-03-02T10:05:00.000Z'],
      ['2026-03-02T10:05:00.000Z', '2026-03-02T10:35:00.000Z'],
    ]);
  } finally {
    spy.mockRestore();
  }
});
