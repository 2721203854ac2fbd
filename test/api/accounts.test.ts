import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const email = () => `a-${Math.random().toString(36).slice(2)}@example.com`;
// Each from its own address: the per-address sign-up bucket is tested on its own.
const addr = () => `10.9.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}`;
const post = (payload: unknown) => t.request({ method: 'POST', url: '/v1/accounts', payload: payload as object, remoteAddress: addr() });

describe('POST /v1/accounts', () => {
  it('creates the account and a root test key shown once', async () => {
    const res = await post({ name: 'Bar Pepe', billing_email: email() });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.account).toMatchObject({ name: 'Bar Pepe', status: 'active' });
    expect(body.account.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.api_key.key).toMatch(/^svc_test_[0-9A-Za-z]{32}$/);
    expect(body.api_key).toMatchObject({ key_prefix: 'svc_test_', environment: 'test', permissions: null });
    expect(body.api_key.key.endsWith(body.api_key.key_last4)).toBe(true);

    const list = await t.request({ method: 'GET', url: '/v1/api-keys', key: body.api_key.key });
    expect(list.statusCode).toBe(200);
    expect(list.json().data[0]).not.toHaveProperty('key');
    expect(JSON.stringify(list.json())).not.toContain(body.api_key.key);
  });

  it('answers the spec\'s Go-validator message for a missing or invalid required field', async () => {
    expect((await post({ billing_email: email() })).json()).toEqual({ error: "Key: 'CreateRequest.Name' Error:Field validation for 'Name' failed on the 'required' tag" });
    expect((await post({ name: 'x' })).json().error).toMatch(/^Key: 'CreateRequest.BillingEmail' Error:Field validation for 'BillingEmail' failed on the 'required' tag$/);
    expect((await post({ name: 'x', billing_email: 'not-an-email' })).json().error).toBe("Key: 'CreateRequest.BillingEmail' Error:Field validation for 'BillingEmail' failed on the 'email' tag");
    expect((await post({ name: '', billing_email: email() })).json().error).toMatch(/^Key: 'CreateRequest.Name'/);
    const long = await post({ name: 'x'.repeat(101), billing_email: email() });
    expect(long.statusCode).toBe(400);
    expect(long.json().error).toBe("Key: 'CreateRequest.Name' Error:Field validation for 'Name' failed on the 'max' tag");
    expect((await post({ name: 5, billing_email: email() })).json().error).toBe('name must be a string');
    // null is a missing field (Go decodes it to the zero value), for a required field only.
    expect((await post({ name: null, billing_email: email() })).json().error).toBe("Key: 'CreateRequest.Name' Error:Field validation for 'Name' failed on the 'required' tag");
    expect((await post({ name: 'x', billing_email: null })).json().error).toBe("Key: 'CreateRequest.BillingEmail' Error:Field validation for 'BillingEmail' failed on the 'required' tag");
    expect((await post({ name: 'x', billing_email: email(), terms_accepted_at: null, privacy_policy_version: 'v1' })).json().error).toBe('terms_accepted_at must be an ISO 8601 date-time');
  });

  it('takes the sign-up consent pair both or neither, and records terms and privacy policy', async () => {
    const half = await post({ name: 'x', billing_email: email(), terms_accepted_at: '2026-01-01T00:00:00Z' });
    expect(half.statusCode).toBe(400);
    expect(half.json().error).toBe('terms_accepted_at and privacy_policy_version must be given together');
    const other = await post({ name: 'x', billing_email: email(), privacy_policy_version: '2026-01' });
    expect(other.json().error).toBe('terms_accepted_at and privacy_policy_version must be given together');
    const badDate = await post({ name: 'x', billing_email: email(), terms_accepted_at: 'yesterday', privacy_policy_version: 'v1' });
    expect(badDate.json().error).toBe('terms_accepted_at must be an ISO 8601 date-time');
    const blank = await post({ name: 'x', billing_email: email(), terms_accepted_at: '2026-01-01T00:00:00Z', privacy_policy_version: '   ' });
    expect([blank.statusCode, blank.json().error]).toEqual([400, 'privacy_policy_version must be a string of 1-50 characters']);
    const future = await post({ name: 'x', billing_email: email(), terms_accepted_at: '2999-01-01T00:00:00Z', privacy_policy_version: 'v1' });
    expect(future.json().error).toBe('terms_accepted_at must not be in the future');

    const ok = await post({ name: 'x', billing_email: email(), terms_accepted_at: '2026-01-01T10:00:00Z', privacy_policy_version: '2026-01' });
    expect(ok.statusCode).toBe(201);
    const consents = await t.request({ method: 'GET', url: '/v1/account/consents', key: ok.json().api_key.key });
    expect(consents.statusCode).toBe(200);
    const types = consents.json().data.map((c: { type: string }) => c.type).sort();
    expect(types).toEqual(['privacy_policy', 'terms']);
    for (const c of consents.json().data) expect(c).toMatchObject({ version: '2026-01', granted_at: '2026-01-01T10:00:00.000Z', revoked_at: null, active: true });
  });

  it('refuses a duplicate billing email (case-insensitive) with 409, also under a race', async () => {
    const e = email();
    expect((await post({ name: 'x', billing_email: e })).statusCode).toBe(201);
    const dup = await post({ name: 'y', billing_email: e.toUpperCase() });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toEqual({ error: 'an account with this billing email already exists' });

    const raced = email();
    const answers = await Promise.all(Array.from({ length: 10 }, () => post({ name: 'z', billing_email: raced })));
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.statusCode === 409)).toHaveLength(9);
  });
});

describe('GET /v1/account/status', () => {
  it('reports tier, features, merchant count, enforcement and the sandbox rate limit for a test key', async () => {
    const { key, accountId } = await t.signup();
    const res = await t.request({ method: 'GET', url: '/v1/account/status', key });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      account_id: accountId, status: 'active', tier: 'starter', merchant_count: 0,
      enforcement: { state: 'ok', reason: null }, rate_limit: { requests_per_minute: 100, burst: 200 },
    });
    expect(res.json().features).toContain('es-verifactu');
  });
});

describe('consents', () => {
  it('grants, lists (revoked included) and revokes', async () => {
    const { key } = await t.signup();
    const granted = await t.request({ method: 'POST', url: '/v1/account/consents', key, payload: { type: 'marketing', version: 'v3' } });
    expect(granted.statusCode).toBe(201);
    expect(granted.json()).toMatchObject({ type: 'marketing', version: 'v3', active: true, revoked_at: null });
    const id = granted.json().id;

    const revoked = await t.request({ method: 'DELETE', url: `/v1/account/consents/${id}`, key });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ id, active: false });
    expect(revoked.json().revoked_at).toBeTruthy();
    // Revoking twice keeps the first revocation time.
    const again = await t.request({ method: 'DELETE', url: `/v1/account/consents/${id}`, key });
    expect(again.json().revoked_at).toBe(revoked.json().revoked_at);

    const list = await t.request({ method: 'GET', url: '/v1/account/consents', key });
    expect(list.json()).toMatchObject({ total: 1, limit: 20, offset: 0 });
    expect(list.json().data[0]).toMatchObject({ id, active: false });

    expect((await t.request({ method: 'POST', url: '/v1/account/consents', key, payload: { type: 'cookies', version: 'v1' } })).json())
      .toEqual({ error: 'type must be one of terms, privacy_policy, marketing, data_processing' });
    expect((await t.request({ method: 'POST', url: '/v1/account/consents', key, payload: { type: 'terms' } })).json())
      .toEqual({ error: 'version is required (1-50 characters)' });
    expect((await t.request({ method: 'POST', url: '/v1/account/consents', key, payload: { type: 'terms', version: '   ' } })).json())
      .toEqual({ error: 'version is required (1-50 characters)' });
    expect((await t.request({ method: 'DELETE', url: '/v1/account/consents/00000000-0000-4000-8000-000000000000', key })).statusCode).toBe(404);
    expect((await t.request({ method: 'DELETE', url: '/v1/account/consents/not-a-uuid', key })).json()).toEqual({ error: 'consent not found' });
  });

  it('a repeated grant (a retry) answers the standing record, 200, and stores nothing; after a revoke a grant is new', async () => {
    const { key } = await t.signup();
    const grant = (version: string) => t.request({ method: 'POST', url: '/v1/account/consents', key, payload: { type: 'data_processing', version } });
    const first = await grant('2026-03');
    expect(first.statusCode, first.body).toBe(201);
    const again = await grant(' 2026-03 ');
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual(first.json());
    // Concurrent retries: still one record.
    const racing = await Promise.all([0, 1, 2, 3].map(() => grant('2026-04')));
    expect(racing.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 201]);
    expect(new Set(racing.map((r) => r.json().id)).size).toBe(1);
    const list = async () => (await t.request({ method: 'GET', url: '/v1/account/consents', key })).json() as { total: number; data: Array<{ id: string; version: string; active: boolean }> };
    expect((await list()).total).toBe(2);

    // Revoking the record the client knows withdraws the consent: nothing else stays active.
    const revoked = await t.request({ method: 'DELETE', url: `/v1/account/consents/${first.json().id}`, key });
    expect(revoked.statusCode).toBe(200);
    expect((await list()).data.filter((c) => c.version === '2026-03' && c.active)).toEqual([]);
    // Given again after the withdrawal: a new record (the revoked one stays, as evidence).
    const regiven = await grant('2026-03');
    expect(regiven.statusCode).toBe(201);
    expect(regiven.json().id).not.toBe(first.json().id);
    expect((await list()).total).toBe(3);
  });
});
