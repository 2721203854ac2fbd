import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deriveKeys } from '../../src/crypto/master-key.ts';
import { unseal } from '../../src/crypto/sealed.ts';
import { createWorker } from '../../src/jobs/runner.ts';
import { createDeliverWebhookHandler, type DeliverWebhookDeps } from '../../src/jobs/tasks/deliver-webhook.ts';
import { createEventPublisher, DELIVER_WEBHOOK } from '../../src/services/event-publisher.ts';
import { EVENT_TYPES, type EventType } from '../../src/services/events.ts';
import type { LookupAll } from '../../src/webhooks/url-guard.ts';
import { RANDOM_UUID } from '../support/fixtures.ts';
import { ManualClock, startTestApp, TEST_MASTER_KEY, type TestApp } from '../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/*
 * Webhooks end to end: the CRUD endpoints through HTTP, and deliveries to a real HTTP
 * receiver on 127.0.0.1 that checks every signature itself.
 *
 * The clock is manual and starts in 2090: on PostgreSQL the job table is shared by the
 * run's test files, and other files drain their workers (which also handle
 * deliver_webhook) at their own, earlier clocks; our jobs are never due for them.
 */
const clock = new ManualClock('2090-01-01T00:00:00.000Z');
const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const keys = deriveKeys(TEST_MASTER_KEY);

let t: TestApp; // cloud, insecure webhooks allowed (loopback http): the documented test mode
let strict: TestApp; // cloud as deployed: https only, no loopback
let local: TestApp; // Embedded-Local
beforeAll(async () => {
  t = await startTestApp({ clock, config: { mode: 'cloud', webhookAllowInsecure: true } });
  strict = await startTestApp({ db: t.db, clock, config: { mode: 'cloud', webhookAllowInsecure: false } });
  local = await startTestApp({ db: t.db, clock, config: { mode: 'local', webhookAllowInsecure: true } });
});
afterAll(async () => {
  await local?.close();
  await strict?.close();
  await t?.close();
});

const accounts: string[] = [];
const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
  // Nothing of one test may run in another's drain.
  await t.db.query(
    `UPDATE jobs SET status = 'dead', locked_by = NULL, locked_until = NULL WHERE kind = $1 AND account_id = ANY($2::uuid[]) AND status IN ('pending', 'failed', 'processing')`,
    [DELIVER_WEBHOOK, accounts],
  );
});

async function signup(app: TestApp = t) {
  const s = await app.signup();
  accounts.push(s.accountId);
  return s;
}
async function receiver(opts: { skewMs?: number } = {}): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver({ now: () => clock.now().getTime() + (opts.skewMs ?? 0) });
  receivers.push(r);
  return r;
}

const svcDeps = (over: Partial<DeliverWebhookDeps> = {}): DeliverWebhookDeps => ({
  db: t.db, clock, keys, log, config: { liveEnabled: false, mode: 'cloud', webhookAllowInsecure: true }, ...over,
});
const publisher = () => createEventPublisher(svcDeps());
function workerWith(over: Partial<DeliverWebhookDeps> = {}) {
  return createWorker({ db: t.db, clock, log, handlers: { [DELIVER_WEBHOOK]: createDeliverWebhookHandler(svcDeps(over)) } });
}

async function publish(accountId: string, type: EventType, data: Record<string, unknown> = {}) {
  return t.db.transaction((tx) => publisher().publishEvent(tx, { accountId, type, data }, clock.now()));
}

const create = (key: string, payload: unknown, app: TestApp = t) =>
  app.request({ method: 'POST', url: '/v1/webhooks', key, payload: payload as object });
const get = (key: string, id: string) => t.request({ method: 'GET', url: `/v1/webhooks/${id}`, key });
const list = (key: string) => t.request({ method: 'GET', url: '/v1/webhooks', key });
const patch = (key: string, id: string, payload: unknown, app: TestApp = t) =>
  app.request({ method: 'PATCH', url: `/v1/webhooks/${id}`, key, payload: payload as object });
const del = (key: string, id: string) => t.request({ method: 'DELETE', url: `/v1/webhooks/${id}`, key });
const rotate = (key: string, id: string) => t.request({ method: 'POST', url: `/v1/webhooks/${id}/rotate-secret`, key });
const deliveries = (key: string, id: string, query = '') => t.request({ method: 'GET', url: `/v1/webhooks/${id}/deliveries${query}`, key });

async function created(key: string, payload: Record<string, unknown>, app: TestApp = t): Promise<Record<string, any>> {
  const res = await create(key, payload, app);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
async function deliveryLog(key: string, id: string, query = ''): Promise<Record<string, any>> {
  const res = await deliveries(key, id, query);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const err = (res: { statusCode: number; json(): any }) => [res.statusCode, res.json().error];

const tick = (ms = 1000) => clock.advance(ms);
const nowIso = () => clock.now().toISOString();
const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);
const WEBHOOK_FIELDS = ['account_id', 'created_at', 'description', 'enabled', 'events', 'id', 'updated_at', 'url'];

async function storedSecret(id: string): Promise<string> {
  return (await t.db.query<{ secret: string }>('SELECT secret FROM webhook_subscriptions WHERE id = $1', [id])).rows[0]!.secret;
}
async function eventsOf(accountId: string, type?: string) {
  const res = await t.db.query<{ id: string; type: string; data: any }>(
    `SELECT id, type, data FROM events WHERE account_id = $1 ${type ? 'AND type = $2' : ''} ORDER BY created_at, id`,
    type ? [accountId, type] : [accountId],
  );
  return res.rows.map((r) => ({ ...r, data: typeof r.data === 'string' ? JSON.parse(r.data) : r.data }));
}
async function deliveryRow(id: string) {
  return (await t.db.query<{ status: string; attempt: number; error: string | null }>(
    'SELECT status, attempt, error FROM webhook_deliveries WHERE id = $1', [id])).rows[0]!;
}
async function jobOf(deliveryId: string) {
  return (await t.db.query<{ status: string; attempt: number; run_at: Date; last_error: string | null }>(
    `SELECT status, attempt, run_at, last_error FROM jobs WHERE kind = $1 AND payload->>'delivery_id' = $2`, [DELIVER_WEBHOOK, deliveryId])).rows[0]!;
}

/** A retry-entry shaped event body, as the submission side publishes it. */
const entryData = (accountId: string, over: Record<string, unknown> = {}) => ({
  entry_id: '11111111-1111-4111-8111-111111111111',
  transaction_id: '22222222-2222-4222-8222-222222222222',
  account_id: accountId,
  status: 'completed',
  attempt: 1,
  max_attempts: 50,
  last_error: null,
  transaction: { id: '22222222-2222-4222-8222-222222222222', status: 'success', fiscal_id: 'VF-1' },
  ...over,
});

describe('POST /v1/webhooks', () => {
  it('201 with the subscription and its secret (whsec_ + 32 base62), sealed at rest', async () => {
    const { key, accountId } = await signup();
    tick();
    const res = await create(key, { url: 'https://hooks.example.com/fiscal', events: ['fiscalization.completed', 'transaction.failed'], description: 'ERP' });
    expect(res.statusCode, res.body).toBe(201);
    const w = res.json();
    expect(Object.keys(w).sort()).toEqual([...WEBHOOK_FIELDS, 'secret'].sort());
    expect(w).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      account_id: accountId,
      url: 'https://hooks.example.com/fiscal',
      events: ['fiscalization.completed', 'transaction.failed'],
      description: 'ERP',
      enabled: true,
      secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{32}$/),
      created_at: nowIso(),
      updated_at: nowIso(),
    });
    // At rest: sealed with MASTER_KEY, bound to this webhook; the plaintext is nowhere in the row.
    const sealed = await storedSecret(w.id);
    expect(sealed).toMatch(/^sealed:v1:/);
    expect(sealed).not.toContain(w.secret.slice(6));
    expect(unseal(keys.seal, sealed, `webhook:${w.id}:secret`)).toBe(w.secret);
    expect(() => unseal(keys.seal, sealed, `webhook:${RANDOM_UUID}:secret`)).toThrow();
    const row = (await t.db.query('SELECT * FROM webhook_subscriptions WHERE id = $1', [w.id])).rows[0]!;
    expect(JSON.stringify(row)).not.toContain(w.secret);
  });

  it('accepts every event type of both vocabularies and the Greek/SDI ones; duplicates collapse; enabled and description optional', async () => {
    const { key } = await signup();
    const w = await created(key, { url: 'https://hooks.example.com/all', events: [...EVENT_TYPES, 'fiscalization.completed'], enabled: false });
    expect(w.events).toEqual([...EVENT_TYPES]);
    expect(w.enabled).toBe(false);
    expect(w.description).toBeNull();
  });

  it('400 with the spec messages for every invalid field', async () => {
    const { key } = await signup();
    const url = 'https://hooks.example.com/x';
    const events = ['fiscalization.completed'];
    const cases: Array<[unknown, string]> = [
      [{}, 'url is required'],
      [{ events }, 'url is required'],
      [{ url: '', events }, 'url is required'],
      [{ url: '   ', events }, 'url is required'],
      [{ url: 42, events }, 'invalid url'],
      // A required field sent as null is a missing one (docs/decisions.md "Errors").
      [{ url: null, events }, 'url is required'],
      [{ url: 'not a url', events }, 'invalid url'],
      [{ url: 'hooks.example.com/x', events }, 'invalid url'],
      [{ url: 'ftp://hooks.example.com/x', events }, 'invalid url: only https URLs are accepted'],
      [{ url: 'https://user:pw@hooks.example.com/x', events }, 'invalid url: credentials in the URL are not allowed (authenticate with the signature)'],
      [{ url: `https://hooks.example.com/${'a'.repeat(2100)}`, events }, 'invalid url: longer than 2048 characters'],
      [{ url }, 'events is required'],
      [{ url, events: [] }, 'events is required'],
      [{ url, events: null }, 'events is required'],
      [{ url, events: 'fiscalization.completed' }, 'events must be an array of event types'],
      [{ url, events: ['fiscalization.completed', 'invoice.paid'] }, 'invalid event type'],
      [{ url, events: ['FISCALIZATION.COMPLETED'] }, 'invalid event type'],
      [{ url, events: [7] }, 'invalid event type'],
      [{ url, events, description: 'x'.repeat(501) }, 'description must be a string of at most 500 characters, or null'],
      [{ url, events, description: 5 }, 'description must be a string of at most 500 characters, or null'],
      [{ url, events, enabled: 'yes' }, 'enabled must be true or false'],
    ];
    for (const [payload, message] of cases) {
      const res = await create(key, payload);
      expect([res.statusCode, res.json()], JSON.stringify(payload).slice(0, 80)).toEqual([400, { error: message }]);
    }
    expect((await list(key)).json()).toEqual({ data: [] });
  });
});

describe('GET, PATCH, DELETE /v1/webhooks', () => {
  it('list {data} newest first, without secrets; get one; patch re-validates; delete is 204 then 404', async () => {
    const { key } = await signup();
    const a = await created(key, { url: 'https://a.example.com/h', events: ['fiscalization.completed'] });
    tick();
    const b = await created(key, { url: 'https://b.example.com/h', events: ['transaction.fiscalized'], description: 'b' });
    const { secret: _a, ...aView } = a;
    const { secret: _b, ...bView } = b;

    const all = await list(key);
    expect(all.statusCode).toBe(200);
    expect(all.json()).toEqual({ data: [bView, aView] });
    expect(all.body).not.toContain('whsec_');
    const one = await get(key, a.id);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(aView);

    tick();
    const p = await patch(key, a.id, { url: 'https://a2.example.com/h', events: ['certificate.expiring', 'certificate.expired'], description: 'renamed', enabled: false });
    expect(p.statusCode, p.body).toBe(200);
    expect(p.json()).toEqual({ ...aView, url: 'https://a2.example.com/h', events: ['certificate.expiring', 'certificate.expired'], description: 'renamed', enabled: false, updated_at: nowIso() });
    expect((await get(key, a.id)).json()).toEqual(p.json());
    // null clears the description; an empty body changes nothing but updated_at
    expect((await patch(key, a.id, { description: null })).json().description).toBeNull();
    tick();
    expect((await patch(key, a.id, {})).json()).toMatchObject({ url: 'https://a2.example.com/h', enabled: false, updated_at: nowIso() });
    // The secret survives a PATCH.
    expect(unseal(keys.seal, await storedSecret(a.id), `webhook:${a.id}:secret`)).toBe(a.secret);

    const bad: Array<[unknown, string]> = [
      [{ url: '' }, 'url is required'],
      [{ url: 'nope' }, 'invalid url'],
      [{ url: 'https://10.0.0.1/h' }, 'invalid url: 10.0.0.1 is a private address'],
      [{ url: 'http://hooks.example.com/h' }, 'invalid url: https is required (plain http only to loopback addresses)'],
      [{ events: [] }, 'events is required'],
      [{ events: ['nope'] }, 'invalid event type'],
      [{ enabled: 1 }, 'enabled must be true or false'],
    ];
    for (const [payload, message] of bad) {
      expect(err(await patch(key, a.id, payload)), JSON.stringify(payload)).toEqual([400, message]);
    }

    const d = await del(key, a.id);
    expect(d.statusCode).toBe(204);
    expect(d.body).toBe('');
    expect(err(await get(key, a.id))).toEqual([404, 'webhook not found']);
    expect(err(await del(key, a.id))).toEqual([404, 'webhook not found']);
    expect(err(await patch(key, a.id, { enabled: true }))).toEqual([404, 'webhook not found']);
    expect(err(await rotate(key, a.id))).toEqual([404, 'webhook not found']);
    expect(err(await deliveries(key, a.id))).toEqual([404, 'webhook not found']);
    expect((await list(key)).json()).toEqual({ data: [bView] });
  });

  it('404 webhook not found for ids we never issued (not a UUID, unknown UUID)', async () => {
    const { key } = await signup();
    for (const id of ['nope', RANDOM_UUID, '1', `${RANDOM_UUID}x`]) {
      expect(err(await get(key, id))).toEqual([404, 'webhook not found']);
      expect(err(await patch(key, id, { enabled: false }))).toEqual([404, 'webhook not found']);
      expect(err(await del(key, id))).toEqual([404, 'webhook not found']);
      expect(err(await rotate(key, id))).toEqual([404, 'webhook not found']);
      expect(err(await deliveries(key, id))).toEqual([404, 'webhook not found']);
    }
  });

  it("another account's webhook is 404 on every route, and stays unchanged", async () => {
    const owner = await signup();
    const other = await signup();
    const w = await created(owner.key, { url: 'https://owner.example.com/h', events: ['fiscalization.completed'] });
    const { secret, ...view } = w;
    expect(err(await get(other.key, w.id))).toEqual([404, 'webhook not found']);
    expect(err(await patch(other.key, w.id, { url: 'https://attacker.example.com/h' }))).toEqual([404, 'webhook not found']);
    // 404 comes before validation: an invalid body tells nothing either
    expect(err(await patch(other.key, w.id, { url: 'nope' }))).toEqual([404, 'webhook not found']);
    expect(err(await rotate(other.key, w.id))).toEqual([404, 'webhook not found']);
    expect(err(await deliveries(other.key, w.id))).toEqual([404, 'webhook not found']);
    expect(err(await del(other.key, w.id))).toEqual([404, 'webhook not found']);
    expect((await list(other.key)).json()).toEqual({ data: [] });
    expect((await get(owner.key, w.id)).json()).toEqual(view);
    expect(unseal(keys.seal, await storedSecret(w.id), `webhook:${w.id}:secret`)).toBe(secret);
  });

  it('permissions: webhooks:read lists and reads, webhooks:write changes', async () => {
    const { key } = await signup();
    const w = await created(key, { url: 'https://h.example.com/h', events: ['fiscalization.completed'] });
    const restricted = async (permissions: string[]) => {
      const res = await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'r', permissions } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().key as string;
    };
    const reader = await restricted(['webhooks:read']);
    const writer = await restricted(['webhooks:write']);
    const neither = await restricted(['locations:read']);
    const needRead = [403, 'insufficient permission: webhooks:read required'];
    const needWrite = [403, 'insufficient permission: webhooks:write required'];

    expect((await list(reader)).statusCode).toBe(200);
    expect((await get(reader, w.id)).statusCode).toBe(200);
    expect((await deliveries(reader, w.id)).statusCode).toBe(200);
    expect(err(await create(reader, { url: 'https://x.example.com', events: ['fiscalization.completed'] }))).toEqual(needWrite);
    expect(err(await patch(reader, w.id, { enabled: false }))).toEqual(needWrite);
    expect(err(await rotate(reader, w.id))).toEqual(needWrite);
    expect(err(await del(reader, w.id))).toEqual(needWrite);

    expect(err(await list(writer))).toEqual(needRead);
    expect(err(await deliveries(writer, w.id))).toEqual(needRead);
    expect((await patch(writer, w.id, { description: 'w' })).statusCode).toBe(200);
    expect((await rotate(writer, w.id)).statusCode).toBe(200);
    expect(err(await get(neither, w.id))).toEqual(needRead);
    expect(err(await t.request({ method: 'GET', url: '/v1/webhooks' }))).toEqual([401, 'missing or invalid Authorization header']);
  });
});

describe('URL rules (SSRF)', () => {
  const events = ['fiscalization.completed'];

  it('cloud as deployed: https only; private, loopback, link-local, CGNAT, ULA, metadata and localhost targets refused', async () => {
    const { key } = await signup(strict);
    const cases: Array<[string, string]> = [
      ['http://hooks.example.com/h', 'https is required'],
      ['http://127.0.0.1:9/h', 'https is required'],
      ['https://10.0.0.5/h', '10.0.0.5 is a private address'],
      ['https://172.20.1.1/h', '172.20.1.1 is a private address'],
      ['https://192.168.1.10/h', '192.168.1.10 is a private address'],
      ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address'],
      ['https://169.254.3.4/h', '169.254.3.4 is a link-local address'],
      ['https://100.64.1.1/h', '100.64.1.1 is a carrier-grade NAT (shared) address'],
      ['https://127.0.0.1/h', '127.0.0.1 is a loopback address'],
      ['https://0177.0.0.1/h', '127.0.0.1 is a loopback address'],
      ['https://[::1]/h', '::1 is a loopback address'],
      ['https://[fd00::1]/h', 'fd00::1 is a unique-local IPv6 address'],
      ['https://[fe80::1]/h', 'fe80::1 is a link-local address'],
      ['https://[::ffff:192.168.0.1]/h', '::ffff:c0a8:1 is a private address'],
      ['https://0.0.0.0/h', '0.0.0.0 is an unspecified address'],
      ['https://localhost/h', 'localhost is a loopback name'],
      ['https://localhost:8443/h', 'localhost is a loopback name'],
      ['https://app.localhost/h', 'app.localhost is a loopback name'],
    ];
    for (const [url, reason] of cases) {
      expect(err(await create(key, { url, events }, strict)), url).toEqual([400, `invalid url: ${reason}`]);
    }
    const w = await created(key, { url: 'https://8.8.8.8/h', events }, strict);
    expect(err(await patch(key, w.id, { url: 'https://192.168.0.1/h' }, strict))).toEqual([400, 'invalid url: 192.168.0.1 is a private address']);
  });

  it('insecure webhooks in the cloud (dev/test): loopback http allowed, private and metadata targets still refused', async () => {
    const { key } = await signup();
    await created(key, { url: 'http://127.0.0.1:9/h', events });
    await created(key, { url: 'http://localhost:9/h', events });
    await created(key, { url: 'https://127.0.0.1/h', events });
    expect(err(await create(key, { url: 'https://10.1.2.3/h', events }))).toEqual([400, 'invalid url: 10.1.2.3 is a private address']);
    expect(err(await create(key, { url: 'https://192.168.7.7/h', events }))).toEqual([400, 'invalid url: 192.168.7.7 is a private address']);
    expect(err(await create(key, { url: 'https://169.254.169.254/h', events }))).toEqual([400, 'invalid url: 169.254.169.254 is a cloud metadata address']);
    expect(err(await create(key, { url: 'http://10.1.2.3/h', events }))).toEqual([400, 'invalid url: https is required (plain http only to loopback addresses)']);
    expect(err(await create(key, { url: 'http://hooks.example.com/h', events }))).toEqual([400, 'invalid url: https is required (plain http only to loopback addresses)']);
  });

  it('local mode: LAN targets over https; plain http only to loopback', async () => {
    const { key } = await signup(local);
    await created(key, { url: 'https://192.168.1.20/h', events }, local);
    await created(key, { url: 'http://127.0.0.1:9/h', events }, local);
    expect(err(await create(key, { url: 'http://192.168.1.20/h', events }, local))).toEqual([400, 'invalid url: https is required (plain http only to loopback addresses)']);
  });
});

describe('delivery', () => {
  it('an event published in a transaction is delivered, signed in every scheme, and logged', async () => {
    const r = await receiver();
    const { key, accountId } = await signup();
    const w = await created(key, { url: r.url, events: ['certificate.expiring'] });
    r.secret = w.secret;
    tick();
    const publishedAt = clock.now();

    // As the submission side does: publish inside its database transaction (the port's method).
    const data = entryData(accountId, { id: 'ignored', event: 'ignored', timestamp: 'ignored' });
    await t.db.transaction((tx) => publisher().publish(tx, { accountId, type: 'certificate.expiring', data }, publishedAt));
    const [event] = await eventsOf(accountId);
    expect(event).toMatchObject({ type: 'certificate.expiring', data });
    const pending = await deliveryLog(key, w.id);
    expect(pending).toMatchObject({ total: 1, limit: 20, offset: 0, data: [{ status: 'pending', attempt: 0, attempts: [] }] });
    expect(r.received).toHaveLength(0); // nothing is sent before a worker runs

    tick(2000);
    expect(await workerWith().drain()).toBe(1);
    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    expect(got.answered).toBe(200);
    expect(got.method).toBe('POST');
    expect(got.path).toBe('/hooks/fiscal');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-webhook-timestamp']).toBe(String(nowSeconds()));
    expect(got.headers['webhook-timestamp']).toBe(String(nowSeconds()));
    expect(got.headers['x-webhook-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(got.headers['x-fiscalization-signature']).toMatch(new RegExp(`^t=${nowSeconds()},v1=[0-9a-f]{64}$`));
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(got.check(w.secret)).toEqual({ spec: true, fiscalization: true, standard: true, fresh: true, all: true });
    const { id: _i, event: _e, timestamp: _t, ...rest } = data as Record<string, unknown>;
    expect(got.json).toEqual({ id: event!.id, event: 'certificate.expiring', ...rest, timestamp: publishedAt.toISOString() });

    const logged = await deliveryLog(key, w.id);
    expect(logged).toEqual({
      total: 1, limit: 20, offset: 0,
      data: [{
        id: expect.any(String), webhook_id: w.id, event_id: event!.id, event: 'certificate.expiring', status: 'succeeded',
        attempt: 1, max_attempts: 5, response_status: 200, response_body: 'ok: received', error: null,
        duration_ms: expect.any(Number), next_attempt_at: null, created_at: publishedAt.toISOString(), delivered_at: nowIso(),
        payload: got.json,
        attempts: [{
          attempt: 1, outcome: 'succeeded', response_status: 200, response_body: 'ok: received', error: null,
          duration_ms: expect.any(Number), attempted_at: nowIso(),
        }],
      }],
    });
    expect((await jobOf(logged.data[0].id)).status).toBe('completed');
    // webhook-id is the delivery's (the same on its retries): a fact with two names is two deliveries.
    expect(got.headers['webhook-id']).toBe(logged.data[0].id);
    // Done means done: another drain sends nothing.
    tick(3_600_000);
    expect(await workerWith().drain()).toBe(0);
    expect(r.received).toHaveLength(1);
  });

  it('fan-out: only enabled subscriptions of the account that asked for the type or its alias; a fact goes out under both its names', async () => {
    const r = await receiver();
    const { key, accountId } = await signup();
    const other = await signup();
    const hook = async (k: string, name: string, events: string[], extra: Record<string, unknown> = {}) => {
      const w = await created(k, { url: `${r.url}?h=${name}`, events, ...extra });
      return w;
    };
    const completed = await hook(key, 'completed', ['fiscalization.completed']);
    const fiscalized = await hook(key, 'fiscalized', ['transaction.fiscalized']);
    const both = await hook(key, 'both', ['transaction.fiscalized', 'fiscalization.completed']);
    await hook(key, 'certs', ['certificate.expired']);
    await hook(key, 'disabled', ['fiscalization.completed'], { enabled: false });
    const deleted = await hook(key, 'deleted', ['fiscalization.completed']);
    expect((await del(key, deleted.id)).statusCode).toBe(204);
    await hook(other.key, 'other-account', ['fiscalization.completed']);
    const deadLetter = await hook(key, 'dead-letter', ['fiscalization.dead_letter']);
    r.secret = undefined; // checked below per subscription
    r.fail(204, ''); // any 2xx is a success

    // DECISIONS: "delivers both names of the same fact to subscriptions that asked for either".
    const { eventId, deliveryIds } = await publish(accountId, 'fiscalization.completed', entryData(accountId));
    expect(deliveryIds).toHaveLength(6);
    await workerWith().drain();
    const got = (h: string) => r.received.filter((x) => new URL(x.path, 'http://h').searchParams.get('h') === h);
    expect([...new Set(r.received.map((x) => new URL(x.path, 'http://h').searchParams.get('h')))].sort()).toEqual(['both', 'completed', 'fiscalized']);
    for (const [h, w] of [['completed', completed], ['fiscalized', fiscalized], ['both', both]] as const) {
      expect(got(h).map((x) => x.json.event).sort(), h).toEqual(['fiscalization.completed', 'transaction.fiscalized']);
      for (const x of got(h)) expect(x.check(w.secret).all, h).toBe(true);
      // Two messages, two webhook-ids: a receiver deduplicating by webhook-id keeps both.
      expect(new Set(got(h).map((x) => x.headers['webhook-id'])).size).toBe(2);
    }
    expect(got('both')[0]!.check(completed.secret).spec).toBe(false); // each subscription its own secret
    for (const x of r.received) expect(x.json.id).toBe(eventId);
    expect((await deliveryLog(key, fiscalized.id)).data.map((d: { event: string; status: string }) => [d.event, d.status]).sort()).toEqual([
      ['fiscalization.completed', 'succeeded'], ['transaction.fiscalized', 'succeeded'],
    ]);
    expect((await deliveryLog(key, fiscalized.id)).data[0]).toMatchObject({ response_status: 204, response_body: '' });

    // The other direction of the alias: transaction.failed reaches a fiscalization.dead_letter subscriber under that name.
    r.received.length = 0;
    tick();
    await publish(accountId, 'transaction.failed', entryData(accountId, { status: 'dead' }));
    await workerWith().drain();
    expect(r.received.map((x) => [new URL(x.path, 'http://h').searchParams.get('h'), x.json.event]).sort()).toEqual([
      ['dead-letter', 'fiscalization.dead_letter'], ['dead-letter', 'transaction.failed'],
    ]);
    for (const x of r.received) expect(x.check(deadLetter.secret).all).toBe(true);

    // An event nobody asked for is still recorded, with no delivery.
    tick();
    expect((await publish(accountId, 'transaction.sdi_status_changed', { transaction_id: RANDOM_UUID })).deliveryIds).toEqual([]);
    expect((await eventsOf(accountId)).map((e) => e.type)).toEqual(['fiscalization.completed', 'transaction.failed', 'transaction.sdi_status_changed']);
  });

  it('five attempts on schedule (at once, +10 s, +60 s, +300 s, +600 s), then dead and a dead-letter event — never sent back to the failing subscription', async () => {
    const failing = await receiver();
    const watcher = await receiver();
    const { key, accountId } = await signup();
    // The failing subscription also asks for dead letters: its own must not be sent to it.
    const a = await created(key, { url: failing.url, events: ['certificate.expiring', 'fiscalization.dead_letter'] });
    const b = await created(key, { url: watcher.url, events: ['transaction.failed'] });
    failing.secret = a.secret;
    watcher.secret = b.secret;
    failing.fail(500);
    tick();
    const t0 = clock.now().getTime();
    const { eventId, deliveryIds } = await publish(accountId, 'certificate.expiring', entryData(accountId));
    expect(deliveryIds).toHaveLength(1);
    const worker = workerWith();

    const offsets = [0, 10, 70, 370, 970];
    for (const [i, offset] of offsets.entries()) {
      if (i > 0) {
        clock.set(new Date(t0 + offset * 1000 - 1)); // a millisecond early: not runnable yet
        expect(await worker.drain()).toBe(0);
        expect(failing.received).toHaveLength(i);
        const row = await deliveryRow(deliveryIds[0]!);
        expect(row).toMatchObject({ status: 'failed', attempt: i, error: 'HTTP 500' });
      }
      clock.set(new Date(t0 + offset * 1000));
      await worker.drain();
      expect(failing.received, `attempt ${i + 1}`).toHaveLength(i + 1);
    }
    expect(failing.received.map((x) => x.timestamp - t0 / 1000)).toEqual(offsets);
    for (const x of failing.received) {
      expect(x.json).toMatchObject({ id: eventId, event: 'certificate.expiring' });
      expect(x.headers['webhook-id']).toBe(deliveryIds[0]); // the same id on every retry
      expect(x.check(a.secret).all).toBe(true);
    }

    // Dead: job, delivery and log.
    const delivery = await deliveryRow(deliveryIds[0]!);
    expect(delivery).toEqual({ status: 'dead', attempt: 5, error: 'HTTP 500' });
    expect(await jobOf(deliveryIds[0]!)).toMatchObject({ status: 'dead', attempt: 5, last_error: 'HTTP 500' });
    const logged = (await deliveryLog(key, a.id)).data[0];
    expect(logged).toMatchObject({ status: 'dead', attempt: 5, max_attempts: 5, response_status: 500, response_body: 'failing on purpose (500)', next_attempt_at: null, delivered_at: null });
    expect(logged.attempts.map((x: any) => [x.attempt, x.outcome, x.response_status, x.error, Date.parse(x.attempted_at) - t0])).toEqual(
      offsets.map((o, i) => [i + 1, 'failed', 500, 'HTTP 500', o * 1000]),
    );

    // The dead-letter event, recorded in the same commit, in the spec's retry-entry shape.
    const dead = await eventsOf(accountId, 'fiscalization.dead_letter');
    expect(dead).toHaveLength(1);
    expect(dead[0]!.data).toEqual({
      source: 'webhook_delivery', entry_id: deliveryIds[0], transaction_id: entryData(accountId).transaction_id, account_id: accountId,
      status: 'dead', attempt: 5, max_attempts: 5, last_error: 'HTTP 500', webhook_id: a.id, webhook_url: a.url,
      failed_event: { id: eventId, event: 'certificate.expiring' },
    });
    // Delivered to the other subscriber (under both its names), not to the failing one.
    await worker.drain();
    expect(failing.received).toHaveLength(5);
    expect(watcher.received.map((x) => x.json.event).sort()).toEqual(['fiscalization.dead_letter', 'transaction.failed']);
    for (const x of watcher.received) {
      expect(x.json).toMatchObject({ id: dead[0]!.id, entry_id: deliveryIds[0], status: 'dead' });
      expect(x.answered).toBe(200);
    }
    expect((await deliveryLog(key, a.id)).total).toBe(1);
  });

  it('a failed delivery of a dead-letter event announces nothing more (no loops)', async () => {
    const ra = await receiver();
    const rb = await receiver();
    const { key, accountId } = await signup();
    const a = await created(key, { url: ra.url, events: ['fiscalization.completed', 'fiscalization.dead_letter'] });
    const b = await created(key, { url: rb.url, events: ['transaction.failed', 'fiscalization.dead_letter'] });
    ra.fail(503);
    rb.fail(500);
    await publish(accountId, 'fiscalization.completed', entryData(accountId));
    const worker = workerWith();
    // Run every job until nothing is left, jumping the clock to the next due one.
    for (let i = 0; i < 50; i++) {
      await worker.drain();
      const next = (await t.db.query<{ at: Date | null }>(
        `SELECT min(run_at) AS at FROM jobs WHERE kind = $1 AND account_id = $2 AND status IN ('pending', 'failed')`, [DELIVER_WEBHOOK, accountId])).rows[0]!.at;
      if (!next) break;
      clock.set(next);
    }
    // a: the fact under both names, five attempts each, both dead: two dead letters.
    const count = (xs: { json: { event: string } }[]) => xs.reduce<Record<string, number>>((m, x) => ({ ...m, [x.json.event]: (m[x.json.event] ?? 0) + 1 }), {});
    expect(count(ra.received)).toEqual({ 'fiscalization.completed': 5, 'transaction.fiscalized': 5 });
    // b: each dead letter under both names, five attempts each, all dead; nothing announces those.
    expect(count(rb.received)).toEqual({ 'fiscalization.dead_letter': 10, 'transaction.failed': 10 });
    expect((await eventsOf(accountId)).map((e) => e.type)).toEqual(['fiscalization.completed', 'fiscalization.dead_letter', 'fiscalization.dead_letter']);
    expect((await deliveryLog(key, a.id)).data.map((d: any) => d.status)).toEqual(['dead', 'dead']);
    expect((await deliveryLog(key, b.id)).data.map((d: any) => [d.event, d.status]).sort()).toEqual([
      ['fiscalization.dead_letter', 'dead'], ['fiscalization.dead_letter', 'dead'], ['transaction.failed', 'dead'], ['transaction.failed', 'dead'],
    ]);
  });

  it('a receiver that does not answer times out (configurable timeout) and is retried', async () => {
    const r = await receiver();
    const { key, accountId } = await signup();
    const w = await created(key, { url: r.url, events: ['certificate.expiring'] });
    r.secret = w.secret;
    r.hang();
    await publish(accountId, 'certificate.expiring', entryData(accountId));
    const started = Date.now();
    await workerWith({ timeoutMs: 300 }).drain();
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(r.received).toHaveLength(1);
    expect(r.received[0]!.answered).toBeNull();
    const d = (await deliveryLog(key, w.id)).data[0];
    expect(d).toMatchObject({
      status: 'failed', attempt: 1, response_status: null, response_body: null, error: 'timeout after 300 ms',
      next_attempt_at: new Date(clock.now().getTime() + 10_000).toISOString(),
    });
    expect(d.duration_ms).toBeGreaterThanOrEqual(290);

    // The receiver recovers; the retry at +10 s succeeds.
    r.ok();
    tick(10_000);
    await workerWith({ timeoutMs: 300 }).drain();
    expect((await deliveryLog(key, w.id)).data[0]).toMatchObject({ status: 'succeeded', attempt: 2, response_status: 200 });
  });

  it('rotate-secret: a new secret at once; the pending retry is signed with it and no longer verifies with the old one', async () => {
    const r = await receiver();
    const { key, accountId } = await signup();
    const w = await created(key, { url: r.url, events: ['certificate.expiring'] });
    r.secret = w.secret;
    await publish(accountId, 'certificate.expiring', entryData(accountId));
    await workerWith().drain();
    expect(r.received[0]!.answered).toBe(200);

    r.fail(500);
    const { deliveryIds: [retried] } = await publish(accountId, 'certificate.expiring', entryData(accountId, { attempt: 2 }));
    await workerWith().drain();
    expect(r.received).toHaveLength(2);
    expect(r.received[1]!.check(w.secret).all).toBe(true);

    const res = await rotate(key, w.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.keys(res.json())).toEqual(['secret']);
    const fresh = res.json().secret as string;
    expect(fresh).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    expect(fresh).not.toBe(w.secret);
    expect(unseal(keys.seal, await storedSecret(w.id), `webhook:${w.id}:secret`)).toBe(fresh);

    r.secret = fresh;
    r.ok();
    tick(10_000);
    await workerWith().drain();
    expect(r.received).toHaveLength(3);
    const retry = r.received[2]!;
    expect(retry.headers['webhook-id']).toBe(retried);
    expect(retry.answered).toBe(200);
    expect(retry.check(fresh).all).toBe(true);
    expect(retry.check(w.secret)).toMatchObject({ spec: false, fiscalization: false, standard: false });
    // The receiver holding the old secret would refuse it.
    r.secret = w.secret;
    await publish(accountId, 'certificate.expiring', entryData(accountId));
    await workerWith().drain();
    expect(r.received[3]!.answered).toBe(401);
  });

  it('the receiver refuses stale timestamps: a delivery signed too long ago fails', async () => {
    const r = await receiver({ skewMs: 301_000 }); // the receiver's clock is 5 min 1 s ahead
    const { key, accountId } = await signup();
    const w = await created(key, { url: r.url, events: ['certificate.expiring'] });
    r.secret = w.secret;
    await publish(accountId, 'certificate.expiring', entryData(accountId));
    await workerWith().drain();
    expect(r.received[0]!.check(w.secret)).toMatchObject({ spec: true, fiscalization: true, standard: true, fresh: false, all: false });
    expect((await deliveryLog(key, w.id)).data[0]).toMatchObject({ status: 'failed', response_status: 401, response_body: 'stale timestamp', error: 'HTTP 401' });
  });

  it('the log keeps the first 1 KiB of an answer; paging and the status filter', async () => {
    const r = await receiver();
    const { key, accountId } = await signup();
    const w = await created(key, { url: r.url, events: ['certificate.expiring'] });
    r.secret = w.secret;
    r.fail(502, 'é'.repeat(3000));
    await publish(accountId, 'certificate.expiring', entryData(accountId));
    await workerWith().drain();
    const first = (await deliveryLog(key, w.id)).data[0];
    expect(Buffer.byteLength(first.response_body)).toBeLessThanOrEqual(1024 + 2);
    expect(first.response_body.startsWith('é'.repeat(500))).toBe(true);
    expect(first).toMatchObject({ status: 'failed', response_status: 502, error: 'HTTP 502' });

    r.ok();
    tick();
    await publish(accountId, 'certificate.expiring', entryData(accountId));
    await workerWith().drain();
    const all = await deliveryLog(key, w.id);
    expect(all.total).toBe(2);
    expect(all.data.map((d: any) => d.status)).toEqual(['succeeded', 'failed']); // newest first
    expect(await deliveryLog(key, w.id, '?status=failed')).toMatchObject({ total: 1, data: [{ id: first.id }] });
    expect(await deliveryLog(key, w.id, '?limit=1&offset=1')).toMatchObject({ total: 2, limit: 1, offset: 1, data: [{ id: first.id }] });
    expect(err(await deliveries(key, w.id, '?status=lost'))).toEqual([400, 'status must be one of pending, succeeded, failed, dead, cancelled']);
    expect(err(await deliveries(key, w.id, '?limit=0'))).toEqual([400, 'limit must be an integer between 1 and 100']);

    // A redirect is not followed: it is a failed attempt.
    r.fail(302);
    tick();
    await publish(accountId, 'certificate.expiring', entryData(accountId));
    await workerWith().drain();
    expect((await deliveryLog(key, w.id, '?limit=1')).data[0]).toMatchObject({ status: 'failed', response_status: 302, error: 'HTTP 302 (redirects are not followed)' });
    expect(r.received).toHaveLength(3);
  });

  it('a webhook deleted or disabled before its delivery: the delivery is cancelled, nothing is sent', async () => {
    const r = await receiver();
    const { key, accountId } = await signup();
    const gone = await created(key, { url: r.url, events: ['certificate.expiring'] });
    const paused = await created(key, { url: r.url, events: ['certificate.expiring'] });
    const { deliveryIds } = await publish(accountId, 'certificate.expiring', entryData(accountId));
    expect(deliveryIds).toHaveLength(2);
    expect((await del(key, gone.id)).statusCode).toBe(204);
    expect((await patch(key, paused.id, { enabled: false })).statusCode).toBe(200);
    await workerWith().drain();
    expect(r.received).toHaveLength(0);
    const rows = await Promise.all(deliveryIds.map((id) => deliveryRow(id)));
    expect(rows.map((x) => [x.status, x.error]).sort()).toEqual([['cancelled', 'webhook deleted'], ['cancelled', 'webhook disabled']]);
    expect((await deliveryLog(key, paused.id)).data[0]).toMatchObject({ status: 'cancelled', attempts: [] });
    // No dead letter for a cancellation.
    expect((await eventsOf(accountId)).map((e) => e.type)).toEqual(['certificate.expiring']);
  });

  it('the URL is checked again at delivery: rules in force now, and DNS answers checked right before connecting', async () => {
    const r = await receiver();
    const { key, accountId } = await signup();
    const w = await created(key, { url: r.url, events: ['certificate.expiring'] });
    r.secret = w.secret;
    await publish(accountId, 'certificate.expiring', entryData(accountId));
    // The server now runs as deployed (no insecure webhooks): the loopback http URL is refused.
    await workerWith({ config: { liveEnabled: false, mode: 'cloud', webhookAllowInsecure: false } }).drain();
    expect(r.received).toHaveLength(0);
    expect((await deliveryLog(key, w.id)).data[0]).toMatchObject({ status: 'failed', attempt: 1, error: 'invalid url: https is required', response_status: null });

    // A name that answered a public address at registration and a private one at delivery (DNS rebinding).
    const rebinding = await created(key, { url: 'https://hooks.rebind.example/h', events: ['certificate.expiring'] });
    const lookup: LookupAll = async () => [{ address: '10.0.0.1', family: 4 }];
    await publish(accountId, 'certificate.expiring', { certificate_id: 'cert_1' });
    await workerWith({ lookup }).drain();
    expect((await deliveryLog(key, rebinding.id)).data[0]).toMatchObject({
      status: 'failed', error: 'refused: invalid url: hooks.rebind.example resolves to 10.0.0.1, a private address',
    });
  });
});

describe('API reference', () => {
  it('documents every webhook route', async () => {
    const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    for (const [path, method] of [
      ['/v1/webhooks', 'post'], ['/v1/webhooks', 'get'], ['/v1/webhooks/{id}', 'get'], ['/v1/webhooks/{id}', 'patch'],
      ['/v1/webhooks/{id}', 'delete'], ['/v1/webhooks/{id}/rotate-secret', 'post'], ['/v1/webhooks/{id}/deliveries', 'get'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    expect(doc.paths['/v1/webhooks'].post.requestBody.content['application/json'].schema.required).toEqual(['url', 'events']);
  });
});
