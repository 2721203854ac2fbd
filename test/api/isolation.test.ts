import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { locationBodies, RANDOM_UUID } from '../support/fixtures.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';

/*
 * Tenant isolation: account B must never see, change or learn about account A's
 * resources. Every route that takes an id is listed once in ID_ROUTES, every list in
 * LISTS; a new route is one more line there.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

type Kind = 'location' | 'apiKey' | 'consent' | 'transaction' | 'webhook' | 'certificate';

/** How a row of each kind is named in its routes: certificates by their user-assigned certificate_id. */
const idOf = (kind: Kind, row: Record<string, unknown>) => (kind === 'certificate' ? row.certificate_id : row.id) as string;
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

interface IdRoute {
  method: Method;
  /** The path, with `:id` where the id goes. */
  path: string;
  kind: Kind;
  payload?: Record<string, unknown>;
  /** The 404 body the route answers for an id that is not the caller's. */
  notFound: string;
}

const ID_ROUTES: IdRoute[] = [
  { method: 'GET', path: '/v1/locations/:id', kind: 'location', notFound: 'location not found' },
  { method: 'PATCH', path: '/v1/locations/:id', kind: 'location', payload: { name: 'taken over', status: 'inactive' }, notFound: 'location not found' },
  { method: 'DELETE', path: '/v1/locations/:id', kind: 'location', notFound: 'location not found' },
  // The plug-ins' location files (services/location-files.ts): the location is checked before the parameter.
  { method: 'GET', path: '/v1/locations/:id/corrispettivi', kind: 'location', notFound: 'location not found' },
  { method: 'GET', path: '/v1/locations/:id/closures', kind: 'location', notFound: 'location not found' },
  { method: 'GET', path: '/v1/locations/:id/jet', kind: 'location', notFound: 'location not found' },
  { method: 'GET', path: '/v1/locations/:id/archives', kind: 'location', notFound: 'location not found' },
  // A listed file's item (the location is checked before the item id).
  { method: 'GET', path: '/v1/locations/:id/archives/:archive_id', kind: 'location', notFound: 'location not found' },
  { method: 'GET', path: '/v1/locations/:id/saft', kind: 'location', notFound: 'location not found' },
  { method: 'DELETE', path: '/v1/api-keys/:id', kind: 'apiKey', notFound: 'API key not found' },
  { method: 'POST', path: '/v1/api-keys/:id/rotate', kind: 'apiKey', notFound: 'API key not found' },
  { method: 'DELETE', path: '/v1/account/consents/:id', kind: 'consent', notFound: 'consent not found' },
  { method: 'GET', path: '/v1/transactions/:id', kind: 'transaction', notFound: 'transaction not found' },
  { method: 'GET', path: '/v1/transactions/:id/fiscal-record', kind: 'transaction', notFound: 'transaction not found' },
  { method: 'GET', path: '/v1/transactions/:id/qr.png', kind: 'transaction', notFound: 'transaction not found' },
  { method: 'GET', path: '/v1/transactions/:id/receipt', kind: 'transaction', notFound: 'transaction not found' },
  { method: 'POST', path: '/v1/transactions/:id/receipt/duplicate', kind: 'transaction', notFound: 'transaction not found' },
  { method: 'POST', path: '/v1/transactions/:id/cancel', kind: 'transaction', notFound: 'transaction not found' },
  { method: 'POST', path: '/v1/transactions/:id/correct', kind: 'transaction', payload: { metadata: { description: 'taken over' } }, notFound: 'transaction not found' },
  { method: 'GET', path: '/v1/webhooks/:id', kind: 'webhook', notFound: 'webhook not found' },
  { method: 'PATCH', path: '/v1/webhooks/:id', kind: 'webhook', payload: { enabled: false }, notFound: 'webhook not found' },
  { method: 'DELETE', path: '/v1/webhooks/:id', kind: 'webhook', notFound: 'webhook not found' },
  { method: 'POST', path: '/v1/webhooks/:id/rotate-secret', kind: 'webhook', notFound: 'webhook not found' },
  { method: 'GET', path: '/v1/webhooks/:id/deliveries', kind: 'webhook', notFound: 'webhook not found' },
  { method: 'DELETE', path: '/v1/certificates/:id', kind: 'certificate', notFound: 'certificate not found' },
];

/**
 * Routes whose path parameter names no account's resource: an authority's inbound channel
 * (no API key, no account: the channel's secret authenticates the authority, and the
 * message finds its record whoever owns it; test/api/lifecycle-hooks.test.ts).
 */
const NOT_TENANT_ROUTES = ['POST /v1/inbound/:channel',
  // The agent id is a name the caller's engine picks, not an id the service issued: every
  // account has its own agents, so another account's agent id is simply a new agent of the
  // caller (test/api/fleet.test.ts checks two accounts' agents of one name stay apart).
  'POST /v1/agents/:agent_id/telemetry'];

interface ListRoute {
  url: string;
  kind: Kind;
}

const LISTS: ListRoute[] = [
  { url: '/v1/locations', kind: 'location' },
  { url: '/v1/locations?country=ES', kind: 'location' },
  { url: '/v1/locations?status=active', kind: 'location' },
  { url: '/v1/api-keys', kind: 'apiKey' },
  { url: '/v1/account/consents', kind: 'consent' },
  { url: '/v1/transactions', kind: 'transaction' },
  { url: '/v1/webhooks', kind: 'webhook' },
  { url: '/v1/certificates', kind: 'certificate' },
];

/** Where the owner reads a resource of each kind back (to check it is unchanged). */
const LIST_URL: Record<Kind, string> = {
  location: '/v1/locations?limit=100',
  apiKey: '/v1/api-keys?limit=100',
  consent: '/v1/account/consents?limit=100',
  transaction: '/v1/transactions?limit=100',
  webhook: '/v1/webhooks',
  certificate: '/v1/certificates',
};

interface Tenant {
  key: string;
  ids: Record<Kind, string[]>;
  /** A restricted key of this account that is never used before the end (so last_used_at stays put). */
  spareKey: string;
}

async function ok(res: { statusCode: number; body: string; json(): any }, status: number) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

let p12: Buffer | undefined;
/** One real PKCS#12 for every tenant (openssl, made once). */
const tenantP12 = () => (p12 ??= exportP12(generateCert(), 'pw'));

/** An account with one resource of every kind (two keys: the root key and a spare one). */
async function tenant(): Promise<Tenant> {
  const { key, keyId } = await t.signup({ terms_accepted_at: '2026-01-01T00:00:00Z', privacy_policy_version: 'v1' });
  const es = await ok(await t.request({ method: 'POST', url: '/v1/locations', key, payload: locationBodies['es-verifactu'] }), 201);
  const gr = await ok(await t.request({ method: 'POST', url: '/v1/locations', key, payload: locationBodies['gr-mydata'] }), 201);
  const spare = await ok(await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'spare', permissions: ['locations:read'] } }), 201);
  const consent = await ok(await t.request({ method: 'POST', url: '/v1/account/consents', key, payload: { type: 'marketing', version: 'v2' } }), 201);
  const signupConsents = await ok(await t.request({ method: 'GET', url: '/v1/account/consents', key }), 200);
  const fr = await ok(await t.request({ method: 'POST', url: '/v1/locations', key, payload: locationBodies['fr-nf525'] }), 201);
  const sale = {
    location_id: fr.id, timestamp: '2026-03-02T09:30:00Z', currency: 'EUR', payment_method: 'cash',
    items: [{ description: 'Café', quantity: 1, unit_price: 200, tax_rate: 10 }], pretax_amount: 200, tax_amount: 20, total_amount: 220,
  };
  const txA = await ok(await t.request({ method: 'POST', url: '/v1/transactions', key, payload: sale }), 201);
  const txB = await ok(await t.request({ method: 'POST', url: '/v1/transactions', key, payload: { ...sale, payment_method: 'card' } }), 201);
  const hook = await ok(await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: 'https://93.184.216.34/hooks/fiscal', events: ['fiscalization.completed'] } }), 201);
  const certificateId = `cert-${crypto.randomUUID()}`;
  const { payload, headers } = uploadForm({ certificateId, password: 'pw', file: tenantP12() });
  await ok(await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers }), 201);
  return {
    key,
    spareKey: spare.key,
    ids: {
      location: [es.id, gr.id, fr.id],
      apiKey: [spare.id, keyId],
      consent: [consent.id, ...signupConsents.data.map((c: { id: string }) => c.id).filter((id: string) => id !== consent.id)],
      transaction: [txA.id, txB.id],
      webhook: [hook.id],
      certificate: [certificateId],
    },
  };
}

/** The owner's view of one of its resources. */
async function snapshot(owner: Tenant, kind: Kind, id: string): Promise<unknown> {
  const res = await t.request({ method: 'GET', url: LIST_URL[kind], key: owner.key });
  const found = (res.json().data as Array<Record<string, unknown>>).find((r) => idOf(kind, r) === id);
  expect(found, `${kind} ${id} is listed for its owner`).toBeDefined();
  if (kind === 'location') {
    // GET by id too: the one the owner would use.
    const one = await t.request({ method: 'GET', url: `/v1/locations/${id}`, key: owner.key });
    expect(one.json()).toEqual(found);
  }
  if (kind === 'apiKey') {
    // last_used_at is the owner's own bookkeeping (its snapshots use its key), not B's doing.
    const { last_used_at: _used, ...rest } = found as Record<string, unknown>;
    return rest;
  }
  return found;
}

const call = (route: IdRoute, id: string, key: string) =>
  t.request({ method: route.method, url: route.path.replace(':id', encodeURIComponent(id)), key, ...(route.payload ? { payload: route.payload } : {}) });

let A: Tenant;
let B: Tenant;
beforeAll(async () => {
  A = await tenant();
  B = await tenant();
  // Sanity: the fixtures are what the tests think they are.
  expect(A.ids.location).toHaveLength(3);
  expect(A.ids.apiKey).toHaveLength(2);
  expect(A.ids.consent).toHaveLength(3);
});

describe('routes with an id: another account\'s id is 404, and nothing changes', () => {
  it.each(ID_ROUTES.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', async (_name, route) => {
    for (const id of A.ids[route.kind]) {
      const before = await snapshot(A, route.kind, id);

      const res = await call(route, id, B.key);
      expect(res.statusCode, `${route.method} ${route.path} with A's ${route.kind} ${id}: ${res.body}`).toBe(404);
      expect(res.json()).toEqual({ error: route.notFound });

      // No existence oracle: the answer is the same as for an id that exists nowhere.
      const random = await call(route, RANDOM_UUID, B.key);
      expect(random.statusCode).toBe(404);
      expect(res.json()).toEqual(random.json());
      expect(res.headers['content-type']).toBe(random.headers['content-type']);
      const malformed = await call(route, 'not-a-uuid', B.key);
      expect(malformed.statusCode).toBe(404);
      expect(malformed.json()).toEqual(random.json());

      expect(await snapshot(A, route.kind, id)).toEqual(before);
    }
  });

  it('the table covers every /v1 route with a path parameter the app serves', () => {
    const inTable = new Set(ID_ROUTES.map((r) => `${r.method} ${r.path}`));
    const served = parametrizedRoutes();
    // The known ones are found (the probe itself works)...
    expect(served).toEqual(expect.arrayContaining(['GET /v1/locations/:id', 'DELETE /v1/account/consents/:id', 'POST /v1/api-keys/:id/rotate']));
    for (const r of served.filter((r) => !NOT_TENANT_ROUTES.includes(r))) expect(inTable, `${r} is missing from ID_ROUTES`).toContain(r);
  });
});

describe('lists never show another account\'s data', () => {
  it.each(LISTS.map((l) => [l.url, l] as const))('%s', async (_name, route) => {
    const sep = route.url.includes('?') ? '&' : '?';
    const bList = await ok(await t.request({ method: 'GET', url: `${route.url}${sep}limit=100`, key: B.key }), 200);
    const bIds = bList.data.map((r: Record<string, unknown>) => idOf(route.kind, r));
    // B sees its own (the test is not vacuous) and none of A's.
    expect(bIds.length).toBeGreaterThan(0);
    expect(bIds.some((id: string) => B.ids[route.kind].includes(id))).toBe(true);
    for (const id of A.ids[route.kind]) expect(bIds).not.toContain(id);
    expect(JSON.stringify(bList)).not.toContain(A.ids[route.kind][0]);
    if (bList.total !== undefined) expect(bList.total).toBe(bIds.length); // the webhook list is {data} only

    // And the other way round.
    const aList = await ok(await t.request({ method: 'GET', url: `${route.url}${sep}limit=100`, key: A.key }), 200);
    for (const id of B.ids[route.kind]) expect(aList.data.map((r: Record<string, unknown>) => idOf(route.kind, r))).not.toContain(id);
  });

  it('the retry queue shows only the caller\'s submissions', async () => {
    const es = A.ids.location[0]!;
    const tx = await ok(await t.request({
      method: 'POST', url: '/v1/transactions', key: A.key,
      payload: { location_id: es, timestamp: '2026-03-02T09:30:00Z', currency: 'EUR', payment_method: 'cash', items: [{ description: 'Café', quantity: 1, unit_price: 200, tax_rate: 10 }], pretax_amount: 200, tax_amount: 20, total_amount: 220 },
    }), 201);
    const mine = await ok(await t.request({ method: 'GET', url: '/v1/retry-queue', key: A.key }), 200);
    expect(mine.data.map((e: { transaction_id: string }) => e.transaction_id)).toContain(tx.id);
    const theirs = await ok(await t.request({ method: 'GET', url: '/v1/retry-queue', key: B.key }), 200);
    expect(theirs.total).toBe(0);
    expect(JSON.stringify(theirs)).not.toContain(tx.id);
    expect((await ok(await t.request({ method: 'GET', url: '/v1/retry-queue/stats', key: B.key }), 200)).total).toBe(0);
  });

  it('merchant_count counts only the caller\'s locations', async () => {
    for (const who of [A, B]) {
      const status = await ok(await t.request({ method: 'GET', url: '/v1/account/status', key: who.key }), 200);
      expect(status.merchant_count).toBe(3);
    }
  });
});

describe('after everything B tried', () => {
  it('A\'s resources still work: locations active and named as before, keys valid, consents active', async () => {
    const locations = await ok(await t.request({ method: 'GET', url: '/v1/locations', key: A.key }), 200);
    expect(locations.total).toBe(3);
    for (const l of locations.data) expect(l).toMatchObject({ status: 'active' });
    expect(locations.data.map((l: { name: string }) => l.name)).not.toContain('taken over');

    // The spare key was never rotated or revoked: it still authenticates.
    const viaSpare = await t.request({ method: 'GET', url: '/v1/locations', key: A.spareKey });
    expect(viaSpare.statusCode).toBe(200);
    expect(viaSpare.json().total).toBe(3);

    const keys = await ok(await t.request({ method: 'GET', url: '/v1/api-keys', key: A.key }), 200);
    expect(keys.total).toBe(2);
    for (const k of keys.data) expect(k.revoked_at).toBeNull();

    const consents = await ok(await t.request({ method: 'GET', url: '/v1/account/consents', key: A.key }), 200);
    expect(consents.total).toBe(3);
    for (const c of consents.data) expect(c).toMatchObject({ active: true, revoked_at: null });
  });
});

/** `METHOD /path/:param` of every /v1 route with a path parameter, from the OpenAPI document. */
function parametrizedRoutes(): string[] {
  const spec = t.app.swagger() as { paths?: Record<string, Record<string, unknown>> };
  const out: string[] = [];
  for (const [path, ops] of Object.entries(spec.paths ?? {})) {
    if (!path.startsWith('/v1/') || !path.includes('{')) continue;
    const url = path.replace(/\{(\w+)\}/g, ':$1');
    for (const method of Object.keys(ops)) {
      const m = method.toUpperCase() as Method;
      if (t.app.hasRoute({ method: m, url })) out.push(`${m} ${url}`);
    }
  }
  return out;
}
