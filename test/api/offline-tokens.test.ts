import fs from 'node:fs';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountsRepo } from '../../src/store/repos/accounts-repo.ts';
import {
  createOfflineTokenService, JWKS_MAX_AGE_S, KEY_PUBLISHED_AHEAD_MS, RETIRED_KEY_PUBLISHED_MS, ROTATE_AFTER_MS, TOKEN_ISSUER, TOKEN_TTL_MS,
} from '../../src/services/offline-tokens.ts';
import { ManualClock, startTestApp, type TestApp } from '../support/harness.ts';

/*
 * Offline tokens (POST /management/v1/tokens) and their public keys (GET
 * /management/v1/keys): verified here as the embedded engine does, with the published
 * JWKS only — nothing of the service's private state.
 */
const DAY = 24 * 3600_000;
let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-01T08:00:00.000Z');
  t = await startTestApp({ clock, liveEnabled: true });
});
afterAll(() => t.close());

const body = { agent_id: 'pos-42', country: 'ES', environment: 'sandbox' };
const provision = (key: string | undefined, payload: object = body) => t.request({ method: 'POST', url: '/management/v1/tokens', key, payload });
const jwks = async (key: string) => {
  const res = await t.request({ method: 'GET', url: '/management/v1/keys', key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { keys: jose.JWK[] };
};
/** What the engine does offline: the JWKS it fetched, the token, the time on its own clock. */
const verify = async (token: string, set: { keys: jose.JWK[] }) =>
  jose.jwtVerify(token, jose.createLocalJWKSet(set as jose.JSONWebKeySet), { issuer: TOKEN_ISSUER, algorithms: ['EdDSA'], currentDate: clock.now() });

async function newKey(root: string, payload: object) {
  const res = await t.request({ method: 'POST', url: '/v1/api-keys', key: root, payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; key: string };
}

describe('POST /management/v1/tokens', () => {
  it('signs an Ed25519 JWS with the DECISIONS claims, verifiable with the published key only', async () => {
    const { key, keyId, accountId } = await t.signup();
    const res = await provision(key);
    expect(res.statusCode, res.body).toBe(200);
    const { token, expires_at } = res.json();
    expect(new Date(expires_at).getTime()).toBe(clock.now().getTime() + 30 * DAY);

    const set = await jwks(key);
    expect(set.keys.length).toBeGreaterThanOrEqual(1);
    for (const k of set.keys) {
      expect(k).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
      expect(k).not.toHaveProperty('d'); // never the private part
    }
    const { payload, protectedHeader } = await verify(token, set);
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', typ: 'JWT' });
    expect(set.keys.map((k) => k.kid)).toContain(protectedHeader.kid);
    expect(payload).toMatchObject({
      iss: TOKEN_ISSUER, sub: accountId, account_id: accountId, key_id: keyId,
      environment: 'sandbox', countries: ['ES'], agent_id: 'pos-42',
      iat: Math.floor(clock.now().getTime() / 1000), exp: Math.floor(clock.now().getTime() / 1000) + 30 * 86400,
    });
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);

    // A changed claim breaks the signature: the engine cannot be talked into more countries.
    const [h, p, s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...payload, countries: ['ES', 'IT'] })).toString('base64url');
    await expect(verify(`${h}.${forged}.${s}`, set)).rejects.toThrow(/signature/i);
    expect(p).not.toBe(forged);
    // Another key (say, another installation's) does not verify it.
    const other = await jose.generateKeyPair('EdDSA', { extractable: true });
    const otherJwk = { ...(await jose.exportJWK(other.publicKey)), kid: protectedHeader.kid, alg: 'EdDSA' };
    await expect(verify(token, { keys: [otherJwk] })).rejects.toThrow(/signature/i);
    // It stops verifying once expired.
    const later = await jose.jwtVerify(token, jose.createLocalJWKSet(set as jose.JSONWebKeySet), { currentDate: new Date(clock.now().getTime() + 30 * DAY + 1000) }).catch((e) => e);
    expect(later).toBeInstanceOf(jose.errors.JWTExpired);
  });

  it('keeps the signing key sealed with MASTER_KEY, the public key in clear', async () => {
    const { key } = await t.signup();
    expect((await provision(key)).statusCode).toBe(200);
    const rows = (await t.db.query<{ kid: string; key_material: string; public_jwk: string }>('SELECT kid, key_material, public_jwk FROM token_signing_keys')).rows;
    expect(rows.length).toBeGreaterThanOrEqual(1);
    for (const r of rows) {
      expect(r.key_material).toMatch(/^sealed:v1:/);
      expect(r.key_material).not.toContain('PRIVATE KEY');
      expect(JSON.parse(r.public_jwk)).not.toHaveProperty('d');
      expect(r.kid).toBe(await jose.calculateJwkThumbprint(JSON.parse(r.public_jwk)));
    }
  });

  it('a live key provisions production; the prefix must match the environment (403)', async () => {
    const { key } = await t.signup();
    const live = await newKey(key, { name: 'live', environment: 'live' });
    const ok = await provision(live.key, { ...body, environment: 'production', country: 'it' });
    expect(ok.statusCode, ok.body).toBe(200);
    const { payload } = await verify(ok.json().token, await jwks(live.key));
    expect(payload).toMatchObject({ environment: 'production', countries: ['IT'], key_id: live.id });

    const testForProduction = await provision(key, { ...body, environment: 'production' });
    expect(testForProduction.statusCode).toBe(403);
    expect(testForProduction.json()).toEqual({ error: 'API key does not match environment production: production needs a svc_live_ key' });
    const liveForSandbox = await provision(live.key, { ...body, environment: 'sandbox' });
    expect(liveForSandbox.statusCode).toBe(403);
    expect(liveForSandbox.json()).toEqual({ error: 'API key does not match environment sandbox: sandbox needs a svc_test_ key' });
  });

  it('403 when the key lacks the country or the permission to write transactions', async () => {
    const { key } = await t.signup();
    const italyOnly = await newKey(key, { permissions: ['transactions:write', 'country:IT'] });
    const es = await provision(italyOnly.key);
    expect(es.statusCode).toBe(403);
    expect(es.json()).toEqual({ error: 'API key is not allowed to act in country ES' });
    expect((await provision(italyOnly.key, { ...body, country: 'IT' })).statusCode).toBe(200);

    const readOnly = await newKey(key, { permissions: ['transactions:read'] });
    const denied = await provision(readOnly.key);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toEqual({ error: 'insufficient permission: transactions:write required' });
    // Any valid key may read the public keys.
    expect((await t.request({ method: 'GET', url: '/management/v1/keys', key: readOnly.key })).statusCode).toBe(200);
  });

  it('401 for a missing, malformed, unknown or revoked key; 403 for a suspended account', async () => {
    const { key, accountId } = await t.signup();
    const missing = await provision(undefined);
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toEqual({ error: 'missing or invalid Authorization header' });
    const malformed = await provision('svc_test_short');
    expect(malformed.json()).toEqual({ error: 'invalid API key format' });
    const unknown = await provision(`svc_test_${'A'.repeat(32)}`);
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toEqual({ error: 'invalid API key' });
    expect((await t.request({ method: 'GET', url: '/management/v1/keys' })).statusCode).toBe(401);

    const spare = await newKey(key, { name: 'engine' });
    expect((await t.request({ method: 'DELETE', url: `/v1/api-keys/${spare.id}`, key })).statusCode).toBe(204);
    const revoked = await provision(spare.key);
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json()).toEqual({ error: 'API key has been revoked' });

    await accountsRepo.setStatus(t.db, accountId, 'suspended', 'payment failed', clock.now());
    await t.rt.changes.sync();
    const suspended = await provision(key);
    expect(suspended.statusCode).toBe(403);
    expect(suspended.json()).toEqual({ error: 'account is suspended' });
  });

  it('400 naming the field for a bad body', async () => {
    const { key } = await t.signup();
    const cases: Array<[object, string]> = [
      [{ country: 'ES', environment: 'sandbox' }, 'agent_id is required (1-255 characters)'],
      [{ ...body, agent_id: '' }, 'agent_id is required (1-255 characters)'],
      [{ ...body, agent_id: 'x'.repeat(256) }, 'agent_id is required (1-255 characters)'],
      [{ agent_id: 'a', environment: 'sandbox' }, 'country is required (ISO 3166-1 alpha-2, e.g. ES)'],
      [{ ...body, country: 'XX' }, 'country must be one of ES, IT, FR, PT, GR'],
      [{ agent_id: 'a', country: 'ES' }, 'environment must be "sandbox" or "production"'],
      [{ ...body, environment: 'test' }, 'environment must be "sandbox" or "production"'],
      [{ ...body, agent_id: 42 }, 'agent_id is required (1-255 characters)'],
    ];
    for (const [payload, error] of cases) {
      const res = await provision(key, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json(), JSON.stringify(payload)).toEqual({ error });
    }
    expect((await provision(key, { ...body, agent_id: 'x'.repeat(255) })).statusCode).toBe(200);
  });
});

describe('signing key rotation', () => {
  it('a new key signs; old tokens keep verifying until they expire; the JWKS lists both, then drops the old', async () => {
    const { key } = await t.signup();
    const first = (await provision(key)).json().token as string;
    const kid1 = jose.decodeProtectedHeader(first).kid;

    clock.advance(DAY);
    // An operator rotates (another process on the same store).
    const { kid: kid2 } = await createOfflineTokenService(t.rt.deps).rotate();
    expect(kid2).not.toBe(kid1);
    clock.advance(2 * 60_000);
    const second = (await provision(key)).json().token as string;
    expect(jose.decodeProtectedHeader(second).kid).toBe(kid2);

    const both = await jwks(key);
    expect(both.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([kid1, kid2]));
    expect((await verify(first, both)).payload.agent_id).toBe('pos-42');
    expect((await verify(second, both)).payload.agent_id).toBe('pos-42');

    // 33 days after the first: its token has expired, and its key is no longer published.
    clock.advance(32 * DAY);
    const after = await jwks(key);
    expect(after.keys.map((k) => k.kid)).toContain(kid2);
    expect(after.keys.map((k) => k.kid)).not.toContain(kid1);
    await expect(verify(first, after)).rejects.toBeInstanceOf(jose.errors.JWKSNoMatchingKey);

    // The current key is due (90 days): its next use publishes the key that replaces it, and
    // it goes on signing until that key has been published for KEY_PUBLISHED_AHEAD_MS.
    clock.advance(90 * DAY);
    const third = (await provision(key)).json().token as string;
    expect(jose.decodeProtectedHeader(third).kid).toBe(kid2);
    const announced = await jwks(key);
    const kid3 = announced.keys[0]!.kid;
    expect(kid3).not.toBe(kid2);
    expect(announced.keys.map((k) => k.kid)).toContain(kid2);
    clock.advance(KEY_PUBLISHED_AHEAD_MS);
    const fourth = (await provision(key)).json().token as string;
    expect(jose.decodeProtectedHeader(fourth).kid).toBe(kid3);
    const latest = await jwks(key);
    expect(latest.keys[0]!.kid).toBe(kid3);
    expect((await verify(fourth, latest)).payload.environment).toBe('sandbox');
    expect((await verify(fourth, announced)).payload.environment).toBe('sandbox');
    expect((await verify(third, latest)).payload.environment).toBe('sandbox');
    const current = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM token_signing_keys WHERE retired_at IS NULL')).rows[0]!.n;
    expect(current).toBe(1);
  });

  it('a rotation by another process signs the very next token; after --drop-retired every new token verifies', async () => {
    const { key } = await t.signup();
    const before = (await provision(key)).json().token as string;
    const kidBefore = jose.decodeProtectedHeader(before).kid;
    // `rotate-token-key --drop-retired` from the operator's process, the clock where it is: no
    // node may go on signing with the key it dropped (the leak procedure).
    const { kid, dropped } = await createOfflineTokenService(t.rt.deps).rotate({ dropRetired: true });
    expect(dropped).toContain(kidBefore);
    const after = (await provision(key)).json().token as string;
    expect(jose.decodeProtectedHeader(after).kid).toBe(kid);
    const published = await jwks(key);
    expect(published.keys.map((k) => k.kid)).toEqual([kid]);
    expect((await verify(after, published)).payload.agent_id).toBe('pos-42');
    await expect(verify(before, published)).rejects.toBeInstanceOf(jose.errors.JWKSNoMatchingKey);
    // A plain rotation: the next token is the new key's too, and both verify.
    const { kid: next } = await createOfflineTokenService(t.rt.deps).rotate();
    const third = (await provision(key)).json().token as string;
    expect(jose.decodeProtectedHeader(third).kid).toBe(next);
    const both = await jwks(key);
    expect((await verify(after, both)).payload.environment).toBe('sandbox');
    expect((await verify(third, both)).payload.environment).toBe('sandbox');
  });

  it('the JWKS before any token: never empty; it publishes the key that then signs the first token, so a set cached before it verifies it', async () => {
    // A fresh installation: no token exchanged, no key yet.
    const fresh = await startTestApp({ clock });
    try {
      const { key } = await fresh.signup();
      expect((await fresh.db.query<{ n: number }>('SELECT count(*)::int AS n FROM token_signing_keys')).rows[0]!.n).toBe(0);
      const read = await fresh.request({ method: 'GET', url: '/management/v1/keys', key });
      expect(read.statusCode, read.body).toBe(200);
      expect(read.headers['cache-control']).toBe('public, max-age=300');
      const early = read.json() as { keys: jose.JWK[] };
      expect(early.keys).toHaveLength(1);
      // Concurrent readers (several nodes, several verifiers) publish one key between them.
      const sets = await Promise.all([0, 1, 2].map(async () => (await fresh.request({ method: 'GET', url: '/management/v1/keys', key })).json() as { keys: jose.JWK[] }));
      for (const set of sets) expect(set).toEqual(early);
      // The first token is signed with it: the set read before verifies it.
      const res = await fresh.request({ method: 'POST', url: '/management/v1/tokens', key, payload: body });
      expect(res.statusCode, res.body).toBe(200);
      const { protectedHeader } = await verify(res.json().token, early);
      expect(protectedHeader.kid).toBe(early.keys[0]!.kid);
      expect((await fresh.db.query<{ n: number }>('SELECT count(*)::int AS n FROM token_signing_keys')).rows[0]!.n).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it('a first token exchange that finds the key a JWKS reader published meanwhile signs with it (it never retires a key just published)', async () => {
    const fresh = await startTestApp({ clock });
    try {
      const { key, keyId, accountId } = await fresh.signup();
      const base = fresh.rt.deps.db;
      let early: { keys: jose.JWK[] } | undefined;
      // The exchange saw no key; before it stores its own, a verifier reads the JWKS (which
      // publishes the first key) and caches it.
      const gated = { ...base, transaction: async <T>(fn: (tx: never) => Promise<T>) => {
        early ??= (await fresh.request({ method: 'GET', url: '/management/v1/keys', key })).json() as { keys: jose.JWK[] };
        return base.transaction(fn as never) as Promise<T>;
      } } as typeof base;
      const service = createOfflineTokenService({ ...fresh.rt.deps, db: gated });
      const { token } = await service.issue({ accountId, keyId, environment: 'test', permissions: null, accountStatus: 'active' }, { agent_id: 'pos-1', country: 'ES', environment: 'sandbox' });
      expect(early!.keys).toHaveLength(1);
      expect((await verify(token, early!)).protectedHeader.kid).toBe(early!.keys[0]!.kid);
      expect((await fresh.db.query<{ n: number }>('SELECT count(*)::int AS n FROM token_signing_keys')).rows[0]!.n).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it('concurrent first use and concurrent rotations leave exactly one current key', async () => {
    const services = [0, 1, 2, 3].map(() => createOfflineTokenService(t.rt.deps));
    await Promise.all(services.map((s) => s.rotate()));
    const current = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM token_signing_keys WHERE retired_at IS NULL')).rows[0]!.n;
    expect(current).toBe(1);
  });
});

describe('scheduled rotation publishes the next key ahead', () => {
  const MAX_AGE_MS = JWKS_MAX_AGE_S * 1000;
  const kidOf = (token: string) => jose.decodeProtectedHeader(token).kid!;

  /** A fresh installation on a clock of its own: its first key signs from its first token. */
  async function installation() {
    const c = new ManualClock('2026-06-01T08:00:00.000Z');
    const app = await startTestApp({ clock: c });
    const { key, keyId, accountId } = await app.signup();
    const exchange = async () => {
      const res = await app.request({ method: 'POST', url: '/management/v1/tokens', key, payload: body });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().token as string;
    };
    const read = async () => {
      const res = await app.request({ method: 'GET', url: '/management/v1/keys', key });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { keys: jose.JWK[] };
    };
    /** A verifier holding `set`, at the installation's time. */
    const check = (token: string, set: { keys: jose.JWK[] }) =>
      jose.jwtVerify(token, jose.createLocalJWKSet(set as jose.JSONWebKeySet), { issuer: TOKEN_ISSUER, algorithms: ['EdDSA'], currentDate: c.now() });
    const newest = async () => (await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM token_signing_keys WHERE retired_at IS NULL')).rows[0]!.n;
    return { c, app, keyId, accountId, exchange, read, check, newest };
  }

  it('the next key is in the JWKS at least max-age plus the margin before the first token it signs, which is at the 90 days', async () => {
    const { c, app, exchange, read, newest } = await installation();
    try {
      expect(KEY_PUBLISHED_AHEAD_MS).toBeGreaterThan(MAX_AGE_MS);
      const t0 = c.now().getTime();
      const kid1 = kidOf(await exchange());
      // An installation in use: an exchange, then a verifier's read, every 5 minutes across the rotation.
      const seen = new Map<string, number>();
      const signed = new Map<string, number>();
      c.set(new Date(t0 + ROTATE_AFTER_MS - KEY_PUBLISHED_AHEAD_MS - 30 * 60_000));
      while (c.now().getTime() <= t0 + ROTATE_AFTER_MS + 30 * 60_000) {
        const kid = kidOf(await exchange());
        if (!signed.has(kid)) signed.set(kid, c.now().getTime());
        for (const k of (await read()).keys) if (!seen.has(k.kid!)) seen.set(k.kid!, c.now().getTime());
        c.advance(5 * 60_000);
      }
      const kids = [...signed.keys()];
      expect(kids).toHaveLength(2);
      expect(kids[0]).toBe(kid1);
      const kid2 = kids[1]!;
      expect(signed.get(kid2)).toBeGreaterThanOrEqual(t0 + ROTATE_AFTER_MS);
      expect(signed.get(kid2)).toBeLessThan(t0 + ROTATE_AFTER_MS + 5 * 60_000);
      expect(signed.get(kid2)! - seen.get(kid2)!).toBeGreaterThanOrEqual(KEY_PUBLISHED_AHEAD_MS);
      expect(seen.get(kid2)).toBeGreaterThanOrEqual(t0 + ROTATE_AFTER_MS - KEY_PUBLISHED_AHEAD_MS);
      expect(await newest()).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('an installation idle past its rotation: the first use (a JWKS read) publishes the next key; the old one signs until it has been published ahead', async () => {
    const { c, app, exchange, read, check } = await installation();
    try {
      const kid1 = kidOf(await exchange());
      c.advance(ROTATE_AFTER_MS + 10 * DAY);
      const cached = await read();
      expect(cached.keys).toHaveLength(2);
      const kid2 = cached.keys[0]!.kid!;
      expect(cached.keys[1]!.kid).toBe(kid1);
      expect(kidOf(await exchange())).toBe(kid1);
      c.advance(KEY_PUBLISHED_AHEAD_MS - 1000);
      expect(kidOf(await exchange())).toBe(kid1);
      c.advance(1000);
      const next = await exchange();
      expect(kidOf(next)).toBe(kid2);
      expect((await check(next, cached)).payload.agent_id).toBe('pos-42');
    } finally {
      await app.close();
    }
  });

  it('tokens exchanged just before and just after the rotation verify with a JWKS fetched max-age before; the retiring key stays published while its tokens live', async () => {
    const { c, app, exchange, read, check } = await installation();
    try {
      const t0 = c.now().getTime();
      const kid1 = kidOf(await exchange());
      const rotation = t0 + ROTATE_AFTER_MS;
      // In use when the next key is due to be published: this exchange publishes it, to sign from the 90 days.
      c.set(new Date(rotation - KEY_PUBLISHED_AHEAD_MS));
      expect(kidOf(await exchange())).toBe(kid1);
      // A verifier's copy, max-age old at the rotation (the oldest a verifier may still use then).
      c.set(new Date(rotation - MAX_AGE_MS));
      const cached = await read();
      c.set(new Date(rotation - 1000));
      const before = await exchange();
      c.set(new Date(rotation));
      const after = await exchange();
      expect(kidOf(before)).toBe(kid1);
      expect(kidOf(after)).not.toBe(kid1);
      expect((await check(before, cached)).payload.agent_id).toBe('pos-42');
      expect((await check(after, cached)).payload.agent_id).toBe('pos-42');

      // The last token of the retired key verifies with a JWKS fetched just before it expires…
      c.set(new Date(rotation - 1000 + TOKEN_TTL_MS - 1000));
      expect((await check(before, await read())).payload.agent_id).toBe('pos-42');
      // …and the key is unpublished once no token it signed can be valid.
      c.set(new Date(rotation + RETIRED_KEY_PUBLISHED_MS + 1000));
      const later = (await read()).keys.map((k) => k.kid);
      expect(later).not.toContain(kid1);
      expect(later).toContain(kidOf(after));
    } finally {
      await app.close();
    }
  });

  it('migration 0053: keys stored before it sign from their creation; the one signing goes on, and is replaced 90 days after it was made', async () => {
    const { c, app, exchange, read } = await installation();
    try {
      const t0 = c.now().getTime();
      const kid1 = kidOf(await exchange());
      c.advance(DAY);
      const { kid: kid2 } = await createOfflineTokenService(app.rt.deps).rotate();
      const before = await read();
      // The table as it was before 0053, then the migration.
      await app.db.exec('ALTER TABLE token_signing_keys DROP COLUMN signs_from');
      await app.db.exec(fs.readFileSync(new URL('../../src/store/migrations/0053_token_key_publish_ahead.sql', import.meta.url), 'utf8'));
      const rows = (await app.db.query<{ kid: string; created_at: Date; signs_from: Date }>('SELECT kid, created_at, signs_from FROM token_signing_keys')).rows;
      expect(rows.map((r) => r.kid).sort()).toEqual([kid1, kid2].sort());
      for (const r of rows) expect(r.signs_from.getTime()).toBe(r.created_at.getTime());
      expect(await read()).toEqual(before);
      expect(kidOf(await exchange())).toBe(kid2);
      // kid1's tokens have long expired by then: kid2 alone, until the next key is due to be published.
      c.set(new Date(t0 + DAY + ROTATE_AFTER_MS - KEY_PUBLISHED_AHEAD_MS - 1000));
      expect((await read()).keys.map((k) => k.kid)).toEqual([kid2]);
      c.advance(1000);
      const announced = (await read()).keys.map((k) => k.kid);
      expect(announced).toHaveLength(2);
      expect(announced[1]).toBe(kid2);
    } finally {
      await app.close();
    }
  });

  it('an operator rotating while the next key is published ahead: the new key signs at once, the one not yet signing is dropped', async () => {
    const { c, app, exchange, read, newest } = await installation();
    try {
      const kid1 = kidOf(await exchange());
      c.advance(ROTATE_AFTER_MS - KEY_PUBLISHED_AHEAD_MS);
      const announced = (await read()).keys.map((k) => k.kid!);
      expect(announced).toHaveLength(2);
      const { kid, dropped } = await createOfflineTokenService(app.rt.deps).rotate({ dropRetired: true });
      expect(announced).not.toContain(kid);
      expect(dropped).toEqual([kid1]);
      expect(kidOf(await exchange())).toBe(kid);
      expect((await read()).keys.map((k) => k.kid)).toEqual([kid]);
      expect(await newest()).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('a token exchange and a JWKS read racing at the due time publish one next key (no fork), on several nodes at once too', async () => {
    const { c, app, keyId, accountId, exchange, read, newest } = await installation();
    try {
      const t0 = c.now().getTime();
      const kid1 = kidOf(await exchange());
      c.set(new Date(t0 + ROTATE_AFTER_MS - KEY_PUBLISHED_AHEAD_MS));
      const auth = { accountId, keyId, environment: 'test' as const, permissions: null, accountStatus: 'active' as const };
      const request = { agent_id: 'pos-1', country: 'ES', environment: 'sandbox' as const };
      // Node A saw its key due; before it stores the next one, node B answers a JWKS read
      // (which publishes the next key) and a verifier caches that answer.
      const base = app.rt.deps.db;
      let cached: { keys: jose.JWK[] } | undefined;
      const gated = { ...base, transaction: async <T>(fn: (tx: never) => Promise<T>) => {
        cached ??= await read();
        return base.transaction(fn as never) as Promise<T>;
      } } as typeof base;
      const nodeA = createOfflineTokenService({ ...app.rt.deps, db: gated });
      const { token } = await nodeA.issue(auth, request);
      expect(kidOf(token)).toBe(kid1);
      expect(cached!.keys).toHaveLength(2);
      // Node A kept B's next key: the set the verifier cached is still the whole set.
      expect(await read()).toEqual(cached);
      expect(await newest()).toBe(1);

      // Next rotation: four nodes and the HTTP app, reads and exchanges all at once.
      c.set(new Date(t0 + 2 * ROTATE_AFTER_MS - KEY_PUBLISHED_AHEAD_MS));
      const nodes = [0, 1, 2, 3].map(() => createOfflineTokenService(app.rt.deps));
      const results = await Promise.all([
        ...nodes.map((n) => n.jwks()),
        ...nodes.map(async (n) => (await n.issue(auth, request)).token),
        read(), exchange(),
      ]);
      const sets = results.filter((r): r is { keys: jose.JWK[] } => typeof r !== 'string');
      const final = await read();
      expect(final.keys).toHaveLength(2);
      for (const set of sets) expect(set).toEqual(final);
      const tokens = results.filter((r): r is string => typeof r === 'string');
      for (const tok of tokens) expect(kidOf(tok)).toBe(final.keys[1]!.kid);
      expect(await newest()).toBe(1);
      expect((await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM token_signing_keys')).rows[0]!.n).toBe(3);
    } finally {
      await app.close();
    }
  });
});
