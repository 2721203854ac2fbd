import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { Nf525Record } from '../../src/countries/fr-nf525/record.ts';
import { verifyNf525Chain } from '../../src/countries/fr-nf525/verify.ts';
import { recordKeysRepo } from '../../src/store/repos/record-keys-repo.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';

/*
 * Test and live records of one location never share a chain (shared/chain-key.ts
 * inEnvironment): a live chain holds only live records, numbered and linked among
 * themselves, whatever test traffic the same location had before and in between. Shown
 * with France (live needs no authority) on both stores.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T09:00:00.000Z'), liveEnabled: true });
});
afterAll(() => t?.close());

async function liveKey(key: string): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().key as string;
}

describe('test and live chains', () => {
  it("a location's live records form a chain of their own, numbered from 1 and verifiable alone", async () => {
    const { key } = await t.signup();
    const live = await liveKey(key);
    const loc = await createLocation(t, key, 'fr-nf525');
    const ids: { env: string; id: string }[] = [];
    for (const k of [key, live, key, key, live]) {
      const res = await createTx(t, k, saleBody(loc));
      expect(res.statusCode, res.body).toBe(201);
      ids.push({ env: res.json().environment, id: res.json().id });
    }
    const rows = (await t.db.query<{ transaction_id: string; chain_key: string; seq: number | string; body: string }>(
      'SELECT transaction_id, chain_key, seq, body FROM fiscal_records WHERE transaction_id = ANY($1::uuid[])', [ids.map((i) => i.id)],
    )).rows;
    const of = (env: string) => ids.filter((i) => i.env === env).map((i) => rows.find((r) => r.transaction_id === i.id)!);
    const [test, liveRows] = [of('test'), of('live')];
    expect(test.map((r) => Number(r.seq))).toEqual([1, 2, 3]);
    expect(liveRows.map((r) => Number(r.seq))).toEqual([1, 2]);
    expect(new Set(test.map((r) => r.chain_key)).size).toBe(1);
    expect(liveRows.every((r) => r.chain_key === `${test[0]!.chain_key}:live`)).toBe(true);
    // The live records are a whole NF525 chain by themselves: the first names no previous record.
    const bodies = liveRows.map((r) => JSON.parse(r.body) as Nf525Record);
    expect(bodies.map((b) => [b.environment, b.seq, b.signature.previous === null])).toEqual([['live', 1, true], ['live', 2, false]]);
    const pem = (await recordKeysRepo.get(t.db, loc, 'ec-p256'))!.public_key_pem;
    expect(verifyNf525Chain(liveRows.map((r) => r.body), crypto.createPublicKey(pem))).toMatchObject({ ok: true, count: 2 });
    expect(verifyNf525Chain(test.map((r) => r.body), crypto.createPublicKey(pem))).toMatchObject({ ok: true, count: 3 });
  });
});
