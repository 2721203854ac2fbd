import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { getSystem } from '../../src/countries/registry.ts';
import { nf525Message, verifyMessage, type Nf525Record } from '../../src/countries/fr-nf525/record.ts';
import { verifyNf525Chain } from '../../src/countries/fr-nf525/verify.ts';
import { recordKeyId } from '../../src/crypto/record-key.ts';
import { recordKeysRepo } from '../../src/store/repos/record-keys-repo.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, getTx, frenchSaleBody } from '../support/transactions.ts';

/*
 * France NF525 records as the API hands them out: every sale, refund and cancellation of
 * a location (one register) is a signed JSON record, chained to the one before by its
 * signature, carrying the register's grand totals. The signing key is the location's
 * ec-p256 record key, generated on first use and kept sealed: two API nodes on one store
 * sign with the same key, and the whole chain verifies with its public key alone.
 */

let a: TestApp;
let b: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  // 10:00 in Paris on 2 March 2026.
  clock = new ManualClock('2026-03-02T09:00:00.000Z');
  a = await startTestApp({ clock });
  // A second API node on the same store (its own process-local key cache).
  b = await startTestApp({ db: a.db, clock });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

async function record(t: TestApp, key: string, id: string): Promise<{ body: string; json: Nf525Record }> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-fiscal-record-placeholder']).toBe('false');
  return { body: res.body, json: JSON.parse(res.body) as Nf525Record };
}

async function created(t: TestApp, key: string, body: object): Promise<Record<string, any>> {
  const res = await createTx(t, key, body);
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().status).toBe('success');
  return res.json();
}

async function publicKeyOf(locationId: string): Promise<crypto.KeyObject> {
  const row = await recordKeysRepo.get(a.db, locationId, 'ec-p256');
  expect(row).toBeDefined();
  // Sealed at rest: the private key is never stored in clear.
  expect(row!.key_material).toMatch(/^sealed:v1:/);
  expect(row!.key_material).not.toContain('PRIVATE KEY');
  const key = crypto.createPublicKey(row!.public_key_pem);
  expect(row!.key_id).toBe(recordKeyId(key));
  return key;
}

describe('France NF525 records', () => {
  it('a cancellation joins the chain (capability)', () => {
    expect(getSystem('fr-nf525').capabilities).toMatchObject({ cancellationJoinsChain: true, chained: true, recordKey: 'ec-p256', submission: 'none' });
  });

  it('sales on two nodes: signed, chained, one key; the grand total accumulates; a refund subtracts', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const ids: string[] = [];
    // Alternate nodes: both find (or the first generates) the location's one key.
    for (const t of [a, b, a]) ids.push((await created(t, key, frenchSaleBody(loc))).id);
    ids.push((await created(b, key, frenchSaleBody(loc, { type: 'refund' }))).id);

    const records = await Promise.all(ids.map((id) => record(a, key, id)));
    const publicKey = await publicKeyOf(loc);
    expect(records.map((r) => r.json.seq)).toEqual([1, 2, 3, 4]);
    expect(records.map((r) => r.json.operation)).toEqual(['sale', 'sale', 'sale', 'refund']);
    expect(records.map((r) => r.json.grand_totals.perpetual.incl_tax)).toEqual([2040, 4080, 6120, 4080]);
    expect(records.map((r) => r.json.grand_totals.day)).toEqual([
      { period: '2026-03-02', excl_tax: 1800, incl_tax: 2040 },
      { period: '2026-03-02', excl_tax: 3600, incl_tax: 4080 },
      { period: '2026-03-02', excl_tax: 5400, incl_tax: 6120 },
      { period: '2026-03-02', excl_tax: 3600, incl_tax: 4080 },
    ]);
    expect(records.map((r) => r.json.signature.previous)).toEqual([null, ...records.slice(0, 3).map((r) => r.json.signature.value)]);
    for (const r of records) expect(verifyMessage(nf525Message(r.json), r.json.signature.value, publicKey)).toBe(true);
    expect(verifyNf525Chain(records.map((r) => r.body), publicKey)).toMatchObject({ ok: true, count: 4 });

    // The transaction carries the number and the printed extract of its signature.
    const tx = await getTx(a, key, ids[0]!);
    const sig = records[0]!.json.signature.value;
    expect(tx.fiscal_id).toBe(records[0]!.json.document_number);
    expect(tx.render_hints).toEqual([
      { key: 'document_number', placement: 'header', mandatory: true, kind: 'text', value: records[0]!.json.document_number },
      { key: 'signature_extract', placement: 'footer_bottom', mandatory: true, kind: 'text', value: `${sig[2]}${sig[6]}${sig[12]}${sig[18]}` },
    ]);
  });

  it('a cancellation is a new signed record of the chain; the original becomes cancelled; the totals go back', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const first = await created(a, key, frenchSaleBody(loc));
    const second = await created(a, key, frenchSaleBody(loc));

    const res = await a.request({ method: 'POST', url: `/v1/transactions/${first.id}/cancel`, key, payload: { reason: 'wrong table' } });
    expect(res.statusCode, res.body).toBe(201);
    const cancellation = res.json();
    expect(cancellation).toMatchObject({ type: 'cancellation', status: 'success' });
    expect((await getTx(a, key, first.id)).status).toBe('cancelled');

    const records = [await record(a, key, first.id), await record(a, key, second.id), await record(a, key, cancellation.id)];
    const c = records[2]!.json;
    expect(c).toMatchObject({
      seq: 3,
      operation: 'cancellation',
      cancels: { document_number: first.fiscal_id, transaction_id: first.id },
      totals: { excl_tax: -1800, tax: -240, incl_tax: -2040 },
      grand_totals: { perpetual: { excl_tax: 1800, incl_tax: 2040 } },
      signature: { previous: records[1]!.json.signature.value },
    });
    expect(cancellation.fiscal_id).toBe(c.document_number);
    expect(verifyNf525Chain(records.map((r) => r.body), await publicKeyOf(loc))).toMatchObject({ ok: true, count: 3 });

    // Cancelling again answers the same cancellation: nothing new is signed.
    const again = await a.request({ method: 'POST', url: `/v1/transactions/${first.id}/cancel`, key });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(cancellation.id);
  });

  it('period totals follow the Paris calendar; the perpetual total never resets; each location has its own key and chain', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const other = await createLocation(a, key, 'fr-nf525');
    clock.set('2026-03-31T21:30:00.000Z'); // 23:30 in Paris (CEST from 29 March)
    const late = await created(a, key, frenchSaleBody(loc));
    clock.set('2026-03-31T22:30:00.000Z'); // 00:30 on 1 April in Paris
    const early = await created(b, key, frenchSaleBody(loc));
    const elsewhere = await created(a, key, frenchSaleBody(other));

    const [r1, r2, r3] = [await record(a, key, late.id), await record(a, key, early.id), await record(a, key, elsewhere.id)];
    expect(r1.json.timestamp).toBe('2026-03-31T23:30:00+02:00');
    expect(r2.json.timestamp).toBe('2026-04-01T00:30:00+02:00');
    expect(r2.json.grand_totals).toEqual({
      perpetual: { excl_tax: 3600, incl_tax: 4080 },
      day: { period: '2026-04-01', excl_tax: 1800, incl_tax: 2040 },
      month: { period: '2026-04', excl_tax: 1800, incl_tax: 2040 },
      fiscal_year: { period: '2026', excl_tax: 3600, incl_tax: 4080 },
    });
    // The other register starts its own chain, with its own key.
    expect(r3.json).toMatchObject({ seq: 1, signature: { previous: null }, grand_totals: { perpetual: { incl_tax: 2040 } } });
    expect(r3.json.signature.key_id).not.toBe(r1.json.signature.key_id);
    expect(verifyNf525Chain([r3.body], await publicKeyOf(other))).toMatchObject({ ok: true });
    expect(verifyNf525Chain([r1.body, r2.body], await publicKeyOf(other))).toMatchObject({ ok: false, break: { index: 0 } });
    clock.set('2026-03-02T09:00:00.000Z');
  });

  it('concurrent creates on two nodes make one unbroken chain whose grand total counts every sale once', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const n = 30;
    const txs = await Promise.all(Array.from({ length: n }, (_, i) => created(i % 2 === 0 ? a : b, key, frenchSaleBody(loc))));
    const records = await Promise.all(txs.map((tx) => record(a, key, tx.id)));
    records.sort((x, y) => x.json.seq - y.json.seq);
    expect(records.map((r) => r.json.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(records.at(-1)!.json.grand_totals.perpetual.incl_tax).toBe(n * 2040);
    expect(verifyNf525Chain(records.map((r) => r.body), await publicKeyOf(loc))).toMatchObject({ ok: true, count: n });
  });
});
