import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountsRepo } from '../../src/store/repos/accounts-repo.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const status = (headers: Record<string, string>) => t.request({ method: 'GET', url: '/v1/account/status', headers });

describe('authentication', () => {
  it('401 for a missing or malformed Authorization header', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: '' }, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, { authorization: 'Bearer a b' }]) {
      const res = await status(headers);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'missing or invalid Authorization header' });
    }
  });

  it('401 invalid API key format for a token that is not svc_test_/svc_live_ + 32 base62', async () => {
    for (const token of ['sk_test_abc', 'svc_test_short', 'svc_prod_' + 'a'.repeat(32), 'svc_test_' + 'a'.repeat(31) + '!', 'svc_test_' + 'a'.repeat(33)]) {
      const res = await status({ authorization: `Bearer ${token}` });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'invalid API key format' });
    }
  });

  it('401 for a well-formed key that does not exist, including one sharing a real key\'s lookup handle', async () => {
    const { key } = await t.signup();
    const forged = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const token of ['svc_test_' + 'Z'.repeat(32), forged]) {
      const res = await status({ authorization: `Bearer ${token}` });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'invalid API key' });
    }
    // A test key's secret part presented under the live prefix is a different key.
    expect((await status({ authorization: `Bearer ${key.replace('svc_test_', 'svc_live_')}` })).statusCode).toBe(401);
  });

  it('accepts the Bearer scheme case-insensitively', async () => {
    const { key } = await t.signup();
    expect((await status({ authorization: `bearer ${key}` })).statusCode).toBe(200);
  });

  it('403 for a suspended or cancelled account, except on its status page', async () => {
    const { key, accountId } = await t.signup();
    // Written behind the service's back: its caches hear of it through the change feed.
    await accountsRepo.setStatus(t.db, accountId, 'suspended', 'payment failed', new Date());
    await t.rt.changes.sync();
    const blocked = await t.request({ method: 'GET', url: '/v1/locations', key });
    expect(blocked.statusCode).toBe(403);
    expect(blocked.json()).toEqual({ error: 'account is suspended' });
    const st = await t.request({ method: 'GET', url: '/v1/account/status', key });
    expect(st.statusCode).toBe(200);
    expect(st.json()).toMatchObject({ status: 'suspended', enforcement: { state: 'suspended', reason: 'payment failed' } });

    await accountsRepo.setStatus(t.db, accountId, 'cancelled', null, new Date());
    await t.rt.changes.sync();
    expect((await t.request({ method: 'GET', url: '/v1/api-keys', key })).json()).toEqual({ error: 'account is cancelled' });
    await accountsRepo.setStatus(t.db, accountId, 'active', null, new Date());
    await t.rt.changes.sync();
    expect((await t.request({ method: 'GET', url: '/v1/api-keys', key })).statusCode).toBe(200);
  });

  it('live keys: 403 live mode is not enabled unless the server enables it; environment follows the prefix', async () => {
    const { key } = await t.signup();
    const created = await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } });
    expect(created.statusCode).toBe(201);
    const live = created.json().key as string;
    expect(live).toMatch(/^svc_live_[0-9A-Za-z]{32}$/);
    expect(created.json()).toMatchObject({ environment: 'live', key_prefix: 'svc_live_' });

    const res = await t.request({ method: 'GET', url: '/v1/locations', key: live });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'live mode is not enabled' });

    const liveServer = await startTestApp({ db: t.db, liveEnabled: true });
    try {
      const ok = await liveServer.request({ method: 'GET', url: '/v1/account/status', key: live });
      expect(ok.statusCode).toBe(200);
      // Live traffic draws from the tier's bucket, not the sandbox's.
      expect(ok.json().rate_limit).toEqual({ requests_per_minute: 1000, burst: 2000 });
      expect(ok.headers['x-ratelimit-limit']).toBe('1000');
    } finally {
      await liveServer.close();
    }
  });

  it('public routes need no key', async () => {
    expect((await t.request({ method: 'GET', url: '/health' })).json()).toMatchObject({ status: 'ok', database: 'ok' });
    expect((await t.request({ method: 'GET', url: '/version' })).json()).toMatchObject({ api_version: '1.0.0' });
    expect((await t.request({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
  });

  it('stores only a keyed hash of each key', async () => {
    const { key, keyId } = await t.signup();
    const row = (await t.db.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [keyId])).rows[0]!;
    expect(JSON.stringify(row)).not.toContain(key.slice(9));
    expect(Buffer.from(row.key_hash as Uint8Array)).toHaveLength(32);
  });
});
