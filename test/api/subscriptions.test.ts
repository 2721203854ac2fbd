import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { Db } from '../../src/store/db.ts';
import { subscriptionsRepo } from '../../src/store/repos/subscriptions-repo.ts';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe.ts';
import { openTestDb, startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation } from '../support/transactions.ts';

/*
 * Subscriptions (spec "Subscriptions (portal)", DECISIONS prices and proration): every field
 * and error string, the tier following the merchant count at once (rate-limit headers, on
 * two nodes), proration shown and written to the billing ledger, the Stripe provider.
 */
let db: Db;
let clock: ManualClock;
let t: TestApp;
beforeAll(async () => {
  db = await openTestDb();
  clock = new ManualClock('2026-04-01T00:00:00.000Z');
  t = await startTestApp({ db, clock, liveEnabled: true });
});
afterAll(async () => {
  await t.close();
  await db.close();
});

const body = (over: Record<string, unknown> = {}) => ({
  company_name: 'Bar Pepe SL', billing_email: 'billing@barpepe.example', payment_method_id: 'pm_card_visa', merchant_count: 10, ...over,
});
const post = (app: TestApp, key: string, payload: unknown) => app.request({ method: 'POST', url: '/v1/subscriptions', key, payload: payload as object });
const patch = (app: TestApp, key: string, payload: unknown) => app.request({ method: 'PATCH', url: '/v1/subscriptions', key, payload: payload as object });
const get = (app: TestApp, key: string) => app.request({ method: 'GET', url: '/v1/subscriptions', key });

describe('POST /v1/subscriptions', () => {
  it('400 per missing or invalid field, with the spec messages', async () => {
    const { key } = await t.signup();
    const cases: [Record<string, unknown>, string][] = [
      [{ company_name: undefined }, 'company_name is required'],
      [{ company_name: '   ' }, 'company_name is required'],
      [{ company_name: 'x'.repeat(101) }, 'company_name must be at most 100 characters'],
      [{ company_name: 12 }, 'company_name must be a string of 1-100 characters'],
      [{ billing_email: undefined }, 'billing_email is required'],
      [{ billing_email: '' }, 'billing_email is required'],
      [{ billing_email: 'not-an-email' }, 'billing_email must be a valid email address'],
      [{ payment_method_id: undefined }, 'payment_method_id is required'],
      [{ payment_method_id: '' }, 'payment_method_id is required'],
      [{ merchant_count: undefined }, 'merchant_count must be at least 1'],
      [{ merchant_count: 0 }, 'merchant_count must be at least 1'],
      [{ merchant_count: -3 }, 'merchant_count must be at least 1'],
      [{ merchant_count: 2.5 }, 'merchant_count must be a whole number of at least 1'],
      [{ merchant_count: '5' }, 'merchant_count must be a whole number of at least 1'],
      [{ merchant_count: null }, 'merchant_count must be at least 1'],
      // A required field sent as null is a missing one.
      [{ company_name: null }, 'company_name is required'],
      [{ billing_email: null }, 'billing_email is required'],
      [{ payment_method_id: null }, 'payment_method_id is required'],
      // 101 characters (code points): an emoji is one.
      [{ company_name: '😀'.repeat(101) }, 'company_name must be at most 100 characters'],
      [{ merchant_count: 1_000_001 }, 'merchant_count must be at most 1000000'],
      [{ billing_interval: 'week' }, 'billing_interval must be "month" or "year"'],
      [{ billing_interval: '' }, 'billing_interval must be "month" or "year"'],
    ];
    for (const [over, error] of cases) {
      const payload = JSON.parse(JSON.stringify(body(over))); // drops the undefined fields
      const res = await post(t, key, payload);
      expect({ over, status: res.statusCode, body: res.json() }).toEqual({ over, status: 400, body: { error } });
    }
    expect((await get(t, key)).statusCode).toBe(404); // nothing was stored
    // 100 emoji are 100 characters (200 UTF-16 units): accepted.
    expect((await post(t, key, body({ company_name: '😀'.repeat(100) }))).statusCode).toBe(201);
  });

  it('201 with every field; monthly by default; 409 for a second one; GET answers it', async () => {
    const { key, accountId } = await t.signup();
    const res = await post(t, key, body());
    expect(res.statusCode).toBe(201);
    const s = res.json();
    expect(s).toEqual({
      id: expect.stringMatching(/^sub_[0-9a-f]{24}$/),
      account_id: accountId,
      company_name: 'Bar Pepe SL',
      billing_email: 'billing@barpepe.example',
      billing_customer_id: expect.stringMatching(/^emb_cus_/),
      billing_subscription_id: expect.stringMatching(/^emb_sub_/),
      status: 'active',
      merchant_count: 10,
      billing_interval: 'month',
      current_tier: 'starter',
      monthly_amount: 15_000,
      period_amount: 15_000,
      currency: 'EUR',
      current_period_start: '2026-04-01T00:00:00.000Z',
      current_period_end: '2026-05-01T00:00:00.000Z',
      created_at: '2026-04-01T00:00:00.000Z',
      updated_at: '2026-04-01T00:00:00.000Z',
    });
    expect((await get(t, key)).json()).toEqual(s);

    const again = await post(t, key, body({ merchant_count: 3 }));
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: 'subscription already exists' });

    // The first period is a line of the billing ledger.
    const lines = await subscriptionsRepo.lines(db, accountId);
    expect(lines).toMatchObject([{ kind: 'period_charge', amount: 15_000, to_merchant_count: 10, period_seconds: 30 * 86_400 }]);
  });

  it('concurrent POSTs: one 201, the others 409', async () => {
    const { key } = await t.signup();
    const codes = (await Promise.all(Array.from({ length: 5 }, () => post(t, key, body())))).map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 409, 409, 409, 409]);
  });

  it('yearly billing: ten months per period; the tier from the count', async () => {
    const { key } = await t.signup();
    const s = (await post(t, key, body({ merchant_count: 60, billing_interval: 'year' }))).json();
    expect(s).toMatchObject({
      current_tier: 'scale', monthly_amount: 60 * 900, period_amount: 60 * 900 * 10, billing_interval: 'year',
      current_period_end: '2027-04-01T00:00:00.000Z',
    });
  });

  it('no location floor outside HardwareDevice mode (spec: the floor is that mode\'s): 1 merchant with 3 locations costs 1 merchant', async () => {
    const { key } = await t.signup();
    for (let i = 0; i < 3; i++) await createLocation(t, key, 'es-sii', { name: `Shop ${i}` });
    const s = (await post(t, key, body({ merchant_count: 1 }))).json();
    expect(s).toMatchObject({ current_tier: 'starter', merchant_count: 1, monthly_amount: 1500 });
    // The device mode's floor: test/api/hardware-device.test.ts.
  });
});

describe('PATCH /v1/subscriptions', () => {
  it('404 without a subscription (GET too); 400 on a bad count', async () => {
    const { key } = await t.signup();
    expect((await get(t, key)).json()).toEqual({ error: 'subscription not found' });
    expect((await get(t, key)).statusCode).toBe(404);
    const res = await patch(t, key, { merchant_count: 5 });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'subscription not found' });
    for (const [merchant_count, error] of [[0, 'merchant_count must be at least 1'], [undefined, 'merchant_count must be at least 1'], ['many', 'merchant_count must be a whole number of at least 1']] as const) {
      const bad = await patch(t, key, merchant_count === undefined ? {} : { merchant_count });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toEqual({ error });
    }
  });

  it('changes the tier at once, prorates by the remaining seconds, and writes the ledger line', async () => {
    clock.set('2026-04-01T00:00:00.000Z');
    const { key, accountId } = await t.signup();
    await post(t, key, body({ merchant_count: 10 }));
    clock.set('2026-04-16T00:00:00.000Z'); // half of April (30 days) left
    const res = await patch(t, key, { merchant_count: 22 });
    expect(res.statusCode).toBe(200);
    const s = res.json();
    expect(s).toMatchObject({ merchant_count: 22, current_tier: 'growth', monthly_amount: 22 * 1200, updated_at: '2026-04-16T00:00:00.000Z' });
    expect(s.proration).toEqual({
      amount: 5700, // (26,400 − 15,000) × 1,296,000 / 2,592,000
      currency: 'EUR', from_merchant_count: 10, to_merchant_count: 22, from_period_amount: 15_000, to_period_amount: 26_400,
      remaining_seconds: 1_296_000, period_seconds: 2_592_000,
      period_start: '2026-04-01T00:00:00.000Z', period_end: '2026-05-01T00:00:00.000Z',
    });
    expect((await get(t, key)).json()).toMatchObject({ merchant_count: 22, current_tier: 'growth' });

    // Down again three quarters through the period: a credit, from the new amount.
    clock.set('2026-04-23T12:00:00.000Z');
    const down = (await patch(t, key, { merchant_count: 5 })).json();
    expect(down).toMatchObject({ current_tier: 'starter', monthly_amount: 7500 });
    expect(down.proration).toMatchObject({ amount: -4725, remaining_seconds: 648_000, from_period_amount: 26_400, to_period_amount: 7500 });

    // A later period: the proration counts within it.
    clock.set('2026-05-11T00:00:00.000Z'); // May has 31 days; 21 left
    const may = (await patch(t, key, { merchant_count: 6 })).json();
    expect(may).toMatchObject({ current_period_start: '2026-05-01T00:00:00.000Z', current_period_end: '2026-06-01T00:00:00.000Z' });
    expect(may.proration).toMatchObject({ amount: Math.round(1500 * 21 / 31), remaining_seconds: 21 * 86_400, period_seconds: 31 * 86_400 });

    const lines = await subscriptionsRepo.lines(db, accountId);
    expect(lines.map((l) => [l.kind, l.amount, l.from_merchant_count, l.to_merchant_count, l.remaining_seconds])).toEqual([
      ['period_charge', 15_000, null, 10, null],
      ['proration', 5700, 10, 22, 1_296_000],
      ['proration', -4725, 22, 5, 648_000],
      ['proration', 1016, 5, 6, 1_814_400],
    ]);
    clock.set('2026-04-01T00:00:00.000Z');
  });

  it('concurrent PATCHes are applied one after another: each prorates from the previous count', async () => {
    clock.set('2026-04-01T00:00:00.000Z');
    const { key, accountId } = await t.signup();
    await post(t, key, body({ merchant_count: 1 }));
    clock.set('2026-04-11T00:00:00.000Z'); // 20 of 30 days left
    const counts = [5, 20, 60, 3, 300, 12];
    const answers = await Promise.all(counts.map((merchant_count) => patch(t, key, { merchant_count })));
    expect(answers.map((r) => r.statusCode)).toEqual(counts.map(() => 200));
    const lines = (await subscriptionsRepo.lines(db, accountId)).filter((l) => l.kind === 'proration');
    expect(lines).toHaveLength(counts.length);
    let from = 1;
    for (const l of lines) { // the ledger is a chain of changes: none prorated from a stale amount
      expect(l.from_merchant_count).toBe(from);
      from = l.to_merchant_count;
    }
    const final = (await get(t, key)).json();
    expect(final.merchant_count).toBe(from);
    // Each line is two thirds of its own difference; together, two thirds of the net change (± rounding).
    const total = lines.reduce((sum, l) => sum + l.amount, 0);
    expect(Math.abs(total - Math.round((final.monthly_amount - 1500) * 2 / 3))).toBeLessThanOrEqual(lines.length);
    clock.set('2026-04-01T00:00:00.000Z');
  });

  it('needs account:write (restricted key without it: 403); account:read may GET', async () => {
    const { key } = await t.signup();
    await post(t, key, body());
    const reader = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'reader', permissions: ['account:read'] } })).json().key;
    expect((await get(t, reader)).statusCode).toBe(200);
    const res = await patch(t, reader, { merchant_count: 2 });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'insufficient permission: account:write required' });
    expect((await post(t, reader, body())).statusCode).toBe(403);
  });

  it('GET shows the status the billing receiver sets (setStatus), of this account only', async () => {
    const { key, accountId } = await t.signup();
    await post(t, key, body());
    expect(await subscriptionsRepo.setStatus(db, accountId, 'suspended', clock.now())).toBe(true);
    expect((await get(t, key)).json().status).toBe('suspended');
    expect(await subscriptionsRepo.setStatus(db, '00000000-0000-4000-8000-000000000000', 'suspended', clock.now())).toBe(false);
    await subscriptionsRepo.setStatus(db, accountId, 'active', clock.now());
    expect((await get(t, key)).json().status).toBe('active');
  });

  it("another account's subscription is never seen or changed", async () => {
    const a = await t.signup();
    const b = await t.signup();
    await post(t, a.key, body({ merchant_count: 3 }));
    expect((await get(t, b.key)).statusCode).toBe(404);
    expect((await patch(t, b.key, { merchant_count: 99 })).statusCode).toBe(404);
    expect((await get(t, a.key)).json().merchant_count).toBe(3);
  });
});

describe('the tier follows the subscription at once, on every node', () => {
  it('X-RateLimit-Limit of a live key changes with POST and PATCH, on the node that wrote and on another', async () => {
    const b = await startTestApp({ db, clock, liveEnabled: true });
    try {
      const { key } = await t.signup();
      const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } })).json().key as string;
      const limitOn = async (app: TestApp, k: string) => {
        const res = await app.request({ method: 'GET', url: '/v1/account/status', key: k });
        expect(res.statusCode).toBe(200);
        return res.headers['x-ratelimit-limit'];
      };
      // No subscription, no locations: starter. Both nodes now hold the tier in memory.
      expect(await limitOn(t, live)).toBe('1000');
      expect(await limitOn(b, live)).toBe('1000');

      expect((await post(t, key, body({ merchant_count: 11 }))).statusCode).toBe(201);
      expect(await limitOn(t, live)).toBe('5000'); // the very next request, where it was written
      await b.rt.changes.sync(); // the other node has heard every commit so far
      expect(await limitOn(b, live)).toBe('5000');

      expect((await patch(b, key, { merchant_count: 300 })).statusCode).toBe(200);
      expect(await limitOn(b, live)).toBe('20000');
      await t.rt.changes.sync();
      expect(await limitOn(t, live)).toBe('20000');
      const status = (await t.request({ method: 'GET', url: '/v1/account/status', key: live })).json();
      expect(status).toMatchObject({ tier: 'enterprise', merchant_count: 300, rate_limit: { requests_per_minute: 20_000, burst: 40_000 } });

      expect((await patch(t, key, { merchant_count: 51 })).statusCode).toBe(200);
      expect(await limitOn(t, live)).toBe('10000');
      await b.rt.changes.sync();
      expect(await limitOn(b, live)).toBe('10000');

      // A test key stays in the sandbox bucket whatever the subscription.
      expect(await limitOn(t, key)).toBe('100');
    } finally {
      await b.close();
    }
  });

  it('a change written straight to the database (another tool) reaches the cached tier', async () => {
    const { key, accountId } = await t.signup();
    const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } })).json().key as string;
    await post(t, key, body({ merchant_count: 1 }));
    const limit = async () => (await t.request({ method: 'GET', url: '/v1/account/status', key: live })).headers['x-ratelimit-limit'];
    expect(await limit()).toBe('1000');
    await db.query('UPDATE subscriptions SET merchant_count = 40 WHERE account_id = $1', [accountId]);
    await t.rt.changes.sync();
    expect(await limit()).toBe('5000');
  });
});

describe('with the Stripe provider (a local fake of the billing API)', () => {
  let fake: FakeStripe;
  let s: TestApp;
  beforeAll(async () => {
    fake = await startFakeStripe();
    s = await startTestApp({ db, clock, config: { billingProvider: { apiKey: fake.key, apiBaseUrl: fake.url, productId: undefined } } });
  });
  afterAll(async () => {
    await s.close();
    await fake.close();
  });

  it('POST creates the customer and the subscription there; PATCH charges our proration there', async () => {
    clock.set('2026-04-01T00:00:00.000Z');
    const { key } = await s.signup();
    const created = (await post(s, key, body({ merchant_count: 10 }))).json();
    expect(created.billing_customer_id).toMatch(/^cus_/);
    expect(fake.customers.get(created.billing_customer_id)).toMatchObject({ name: 'Bar Pepe SL', email: 'billing@barpepe.example', payment_method: 'pm_card_visa' });
    expect(fake.subscriptions.get(created.billing_subscription_id)).toMatchObject({ customer: created.billing_customer_id, items: { data: [{ price: { unit_amount: 15_000 } }] } });

    clock.set('2026-04-16T00:00:00.000Z');
    const changed = (await patch(s, key, { merchant_count: 22 })).json();
    expect(changed.proration.amount).toBe(5700);
    expect(fake.subscriptions.get(created.billing_subscription_id)).toMatchObject({ proration_behavior: 'none', items: { data: [{ price: { unit_amount: 26_400 } }] } });
    const items = [...fake.invoiceItems.values()].filter((i) => i.customer === created.billing_customer_id);
    expect(items).toMatchObject([{ amount: 5700, currency: 'eur', subscription: created.billing_subscription_id }]);
    clock.set('2026-04-01T00:00:00.000Z');
  });

  it('subscribing again after a failed payment: a new customer and subscription there, the unpaid one cancelled', async () => {
    const { key, accountId } = await s.signup();
    const first = (await post(s, key, body())).json();
    await subscriptionsRepo.setStatus(db, accountId, 'suspended', clock.now());
    await db.query("UPDATE accounts SET status = 'suspended', status_reason = 'payment failed' WHERE id = $1", [accountId]);
    await s.rt.changes.sync();
    const again = await post(s, key, body({ payment_method_id: 'pm_card_mastercard' }));
    expect(again.statusCode, again.body).toBe(201);
    const renewed = again.json();
    expect(fake.customers.get(renewed.billing_customer_id)).toMatchObject({ payment_method: 'pm_card_mastercard' });
    expect(fake.subscriptions.get(renewed.billing_subscription_id)).toMatchObject({ status: 'active' });
    expect(fake.subscriptions.get(first.billing_subscription_id)).toMatchObject({ status: 'canceled' });
    expect((await db.query('SELECT status FROM accounts WHERE id = $1', [accountId])).rows[0]).toEqual({ status: 'active' });
  });

  it('a provider refusal is a 502 and stores nothing', async () => {
    const { key } = await s.signup();
    fake.declineNext = true;
    const res = await post(s, key, body());
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'billing provider unavailable' });
    expect((await get(s, key)).statusCode).toBe(404);
    expect((await post(s, key, body())).statusCode).toBe(201); // and works when the provider does

    fake.declineNext = true;
    const patched = await patch(s, key, { merchant_count: 40 });
    expect(patched.statusCode).toBe(502);
    expect((await get(s, key)).json().merchant_count).toBe(10); // unchanged: the change rolled back
  });
});
