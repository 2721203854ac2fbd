import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { buildApp } from '../../src/http/app.ts';
import { authOf } from '../../src/http/hooks/auth.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { PortalClient, setCookieLine } from './portal-client.ts';

/**
 * The merchant portal over inject, on both stores: sign-in and its cookies, the security
 * headers, CSRF refusals, account scoping (another account's ids → 404 page), keys shown
 * once, location forms with the server's messages, the failures page's translated error,
 * the webhook test delivery, and that form bodies stay refused by the /v1 API.
 */
let t: TestApp;
let clock: ManualClock;
let receiver: WebhookReceiver;
beforeAll(async () => {
  clock = new ManualClock('2026-03-02T10:00:00.000Z');
  t = await startTestApp({ clock, random: () => 0.5 });
  receiver = await startWebhookReceiver({ now: () => clock.now().getTime() });
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

async function signedIn() {
  const account = await t.signup();
  const client = new PortalClient(t);
  await client.signIn(account.key);
  return { ...account, client };
}

describe('sign-in and the session cookie', () => {
  it('the sign-in page: strict CSP, no framing, no caching; the CSRF secret cookie HttpOnly, SameSite=Strict, Path=/portal', async () => {
    const res = await new PortalClient(t).get('/portal/sign-in');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'none'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['strict-transport-security']).toBeUndefined();
    const csrf = setCookieLine(res, 'portal_csrf')!;
    expect(csrf).toMatch(/HttpOnly/);
    expect(csrf).toMatch(/SameSite=Strict/);
    expect(csrf).toMatch(/Path=\/portal/);
    expect(csrf).not.toMatch(/Secure/);
    // No inline script or style anywhere in the markup.
    expect(res.body).not.toMatch(/<script|style=|<style/);
    expect(res.body).toMatch(/<label for="f-api_key">/);
  });

  it('a root key opens a portal session kept in an HttpOnly, SameSite=Strict cookie on /portal; the key is in no cookie and no page', async () => {
    const { key, client } = await (async () => {
      const a = await t.signup();
      const c = new PortalClient(t);
      await c.get('/portal/sign-in');
      return { key: a.key, client: c };
    })();
    const res = await client.post('/portal/sign-in', { api_key: key });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/portal/account');
    const line = setCookieLine(res, 'portal_session')!;
    expect(line).toMatch(/^portal_session=pss_[0-9A-Za-z]{32};/);
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Strict/);
    expect(line).toMatch(/Path=\/portal/);
    expect(line).toMatch(/Max-Age=3600/);
    expect(line).not.toMatch(/Secure/);
    expect(String(res.headers['set-cookie'])).not.toContain(key);
    // The CSRF secret is renewed with the session: the sign-in page's token is worthless after it.
    expect(setCookieLine(res, 'portal_csrf')).toMatch(/^portal_csrf=;/);
    const before = client.lastCsrf;
    await client.get('/portal/account');
    expect(client.lastCsrf).not.toBe(before);
    expect((await client.post('/portal/api-keys', { name: 'x', permissions: ['account:read'], _csrf: before })).statusCode).toBe(403);
    for (const home of ['/portal', '/portal/']) {
      const res = await client.get(home);
      expect([res.statusCode, res.headers.location]).toEqual([303, '/portal/account']);
    }
    for (const path of ['/portal/account', '/portal/api-keys', '/portal/locations', '/portal/transactions', '/portal/failures', '/portal/webhooks', '/portal/certificates']) {
      const page = await client.get(path);
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain(key);
    }
    // The session cookie is a portal session: the /v1 API refuses it where a key is needed.
    const token = client.cookies.get('portal_session')!;
    expect((await t.request({ method: 'GET', url: '/v1/locations', key: token })).statusCode).toBe(401);
  });

  it('over HTTPS behind a trusted proxy the cookies are Secure', async () => {
    const proxied = await startTestApp({ db: t.db, clock, app: { trustProxy: true } });
    try {
      const { key } = await proxied.signup();
      const client = new PortalClient(proxied, { 'x-forwarded-proto': 'https' });
      const page = await client.get('/portal/sign-in');
      expect(setCookieLine(page, 'portal_csrf')).toMatch(/; Secure/);
      const res = await client.post('/portal/sign-in', { api_key: key });
      expect(setCookieLine(res, 'portal_session')).toMatch(/; Secure/);
    } finally {
      await proxied.close();
    }
  });

  it('a wrong key and a restricted key are refused with the message tied to the field', async () => {
    const { key } = await t.signup();
    const client = new PortalClient(t);
    await client.get('/portal/sign-in');
    const bad = await client.post('/portal/sign-in', { api_key: 'svc_test_nope' });
    expect(bad.statusCode).toBe(401);
    expect(bad.body).toContain('aria-describedby="f-api_key-error"');
    expect(bad.body).toContain('aria-invalid="true"');
    expect(bad.body).toMatch(/id="f-api_key-error">invalid API key format</);
    expect(setCookieLine(bad, 'portal_session')).toBeUndefined();

    const restricted = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'pos', permissions: ['transactions:read'] } })).json().key;
    const refused = await client.post('/portal/sign-in', { api_key: restricted });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('a portal session can only be opened with a root key');
  });

  it('without a session every page redirects to sign-in; sign-out ends the session at once', async () => {
    const anonymous = new PortalClient(t);
    for (const path of ['/portal/account', '/portal/locations', '/portal/transactions', '/portal/api-keys']) {
      const res = await anonymous.get(path);
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/portal/sign-in');
    }
    const { client } = await signedIn();
    const token = client.cookies.get('portal_session')!;
    await client.get('/portal/account');
    const out = await client.post('/portal/sign-out');
    expect(out.statusCode).toBe(303);
    expect(setCookieLine(out, 'portal_session')).toMatch(/portal_session=;/);
    // The old token no longer opens anything, even if a copy of the cookie survived.
    const replay = new PortalClient(t);
    replay.cookies.set('portal_session', token);
    expect((await replay.get('/portal/account')).statusCode).toBe(303);
  });

  it('a session ends after its hour: the next page is the sign-in page and the cookie is cleared', async () => {
    const { client } = await signedIn();
    expect((await client.get('/portal/locations')).statusCode).toBe(200);
    clock.advance(3600_000);
    const res = await client.get('/portal/locations');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/portal/sign-in');
    expect(client.cookies.has('portal_session')).toBe(false);
  });

  it('a suspended account sees its account page only', async () => {
    const { client, accountId } = await signedIn();
    await t.db.query(`UPDATE accounts SET status = 'suspended' WHERE id = $1`, [accountId]);
    const account = await client.get('/portal/account');
    expect(account.statusCode).toBe(200);
    expect(account.body).toContain('This account is suspended');
    const locations = await client.get('/portal/locations');
    expect(locations.statusCode).toBe(403);
    expect(locations.body).toContain('account is suspended');
  });

  it('a suspended merchant subscribes again from its account page: the account is active at once', async () => {
    const { client, accountId } = await signedIn();
    await t.db.query(`UPDATE accounts SET status = 'suspended', status_reason = 'subscription cancelled' WHERE id = $1`, [accountId]);
    const account = await client.get('/portal/account');
    expect(account.body).toContain('Subscribe again below to restore it');
    expect(account.body).toContain('action="/portal/account/subscription"');
    // A refusal re-renders the form with the service's message.
    const bad = await client.post('/portal/account/subscription', { company_name: 'Acme', billing_email: 'nope', payment_method_id: 'pm_1', merchant_count: '2', billing_interval: 'month' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('billing_email must be a valid email address');
    const res = await client.post('/portal/account/subscription', { company_name: 'Acme', billing_email: 'bill@acme.example', payment_method_id: 'pm_1', merchant_count: '2', billing_interval: 'month' });
    expect([res.statusCode, res.headers.location]).toEqual([303, '/portal/account?notice=subscribed']);
    expect((await t.db.query('SELECT status FROM accounts WHERE id = $1', [accountId])).rows[0]).toEqual({ status: 'active' });
    const after = await client.get('/portal/account?notice=subscribed');
    expect(after.body).toContain('Subscribed: the subscription is active.');
    expect(after.body).not.toContain('action="/portal/account/subscription"');
    expect((await client.get('/portal/locations')).statusCode).toBe(200);
  });
});

describe('CSRF', () => {
  it('a POST without the token, or with another session\'s token, is refused with 403 and changes nothing', async () => {
    const a = await signedIn();
    await a.client.get('/portal/locations/new');
    const form = { name: 'Forged', country: 'FR', tax_id: '73282932000074', country_config: '{"legal_name":"Exemple SAS","register_id":"73282932000074"}' };
    const none = await a.client.post('/portal/locations', form, null);
    expect(none.statusCode).toBe(403);
    expect(none.body).toContain('nothing was changed');

    const b = await signedIn();
    await b.client.get('/portal/locations/new');
    const foreign = await a.client.post('/portal/locations', { ...form, _csrf: b.client.lastCsrf });
    expect(foreign.statusCode).toBe(403);

    const sameButNoCookie = new PortalClient(t);
    sameButNoCookie.cookies.set('portal_session', a.client.cookies.get('portal_session')!);
    expect((await sameButNoCookie.post('/portal/locations', { ...form, _csrf: a.client.lastCsrf })).statusCode).toBe(403);

    const listed = await t.request({ method: 'GET', url: '/v1/locations', key: a.key });
    expect(listed.json().total).toBe(0);
    // Sign-in is a form too.
    expect((await new PortalClient(t).post('/portal/sign-in', { api_key: a.key }, null)).statusCode).toBe(403);
  });

  it('form bodies stay refused by the /v1 API (formbody is registered in the portal scope only)', async () => {
    const { key } = await t.signup();
    const res = await t.request({
      method: 'POST', url: '/v1/locations', key, payload: 'name=X&country=FR', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(415);
  });
});

describe('locations', () => {
  it('create: the server\'s validation message next to the field, then success; edit; deactivate', async () => {
    const { client, key } = await signedIn();
    await client.get('/portal/locations/new');
    const bad = await client.post('/portal/locations', { name: 'Café Paris', country: 'FR', tax_id: '73282932000074', country_config: '{}' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="f-country_config-error">country_config.legal_name is required for France locations<');
    expect(bad.body).toMatch(/<textarea id="f-country_config" name="country_config" aria-describedby="f-country_config-hint f-country_config-error" aria-invalid="true"/);
    expect(bad.body).toContain('value="Café Paris"'); // what was typed is kept

    const notJson = await client.post('/portal/locations', { name: 'Café Paris', country: 'FR', country_config: '{legal' });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.body).toContain('country_config must be a JSON object');

    const ok = await client.post('/portal/locations', {
      name: 'Café <Paris>', country: 'FR', tax_id: '73282932000074', country_config: '{"legal_name":"Exemple SAS","register_id":"73282932000074"}',
    });
    expect(ok.statusCode).toBe(303);
    const id = /\/portal\/locations\/([0-9a-f-]{36})\?notice=location_created/.exec(String(ok.headers.location))![1]!;
    const detail = await client.get(`/portal/locations/${id}?notice=location_created`);
    expect(detail.body).toContain('Location created.');
    expect(detail.body).toContain('Café &lt;Paris&gt;'); // escaped, never markup
    expect(detail.body).not.toContain('Café <Paris>');

    const renamed = await client.post(`/portal/locations/${id}`, { name: 'Café Rivoli', address: '1 rue de Rivoli', country_config: '{"legal_name":"Exemple SAS","register_id":"73282932000074"}' });
    expect(renamed.statusCode).toBe(303);
    const emptyName = await client.post(`/portal/locations/${id}`, { name: ' ', country_config: '{}' });
    expect(emptyName.statusCode).toBe(400);
    expect(emptyName.body).toContain('id="f-name-error">name is required<');

    expect((await client.post(`/portal/locations/${id}/deactivate`)).statusCode).toBe(303);
    const after = (await t.request({ method: 'GET', url: `/v1/locations/${id}`, key })).json();
    expect(after).toMatchObject({ name: 'Café Rivoli', address: '1 rue de Rivoli', status: 'inactive' });
  });
});

describe('account scoping', () => {
  it('another account\'s location, transaction and webhook → the 404 page with status 404, for pages and forms', async () => {
    const owner = await t.signup();
    const loc = await createLocation(t, owner.key, 'fr-nf525');
    const tx = (await createTx(t, owner.key, saleBody(loc))).json().id;
    const hook = (await t.request({ method: 'POST', url: '/v1/webhooks', key: owner.key, payload: { url: receiver.url, events: ['transaction.fiscalized'] } })).json().id;

    const other = await signedIn();
    await other.client.get('/portal/account');
    for (const path of [`/portal/locations/${loc}`, `/portal/transactions/${tx}`, `/portal/transactions/${tx}/receipt`,
      `/portal/transactions/${tx}/fiscal-record`, `/portal/webhooks/${hook}`, '/portal/locations/not-a-uuid', '/portal/nowhere']) {
      const res = await other.client.get(path);
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('Not found');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    }
    expect((await other.client.post(`/portal/locations/${loc}/deactivate`)).statusCode).toBe(404);
    expect((await other.client.post(`/portal/webhooks/${hook}/test`)).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: `/v1/locations/${loc}`, key: owner.key })).json().status).toBe('active');
  });
});

describe('API keys', () => {
  it('a restricted key is shown once, on its creation page, never again; it works; it can be revoked', async () => {
    const { client, keyId } = await signedIn();
    await client.get('/portal/api-keys');
    const none = await client.post('/portal/api-keys', { name: 'POS', environment: 'test' });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('choose at least one permission');
    expect(none.body).toContain('id="f-permissions-error"');
    // The service's own refusal is shown on the form too, the choices kept.
    const unknown = await client.post('/portal/api-keys', { name: 'odd', permissions: ['transactions:read', 'bogus:perm'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('id="f-permissions-error">unknown permission: bogus:perm<');
    expect(unknown.body).toMatch(/value="transactions:read" id="f-permissions-0" checked/);
    // The name rule is the API's (1-100 characters), also for the form, which has no schema in front.
    const long = await client.post('/portal/api-keys', { name: 'n'.repeat(101), permissions: ['transactions:read'] });
    expect(long.statusCode).toBe(400);
    expect(long.body).toContain('name must be 1-100 characters');

    const res = await client.post('/portal/api-keys', { name: 'POS till 1', environment: 'test', permissions: ['transactions:write', 'transactions:read'] });
    expect(res.statusCode).toBe(200);
    const key = /<code class="secret" id="new-key">(svc_test_[0-9A-Za-z]+)<\/code>/.exec(res.body)![1]!;
    expect(res.headers['cache-control']).toBe('no-store');
    const listed = await client.get('/portal/api-keys');
    expect(listed.body).toContain('POS till 1');
    expect(listed.body).not.toContain(key);
    expect((await t.request({ method: 'GET', url: '/v1/transactions', key })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/v1/locations', key })).statusCode).toBe(403);

    // The session's own root key cannot be revoked from the portal; the new one can.
    expect(listed.body).not.toContain(`/portal/api-keys/${keyId}/revoke`);
    const id = /\/portal\/api-keys\/([0-9a-f-]{36})\/revoke/.exec(listed.body)![1]!;
    expect((await client.post(`/portal/api-keys/${id}/revoke`)).statusCode).toBe(303);
    expect((await t.request({ method: 'GET', url: '/v1/transactions', key })).statusCode).toBe(401);
  });
});

describe('transactions, failures, receipts', () => {
  it('filters by status, location and date range; a failed sale shows its translated error; the receipt falls back to the render hints', async () => {
    const { client, key } = await signedIn();
    const loc = await createLocation(t, key, 'es-verifactu');
    const ok = (await createTx(t, key, saleBody(loc))).json();
    const failed = (await createTx(t, key, saleBody(loc, { metadata: { sandbox_outcome: 'reject:4102' } }))).json();
    await t.worker.drain(); // submissions, then the failure's translation
    const list = await client.get(`/portal/transactions?location_id=${loc}`);
    expect(list.body).toContain(`/portal/transactions/${ok.id}`);
    expect(list.body).toContain(`/portal/transactions/${failed.id}`);
    const onlyFailed = await client.get('/portal/transactions?status=failed_permanent');
    expect(onlyFailed.body).toContain(`/portal/transactions/${failed.id}`);
    expect(onlyFailed.body).not.toContain(`/portal/transactions/${ok.id}`);
    const today = clock.now().toISOString().slice(0, 10);
    expect((await client.get(`/portal/transactions?from=${today}&to=${today}`)).body).toContain(`/portal/transactions/${ok.id}`);
    expect((await client.get('/portal/transactions?from=2026-03-03')).body).toContain('No transactions match');
    expect((await client.get('/portal/transactions?to=2026-03-01')).body).toContain('No transactions match');
    const badDate = await client.get('/portal/transactions?from=yesterday');
    expect(badDate.body).toContain('id="f-from-error">from must be a date (YYYY-MM-DD)<');

    const stored = (await t.request({ method: 'GET', url: `/v1/transactions/${failed.id}`, key })).json();
    expect(stored.error_message).toEqual(expect.any(String));
    const failures = await client.get('/portal/failures');
    expect(failures.body).toContain('Why it failed');
    expect(failures.body).toContain(escape(stored.error_message));
    expect(failures.body).toContain('<code>4102</code>');
    expect(failures.body).toContain('Retry queue');
    const detail = await client.get(`/portal/transactions/${failed.id}`);
    expect(detail.body).toContain(escape(stored.error_message));

    const receipt = await client.get(`/portal/transactions/${ok.id}/receipt`);
    expect(receipt.statusCode).toBe(200);
    const accepted = (await t.request({ method: 'GET', url: `/v1/transactions/${ok.id}`, key })).json();
    for (const hint of accepted.render_hints.filter((h: { kind: string }) => h.kind === 'text')) expect(receipt.body).toContain(escape(hint.value));
    const record = await client.get(`/portal/transactions/${ok.id}/fiscal-record`);
    expect(record.statusCode).toBe(200);
    expect(record.headers['content-type']).toBe('text/plain; charset=utf-8');
  });
});

describe('the receipt service behind the portal', () => {
  it('the portal serves the receipt route\'s HTML with the session, its inline <style> allowed by hash only', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const tx = (await createTx(t, key, saleBody(loc))).json();
    const client = new PortalClient({ app: t.app });
    await client.signIn(key);
    const res = await client.get(`/portal/transactions/${tx.id}/receipt`);
    expect(res.statusCode).toBe(200);
    // The receipt service's own page (src/receipts), asked with the portal session.
    const direct = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}/receipt?format=html`, key });
    expect(res.body).toBe(direct.body);
    expect(res.body).toContain(tx.fiscal_id);
    const styles = [...res.body.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
    expect(styles.length).toBeGreaterThan(0);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    for (const css of styles) expect(csp).toContain(`'sha256-${crypto.createHash('sha256').update(css).digest('base64')}'`);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    // Another account's transaction: the portal's 404.
    const other = new PortalClient({ app: t.app });
    await other.signIn((await t.signup()).key);
    expect((await other.get(`/portal/transactions/${tx.id}/receipt`)).statusCode).toBe(404);
  });
});

describe('webhooks', () => {
  it('the secret is shown once; "send test" delivers a signed webhook.test event and the log shows it', async () => {
    const { client } = await signedIn();
    await client.get('/portal/webhooks');
    const bad = await client.post('/portal/webhooks', { url: receiver.url });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="f-events-error">events is required<');
    const res = await client.post('/portal/webhooks', { url: receiver.url, events: ['transaction.fiscalized'], description: 'till' });
    expect(res.statusCode).toBe(200);
    const secret = /<code class="secret" id="secret">([^<]+)<\/code>/.exec(res.body)![1]!;
    const id = /\/portal\/webhooks\/([0-9a-f-]{36})/.exec(res.body)![1]!;
    const page = await client.get(`/portal/webhooks/${id}`);
    expect(page.body).not.toContain(secret);

    receiver.secret = secret;
    receiver.received.length = 0;
    expect((await client.post(`/portal/webhooks/${id}/test`)).statusCode).toBe(303);
    await t.worker.drain();
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ event: 'webhook.test', webhook_id: id, test: true });
    expect(receiver.received[0]!.check(secret).all).toBe(true);
    const log = await client.get(`/portal/webhooks/${id}`);
    expect(log.body).toContain('webhook.test');
    expect(log.body).toContain('status-succeeded');

    // A failed test is shown in the log (one attempt) and announces no dead letter.
    receiver.fail(500);
    await client.post(`/portal/webhooks/${id}/test`);
    await t.worker.drain();
    receiver.ok();
    const failedLog = await client.get(`/portal/webhooks/${id}`);
    expect(failedLog.body).toContain('status-dead');
    expect(failedLog.body).toContain('1 of 1');
    const deadLetters = await t.db.query(`SELECT id FROM events WHERE data->>'webhook_id' = $1 AND type = 'fiscalization.dead_letter'`, [id]);
    expect(deadLetters.rows).toHaveLength(0);
  });
});

describe('account page', () => {
  it('shows the onboarding checklist, the subscription state and the month\'s usage; a bad period is shown on its field', async () => {
    const { client } = await signedIn();
    const res = await client.get('/portal/account');
    expect(res.body).toContain('Getting started (1 of 6)');
    expect(res.body).toContain('No subscription yet');
    expect(res.body).toContain('Usage in 2026-03');
    const bad = await client.get('/portal/account?period=March');
    expect(bad.body).toContain('id="f-period-error">period must be a month in the form YYYY-MM<');
  });
});

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;').replace(/=/g, '&#61;').replace(/`/g, '&#96;');
