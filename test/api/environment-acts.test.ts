import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, getTx, saleBody } from '../support/transactions.ts';

/*
 * A key acts in its own environment (session 18): a test key cancelled a live transaction
 * (a test annulment in the test chain, answered by the stub, marked the live invoice
 * cancelled while the authority still held it) and took numbered reprints of it (France:
 * written into the live register's JET). Reading across environments stays allowed.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T10:00:00.000Z'), liveEnabled: true });
});
afterAll(() => t.close());

async function jetEntries(loc: string): Promise<number> {
  // The live register's JET (fr-nf525/closures/jet.ts jetChainKey).
  const r = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM fiscal_records WHERE chain_key = $1', [`fr-nf525:${loc}:jet:live`]);
  return r.rows[0]!.n;
}

describe('a key acts in its own environment', () => {
  it('a test key cannot cancel a live transaction nor reprint it (403), nor a live key a test one; both may read them', async () => {
    const { key: test } = await t.signup();
    const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key: test, payload: { environment: 'live' } })).json().key as string;
    const loc = await createLocation(t, test, 'fr-nf525');
    const liveTx = (await createTx(t, live, saleBody(loc))).json();
    const testTx = (await createTx(t, test, saleBody(loc))).json();
    expect([liveTx.environment, testTx.environment]).toEqual(['live', 'test']);

    const cancel = (key: string, id: string) => t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key });
    const byTest = await cancel(test, liveTx.id);
    expect([byTest.statusCode, byTest.json()]).toEqual([403, { error: 'a test key cannot act on a live transaction: use a live key' }]);
    const byLive = await cancel(live, testTx.id);
    expect([byLive.statusCode, byLive.json()]).toEqual([403, { error: 'a live key cannot act on a test transaction: use a test key' }]);
    expect((await getTx(t, live, liveTx.id)).status).toBe('success');
    expect((await getTx(t, test, liveTx.id)).status).toBe('success'); // reading across stays allowed

    const reprint = (key: string, id: string) => t.request({ method: 'POST', url: `/v1/transactions/${id}/receipt/duplicate?format=text`, key });
    const jetBefore = await jetEntries(loc);
    const refused = await reprint(test, liveTx.id);
    expect([refused.statusCode, refused.json()]).toEqual([403, { error: 'a test key cannot act on a live transaction: use a live key' }]);
    expect(await jetEntries(loc)).toBe(jetBefore);
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${liveTx.id}/receipt?format=text`, key: test })).statusCode).toBe(200);

    // The key of the transaction's own environment acts as before.
    expect((await reprint(live, liveTx.id)).statusCode).toBe(200);
    expect(await jetEntries(loc)).toBe(jetBefore + 1); // the live reprint is journaled: the count above can move
    const ok = await cancel(live, liveTx.id);
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().environment).toBe('live');
    expect((await getTx(t, live, liveTx.id)).status).toBe('cancelled');
  });
});
