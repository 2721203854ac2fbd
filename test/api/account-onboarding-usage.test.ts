import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';
import type { SystemKey } from '../support/fixtures.ts';

/*
 * Onboarding checklist and usage metering (DECISIONS "Beyond the spec"; docs/decisions.md
 * "Onboarding checklist and usage metering"): every step follows the account's real rows,
 * counts are per UTC month, another account's rows are never counted, every error string.
 */
let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-10T09:00:00.000Z');
  t = await startTestApp({ clock, liveEnabled: true });
});
afterAll(() => t.close());

const onboarding = (key?: string) => t.request({ method: 'GET', url: '/v1/account/onboarding', ...(key ? { key } : {}) });
const usage = (key: string, period?: string) =>
  t.request({ method: 'GET', url: period === undefined ? '/v1/account/usage' : `/v1/account/usage?period=${encodeURIComponent(period)}`, key });
const sale = (loc: string, system: SystemKey) => saleBody(loc, { ...saleLines[system], metadata: { ...(saleMetadata[system] ?? {}) } });
const at = (iso: string) => clock.set(new Date(iso));
const tx = async (key: string, loc: string, system: SystemKey) => {
  const res = await createTx(t, key, sale(loc, system));
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
};
const stepsOf = (body: { steps: Array<{ step: string; done: boolean; done_at?: string }> }) =>
  Object.fromEntries(body.steps.map((s) => [s.step, s.done ? s.done_at : false]));
const openPortal = async (key: string) => {
  const res = await t.request({ method: 'POST', url: '/v1/portal/sessions', key });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().token as string;
};

describe('GET /v1/account/onboarding', () => {
  it('a new account: only the key step is done (sign-up made it), in order, without done_at on open steps', async () => {
    at('2026-03-10T09:00:00.000Z');
    const { key, accountId } = await t.signup();
    const res = await onboarding(key);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      account_id: accountId,
      steps: [
        { step: 'api_key_created', done: true, done_at: '2026-03-10T09:00:00.000Z' },
        { step: 'location_registered', done: false },
        { step: 'certificate_uploaded', done: false },
        { step: 'first_test_transaction', done: false },
        { step: 'webhook_configured', done: false },
        { step: 'live_key_created', done: false },
      ],
      completed_steps: 1, total_steps: 6, completed: false,
    });
  });

  it('each step is done when its row exists, at that row\'s time; all six make it completed; another account stays untouched', async () => {
    at('2026-03-11T08:00:00.000Z');
    const { key } = await t.signup();
    const other = await t.signup();
    at('2026-03-11T09:00:00.000Z');
    const loc = await createLocation(t, key, 'fr-nf525');
    at('2026-03-11T10:00:00.000Z');
    const cert = uploadForm({ certificateId: 'seal-1', password: 'secret', file: exportP12(generateCert(), 'secret') });
    const up = await t.request({ method: 'POST', url: '/v1/certificates', key, payload: cert.payload, headers: cert.headers });
    expect(up.statusCode, up.body).toBe(201);
    at('2026-03-11T11:00:00.000Z');
    await tx(key, loc, 'fr-nf525');
    at('2026-03-11T12:00:00.000Z');
    const hook = await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: 'https://hooks.example.com/fiscal', events: ['fiscalization.completed'] } });
    expect(hook.statusCode, hook.body).toBe(201);
    expect((await onboarding(key)).json()).toMatchObject({ completed_steps: 5, completed: false });
    at('2026-03-11T13:00:00.000Z');
    const live = await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { environment: 'live' } });
    expect(live.statusCode, live.body).toBe(201);

    const body = (await onboarding(key)).json();
    expect(stepsOf(body)).toEqual({
      api_key_created: '2026-03-11T08:00:00.000Z',
      location_registered: '2026-03-11T09:00:00.000Z',
      certificate_uploaded: '2026-03-11T10:00:00.000Z',
      first_test_transaction: '2026-03-11T11:00:00.000Z',
      webhook_configured: '2026-03-11T12:00:00.000Z',
      live_key_created: '2026-03-11T13:00:00.000Z',
    });
    expect(body).toMatchObject({ completed_steps: 6, total_steps: 6, completed: true });
    // The other account signed up at the same time and did nothing else.
    expect((await onboarding(other.key)).json()).toMatchObject({ completed_steps: 1, completed: false });

    // Real state, not a history: a revoked live key or a deleted webhook opens the step again.
    expect((await t.request({ method: 'DELETE', url: `/v1/api-keys/${live.json().id}`, key })).statusCode).toBeLessThan(300);
    expect((await t.request({ method: 'DELETE', url: `/v1/webhooks/${hook.json().id}`, key })).statusCode).toBeLessThan(300);
    const after = (await onboarding(key)).json();
    expect(stepsOf(after)).toMatchObject({ live_key_created: false, webhook_configured: false, location_registered: '2026-03-11T09:00:00.000Z' });
    expect(after).toMatchObject({ completed_steps: 4, completed: false });
  });

  it('a live transaction is not the first test transaction', async () => {
    at('2026-03-12T08:00:00.000Z');
    const { key } = await t.signup();
    const liveKey = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { environment: 'live' } })).json().key as string;
    const loc = await createLocation(t, liveKey, 'fr-nf525');
    await tx(liveKey, loc, 'fr-nf525');
    expect(stepsOf((await onboarding(key)).json())).toMatchObject({ first_test_transaction: false, live_key_created: '2026-03-12T08:00:00.000Z' });
  });

  it('a portal session reads it; 401 without a key; 403 for a key without account:read', async () => {
    const { key } = await t.signup();
    const token = await openPortal(key);
    const viaPortal = await onboarding(token);
    expect(viaPortal.statusCode).toBe(200);
    expect(viaPortal.json()).toEqual((await onboarding(key)).json());
    const none = await onboarding();
    expect([none.statusCode, none.json()]).toEqual([401, { error: 'missing or invalid Authorization header' }]);
    const restricted = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { permissions: ['locations:read'] } })).json().key as string;
    const denied = await onboarding(restricted);
    expect([denied.statusCode, denied.json()]).toEqual([403, { error: 'insufficient permission: account:read required' }]);
  });
});

describe('GET /v1/account/usage', () => {
  it('400 for every malformed period, with one clear message', async () => {
    const { key } = await t.signup();
    for (const p of ['', '2026-13', '2026-00', '2026-1', '26-03', '2026/03', '2026-03-01', 'march', '1969-12', ' 2026-03']) {
      const res = await usage(key, p);
      expect([p, res.statusCode, res.json()]).toEqual([p, 400, { error: 'period must be a month in the form YYYY-MM' }]);
    }
    const twice = await t.request({ method: 'GET', url: '/v1/account/usage?period=2026-05&period=2026-06', key });
    expect([twice.statusCode, twice.json()]).toEqual([400, { error: 'period must be a month in the form YYYY-MM' }]);
  });

  it('counts per country and environment in the UTC month, active merchants, never another account\'s rows', async () => {
    at('2026-05-01T00:00:00.000Z');
    const { key, accountId } = await t.signup();
    const liveKey = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { environment: 'live' } })).json().key as string;
    const fr = await createLocation(t, key, 'fr-nf525');
    const fr2 = await createLocation(t, key, 'fr-nf525', { name: 'Second shop' });
    const pt = await createLocation(t, key, 'pt-saft');
    const other = await t.signup();
    const otherLoc = await createLocation(t, other.key, 'fr-nf525');

    at('2026-04-30T23:59:59.999Z'); // the month before: not May
    await tx(key, fr, 'fr-nf525');
    at('2026-05-01T00:00:00.000Z'); // the first instant of May
    await tx(key, fr, 'fr-nf525');
    await tx(key, fr2, 'fr-nf525');
    await tx(key, pt, 'pt-saft');
    await tx(liveKey, fr, 'fr-nf525');
    await tx(other.key, otherLoc, 'fr-nf525');
    await tx(other.key, otherLoc, 'fr-nf525');
    at('2026-05-31T23:59:59.999Z'); // the last instant of May
    await tx(liveKey, fr2, 'fr-nf525');
    at('2026-06-01T00:00:00.000Z'); // June
    await tx(key, pt, 'pt-saft');

    const may = await usage(key, '2026-05');
    expect(may.statusCode, may.body).toBe(200);
    expect(may.json()).toEqual({
      account_id: accountId, period: '2026-05',
      period_start: '2026-05-01T00:00:00.000Z', period_end: '2026-06-01T00:00:00.000Z',
      transactions: {
        total: 5, test: 3, live: 2,
        by_country: [
          { country: 'FR', environment: 'live', count: 2 },
          { country: 'FR', environment: 'test', count: 2 },
          { country: 'PT', environment: 'test', count: 1 },
        ],
      },
      active_merchants: { live: 2, test: 3 },
      // No subscription: nothing billed; two live merchants on the starter tier would cost 2 × 1500.
      billing: { basis: 'none', tier: null, merchant_count: null, billable_amount: 0, estimated_amount: 3000, currency: 'EUR' },
    });

    const april = (await usage(key, '2026-04')).json();
    expect(april.transactions).toEqual({ total: 1, test: 1, live: 0, by_country: [{ country: 'FR', environment: 'test', count: 1 }] });
    expect(april.active_merchants).toEqual({ live: 0, test: 1 });
    expect(april.billing.estimated_amount).toBe(0);

    // No period: the current month (the clock is in June).
    const current = (await usage(key)).json();
    expect([current.period, current.transactions.total, current.transactions.by_country]).toEqual(['2026-06', 1, [{ country: 'PT', environment: 'test', count: 1 }]]);

    const empty = (await usage(key, '2025-01')).json();
    expect(empty.transactions).toEqual({ total: 0, test: 0, live: 0, by_country: [] });
    expect(empty.active_merchants).toEqual({ live: 0, test: 0 });

    // The other account sees only its own two.
    const theirs = (await usage(other.key, '2026-05')).json();
    expect(theirs.transactions).toEqual({ total: 2, test: 2, live: 0, by_country: [{ country: 'FR', environment: 'test', count: 2 }] });
    expect(theirs.account_id).toBe(other.accountId);
  });

  it('with a subscription: its monthly amount is billed for the months it covers; a portal session reads the same', async () => {
    at('2026-07-15T12:00:00.000Z');
    const { key } = await t.signup();
    const token = await openPortal(key);
    const sub = await t.request({
      method: 'POST', url: '/v1/subscriptions', key: token,
      payload: { company_name: 'Bar Pepe SL', billing_email: 'billing@barpepe.example', payment_method_id: 'pm_card_visa', merchant_count: 12 },
    });
    expect(sub.statusCode, sub.body).toBe(201);
    const july = await usage(token, '2026-07');
    expect(july.statusCode, july.body).toBe(200);
    // 12 merchants: growth, 12 × 1200.
    expect(july.json().billing).toEqual({ basis: 'subscription', tier: 'growth', merchant_count: 12, billable_amount: 14400, estimated_amount: 0, currency: 'EUR' });
    expect((await usage(key, '2026-07')).json()).toEqual(july.json());
    // The month before the subscription existed bills nothing.
    expect((await usage(token, '2026-06')).json().billing).toMatchObject({ basis: 'none', billable_amount: 0, tier: null });
    expect((await usage(token, '2026-08')).json().billing).toMatchObject({ basis: 'subscription', billable_amount: 14400 });
    const bad = await usage(token, '2026-7');
    expect([bad.statusCode, bad.json()]).toEqual([400, { error: 'period must be a month in the form YYYY-MM' }]);
  });

  it('a yearly subscription bills a twelfth of its year (ten months of the monthly amount)', async () => {
    at('2026-07-15T12:00:00.000Z');
    const { key } = await t.signup();
    const sub = await t.request({
      method: 'POST', url: '/v1/subscriptions', key,
      payload: { company_name: 'Bar Pepe SL', billing_email: 'billing@barpepe.example', payment_method_id: 'pm_card_visa', merchant_count: 7, billing_interval: 'year' },
    });
    expect(sub.statusCode, sub.body).toBe(201);
    // 7 × 1500 = 10500 a month; a year is 105000; a twelfth is 8750.
    expect((await usage(key, '2026-07')).json().billing).toEqual({ basis: 'subscription', tier: 'starter', merchant_count: 7, billable_amount: 8750, estimated_amount: 0, currency: 'EUR' });
  });

  it('401 without a key; 403 for a key without account:read', async () => {
    const none = await t.request({ method: 'GET', url: '/v1/account/usage?period=2026-05' });
    expect([none.statusCode, none.json()]).toEqual([401, { error: 'missing or invalid Authorization header' }]);
    const { key } = await t.signup();
    const restricted = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { permissions: ['transactions:read'] } })).json().key as string;
    const denied = await usage(restricted, '2026-05');
    expect([denied.statusCode, denied.json()]).toEqual([403, { error: 'insufficient permission: account:read required' }]);
  });
});
