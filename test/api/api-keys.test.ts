import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function createKey(key: string, payload: object) {
  return t.request({ method: 'POST', url: '/v1/api-keys', key, payload });
}
const get = (key: string, url = '/v1/api-keys') => t.request({ method: 'GET', url, key });

describe('API keys', () => {
  it('creates root and restricted keys; lists metadata with last_used_at and revoked_at, newest first', async () => {
    const { key, keyId } = await t.signup();
    const restricted = await createKey(key, { name: 'pos', permissions: ['transactions:write', 'locations:read', 'country:ES'] });
    expect(restricted.statusCode).toBe(201);
    expect(restricted.json()).toMatchObject({ name: 'pos', environment: 'test', permissions: ['transactions:write', 'locations:read', 'country:ES'] });
    const root = await createKey(key, {});
    expect(root.statusCode).toBe(201);
    expect(root.json()).toMatchObject({ permissions: null, environment: 'test', name: 'API key' });

    const list = await get(key);
    expect(list.statusCode).toBe(200);
    const body = list.json();
    expect(body).toMatchObject({ total: 3, limit: 20, offset: 0 });
    expect(body.data.map((k: { id: string }) => k.id)).toEqual([root.json().id, restricted.json().id, keyId]);
    for (const k of body.data) {
      expect(Object.keys(k).sort()).toEqual(['created_at', 'environment', 'id', 'key_last4', 'key_prefix', 'last_used_at', 'name', 'permissions', 'revoked_at']);
    }
    expect(body.data[2].last_used_at).not.toBeNull(); // the calling key was used

    const page = await get(key, '/v1/api-keys?limit=1&offset=1');
    expect(page.json()).toMatchObject({ total: 3, limit: 1, offset: 1, data: [{ id: restricted.json().id }] });
  });

  it('400 for unknown permissions, an empty list, a bad environment or name', async () => {
    const { key } = await t.signup();
    expect((await createKey(key, { permissions: ['locations:read', 'god_mode'] })).json()).toEqual({ error: 'unknown permission: god_mode' });
    expect((await createKey(key, { permissions: ['country:DE'] })).json()).toEqual({ error: 'unknown permission: country:DE' });
    expect((await createKey(key, { permissions: [] })).json()).toEqual({ error: 'permissions must not be empty (omit it for a root key)' });
    expect((await createKey(key, { environment: 'prod' })).json()).toEqual({ error: 'environment must be "test" or "live"' });
    expect((await createKey(key, { name: '' })).json()).toEqual({ error: 'name must be 1-100 characters' });
    expect((await createKey(key, { permissions: 'locations:read' })).json()).toEqual({ error: 'permissions must be an array of permission names' });
  });

  it('a key name is trimmed; blank is a 400 like an empty one (it was stored as "   ")', async () => {
    const { key } = await t.signup();
    for (const name of ['   ', '\t\n', '\u00a0']) {
      const res = await createKey(key, { name });
      expect([res.statusCode, res.json()]).toEqual([400, { error: 'name must be 1-100 characters' }]);
    }
    const padded = await createKey(key, { name: '  POS till 1  ' });
    expect([padded.statusCode, padded.json().name]).toEqual([201, 'POS till 1']);
    // 100 characters are code points: 100 emoji fit.
    expect((await createKey(key, { name: '🔑'.repeat(100) })).statusCode).toBe(201);
    expect((await createKey(key, { name: '🔑'.repeat(101) })).json()).toEqual({ error: 'name must be 1-100 characters' });
    const listed = (await t.request({ method: 'GET', url: '/v1/api-keys?limit=100', key })).json().data.map((k: { name: string }) => k.name);
    expect(listed).not.toContain('   ');
  });

  it('403 privilege escalation: a restricted key cannot grant more than it holds', async () => {
    const { key } = await t.signup();
    const mgr = (await createKey(key, { permissions: ['api_keys:read', 'api_keys:write', 'locations:read', 'country:ES'] })).json().key;
    const escalation = { error: 'privilege escalation: a key may only manage keys with equal or lesser permissions' };

    for (const payload of [
      {}, // root
      { permissions: ['locations:write', 'country:ES'] }, // an action it lacks
      { permissions: ['locations:read'] }, // no country scope = every country
      { permissions: ['locations:read', 'country:IT'] }, // another country
      { permissions: ['locations:read', 'country:ES'], environment: 'live' }, // another environment
    ]) {
      const res = await createKey(mgr, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(403);
      expect(res.json()).toEqual(escalation);
    }
    const lesser = await createKey(mgr, { permissions: ['locations:read', 'country:ES'] });
    expect(lesser.statusCode).toBe(201);

    // Nor may it revoke or rotate a more privileged key (the root key).
    const rootId = (await get(key)).json().data.find((k: { permissions: unknown }) => k.permissions === null).id;
    expect((await t.request({ method: 'DELETE', url: `/v1/api-keys/${rootId}`, key: mgr })).json()).toEqual(escalation);
    expect((await t.request({ method: 'POST', url: `/v1/api-keys/${rootId}/rotate`, key: mgr })).json()).toEqual(escalation);
  });

  it('403 when a restricted key lacks the route permission', async () => {
    const { key } = await t.signup();
    const reader = (await createKey(key, { permissions: ['locations:read'] })).json().key;
    const res = await get(reader);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'insufficient permission: api_keys:read required' });
    expect((await createKey(reader, {})).json()).toEqual({ error: 'insufficient permission: api_keys:write required' });
    expect((await get(reader, '/v1/locations')).statusCode).toBe(200);
  });

  it('revocation takes effect at once; revoked keys stay listed; a second revoke is 404', async () => {
    const { key } = await t.signup();
    const other = (await createKey(key, { name: 'temp' })).json();
    expect((await get(other.key)).statusCode).toBe(200);

    const del = await t.request({ method: 'DELETE', url: `/v1/api-keys/${other.id}`, key });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    const after = await get(other.key);
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ error: 'API key has been revoked' });

    const listed = (await get(key)).json().data.find((k: { id: string }) => k.id === other.id);
    expect(listed.revoked_at).not.toBeNull();
    const again = await t.request({ method: 'DELETE', url: `/v1/api-keys/${other.id}`, key });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error: 'API key not found' });
    expect((await t.request({ method: 'DELETE', url: '/v1/api-keys/nope', key })).statusCode).toBe(404);
  });

  it('rotation: a new key with the same name, environment and permissions; the old one fails at once', async () => {
    const { key } = await t.signup();
    const old = (await createKey(key, { name: 'till 3', permissions: ['locations:read', 'country:FR'] })).json();
    const rot = await t.request({ method: 'POST', url: `/v1/api-keys/${old.id}/rotate`, key });
    expect(rot.statusCode).toBe(200);
    const fresh = rot.json();
    expect(fresh.id).not.toBe(old.id);
    expect(fresh.key).toMatch(/^svc_test_[0-9A-Za-z]{32}$/);
    expect(fresh).toMatchObject({ name: 'till 3', environment: 'test', permissions: ['locations:read', 'country:FR'] });
    expect((await get(old.key, '/v1/locations')).json()).toEqual({ error: 'API key has been revoked' });
    expect((await get(fresh.key, '/v1/locations')).statusCode).toBe(200);
    // Rotating the revoked key again is 404.
    expect((await t.request({ method: 'POST', url: `/v1/api-keys/${old.id}/rotate`, key })).statusCode).toBe(404);
  });

  it('two concurrent rotations of one key: one succeeds, the other is 404, one new key exists', async () => {
    const { key } = await t.signup();
    const old = (await createKey(key, { name: 'race' })).json();
    const [a, b] = await Promise.all([0, 1].map(() => t.request({ method: 'POST', url: `/v1/api-keys/${old.id}/rotate`, key })));
    expect([a!.statusCode, b!.statusCode].sort()).toEqual([200, 404]);
    const names = (await get(key)).json().data.filter((k: { name: string }) => k.name === 'race');
    expect(names).toHaveLength(2); // the old (revoked) and exactly one new
  });

  it('a key cannot revoke or rotate itself (400)', async () => {
    const { key, keyId } = await t.signup();
    const del = await t.request({ method: 'DELETE', url: `/v1/api-keys/${keyId}`, key });
    expect(del.statusCode).toBe(400);
    expect(del.json()).toEqual({ error: 'cannot revoke the calling key' });
    const rot = await t.request({ method: 'POST', url: `/v1/api-keys/${keyId}/rotate`, key });
    expect(rot.statusCode).toBe(400);
    expect(rot.json()).toEqual({ error: 'cannot rotate the calling key' });
    // Its id in capitals names the same key (PostgreSQL's uuid ignores the case).
    for (const [method, url, verb] of [['DELETE', `/v1/api-keys/${keyId.toUpperCase()}`, 'revoke'], ['POST', `/v1/api-keys/${keyId.toUpperCase()}/rotate`, 'rotate']] as const) {
      const res = await t.request({ method, url, key });
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toEqual({ error: `cannot ${verb} the calling key` });
    }
    expect((await get(key)).statusCode).toBe(200);
  });

  it('another key\'s id in capitals is that key (revoked, then 404 either way)', async () => {
    const { key } = await t.signup();
    const other = (await createKey(key, { name: 'caps' })).json();
    expect((await t.request({ method: 'DELETE', url: `/v1/api-keys/${other.id.toUpperCase()}`, key })).statusCode).toBe(204);
    expect((await t.request({ method: 'DELETE', url: `/v1/api-keys/${other.id}`, key })).statusCode).toBe(404);
  });
});
