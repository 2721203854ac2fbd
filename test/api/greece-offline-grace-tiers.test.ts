import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { GR_SUBSCRIPTION_KEY, locationBodies } from '../support/fixtures.ts';
import { startFakeAade, type FakeAade } from '../support/fake-aade.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createTx, getTx } from '../support/transactions.ts';

/*
 * Greece's offline grace by account tier (spec Limits: "offline grace default 7 days (up to
 * 1 month by tier)"; services/offline-grace.ts): live records of a starter account expire
 * after 7 days, growth after 14, enterprise after 30; test records (the sandbox tier) after
 * 7 whatever the subscription. The window is fixed when the record first goes offline and
 * shown as `offline_until`; a later tier change does not move it. AADE is the fake one,
 * down throughout; the clock is driven by hand. Run on both stores.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;

let t: TestApp;
let clock: ManualClock;
let fake: FakeAade;

beforeAll(async () => {
  fake = await startFakeAade({ credentials: { userId: 'user1', subscriptionKey: GR_SUBSCRIPTION_KEY } });
  clock = new ManualClock(new Date('2026-05-04T09:00:00.000Z'));
  t = await startTestApp({
    clock, random: () => 0.5, liveEnabled: true,
    config: { authorityBaseUrls: { 'gr-mydata:test': fake.url, 'gr-mydata:live': fake.url }, authorityCa: fake.caPem },
  });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  fake.down();
});

let series = 0;

/** A fresh account (subscribed for `merchants` when given), its live key and a Greek location. */
async function account(merchants?: number) {
  const { key } = await t.signup();
  if (merchants !== undefined) {
    const sub = await t.request({
      method: 'POST', url: '/v1/subscriptions', key,
      payload: { company_name: 'Καφενείο ΑΕ', billing_email: 'billing@kafeneio.example', payment_method_id: 'pm_card_visa', merchant_count: merchants },
    });
    expect(sub.statusCode, sub.body).toBe(201);
  }
  const live = await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } });
  expect(live.statusCode, live.body).toBe(201);
  const body = locationBodies['gr-mydata'];
  const loc = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { ...body, country_config: { ...body.country_config, default_series: `G${++series}` } },
  });
  expect(loc.statusCode, loc.body).toBe(201);
  return { key, live: live.json().key as string, loc: loc.json().id as string };
}

const sale = (loc: string) => ({
  location_id: loc, timestamp: clock.now().toISOString(), currency: 'EUR', payment_method: 'card',
  items: [{ description: 'Φραπέ', quantity: 2, unit_price: 250, tax_rate: 24, tax_amount: 120, total_amount: 620 }],
  pretax_amount: 500, tax_amount: 120, total_amount: 620,
});

/** A sale made while AADE is down: offline_pending from its first (inline) attempt. */
async function offlineSale(key: string, loc: string, headers: Record<string, string> = {}) {
  const res = await createTx(t, key, sale(loc), headers);
  expect(res.statusCode, res.body).toBe(201);
  const tx = (await getTx(t, key, res.json().id)) as { id: string; status: string; created_at: string; offline_until: string | null };
  expect(tx.status).toBe('offline_pending');
  return tx;
}

/** The record's next attempt made at `at` (the job brought forward to it), AADE still down. */
async function attemptAt(id: string, at: Date) {
  clock.set(at);
  await t.db.query(`UPDATE jobs SET run_at = $2 WHERE transaction_id = $1 AND kind = 'submit' AND status IN ('pending', 'failed')`, [id, at]);
  await t.worker.drain();
}

const after = (tx: { created_at: string }, ms: number) => new Date(new Date(tx.created_at).getTime() + ms);

describe('Greece offline grace by tier', () => {
  it('growth: offline_until is creation + 14 days; still offline_pending after 7 days, expired at 14', async () => {
    const a = await account(11);
    const tx = await offlineSale(a.live, a.loc);
    expect(tx.offline_until).toBe(after(tx, 14 * DAY).toISOString());

    await attemptAt(tx.id, after(tx, 7 * DAY + HOUR));
    expect(await getTx(t, a.live, tx.id)).toMatchObject({ status: 'offline_pending', offline_until: after(tx, 14 * DAY).toISOString() });
    await attemptAt(tx.id, after(tx, 14 * DAY - HOUR));
    expect((await getTx(t, a.live, tx.id)).status).toBe('offline_pending');
    await attemptAt(tx.id, after(tx, 14 * DAY));
    expect((await getTx(t, a.live, tx.id)).status).toBe('failed_offline_grace_expired');
  });

  it('starter: 7 days, as before tiers', async () => {
    const a = await account(5);
    const tx = await offlineSale(a.live, a.loc);
    expect(tx.offline_until).toBe(after(tx, 7 * DAY).toISOString());
    await attemptAt(tx.id, after(tx, 7 * DAY - HOUR));
    expect((await getTx(t, a.live, tx.id)).status).toBe('offline_pending');
    await attemptAt(tx.id, after(tx, 7 * DAY));
    expect((await getTx(t, a.live, tx.id)).status).toBe('failed_offline_grace_expired');
  });

  it('enterprise: 30 days ("up to 1 month"); the submission job has attempts for the whole month', async () => {
    const a = await account(300);
    const tx = await offlineSale(a.live, a.loc);
    expect(tx.offline_until).toBe(after(tx, 30 * DAY).toISOString());
    const job = (await t.db.query<{ max_attempts: number }>(`SELECT max_attempts FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [tx.id])).rows[0]!;
    // One attempt an hour at the backoff cap covers the month.
    expect(job.max_attempts).toBeGreaterThanOrEqual(30 * 24);

    await attemptAt(tx.id, after(tx, 21 * DAY + HOUR));
    expect((await getTx(t, a.live, tx.id)).status).toBe('offline_pending');
    await attemptAt(tx.id, after(tx, 30 * DAY - HOUR));
    expect((await getTx(t, a.live, tx.id)).status).toBe('offline_pending');
    await attemptAt(tx.id, after(tx, 30 * DAY));
    expect((await getTx(t, a.live, tx.id)).status).toBe('failed_offline_grace_expired');
  });

  it('no subscription: the tier account status reports (starter for one location): 7 days', async () => {
    const a = await account();
    const status = await t.request({ method: 'GET', url: '/v1/account/status', key: a.live });
    expect(status.json().tier).toBe('starter');
    const tx = await offlineSale(a.live, a.loc);
    expect(tx.offline_until).toBe(after(tx, 7 * DAY).toISOString());
  });

  it('test records are the sandbox tier: 7 days on a growth account', async () => {
    const a = await account(11);
    const tx = await offlineSale(a.key, a.loc, { 'x-svc-sandbox': 'authority' });
    expect(tx.offline_until).toBe(after(tx, 7 * DAY).toISOString());
    await attemptAt(tx.id, after(tx, 7 * DAY));
    expect((await getTx(t, a.key, tx.id)).status).toBe('failed_offline_grace_expired');
  });

  it('the window is fixed when the record goes offline: a later tier change does not move it', async () => {
    const a = await account(11);
    const tx = await offlineSale(a.live, a.loc);
    const down = await t.request({ method: 'PATCH', url: '/v1/subscriptions', key: a.key, payload: { merchant_count: 5 } });
    expect(down.statusCode, down.body).toBe(200);
    await attemptAt(tx.id, after(tx, 7 * DAY + HOUR));
    expect(await getTx(t, a.live, tx.id)).toMatchObject({ status: 'offline_pending', offline_until: after(tx, 14 * DAY).toISOString() });

    // And the other way: a starter record keeps its 7 days after an upgrade to enterprise.
    const b = await account(5);
    const tb = await offlineSale(b.live, b.loc);
    const up = await t.request({ method: 'PATCH', url: '/v1/subscriptions', key: b.key, payload: { merchant_count: 300 } });
    expect(up.statusCode, up.body).toBe(200);
    await attemptAt(tb.id, after(tb, 7 * DAY));
    expect(await getTx(t, b.live, tb.id)).toMatchObject({ status: 'failed_offline_grace_expired', offline_until: after(tb, 7 * DAY).toISOString() });
  });

  it("a cancellation waiting for its original shows the original's window; offline itself once sent, it gets its own", async () => {
    const a = await account(11);
    const tx = await offlineSale(a.live, a.loc);
    clock.set(after(tx, 2 * DAY));
    const res = await t.request({ method: 'POST', url: `/v1/transactions/${tx.id}/cancel`, key: a.live, payload: {} });
    expect(res.statusCode, res.body).toBe(201);
    const cancel = res.json() as { id: string; created_at: string };
    expect(await getTx(t, a.live, cancel.id)).toMatchObject({ status: 'offline_pending', offline_until: after(tx, 14 * DAY).toISOString() });

    // AADE takes the original (its job alone), then is down again for the reversal it woke.
    await fake.normal();
    const job = (await t.db.query<{ id: string }>(`SELECT id FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [tx.id])).rows[0]!;
    clock.set(after(tx, 2 * DAY + HOUR));
    await t.db.query(`UPDATE jobs SET run_at = $2 WHERE id = $1`, [job.id, clock.now()]);
    expect(await t.worker.runJobNow(job.id)).toBe(true);
    expect((await getTx(t, a.live, tx.id)).status).toBe('success');
    fake.down();
    await t.worker.drain();
    expect(await getTx(t, a.live, cancel.id)).toMatchObject({ status: 'offline_pending', offline_until: after(cancel, 14 * DAY).toISOString() });
  });
});
