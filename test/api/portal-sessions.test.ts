import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountsRepo } from '../../src/store/repos/accounts-repo.ts';
import { ManualClock, startTestApp, type TestApp } from '../support/harness.ts';

/*
 * Portal sessions: a root key opens a `pss_` token (1 h) that only the routes marked
 * `config.portal` accept. Two nodes share one store: an ending on one is seen on the other.
 */
let t: TestApp;
let other: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-01T08:00:00.000Z');
  t = await startTestApp({ clock });
  other = await startTestApp({ clock, db: t.db });
});
afterAll(async () => {
  await other.close();
  await t.close();
});

const open = async (key: string) => {
  const res = await t.request({ method: 'POST', url: '/v1/portal/sessions', key });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; token: string; created_at: string; expires_at: string };
};
const consents = (app: TestApp, key: string) => app.request({ method: 'GET', url: '/v1/account/consents', key });

describe('POST /v1/portal/sessions', () => {
  it('a root key opens a 1-hour pss_ session; the token is stored only as a hash', async () => {
    const { key } = await t.signup();
    const s = await open(key);
    expect(s.token).toMatch(/^pss_[0-9A-Za-z]{32}$/);
    expect(s.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.created_at).toBe(clock.now().toISOString());
    expect(new Date(s.expires_at).getTime() - new Date(s.created_at).getTime()).toBe(3600_000);
    const row = (await t.db.query<Record<string, unknown>>('SELECT * FROM portal_sessions WHERE id = $1', [s.id])).rows[0]!;
    expect(JSON.stringify(row)).not.toContain(s.token.slice(4));
  });

  it('403 for a restricted key, even one holding account:write', async () => {
    const { key } = await t.signup();
    const restricted = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { permissions: ['account:read', 'account:write'] } })).json();
    const res = await t.request({ method: 'POST', url: '/v1/portal/sessions', key: restricted.key });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'insufficient permission: a portal session can only be opened with a root key' });
  });

  it('401 without a key', async () => {
    const res = await t.request({ method: 'POST', url: '/v1/portal/sessions' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'missing or invalid Authorization header' });
  });
});

describe('what a portal session may call', () => {
  it('the portal endpoints (consents) accept it, as they accept the root key', async () => {
    const { key } = await t.signup();
    const { token } = await open(key);
    const granted = await t.request({ method: 'POST', url: '/v1/account/consents', key: token, payload: { type: 'marketing', version: 'v3' } });
    expect(granted.statusCode, granted.body).toBe(201);
    const list = await consents(t, token);
    expect(list.statusCode).toBe(200);
    expect(list.headers['x-ratelimit-limit']).toBeDefined();
    expect(list.json().data.map((c: { id: string }) => c.id)).toContain(granted.json().id);
    // The same account's data through the root key.
    expect((await consents(t, key)).json().data).toEqual(list.json().data);
    const revoked = await t.request({ method: 'DELETE', url: `/v1/account/consents/${granted.json().id}`, key: token });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ active: false });
  });

  it('the subscription endpoints accept it too (create, read, change)', async () => {
    const { key } = await t.signup();
    const { token } = await open(key);
    expect((await t.request({ method: 'GET', url: '/v1/subscriptions', key: token })).statusCode).toBe(404);
    const made = await t.request({ method: 'POST', url: '/v1/subscriptions', key: token, payload: { company_name: 'Café Lisboa', billing_email: 'billing@example.com', payment_method_id: 'pm_card_visa', merchant_count: 3 } });
    expect([made.statusCode, made.body]).toEqual([201, expect.any(String)]);
    const read = await t.request({ method: 'GET', url: '/v1/subscriptions', key: token });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ merchant_count: 3 });
    // And the account status, which shows the subscribed tier.
    const status = await t.request({ method: 'GET', url: '/v1/account/status', key: token });
    expect(status.statusCode, status.body).toBe(200);
  });

  it('every other endpoint refuses it with 401: keys, locations, transactions, tokens, new sessions', async () => {
    const { key } = await t.signup();
    const { token } = await open(key);
    for (const [method, url, payload] of [
      ['GET', '/v1/locations', undefined], ['GET', '/v1/api-keys', undefined], ['POST', '/v1/api-keys', {}],
      ['GET', '/v1/transactions', undefined], ['POST', '/v1/portal/sessions', undefined],
      ['POST', '/management/v1/tokens', { agent_id: 'a', country: 'ES', environment: 'sandbox' }], ['GET', '/management/v1/keys', undefined],
    ] as const) {
      const res = await t.request({ method, url, key: token, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.json()).toEqual({ error: 'a portal session is accepted only by portal endpoints: use an API key' });
    }
  });
});

describe('ending a session', () => {
  it('expires after an hour (401)', async () => {
    const { key } = await t.signup();
    const { token } = await open(key);
    clock.advance(3600_000 - 1000);
    expect((await consents(t, token)).statusCode).toBe(200);
    clock.advance(1000);
    const res = await consents(t, token);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'portal session has expired' });
    expect((await consents(t, key)).statusCode).toBe(200);
  });

  it('log-out ends it at once, on every node (401 revoked)', async () => {
    const { key } = await t.signup();
    const { token } = await open(key);
    expect((await consents(other, token)).statusCode).toBe(200);
    const out = await t.request({ method: 'DELETE', url: '/v1/portal/sessions/current', key: token });
    expect(out.statusCode, out.body).toBe(204);
    for (const node of [t, other]) {
      const res = await consents(node, token);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'portal session has been revoked' });
    }
    // A key has no session to end.
    const byKey = await t.request({ method: 'DELETE', url: '/v1/portal/sessions/current', key });
    expect(byKey.statusCode).toBe(400);
    expect(byKey.json()).toEqual({ error: 'only a portal session can end itself: send its pss_ token' });
  });

  it('revoking (or rotating) the root key that opened it ends it (401 revoked)', async () => {
    const { key } = await t.signup();
    const second = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'portal' } })).json();
    const third = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'portal 2' } })).json();
    const viaSecond = await open(second.key);
    const viaThird = await open(third.key);
    const viaFirst = await open(key);
    expect((await t.request({ method: 'DELETE', url: `/v1/api-keys/${second.id}`, key })).statusCode).toBe(204);
    expect((await t.request({ method: 'POST', url: `/v1/api-keys/${third.id}/rotate`, key })).statusCode).toBe(200);
    for (const s of [viaSecond, viaThird]) {
      const res = await consents(other, s.token);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'portal session has been revoked' });
    }
    expect((await consents(other, viaFirst.token)).statusCode).toBe(200);
  });

  it('401 for an unknown or malformed pss_ token', async () => {
    const unknown = await consents(t, `pss_${'A'.repeat(32)}`);
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toEqual({ error: 'invalid portal session' });
    const malformed = await consents(t, 'pss_short');
    expect(malformed.statusCode).toBe(401);
    expect(malformed.json()).toEqual({ error: 'invalid portal session format' });
    // A real session's lookup handle with another secret: the hash decides.
    const { key } = await t.signup();
    const { token } = await open(key);
    const forged = token.slice(0, 12) + (token.endsWith('a') ? 'b' : 'a').repeat(24);
    expect((await consents(t, forged)).json()).toEqual({ error: 'invalid portal session' });
  });

  it('a live key\'s session needs live mode, like the key (403)', async () => {
    const liveNode = await startTestApp({ clock, db: t.db, liveEnabled: true });
    try {
      const { key } = await liveNode.signup();
      const live = (await liveNode.request({ method: 'POST', url: '/v1/api-keys', key, payload: { environment: 'live' } })).json();
      const s = await liveNode.request({ method: 'POST', url: '/v1/portal/sessions', key: live.key });
      expect(s.statusCode, s.body).toBe(201);
      expect((await consents(liveNode, s.json().token)).statusCode).toBe(200);
      const off = await consents(t, s.json().token);
      expect(off.statusCode).toBe(403);
      expect(off.json()).toEqual({ error: 'live mode is not enabled' });
    } finally {
      await liveNode.close();
    }
  });

  it('a suspended account\'s session gets 403 like its keys, except on its way back (subscribing) and its consents', async () => {
    const { key, accountId } = await t.signup();
    const { token } = await open(key);
    await accountsRepo.setStatus(t.db, accountId, 'suspended', 'payment failed', clock.now());
    const res = await t.request({ method: 'PATCH', url: '/v1/subscriptions', key: token, payload: { merchant_count: 2 } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'account is suspended' });
    expect((await consents(t, token)).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/v1/subscriptions', key: token })).statusCode).toBe(404);
    // A new session can still be opened (the portal is where the merchant subscribes again).
    expect((await t.request({ method: 'POST', url: '/v1/portal/sessions', key })).statusCode).toBe(201);
    // Cancelled is final: no way back through the API. (The session is read from the store at
    // each request; the key's cache hears the change through the change feed, a moment later.)
    await accountsRepo.setStatus(t.db, accountId, 'cancelled', null, clock.now());
    expect((await t.request({ method: 'GET', url: '/v1/subscriptions', key: token })).json()).toEqual({ error: 'account is cancelled' });
    expect((await t.request({ method: 'POST', url: '/v1/subscriptions', key: token, payload: {} })).json()).toEqual({ error: 'account is cancelled' });
  });
});
