import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { Nf525Closure } from '../../src/countries/fr-nf525/closures/closure.ts';
import type { Nf525JetEntry } from '../../src/countries/fr-nf525/closures/jet.ts';
import { verifyClosures, verifyJet } from '../../src/countries/fr-nf525/closures/verify.ts';
import pino from 'pino';
import { closureEntry, type Nf525Closure as Closure } from '../../src/countries/fr-nf525/closures/closure.ts';
import { dayContent } from '../../src/countries/fr-nf525/closures/processor.ts';
import type { Nf525Record } from '../../src/countries/fr-nf525/record.ts';
import { createLedger } from '../../src/ledger/ledger.ts';
import { createEventPublisher } from '../../src/services/event-publisher.ts';
import { recordKeysRepo } from '../../src/store/repos/record-keys-repo.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, frenchSaleBody } from '../support/transactions.ts';

/*
 * France NF525 closures and the JET through the API: sales on two Paris days (across the
 * end of March, in summer time), `POST /v1/admin/process-pending` the next night closes
 * each day and the month, signed and chained through the ledger; the inspector lists
 * `GET /v1/locations/{id}/closures` and `/jet` page them, newest first; a second run
 * closes nothing; two nodes racing close each period once.
 */

let a: TestApp;
let b: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-30T08:00:00.000Z');
  a = await startTestApp({ clock });
  b = await startTestApp({ db: a.db, clock });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

async function sale(t: TestApp, key: string, loc: string, over: Record<string, unknown> = {}) {
  const res = await createTx(t, key, frenchSaleBody(loc, over));
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function processPending(t: TestApp, key: string) {
  const res = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().results as Array<Record<string, any>>).find((r) => r.processor === 'france/closures')!;
}

const list = async <T>(t: TestApp, key: string, loc: string, file: 'closures' | 'jet', query = '') => {
  const res = await t.request({ method: 'GET', url: `/v1/locations/${loc}/${file}${query}`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: Array<T & { id: string; created_at: string }>; total: number; limit: number; offset: number };
};

const publicKey = async (loc: string) => crypto.createPublicKey((await recordKeysRepo.get(a.db, loc, 'ec-p256'))!.public_key_pem);

/** Two sales on 30 March, two sales and a refund on 31 March, a sale at 00:30 on 1 April (Paris, CEST). */
async function twoDays(t: TestApp, key: string, loc: string) {
  clock.set('2026-03-30T08:00:00.000Z');
  await sale(t, key, loc);
  clock.set('2026-03-30T21:59:00.000Z'); // 23:59 in Paris
  await sale(t, key, loc);
  clock.set('2026-03-31T07:00:00.000Z');
  await sale(t, key, loc);
  await sale(t, key, loc);
  await sale(t, key, loc, { type: 'refund' });
  clock.set('2026-03-31T22:30:00.000Z'); // 00:30 on 1 April in Paris: not closed on 1 April at 03:00
  await sale(t, key, loc);
}

describe('france/closures', () => {
  it('the next night: daily closures of 30 and 31 March, the monthly closure of March; signed, chained, the right totals; a second run closes nothing', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    await twoDays(a, key, loc);

    clock.set('2026-04-01T01:00:00.000Z'); // the scheduled time: 03:00 in Paris
    const result = await processPending(a, key);
    expect(result).toMatchObject({ batches_created: 3, accepted: 5 + 5, failed: 0, errors: [] });
    // The closures' numbers, as a batch's registration numbers.
    expect(result.registration_numbers).toEqual([1, 2, 3].map((n) => expect.stringMatching(new RegExp(`-C0000000${n}$`))));

    const page = await list<Nf525Closure>(a, key, loc, 'closures');
    expect(page).toMatchObject({ total: 3, limit: 20, offset: 0 });
    // Newest first.
    expect(page.data.map((c) => [c.kind, c.period, c.seq])).toEqual([['monthly', '2026-03', 3], ['daily', '2026-03-31', 2], ['daily', '2026-03-30', 1]]);
    const [month, day2, day1] = page.data as unknown as [Nf525Closure, Nf525Closure, Nf525Closure];
    expect(day1).toMatchObject({
      environment: 'test', number: expect.stringMatching(/-C00000001$/),
      vat: [{ rate: '10.00', excl_tax: 2400, tax: 240, incl_tax: 2640 }, { rate: '20.00', excl_tax: 1200, tax: 240, incl_tax: 1440 }],
      totals: { excl_tax: 3600, tax: 480, incl_tax: 4080 },
      grand_total: { perpetual: { excl_tax: 3600, incl_tax: 4080 } },
      records: { count: 2, first_seq: 1, last_seq: 2 },
      timestamp: '2026-04-01T03:00:00+02:00',
    });
    expect(day2).toMatchObject({
      totals: { excl_tax: 1800, tax: 240, incl_tax: 2040 },
      grand_total: { perpetual: { excl_tax: 5400, incl_tax: 6120 } },
      records: { count: 3, first_seq: 3, last_seq: 5 },
    });
    expect(month).toMatchObject({
      totals: { excl_tax: 5400, tax: 720, incl_tax: 6120 },
      vat: [{ rate: '10.00', excl_tax: 3600, tax: 360, incl_tax: 3960 }, { rate: '20.00', excl_tax: 1800, tax: 360, incl_tax: 2160 }],
      grand_total: { perpetual: { excl_tax: 5400, incl_tax: 6120 } },
      records: { count: 5, first_seq: 1, last_seq: 5 },
    });
    // Chained: each names the signature of the one before; the chain verifies with the public key.
    expect(day1.signature.previous).toBeNull();
    expect(day2.signature.previous).toBe(day1.signature.value);
    expect(month.signature.previous).toBe(day2.signature.value);
    const key1 = await publicKey(loc);
    expect(verifyClosures([day1, day2, month], key1)).toEqual({ ok: true, count: 3, lastSignature: month.signature.value });
    const forged = { ...day2, totals: { ...day2.totals, incl_tax: 2045 } };
    expect(verifyClosures([day1, forged, month], key1)).toMatchObject({ ok: false, break: { index: 1 } });

    // A second run: nothing new.
    expect(await processPending(a, key)).toMatchObject({ batches_created: 0, accepted: 0, failed: 0 });
    expect((await list(a, key, loc, 'closures')).total).toBe(3);

    // The next night closes 1 April (its sale at 00:30), not yet April.
    clock.set('2026-04-02T01:00:00.000Z');
    expect(await processPending(b, key)).toMatchObject({ batches_created: 1, accepted: 1 });
    const april = (await list<Nf525Closure>(a, key, loc, 'closures', '?limit=1')).data;
    expect(april).toHaveLength(1);
    expect(april[0]).toMatchObject({ kind: 'daily', period: '2026-04-01', records: { count: 1, first_seq: 6, last_seq: 6 }, grand_total: { perpetual: { excl_tax: 7200, incl_tax: 8160 } } });

    // The JET: the software version, a closure event per closure, the exports of the lists read; chained and signed.
    const jet = await list<Nf525JetEntry>(a, key, loc, 'jet', '?limit=100');
    const events = [...jet.data].reverse();
    // The first record node a signed journaled its start; the first closure run the version.
    expect(events[0]).toMatchObject({ seq: 1, code: '01', event: 'software_start', details: { name: expect.any(String), version: expect.any(String) } });
    expect(events[1]).toMatchObject({ seq: 2, code: '10', event: 'software_version', details: { previous_version: '' } });
    expect(events.filter((e) => e.event === 'software_start')).toHaveLength(1);
    expect(events.filter((e) => e.event === 'closure').map((e) => `${e.details.kind} ${e.details.period}`))
      .toEqual(['daily 2026-03-30', 'daily 2026-03-31', 'monthly 2026-03', 'daily 2026-04-01']);
    expect(events.filter((e) => e.event === 'export').map((e) => e.details.file)).toEqual(['closures', 'closures', 'closures']);
    expect(events.filter((e) => e.event === 'software_version')).toHaveLength(1);
    expect(verifyJet(events, key1)).toMatchObject({ ok: true, count: events.length });
    // Node b signs its first record for the register: its start is journaled too, once.
    await sale(b, key, loc);
    await sale(b, key, loc);
    const starts = (await list<Nf525JetEntry>(a, key, loc, 'jet', '?limit=100')).data.filter((e) => e.event === 'software_start');
    expect(starts).toHaveLength(2);
    // Each read is journaled once read: the two reads above, and node b's start.
    expect((await list(a, key, loc, 'jet')).total).toBe(jet.total + 3);
  });

  it('two nodes racing close each period once', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    await twoDays(a, key, loc);
    clock.set('2026-04-01T01:00:00.000Z');
    const results = await Promise.all([processPending(a, key), processPending(b, key), processPending(a, key)]);
    expect(results.reduce((n, r) => n + r.batches_created, 0)).toBe(3);
    expect(results.every((r) => r.failed === 0)).toBe(true);
    const page = await list<Nf525Closure>(a, key, loc, 'closures');
    expect(page.data.map((c) => `${c.kind} ${c.period}`)).toEqual(['monthly 2026-03', 'daily 2026-03-31', 'daily 2026-03-30']);
    expect(verifyClosures([...page.data].reverse(), await publicKey(loc))).toMatchObject({ ok: true, count: 3 });
    const jet = (await list<Nf525JetEntry>(a, key, loc, 'jet', '?limit=100')).data;
    expect(jet.filter((e) => e.event === 'closure')).toHaveLength(3);
  });

  it('the lists: account-scoped (another account\'s location: 404), locations:read, paging checked, another system: 404', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const other = await a.signup();
    for (const file of ['closures', 'jet']) {
      const res = await a.request({ method: 'GET', url: `/v1/locations/${loc}/${file}`, key: other.key });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'location not found' });
    }
    const bad = await a.request({ method: 'GET', url: `/v1/locations/${loc}/closures?limit=0`, key });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'limit must be an integer between 1 and 100' });
    expect(await list(a, key, loc, 'closures')).toEqual({ data: [], total: 0, limit: 20, offset: 0 });
    const es = await createLocation(a, key, 'es-verifactu');
    expect((await a.request({ method: 'GET', url: `/v1/locations/${es}/closures`, key })).statusCode).toBe(404);
    const noRead = await a.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'w', permissions: ['transactions:write'] } });
    expect((await a.request({ method: 'GET', url: `/v1/locations/${loc}/jet`, key: noRead.json().key })).statusCode).toBe(403);
  });

  it('the schedule lists france/closures daily at 01:00 UTC; the scheduled run visits the scopes with records', async () => {
    const { key, accountId } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    clock.set('2026-03-30T08:00:00.000Z');
    await sale(a, key, loc);
    const res = await a.request({ method: 'GET', url: '/v1/batch/schedule', key });
    expect(res.json().schedule).toContainEqual({ processor: 'france/closures', cron: '0 1 * * *', timezone: 'UTC', next_run_at: '2026-03-31T01:00:00.000Z', runs_on: 'schedule' });
    const p = a.rt.batch.processors.find((x) => x.name === 'france/closures')!;
    expect(await p.scopesWithWork(a.db, clock.now())).not.toContainEqual({ accountId, environment: 'test' });
    clock.set('2026-03-31T01:00:00.000Z');
    expect(await p.scopesWithWork(a.db, clock.now())).toContainEqual({ accountId, environment: 'test' });
  });

  it('a closure whose JET event is missing (the process died between them) is journaled by the next run, once', async () => {
    const { key, accountId } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    clock.set('2026-03-30T08:00:00.000Z');
    const tx = await sale(a, key, loc);
    clock.set('2026-03-31T01:00:00.000Z');
    // The closure of 30 March written through the ledger, as the processor would, but no JET event.
    const record = JSON.parse((await a.request({ method: 'GET', url: `/v1/transactions/${tx.id}/fiscal-record`, key })).body) as Nf525Record;
    const ledger = createLedger({ db: a.db, clock, log: pino({ level: 'silent' }), events: createEventPublisher({ log: pino({ level: 'silent' }) }) });
    const location = a.rt.locations.toFiscal((await a.db.query('SELECT * FROM locations WHERE id = $1', [loc])).rows[0] as never);
    await ledger.append(closureEntry({
      accountId, locationId: loc, registerId: record.register_id, environment: 'test', due: { kind: 'daily', period: '2026-03-30' },
      content: dayContent([record]), key: await a.rt.signingKeys.recordKey(location, 'ec-p256'), software: { name: 'x', version: '0' },
    }));
    expect(await processPending(a, key)).toMatchObject({ batches_created: 0, failed: 0 });
    const jet = async () => [...(await list<Nf525JetEntry>(a, key, loc, 'jet', '?limit=100')).data].reverse();
    const closureEvents = (await jet()).filter((e) => e.event === 'closure');
    expect(closureEvents.map((e) => e.details.period)).toEqual(['2026-03-30']);
    const closures = (await list<Closure>(a, key, loc, 'closures')).data;
    expect(closureEvents[0]!.details.signature).toBe(closures[0]!.signature.value);
    await processPending(b, key);
    expect((await jet()).filter((e) => e.event === 'closure')).toHaveLength(1);
    expect(verifyJet(await jet(), await publicKey(loc))).toMatchObject({ ok: true });
  });

  it('a process that stops cleanly journals its stop (02) in the JET of each register it journaled a start for, once', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const other = await createLocation(a, key, 'fr-nf525');
    clock.set('2026-05-04T08:00:00.000Z');
    // Node c signs for `loc` only; node a signs for `other` and is not stopped.
    const c = await startTestApp({ db: a.db, clock });
    try {
      await sale(c, key, loc);
      await sale(c, key, loc);
      await sale(a, key, other);
      clock.set('2026-05-04T09:00:00.000Z');
      await c.rt.transactions.stop();
      // A second stop (nothing started since) journals nothing.
      await c.rt.transactions.stop();
    } finally {
      await c.close();
    }
    const events = [...(await list<Nf525JetEntry>(a, key, loc, 'jet', '?limit=100')).data].reverse();
    expect(events.map((e) => `${e.code} ${e.event}`)).toEqual(['01 software_start', '02 software_stop']);
    expect(events[1]).toMatchObject({ timestamp: expect.stringMatching(/^2026-05-04T11:00:00/), details: { name: expect.any(String), version: expect.any(String) } });
    expect(verifyJet(events, await publicKey(loc))).toMatchObject({ ok: true, count: 2 });
    // The register node c never signed for has no stop of c's.
    const otherEvents = (await list<Nf525JetEntry>(a, key, other, 'jet', '?limit=100')).data.map((e) => e.event);
    expect(otherEvents).not.toContain('software_stop');
  });

  it('the year end: 31 December, December and the fiscal year 2026 close, then 1 January; the annual closure carries the year\'s totals', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    clock.set('2026-12-31T22:30:00.000Z'); // 23:30 in Paris (CET)
    await sale(a, key, loc);
    clock.set('2026-12-31T23:30:00.000Z'); // 00:30 on 1 January 2027
    await sale(a, key, loc, { type: 'refund' });
    clock.set('2027-01-02T01:00:00.000Z');
    expect(await processPending(a, key)).toMatchObject({ batches_created: 4, failed: 0 });
    const page = (await list<Closure>(a, key, loc, 'closures')).data;
    expect(page.map((c) => `${c.kind} ${c.period} ${c.totals.incl_tax} ${c.grand_total.perpetual.incl_tax}`))
      .toEqual(['daily 2027-01-01 -2040 0', 'annual 2026 2040 2040', 'monthly 2026-12 2040 2040', 'daily 2026-12-31 2040 2040']);
    expect(verifyClosures([...page].reverse(), await publicKey(loc))).toMatchObject({ ok: true, count: 4 });
  });
});
