import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { verifyNf525Archive } from '../../src/countries/fr-nf525/archive-verify.ts';
import type { Nf525Closure } from '../../src/countries/fr-nf525/closures/closure.ts';
import type { Nf525JetEntry } from '../../src/countries/fr-nf525/closures/jet.ts';
import { verifyClosures, verifyJet } from '../../src/countries/fr-nf525/closures/verify.ts';
import type { Nf525Record } from '../../src/countries/fr-nf525/record.ts';
import { verifyNf525Chain } from '../../src/countries/fr-nf525/verify.ts';
import pino from 'pino';
import { closureEntry } from '../../src/countries/fr-nf525/closures/closure.ts';
import { dayContent, jetWriter } from '../../src/countries/fr-nf525/closures/processor.ts';
import { createLedger } from '../../src/ledger/ledger.ts';
import { createEventPublisher } from '../../src/services/event-publisher.ts';
import { recordKeysRepo } from '../../src/store/repos/record-keys-repo.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, frenchSaleBody } from '../support/transactions.ts';

/*
 * France NF525: a record stamped on a day already closed (docs/decisions.md "France: a
 * record stamped on a closed day"). Node `a` keeps the time; node `b` (same store) has a
 * clock of its own that lags, so it stamps a sale on a Paris day `a` has closed already.
 * The record keeps its own timestamp and joins the next daily closure (closures cover the
 * records chain by seq, not by timestamp): every record is in exactly one daily closure,
 * the daily totals add up to the perpetual grand total, the closure chain verifies, and the
 * month's archive verifies with the library and with `npm run verify-archive`.
 */

let a: TestApp;
let b: TestApp;
let clock: ManualClock;
let lagging: ManualClock;
let dir: string;
beforeAll(async () => {
  clock = new ManualClock('2026-02-09T10:00:00.000Z');
  lagging = new ManualClock('2026-02-09T10:00:00.000Z');
  a = await startTestApp({ clock });
  b = await startTestApp({ db: a.db, clock: lagging });
  dir = mkdtempSync(path.join(tmpdir(), 'nf525-closed-day-'));
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ROOT = path.resolve(import.meta.dirname, '../..');

async function sale(t: TestApp, key: string, loc: string, over: Record<string, unknown> = {}): Promise<Nf525Record> {
  const res = await createTx(t, key, frenchSaleBody(loc, over));
  expect(res.statusCode, res.body).toBe(201);
  const rec = await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}/fiscal-record`, key });
  expect(rec.statusCode, rec.body).toBe(200);
  return JSON.parse(rec.body) as Nf525Record;
}

/** `POST /v1/admin/process-pending` on node a at `at`: the france/closures result. */
async function closeAt(at: string, key: string) {
  clock.set(at);
  const res = await a.request({ method: 'POST', url: '/v1/admin/process-pending', key });
  expect(res.statusCode, res.body).toBe(200);
  const r = (res.json().results as Array<Record<string, any>>).find((x) => x.processor === 'france/closures')!;
  expect(r).toMatchObject({ failed: 0, errors: [] });
  return r;
}

/** The location's closures, in chain order. */
async function closures(key: string, loc: string): Promise<Nf525Closure[]> {
  const res = await a.request({ method: 'GET', url: `/v1/locations/${loc}/closures?limit=100`, key });
  expect(res.statusCode, res.body).toBe(200);
  return [...(res.json().data as Nf525Closure[])].reverse();
}

/** The location's JET, in chain order (the read itself journals an export, after the page). */
async function jetOf(key: string, loc: string): Promise<Nf525JetEntry[]> {
  const res = await a.request({ method: 'GET', url: `/v1/locations/${loc}/jet?limit=100`, key });
  expect(res.statusCode, res.body).toBe(200);
  return [...(res.json().data as Nf525JetEntry[])].reverse();
}

/**
 * The JET's late-record marks (code 80): each names the record, its own day closed without
 * it and the daily closure that covers it, and comes just before that closure's own event.
 */
function lateMarks(entries: readonly Nf525JetEntry[], closuresInOrder: readonly Nf525Closure[]) {
  const marks = entries.filter((e) => e.event === 'late_record');
  for (const m of marks) {
    expect(m.code).toBe('80');
    const closure = closuresInOrder.find((c) => c.number === m.details.closure)!;
    expect(closure, m.details.closure).toBeDefined();
    expect(closure).toMatchObject({ kind: 'daily', period: m.details.closure_period });
    const seq = Number(m.details.record_seq);
    expect(seq).toBeGreaterThanOrEqual(closure.records.first_seq);
    expect(seq).toBeLessThanOrEqual(closure.records.last_seq);
    const closed = entries.findIndex((e) => e.event === 'closure' && e.details.number === closure.number);
    expect(closed, 'the closure is journaled after its late records').toBeGreaterThan(entries.indexOf(m));
  }
  return marks.map((m) => m.details);
}

const publicKey = async (loc: string) => crypto.createPublicKey((await recordKeysRepo.get(a.db, loc, 'ec-p256'))!.public_key_pem);

/**
 * What an auditor checks with the records and the closures: every record in exactly one
 * daily closure (their seq ranges follow each other without a gap and cover the chain), each
 * daily closure the sum of its records, and the daily totals adding up to the perpetual
 * grand total of the last record.
 */
function reconcile(records: readonly Nf525Record[], all: readonly Nf525Closure[]) {
  const days = all.filter((c) => c.kind === 'daily');
  const bySeq = new Map(records.map((r) => [r.seq, r]));
  let next = 1;
  for (const d of days) {
    expect(d.records.first_seq, `daily ${d.period}`).toBe(next);
    const covered = [];
    for (let s = d.records.first_seq; s <= d.records.last_seq; s++) covered.push(bySeq.get(s)!);
    expect(covered.every((r) => r !== undefined), `daily ${d.period} covers records not issued`).toBe(true);
    expect(d.records.count).toBe(covered.length);
    expect(d.totals.incl_tax).toBe(covered.reduce((s, r) => s + r.totals.incl_tax, 0));
    expect(d.totals.excl_tax).toBe(covered.reduce((s, r) => s + r.totals.excl_tax, 0));
    expect(d.grand_total.perpetual).toEqual(covered[covered.length - 1]!.grand_totals.perpetual);
    next = d.records.last_seq + 1;
  }
  expect(next - 1, 'the daily closures cover every record').toBe(records.length);
  const last = records[records.length - 1]!;
  expect(days.reduce((s, d) => s + d.totals.incl_tax, 0)).toBe(last.grand_totals.perpetual.incl_tax);
  expect(days.reduce((s, d) => s + d.totals.excl_tax, 0)).toBe(last.grand_totals.perpetual.excl_tax);
}

function cli(bytes: Buffer, name: string) {
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/countries/fr-nf525/verify-archive-cli.ts', file], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
}

async function archive(key: string, loc: string, id: string): Promise<Buffer> {
  const dl = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives/${id}`, key });
  expect(dl.statusCode, dl.body).toBe(200);
  return dl.rawPayload;
}

describe('france: a record stamped on a day already closed', () => {
  it('joins the next daily closure, keeps its own time; the totals reconcile and the month\'s archive verifies', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    clock.set('2026-02-09T10:00:00.000Z');
    const r1 = await sale(a, key, loc);
    // 9 February is closed at 02:00 in Paris.
    expect(await closeAt('2026-02-10T01:00:00.000Z', key)).toMatchObject({ batches_created: 1 });

    // Node b's clock is 2 h 30 behind: at 02:00 on 10 February it stamps 23:30 on 9 February.
    lagging.set('2026-02-09T22:30:00.000Z');
    const late = await sale(b, key, loc);
    expect(late).toMatchObject({ seq: 2, timestamp: '2026-02-09T23:30:00+01:00', grand_totals: { perpetual: { incl_tax: 4080 } } });
    clock.set('2026-02-10T09:00:00.000Z');
    const r3 = await sale(a, key, loc);

    // The next night: 10 February's closure covers the late record and the day's own sale.
    expect(await closeAt('2026-02-11T01:00:00.000Z', key)).toMatchObject({ batches_created: 1, accepted: 2 });
    const [day9, day10] = await closures(key, loc) as [Nf525Closure, Nf525Closure];
    expect(day9).toMatchObject({ kind: 'daily', period: '2026-02-09', records: { count: 1, first_seq: 1, last_seq: 1 }, totals: { incl_tax: 2040 } });
    expect(day10).toMatchObject({
      kind: 'daily', period: '2026-02-10', records: { count: 2, first_seq: 2, last_seq: 3 },
      totals: { excl_tax: 3600, tax: 480, incl_tax: 4080 }, grand_total: { perpetual: { excl_tax: 5400, incl_tax: 6120 } },
    });

    clock.set('2026-02-20T10:00:00.000Z');
    const r4 = await sale(a, key, loc, { type: 'refund' });
    // The month closes on 1 March: 20 February, then February; the archive is made.
    expect(await closeAt('2026-03-01T01:00:00.000Z', key)).toMatchObject({ batches_created: 2 });
    const all = await closures(key, loc);
    expect(all.map((c) => `${c.kind} ${c.period} ${c.records.first_seq}-${c.records.last_seq}`))
      .toEqual(['daily 2026-02-09 1-1', 'daily 2026-02-10 2-3', 'daily 2026-02-20 4-4', 'monthly 2026-02 1-4']);
    expect(all[3]).toMatchObject({ records: { count: 4 }, totals: { incl_tax: 4080 }, grand_total: { perpetual: { incl_tax: 4080 } } });
    const records = [r1, late, r3, r4];
    reconcile(records, all);
    const pub = await publicKey(loc);
    expect(verifyClosures(all, pub)).toMatchObject({ ok: true, count: 4 });
    expect(verifyNf525Chain(records, pub)).toMatchObject({ ok: true, count: 4 });

    // The auditor's archive: the month's records (the late one inside), closures and JET.
    const bytes = await archive(key, loc, 'monthly-2026-02');
    const checked = verifyNf525Archive(bytes);
    expect(checked.ok ? true : checked.message).toBe(true);
    expect(checked).toMatchObject({ manifest: { records: { count: 4, environment_count: 4, first_seq: 1, last_seq: 4 } } });
    const run = cli(bytes, 'closed-day.json');
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^OK monthly-2026-02 /);
    // The JET marks the late record, once, before the 10 February closure's event; the
    // others are not marked. The JET verifies (the month's archive holds it: verified above).
    expect(await closeAt('2026-03-02T01:00:00.000Z', key)).toMatchObject({ batches_created: 0 }); // a second run closes and marks nothing more
    const entries = await jetOf(key, loc);
    expect(lateMarks(entries, all)).toEqual([{
      record_number: late.document_number, record_seq: '2', transaction_id: late.transaction_id, record_timestamp: '2026-02-09T23:30:00+01:00',
      closed_period: '2026-02-09', closure_period: '2026-02-10', closure: day10.number,
    }]);
    expect(verifyJet(entries, pub)).toMatchObject({ ok: true, count: entries.length });
    // The month's archive holds the mark with the rest of its JET.
    const jetFile = (JSON.parse(bytes.toString('utf8')) as { files: Array<{ name: string; content: string }> }).files.find((f) => f.name === 'jet.json')!;
    expect((JSON.parse(jetFile.content) as { entries: Nf525JetEntry[] }).entries.filter((e) => e.event === 'late_record').map((e) => e.details.record_seq)).toEqual(['2']);
  }, 120_000); // the CLI is a child process (tsx): slow on a loaded machine

  it('two nodes either side of midnight before the run: each record is in exactly one daily closure', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    clock.set('2026-02-16T10:00:00.000Z');
    const r1 = await sale(a, key, loc);
    clock.set('2026-02-16T23:00:05.000Z'); // 00:00:05 on 17 February in Paris
    const r2 = await sale(a, key, loc);
    lagging.set('2026-02-16T22:59:58.000Z'); // node b, 7 s behind: 23:59:58 on 16 February, after r2 in the chain
    const r3 = await sale(b, key, loc, { type: 'refund' });
    expect(r3).toMatchObject({ seq: 3, timestamp: '2026-02-16T23:59:58+01:00' });

    expect(await closeAt('2026-02-18T01:00:00.000Z', key)).toMatchObject({ batches_created: 2, accepted: 3 });
    const all = await closures(key, loc);
    // 16 February closes its records up to the first one of the 17th; the one after it joins the 17th.
    expect(all.map((c) => `${c.kind} ${c.period} ${c.records.first_seq}-${c.records.last_seq}`)).toEqual(['daily 2026-02-16 1-1', 'daily 2026-02-17 2-3']);
    reconcile([r1, r2, r3], all);
    expect(verifyClosures(all, await publicKey(loc))).toMatchObject({ ok: true, count: 2 });
    // r3's day was closed without it (16 February stops before r2): marked; r2 is on its own day.
    const entries = await jetOf(key, loc);
    expect(lateMarks(entries, all)).toEqual([expect.objectContaining({ record_number: r3.document_number, record_seq: '3', closed_period: '2026-02-16', closure_period: '2026-02-17' })]);
    expect(verifyJet(entries, await publicKey(loc))).toMatchObject({ ok: true });
  });

  it('after its month is closed: it joins the first open day, in the next month; both archives verify', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    clock.set('2026-03-31T08:00:00.000Z');
    const r1 = await sale(a, key, loc);
    // 31 March and March are closed at 03:00 in Paris on 1 April.
    expect(await closeAt('2026-04-01T01:00:00.000Z', key)).toMatchObject({ batches_created: 2 });
    lagging.set('2026-03-31T21:30:00.000Z'); // node b: 23:30 on 31 March (CEST)
    const late = await sale(b, key, loc);
    expect(late.timestamp).toBe('2026-03-31T23:30:00+02:00');

    // No other sale: the late record is closed on the first open day, 1 April, the next night.
    expect(await closeAt('2026-04-02T01:00:00.000Z', key)).toMatchObject({ batches_created: 1, accepted: 1 });
    expect(await closeAt('2026-05-01T01:00:00.000Z', key)).toMatchObject({ batches_created: 1 });
    const all = await closures(key, loc);
    expect(all.map((c) => `${c.kind} ${c.period} ${c.records.first_seq}-${c.records.last_seq} ${c.totals.incl_tax}`))
      .toEqual(['daily 2026-03-31 1-1 2040', 'monthly 2026-03 1-1 2040', 'daily 2026-04-01 2-2 2040', 'monthly 2026-04 2-2 2040']);
    reconcile([r1, late], all);
    expect(verifyClosures(all, await publicKey(loc))).toMatchObject({ ok: true, count: 4 });
    const entries = await jetOf(key, loc);
    expect(lateMarks(entries, all)).toEqual([expect.objectContaining({
      record_number: late.document_number, record_timestamp: '2026-03-31T23:30:00+02:00', closed_period: '2026-03-31', closure_period: '2026-04-01', closure: all[2]!.number,
    })]);
    for (const id of ['monthly-2026-03', 'monthly-2026-04']) {
      const checked = verifyNf525Archive(await archive(key, loc, id));
      expect(checked.ok ? true : checked.message, id).toBe(true);
    }
  });

  it('a late record is marked once: two nodes racing the run, and a run after a process died between the mark and its closure\'s event', async () => {
    const { key, accountId } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    clock.set('2026-02-23T10:00:00.000Z');
    await sale(a, key, loc);
    await closeAt('2026-02-24T01:00:00.000Z', key); // 23 February closed
    lagging.set('2026-02-23T22:00:00.000Z'); // node b: 23:00 on 23 February
    const late1 = await sale(b, key, loc);

    // Both nodes run the next night at once (b's clock caught up).
    clock.set('2026-02-25T01:00:00.000Z');
    lagging.set('2026-02-25T01:00:00.000Z');
    const run = async (t: TestApp) => {
      const res = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().results as Array<Record<string, any>>).find((x) => x.processor === 'france/closures')!;
    };
    const raced = await Promise.all([run(a), run(b), run(a)]);
    expect(raced.reduce((n, r) => n + r.batches_created, 0)).toBe(1);
    expect(raced.every((r) => r.failed === 0)).toBe(true);
    let all = await closures(key, loc);
    expect(lateMarks(await jetOf(key, loc), all).map((d) => d.record_seq)).toEqual([String(late1.seq)]);

    // A process that died after the mark of a late record and before its closure's event.
    lagging.set('2026-02-24T22:00:00.000Z'); // 23:00 on 24 February, closed
    const late2 = await sale(b, key, loc);
    clock.set('2026-02-26T01:00:00.000Z');
    const ledger = createLedger({ db: a.db, clock, log: pino({ level: 'silent' }), events: createEventPublisher({ log: pino({ level: 'silent' }) }) });
    const location = a.rt.locations.toFiscal((await a.db.query('SELECT * FROM locations WHERE id = $1', [loc])).rows[0] as never);
    const recordKey = await a.rt.signingKeys.recordKey(location, 'ec-p256');
    const appended = await ledger.append(closureEntry({
      accountId, locationId: loc, registerId: late2.register_id, environment: 'test', due: { kind: 'daily', period: '2026-02-25' },
      content: dayContent([late2]), key: recordKey, software: { name: 'x', version: '0' },
    }));
    if (!appended.created) throw new Error('the closure of 25 February was not written');
    const closure25 = JSON.parse(appended.built.record.body) as Nf525Closure;
    await jetWriter({ ledger, software: a.rt.software }, { accountId, location, environment: 'test', key: recordKey })('late_record', {
      record_number: late2.document_number, record_seq: String(late2.seq), transaction_id: late2.transaction_id, record_timestamp: late2.timestamp,
      closed_period: '2026-02-24', closure_period: '2026-02-25', closure: closure25.number,
    }, undefined, late2.seq);
    expect(await closeAt('2026-02-26T01:00:00.000Z', key)).toMatchObject({ batches_created: 0 });
    all = await closures(key, loc);
    const entries = await jetOf(key, loc);
    expect(lateMarks(entries, all).map((d) => d.record_seq)).toEqual([String(late1.seq), String(late2.seq)]);
    expect(entries.filter((e) => e.event === 'closure' && e.details.period === '2026-02-25')).toHaveLength(1);
    expect(verifyJet(entries, await publicKey(loc))).toMatchObject({ ok: true });
  });
});
