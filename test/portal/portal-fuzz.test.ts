import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, unlimitedLimiter, type TestApp } from '../support/harness.ts';
import { createLocation, saleBody } from '../support/transactions.ts';
import { PortalClient } from './portal-client.ts';

/**
 * The merchant portal's pages and forms with wrong input, signed in: never a 500 (the
 * portal's answer to bad input is the page again with the field's message, a 303 with a
 * notice, or a 4xx page). The API's own routes: test/api/route-fuzz.test.ts.
 *
 * Fixed inputs, not random: a failure names its request.
 */

const ODD: readonly string[] = ['', ' ', 'x'.repeat(20_000), '\u202e\ud83d\ude00é', '%00', '-1', '99999999999999999999', '1.5', '2026-02-30', 'null', '[]', '{"a":1}', '<script>x</script>', '../../etc/passwd', '__proto__'];
const BAD_IDS: readonly string[] = ['x', 'a'.repeat(300), '00000000-0000-0000-0000-000000000000', '%E2%82', '..%2F..', '-1'];
/** The form fields the portal's forms have (and one they do not), each sent odd in turn. */
const FIELDS: readonly string[] = ['name', 'country', 'tax_id', 'address', 'system', 'url', 'events', 'environment', 'permissions', 'label', 'country_config', 'status', 'unknown_field'];

let t: TestApp;
let key: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestApp({ limiter: unlimitedLimiter() });
  ({ key } = await t.signup());
  ids.location = await createLocation(t, key, 'fr-nf525');
  const tx = await t.request({ method: 'POST', url: '/v1/transactions', key, payload: saleBody(ids.location) });
  ids.transaction = tx.json().id;
  ids.webhook = (await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: 'https://receiver.invalid/hook', events: ['fiscalization.completed'] } })).json().id;
  ids.key = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: {} })).json().id;
});
afterAll(() => t?.close());

describe('the portal with wrong input: never a 500', () => {
  it('pages with bad ids and odd query values, forms with odd, repeated and missing fields', async () => {
    for (const id of Object.values(ids)) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const c = new PortalClient(t);
    await c.signIn(key);
    const failures: string[] = [];
    const check = (what: string, res: { statusCode: number; body: string }) => {
      if (res.statusCode >= 500) failures.push(`${what.slice(0, 200)} → ${res.statusCode} ${res.body.slice(0, 200)}`);
    };
    const pages = ['/portal/account', '/portal/locations', '/portal/locations/new', '/portal/transactions', '/portal/failures', '/portal/webhooks', '/portal/certificates', '/portal/api-keys'];
    for (const page of pages) {
      for (const q of ['status', 'location_id', 'from', 'to', 'page', 'notice']) {
        for (const v of ODD) check(`GET ${page}?${q}=${v}`, await c.get(`${page}?${q}=${encodeURIComponent(v)}`));
      }
    }
    const byId = ['/portal/locations/:id', '/portal/transactions/:id', '/portal/transactions/:id/fiscal-record', '/portal/transactions/:id/qr.png', '/portal/transactions/:id/receipt', '/portal/webhooks/:id'];
    const real: Record<string, string> = { locations: ids.location!, transactions: ids.transaction!, webhooks: ids.webhook! };
    for (const route of byId) {
      const word = route.split('/')[2]!;
      for (const id of [real[word]!, ...BAD_IDS]) {
        check(`GET ${route} ${id}`, await c.get(route.replace(':id', id)));
        for (const v of ['', 'x', 'pdf', 'png', '999', '-1']) check(`GET ${route} ${id} ?format=${v}`, await c.get(`${route.replace(':id', id)}?format=${v}&width=${v}&lang=${v}`));
      }
    }
    const forms = ['/portal/locations', '/portal/locations/:id', '/portal/locations/:id/deactivate', '/portal/locations/:id/activate', '/portal/webhooks', '/portal/webhooks/:id/test', '/portal/api-keys', '/portal/api-keys/:id/revoke'];
    const realFor = (route: string) => (route.startsWith('/portal/locations') ? ids.location! : route.startsWith('/portal/webhooks') ? ids.webhook! : ids.key!);
    for (const route of forms) {
      for (const id of route.includes(':id') ? [realFor(route), ...BAD_IDS] : ['']) {
        const url = route.replace(':id', id);
        // The session's CSRF token (any page carries it; it holds until the session ends).
        await c.get('/portal/account');
        check(`POST ${url} {}`, await c.post(url, {}));
        // Every field odd in turn on the real target; a bad id is refused before any field is read.
        const fields = id === '' || id === realFor(route) ? FIELDS : FIELDS.slice(0, 1);
        for (const field of fields) {
          for (const v of ODD) check(`POST ${url} ${field}=${v}`, await c.post(url, { [field]: v }));
          check(`POST ${url} ${field}=[a, b]`, await c.post(url, { [field]: ['a', 'b'] }));
        }
        // Without the CSRF token, or with another one: refused, never a 500.
        check(`POST ${url} without CSRF`, await c.post(url, { name: 'x' }, null));
        check(`POST ${url} wrong CSRF`, await c.post(url, { name: 'x' }, 'not-the-token'));
      }
    }
    // Raw bodies the form parser must refuse or read as nothing.
    for (const [type, body] of [['application/x-www-form-urlencoded', '%%%'], ['application/x-www-form-urlencoded', 'a=' + '%ZZ'.repeat(1000)], ['application/json', '{'], ['text/plain', 'x'], ['multipart/form-data', '--x']]) {
      const res = await t.app.inject({ method: 'POST', url: '/portal/locations', payload: body, headers: { 'content-type': type!, cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      check(`POST /portal/locations ${type} ${body}`, res);
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
