import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountsRepo } from '../../src/store/repos/accounts-repo.ts';
import { configs, ES_NIF } from '../support/fixtures.ts';
import { startTestApp, unlimitedLimiter, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, createdTx, getTx, saleBody } from '../support/transactions.ts';

/*
 * The spec's "Errors" section (Messages by condition, the 401/403 rows, the Limits table)
 * checked through the HTTP API where no other file already asserts the exact status and
 * message. Conditions asserted elsewhere are not repeated here (the Messages-by-condition
 * strings: transactions, locations, subscriptions, webhooks, translations, fleet,
 * certificates, accounts, auth, rate-limit tests).
 */

let t: TestApp;
let key: string;
beforeAll(async () => {
  // The sweeps below send a few hundred requests on one account: no bucket in the way.
  t = await startTestApp({ limiter: unlimitedLimiter() });
  ({ key } = await t.signup());
});
afterAll(() => t.close());

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const ANY_ID = '00000000-0000-4000-8000-000000000000';

/** Every route of the API reference that needs a key (GET /openapi.json: a new route is covered as it comes). */
async function securedRoutes(): Promise<Array<{ method: Method; path: string; url: string }>> {
  const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  const routes = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!op.security?.length) continue;
      routes.push({ method: method.toUpperCase() as Method, path, url: path.replace(/\{[^}]+\}/g, ANY_ID) });
    }
  }
  return routes;
}

const answer = async (res: Promise<{ statusCode: number; json(): unknown }>) => {
  const r = await res;
  return [r.statusCode, r.json()];
};

describe('Authentication rows of the Errors table, on every route that needs a key', () => {
  it('401 missing or invalid Authorization header; 401 invalid API key format; 401 revoked key; 403 live mode is not enabled', async () => {
    const routes = await securedRoutes();
    expect(routes.length).toBeGreaterThan(40);
    const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'live', environment: 'live' } })).json().key as string;
    const doomed = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'doomed' } })).json();
    expect((await t.request({ method: 'DELETE', url: `/v1/api-keys/${doomed.id}`, key })).statusCode).toBe(204);

    for (const { method, path, url } of routes) {
      const send = (headers: Record<string, string>) => answer(t.request({ method, url, headers }));
      const what = `${method} ${path}`;
      expect(await send({}), what).toEqual([401, { error: 'missing or invalid Authorization header' }]);
      expect(await send({ authorization: 'Token abc' }), what).toEqual([401, { error: 'missing or invalid Authorization header' }]);
      expect(await send({ authorization: 'Bearer svc_test_short' }), what).toEqual([401, { error: 'invalid API key format' }]);
      expect(await send({ authorization: `Bearer ${doomed.key}` }), what).toEqual([401, { error: 'API key has been revoked' }]);
      expect(await send({ authorization: `Bearer ${live}` }), what).toEqual([403, { error: 'live mode is not enabled' }]);
    }
  });

  /**
   * Routes a suspended account may still call (route config `allowInactiveAccount`): its status
   * and consents, the portal session, and the subscription it needs to pay again. Everything
   * else is the spec's "inactive account → 403".
   */
  const OPEN_WHEN_SUSPENDED = new Set([
    'GET /v1/account/status', 'GET /v1/account/consents', 'DELETE /v1/account/consents/{id}',
    'POST /v1/portal/sessions', 'DELETE /v1/portal/sessions/current',
    'POST /v1/subscriptions', 'GET /v1/subscriptions',
  ]);

  it('403 for a suspended account on every other route', async () => {
    const suspended = await t.signup();
    await accountsRepo.setStatus(t.db, suspended.accountId, 'suspended', 'payment failed', new Date());
    await t.rt.changes.sync();
    for (const { method, path, url } of await securedRoutes()) {
      const res = await t.request({ method, url, key: suspended.key });
      if (OPEN_WHEN_SUSPENDED.has(`${method} ${path}`)) {
        expect(res.statusCode, `${method} ${path} ${res.body}`).not.toBe(403);
        continue;
      }
      expect([res.statusCode, res.json()], `${method} ${path}`).toEqual([403, { error: 'account is suspended' }]);
    }
  });
});

describe('Limits: page size 1-100, offset 0-10000 on transactions and the retry queue', () => {
  const LIMIT = { error: 'limit must be an integer between 1 and 100' };
  const OFFSET = { error: 'offset must be an integer between 0 and 10000' };

  it.each(['/v1/transactions', '/v1/retry-queue'])('%s', async (base) => {
    const get = (q: string) => answer(t.request({ method: 'GET', url: `${base}?${q}`, key }));
    for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'limit=2.5', 'limit=']) expect(await get(q), q).toEqual([400, LIMIT]);
    for (const q of ['offset=-1', 'offset=10001', 'offset=x', 'offset=0.5']) expect(await get(q), q).toEqual([400, OFFSET]);
    expect(await get('limit=1&offset=0')).toEqual([200, { data: [], total: 0, limit: 1, offset: 0 }]);
    expect(await get('limit=100&offset=10000')).toEqual([200, { data: [], total: 0, limit: 100, offset: 10000 }]);
    expect(await get('')).toEqual([200, { data: [], total: 0, limit: 20, offset: 0 }]);
  });

  it('every status filter value the spec lists is accepted', async () => {
    for (const s of ['pending', 'processing', 'success', 'failed', 'failed_permanent', 'pending_lroe', 'cancelled']) {
      expect((await t.request({ method: 'GET', url: `/v1/transactions?status=${s}`, key })).statusCode, s).toBe(200);
    }
    for (const s of ['pending', 'processing', 'completed', 'failed', 'dead']) {
      expect((await t.request({ method: 'GET', url: `/v1/retry-queue?status=${s}`, key })).statusCode, s).toBe(200);
    }
  });
});

describe('Limits: the upper bounds themselves are accepted', () => {
  it('account name of exactly 100 characters', async () => {
    const res = await t.request({
      method: 'POST', url: '/v1/accounts', payload: { name: 'n'.repeat(100), billing_email: `hundred-${ANY_ID}@example.com` }, remoteAddress: '10.9.9.9',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().account.name).toHaveLength(100);
  });

  it('a telemetry batch of exactly 100 data points', async () => {
    const now = Date.now();
    const data_points = Array.from({ length: 100 }, (_, i) => ({
      timestamp: new Date(now - i * 60_000).toISOString(), transactions_total: 1, transactions_failed: 0, queue_pending: 0, queue_dead: 0,
      storage_used_bytes: 1, storage_total_bytes: 10, adapter_versions: { alpha: '1.0.0' },
    }));
    const res = await t.request({ method: 'POST', url: '/v1/agents/pos-100/telemetry', key, payload: { data_points } });
    expect([res.statusCode, res.json().accepted]).toEqual([202, 100]);
  });
});

describe('Messages by condition: transaction request', () => {
  let loc: string;
  beforeAll(async () => {
    loc = await createLocation(t, key, 'fr-nf525');
  });

  it('items must be a non-empty array: for items missing, null, not an array, or with an entry that is not an object (the empty array is in transactions.test.ts)', async () => {
    // An entry that is not a line (a number, a string, null, an array) is an invalid items too (spec: "empty or invalid items").
    for (const items of [undefined, null, 'x', {}, 3, [1], ['x'], [null], [[]]]) {
      const body = JSON.parse(JSON.stringify(saleBody(loc, { items })));
      expect(await answer(createTx(t, key, body)), JSON.stringify(items)).toEqual([400, { error: 'items must be a non-empty array' }]);
    }
  });

  it('pretax_amount + tax_amount must equal total_amount: one minor unit off is already a mismatch (integer minor units, no 0.01 slack)', async () => {
    for (const over of [{ total_amount: 2047 }, { total_amount: 2045 }, { tax_amount: 247 }]) {
      expect(await answer(createTx(t, key, saleBody(loc, over))), JSON.stringify(over)).toEqual([400, { error: 'pretax_amount + tax_amount must equal total_amount' }]);
    }
  });

  it('X-Svc-Sandbox is for test keys only (400 with a live key on a live-enabled server)', async () => {
    const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'live', environment: 'live' } })).json().key as string;
    const liveServer = await startTestApp({ db: t.db, liveEnabled: true, limiter: unlimitedLimiter() });
    try {
      const res = await liveServer.request({ method: 'POST', url: '/v1/transactions', key: live, payload: saleBody(loc), headers: { 'x-svc-sandbox': 'authority' } });
      expect([res.statusCode, res.json()]).toEqual([400, { error: 'X-Svc-Sandbox is only accepted with test keys' }]);
    } finally {
      await liveServer.close();
    }
  });
});

describe('409 transaction cannot be cancelled: the statuses of the spec\'s "no change" row not asserted elsewhere', () => {
  const CANNOT = { error: 'transaction cannot be cancelled' };
  const cancel = (id: string, k = key) => answer(t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key: k }));
  const { certificate_id: _stubbed, ...ticketBai } = configs.ticketbai;

  /** A TicketBAI sale (sandbox stub) of a fresh account (each its own chain), once the authority has answered. */
  async function settledSale(outcome: string) {
    const { key: k } = await t.signup();
    const loc = await createLocation(t, k, 'es-ticketbai', { name: 'Bar Gipuzkoa', tax_id: ES_NIF, country_config: ticketBai });
    const sale = await createdTx(t, k, saleBody(loc, { metadata: { sandbox_outcome: outcome } }));
    await t.worker.drain();
    return { k, id: sale.id as string };
  }

  it.each([['error:500', 'failed'], ['reject:1234', 'failed_permanent']])('%s: %s', async (outcome, status) => {
    const { k, id } = await settledSale(outcome);
    expect((await getTx(t, k, id)).status).toBe(status);
    expect(await cancel(id, k)).toEqual([409, CANNOT]);
    expect(await getTx(t, k, id)).toMatchObject({ status, cancellation_transaction_id: null });
  });

  it('a cancellation itself is not cancellable', async () => {
    const sale = await createdTx(t, key, saleBody(await createLocation(t, key, 'fr-nf525')));
    const c = await t.request({ method: 'POST', url: `/v1/transactions/${sale.id}/cancel`, key });
    expect(c.statusCode, c.body).toBe(201);
    expect(await cancel(c.json().id)).toEqual([409, CANNOT]);
  });
});
