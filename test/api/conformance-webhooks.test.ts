import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { scheduleRecurringJobs } from '../../src/runtime.ts';
import { createWebhookService } from '../../src/services/webhooks.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';
import { createLocation, createTx, saleBody, saleMetadata } from '../support/transactions.ts';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../support/webhook-receiver.ts';

/*
 * Webhook delivery and events against the contract, black-box: the service's own worker
 * delivers to real HTTP receivers on 127.0.0.1, and this file checks every signature by
 * recomputing the HMACs itself (spec "Events" > "Delivery", DECISIONS "Events and
 * webhooks", docs/decisions.md "Webhooks").
 */
const clock = new ManualClock(new Date());
let t: TestApp;
const receivers: WebhookReceiver[] = [];
beforeAll(async () => {
  t = await startTestApp({ clock, config: { submissionMaxAttempts: 3 } });
});
afterAll(async () => {
  await t?.close();
});
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver({ now: () => clock.now().getTime() });
  receivers.push(r);
  return r;
}
async function subscribe(key: string, r: WebhookReceiver, events: string[], extra: Record<string, unknown> = {}) {
  const res = await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: r.url, events, ...extra } });
  expect(res.statusCode, res.body).toBe(201);
  r.secret = res.json().secret;
  return res.json() as { id: string; secret: string };
}
const deliveriesOf = async (key: string, id: string) => {
  const res = await t.request({ method: 'GET', url: `/v1/webhooks/${id}/deliveries?limit=100`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Array<Record<string, any>>;
};

const h = (headers: IncomingHttpHeaders, name: string) => String(headers[name] ?? '');

/**
 * Every signature of one received request, recomputed here (not the service's code, nor the
 * receiver's): the spec's two headers over `<X-Webhook-Timestamp>.<body>` keyed with the
 * whole secret string, and Standard Webhooks over `<webhook-id>.<webhook-timestamp>.<body>`
 * keyed with the base64-decoded part after `whsec_`.
 */
function expectSigned(got: ReceivedRequest, secret: string) {
  const ts = h(got.headers, 'x-webhook-timestamp');
  expect(ts).toMatch(/^\d{10}$/);
  expect(got.check(secret).fresh, 'signed at the time it was sent').toBe(true);
  const hex = crypto.createHmac('sha256', secret).update(`${ts}.${got.body}`).digest('hex');
  expect(h(got.headers, 'x-webhook-signature')).toBe(`sha256=${hex}`);
  expect(h(got.headers, 'x-fiscalization-signature')).toBe(`t=${ts},v1=${hex}`);
  const id = h(got.headers, 'webhook-id');
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  expect(h(got.headers, 'webhook-timestamp')).toBe(ts);
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  expect(key).toHaveLength(24);
  const b64 = crypto.createHmac('sha256', key).update(`${id}.${ts}.${got.body}`).digest('base64');
  expect(h(got.headers, 'webhook-signature')).toBe(`v1,${b64}`);
  expect(h(got.headers, 'content-type')).toBe('application/json');
  expect(got.method).toBe('POST');
}

/** The spec's retry-entry payload fields, plus DECISIONS' `id` and transaction summary. */
const ENTRY_FIELDS = ['account_id', 'attempt', 'entry_id', 'event', 'id', 'last_error', 'max_attempts', 'status', 'timestamp', 'transaction', 'transaction_id'];

async function drainFor(ms: number, step = 60_000) {
  for (let left = ms; left > 0; left -= step) {
    clock.advance(Math.min(step, left));
    await t.worker.drain();
  }
}

describe('events in their situations, delivered and signed', () => {
  it('a sale fiscalized inline: fiscalization.completed and transaction.fiscalized, entry-shaped, every signature valid', async () => {
    const { key, accountId } = await t.signup();
    const r = await receiver();
    const w = await subscribe(key, r, ['fiscalization.completed']);
    const loc = await createLocation(t, key, 'es-verifactu');
    const res = await createTx(t, key, saleBody(loc), { 'x-fiscalization-timeout': '5' });
    expect(res.json().status).toBe('success');
    await t.worker.drain();
    expect(r.received.map((x) => x.json.event).sort()).toEqual(['fiscalization.completed', 'transaction.fiscalized']);
    const [a, b] = r.received;
    expect(a!.json.id).toBe(b!.json.id); // one fact, two names
    expect(h(a!.headers, 'webhook-id')).not.toBe(h(b!.headers, 'webhook-id')); // two deliveries
    for (const got of r.received) {
      expectSigned(got, w.secret);
      expect(Object.keys(got.json).sort()).toEqual(ENTRY_FIELDS);
      expect(got.json).toMatchObject({
        account_id: accountId, transaction_id: res.json().id, status: 'completed', attempt: 1, last_error: null,
        entry_id: expect.any(String), max_attempts: 3,
        transaction: { id: res.json().id, status: 'success', fiscal_id: res.json().fiscal_id },
      });
      expect(new Date(got.json.timestamp).toISOString()).toBe(got.json.timestamp);
    }
  });

  it('a sale fiscalized by retry: nothing while it fails, one completion (both names) at its success', async () => {
    const { key } = await t.signup();
    const r = await receiver();
    const w = await subscribe(key, r, ['transaction.fiscalized', 'transaction.failed']);
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = (await createTx(t, key, saleBody(loc, { metadata: { sandbox_outcome: 'error:500' } }))).json();
    await t.worker.drain();
    expect(r.received).toEqual([]);
    // The authority comes back: the next retry is accepted.
    await t.db.query(`UPDATE transactions SET normalized = jsonb_set(normalized::jsonb, '{metadata,sandbox_outcome}', '"accept"')::json WHERE id = $1`, [tx.id]);
    await drainFor(3600_000);
    expect(r.received.map((x) => x.json.event).sort()).toEqual(['fiscalization.completed', 'transaction.fiscalized']);
    for (const got of r.received) {
      expectSigned(got, w.secret);
      expect(got.json).toMatchObject({ transaction_id: tx.id, status: 'completed', attempt: 2, max_attempts: 3, transaction: { status: 'success' } });
    }
  });

  it('a record final at creation (France) goes out through the fan-out, to a subscription of the alias only', async () => {
    const { key } = await t.signup();
    const r = await receiver();
    const w = await subscribe(key, r, ['transaction.fiscalized']);
    const loc = await createLocation(t, key, 'fr-nf525');
    const tx = (await createTx(t, key, saleBody(loc))).json();
    await t.worker.drain();
    expect(r.received.map((x) => x.json.event).sort()).toEqual(['fiscalization.completed', 'transaction.fiscalized']);
    for (const got of r.received) {
      expectSigned(got, w.secret);
      expect(Object.keys(got.json).sort()).toEqual(ENTRY_FIELDS);
      expect(got.json).toMatchObject({ transaction_id: tx.id, entry_id: null, status: 'completed', attempt: 0, transaction: { id: tx.id, status: 'success' } });
    }
  });

  it('a dead letter after the last retry: fiscalization.dead_letter and transaction.failed, once each', async () => {
    const { key } = await t.signup();
    const r = await receiver();
    const w = await subscribe(key, r, ['fiscalization.dead_letter', 'fiscalization.completed']);
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = (await createTx(t, key, saleBody(loc, { metadata: { sandbox_outcome: 'error:500' } }))).json();
    await drainFor(6 * 3600_000, 600_000);
    expect(r.received.map((x) => x.json.event).sort()).toEqual(['fiscalization.dead_letter', 'transaction.failed']);
    for (const got of r.received) {
      expectSigned(got, w.secret);
      expect(Object.keys(got.json).sort()).toEqual(ENTRY_FIELDS);
      expect(got.json).toMatchObject({
        transaction_id: tx.id, status: 'dead', attempt: 3, max_attempts: 3, last_error: expect.stringContaining('500'),
        transaction: { status: 'failed_permanent' },
      });
    }
    // The same entry in the retry queue.
    const q = (await t.request({ method: 'GET', url: '/v1/retry-queue?status=dead', key })).json();
    expect(q.data.map((e: { id: string }) => e.id)).toEqual([r.received[0]!.json.entry_id]);
  });

  it('certificate.expiring (within 30 days) and certificate.expired, delivered once each', async () => {
    const { key, accountId } = await t.signup();
    const r = await receiver();
    const w = await subscribe(key, r, ['certificate.expiring', 'certificate.expired']);
    const { payload, headers } = uploadForm({ certificateId: 'shop-cert.1', password: 'pw', file: exportP12(generateCert({ days: 20 }), 'pw') });
    const up = await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
    expect(up.statusCode, up.body).toBe(201);
    const notAfter = new Date(up.json().not_after);
    // Every pending daily scan due now (another file's account may have certificates too: only ours are looked at).
    await scheduleRecurringJobs(t.rt);
    await t.db.query(`UPDATE jobs SET run_at = $1 WHERE kind = 'scheduled:certificate_expiry' AND status = 'pending'`, [clock.now()]);
    await t.worker.drain();
    const mine = () => r.received.filter((x) => x.json.account_id === accountId);
    expect(mine().map((x) => x.json.event)).toEqual(['certificate.expiring']);
    expect(mine()[0]!.json).toMatchObject({ certificate_id: 'shop-cert.1', nif: '12345678Z', not_after: notAfter.toISOString(), days_left: 19 });
    expectSigned(mine()[0]!, w.secret);
    // A second scan the same day says nothing more; after expiry, expired once.
    await t.db.query(`UPDATE jobs SET run_at = $1 WHERE kind = 'scheduled:certificate_expiry' AND status = 'pending'`, [clock.now()]);
    await t.worker.drain();
    expect(mine()).toHaveLength(1);
    clock.set(new Date(notAfter.getTime() + 3600_000));
    await t.db.query(`UPDATE jobs SET run_at = $1 WHERE kind = 'scheduled:certificate_expiry' AND status = 'pending'`, [clock.now()]);
    await t.worker.drain();
    expect(mine().map((x) => x.json.event)).toEqual(['certificate.expiring', 'certificate.expired']);
    expectSigned(mine()[1]!, w.secret);
  });

  it('Italy SDI: transaction.sdi_status_changed and the completion, signed', async () => {
    const { key } = await t.signup();
    const r = await receiver();
    const w = await subscribe(key, r, ['transaction.sdi_status_changed', 'fiscalization.completed']);
    const loc = await createLocation(t, key, 'it-sdi');
    const tx = (await createTx(t, key, saleBody(loc, { metadata: saleMetadata['it-sdi'] }))).json();
    await t.worker.drain();
    expect(r.received.map((x) => x.json.event).sort()).toEqual(['fiscalization.completed', 'transaction.fiscalized', 'transaction.sdi_status_changed']);
    for (const got of r.received) {
      expectSigned(got, w.secret);
      expect(got.json).toMatchObject({ transaction_id: tx.id, transaction: { status: 'delivered' } });
    }
  });
});

describe('delivery: schedule, failures, dead letter', () => {
  it('5 attempts at once, +10 s, +60 s, +300 s, +600 s (not a second earlier); then dead and a dead letter to the other subscription only', async () => {
    const { key, accountId } = await t.signup();
    const failing = await receiver();
    const watcher = await receiver();
    const w = await subscribe(key, failing, ['fiscalization.completed']);
    const dl = await subscribe(key, watcher, ['fiscalization.dead_letter']);
    failing.fail(503);
    const loc = await createLocation(t, key, 'fr-nf525');
    await createTx(t, key, saleBody(loc));
    await t.worker.drain();
    const attempts = () => failing.received.filter((x) => x.json.event === 'fiscalization.completed');
    expect(attempts()).toHaveLength(1);
    for (const [i, delay] of [10, 60, 300, 600].entries()) {
      clock.advance(delay * 1000 - 1000);
      await t.worker.drain();
      expect(attempts(), `retry ${i + 1} is not due yet`).toHaveLength(i + 1);
      clock.advance(1000);
      await t.worker.drain();
      expect(attempts(), `retry ${i + 1} after ${delay} s`).toHaveLength(i + 2);
    }
    // One webhook-id on every attempt of a delivery; each attempt signed afresh.
    expect(new Set(attempts().map((x) => h(x.headers, 'webhook-id'))).size).toBe(1);
    expect(new Set(attempts().map((x) => x.timestamp)).size).toBe(5);
    await drainFor(3600_000, 600_000);
    expect(attempts()).toHaveLength(5);
    const mine = (await deliveriesOf(key, w.id)).find((d) => d.event === 'fiscalization.completed')!;
    expect(mine).toMatchObject({ status: 'dead', attempt: 5, max_attempts: 5, response_status: 503, error: 'HTTP 503', next_attempt_at: null });

    // The dead letters (both names) went to the other subscription, never back to the failing one.
    expect(failing.received.filter((x) => x.json.event !== 'fiscalization.completed' && x.json.event !== 'transaction.fiscalized')).toEqual([]);
    const letters = watcher.received.filter((x) => x.json.failed_event?.event === 'fiscalization.completed');
    expect(letters.map((x) => x.json.event).sort()).toEqual(['fiscalization.dead_letter', 'transaction.failed']);
    for (const got of letters) {
      expectSigned(got, dl.secret);
      expect(got.json).toMatchObject({
        entry_id: mine.id, account_id: accountId, status: 'dead', attempt: 5, max_attempts: 5, last_error: 'HTTP 503',
        source: 'webhook_delivery', webhook_id: w.id, webhook_url: failing.url,
      });
    }
  });

  it('3xx (not followed), 4xx and 5xx are failures retried; 2xx of any kind is success', async () => {
    const { key } = await t.signup();
    const r = await receiver();
    const w = await subscribe(key, r, ['fiscalization.completed']);
    const loc = await createLocation(t, key, 'fr-nf525');
    for (const status of [302, 410, 500]) {
      r.fail(status, 'go away');
      r.received.length = 0;
      await createTx(t, key, saleBody(loc));
      await t.worker.drain();
      await drainFor(10_000, 10_000);
      expect(r.received.filter((x) => x.json.event === 'fiscalization.completed').map((x) => x.answered)).toEqual([status, status]);
    }
    const log = await deliveriesOf(key, w.id);
    expect(log.find((d) => d.response_status === 302)).toMatchObject({ status: 'failed', error: 'HTTP 302 (redirects are not followed)', response_body: 'go away' });
    r.fail(202, 'queued');
    r.received.length = 0;
    await createTx(t, key, saleBody(loc));
    await t.worker.drain();
    await drainFor(10_000, 10_000);
    expect(r.received.map((x) => x.answered)).toEqual([202, 202]);
  });

  it('a receiver that does not answer within 10 s is a failed attempt, retried 10 s later', async () => {
    const { key } = await t.signup();
    const r = await receiver();
    const w = await subscribe(key, r, ['fiscalization.completed']);
    const loc = await createLocation(t, key, 'fr-nf525');
    r.hang();
    await createTx(t, key, saleBody(loc));
    const started = Date.now();
    await t.worker.drain();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(10_000);
    expect(took).toBeLessThan(16_000);
    const log = await deliveriesOf(key, w.id);
    expect(log).toHaveLength(2);
    for (const d of log) {
      expect(d).toMatchObject({ status: 'failed', attempt: 1, response_status: null, error: 'timeout after 10000 ms' });
      expect(d.duration_ms).toBeGreaterThanOrEqual(10_000);
      expect(new Date(d.next_attempt_at).getTime() - new Date(d.attempts[0].attempted_at).getTime()).toBe(10_000);
    }
    r.ok();
    await drainFor(10_000, 10_000);
    expect((await deliveriesOf(key, w.id)).map((d) => d.status)).toEqual(['succeeded', 'succeeded']);
  }, 40_000);
});

describe('disabled, deleted, test deliveries', () => {
  it('a delivery whose webhook is disabled or deleted before its attempt is cancelled: nothing sent, no dead letter', async () => {
    const { key } = await t.signup();
    const r = await receiver();
    const watcher = await receiver();
    const a = await subscribe(key, r, ['fiscalization.completed']);
    await subscribe(key, watcher, ['fiscalization.dead_letter']);
    const loc = await createLocation(t, key, 'fr-nf525');
    r.fail(500);
    await createTx(t, key, saleBody(loc));
    await t.worker.drain();
    expect(r.received).toHaveLength(2);
    expect((await t.request({ method: 'PATCH', url: `/v1/webhooks/${a.id}`, key, payload: { enabled: false } })).statusCode).toBe(200);
    await drainFor(3600_000, 600_000);
    expect(r.received).toHaveLength(2);
    expect((await deliveriesOf(key, a.id)).map((d) => [d.status, d.error])).toEqual([['cancelled', 'webhook disabled'], ['cancelled', 'webhook disabled']]);
    // A disabled subscription gets no new deliveries at all.
    await createTx(t, key, saleBody(loc));
    await drainFor(600_000, 600_000);
    expect(await deliveriesOf(key, a.id)).toHaveLength(2);

    const b = await subscribe(key, r, ['fiscalization.completed']);
    await createTx(t, key, saleBody(loc));
    await t.worker.drain();
    expect((await t.request({ method: 'DELETE', url: `/v1/webhooks/${b.id}`, key })).statusCode).toBe(204);
    const sent = r.received.length;
    await drainFor(3600_000, 600_000);
    expect(r.received).toHaveLength(sent);
    expect(watcher.received).toEqual([]);
    const rows = (await t.db.query<{ status: string; error: string }>('SELECT status, error FROM webhook_deliveries WHERE subscription_id = $1', [b.id])).rows;
    expect(rows.map((x) => [x.status, x.error])).toEqual([['cancelled', 'webhook deleted'], ['cancelled', 'webhook deleted']]);
  });

  it('"send test" reaches a disabled webhook (it is how a merchant checks a paused endpoint), not a deleted one', async () => {
    const { key, accountId } = await t.signup();
    const r = await receiver();
    const w = await subscribe(key, r, ['fiscalization.completed'], { enabled: false });
    const webhooks = createWebhookService(t.rt.deps);
    const auth = { accountId } as Parameters<typeof webhooks.sendTest>[0];
    const { delivery_id } = await webhooks.sendTest(auth, w.id);
    await t.worker.drain();
    expect(r.received.map((x) => x.json)).toEqual([{ id: expect.any(String), event: 'webhook.test', account_id: accountId, webhook_id: w.id, test: true, timestamp: expect.any(String) }]);
    expectSigned(r.received[0]!, w.secret);
    expect(h(r.received[0]!.headers, 'webhook-id')).toBe(delivery_id);
    expect((await deliveriesOf(key, w.id))[0]).toMatchObject({ id: delivery_id, status: 'succeeded' });

    await webhooks.sendTest(auth, w.id);
    expect((await t.request({ method: 'DELETE', url: `/v1/webhooks/${w.id}`, key })).statusCode).toBe(204);
    await t.worker.drain();
    expect(r.received).toHaveLength(1);
  });
});

describe('webhook routes: ids before bodies', () => {
  it("another account's webhook is 404 webhook not found even with an invalid body or query", async () => {
    const { key } = await t.signup();
    const other = await t.signup();
    const r = await receiver();
    const w = await subscribe(other.key, r, ['fiscalization.completed']);
    for (const payload of [{ enabled: 'yes' }, { description: 5 }, { events: 'x' }, { url: 'ftp://x' }]) {
      const res = await t.request({ method: 'PATCH', url: `/v1/webhooks/${w.id}`, key, payload });
      expect([res.statusCode, res.json()], JSON.stringify(payload)).toEqual([404, { error: 'webhook not found' }]);
    }
    const q = await t.request({ method: 'GET', url: `/v1/webhooks/${w.id}/deliveries?status=nope`, key });
    expect([q.statusCode, q.json()]).toEqual([404, { error: 'webhook not found' }]);
    // The owner still gets the 400s.
    const own = await t.request({ method: 'PATCH', url: `/v1/webhooks/${w.id}`, key: other.key, payload: { enabled: 'yes' } });
    expect([own.statusCode, own.json()]).toEqual([400, { error: 'enabled must be true or false' }]);
    const ownQ = await t.request({ method: 'GET', url: `/v1/webhooks/${w.id}/deliveries?status=nope`, key: other.key });
    expect([ownQ.statusCode, ownQ.json()]).toEqual([400, { error: 'status must be one of pending, succeeded, failed, dead, cancelled' }]);
  });
});

describe('retry queue', () => {
  it('list, status filter, paging, error strings, tenant isolation', async () => {
    const { key, accountId } = await t.signup();
    const other = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const ok = (await createTx(t, key, saleBody(loc))).json();
    const failing = (await createTx(t, key, saleBody(loc, { metadata: { sandbox_outcome: 'error:500' } }))).json();
    await t.worker.drain();
    const list = async (query = '', k = key) => {
      const res = await t.request({ method: 'GET', url: `/v1/retry-queue${query}`, key: k });
      return [res.statusCode, res.json()] as const;
    };
    const [code, all] = await list();
    expect(code).toBe(200);
    expect(all).toMatchObject({ total: 2, limit: 20, offset: 0 });
    expect(Object.keys(all.data[0]).sort()).toEqual(['account_id', 'attempt', 'created_at', 'id', 'last_error', 'max_attempts', 'next_retry_at', 'status', 'transaction_id', 'updated_at', 'webhook_url']);
    const byTx = Object.fromEntries(all.data.map((e: { transaction_id: string }) => [e.transaction_id, e]));
    expect(byTx[ok.id]).toMatchObject({ account_id: accountId, status: 'completed', attempt: 1, max_attempts: 3, next_retry_at: null, last_error: null });
    expect(byTx[failing.id]).toMatchObject({ status: 'failed', attempt: 1, last_error: expect.stringContaining('500'), next_retry_at: expect.any(String) });
    expect((await list('?status=failed'))[1].data.map((e: { transaction_id: string }) => e.transaction_id)).toEqual([failing.id]);
    expect((await list('?status=completed'))[1].data.map((e: { transaction_id: string }) => e.transaction_id)).toEqual([ok.id]);
    expect((await list('?status=dead'))[1]).toMatchObject({ data: [], total: 0 });
    expect((await list('?limit=1&offset=1'))[1]).toMatchObject({ total: 2, limit: 1, offset: 1, data: [{ id: all.data[1].id }] });
    expect(await list('?status=waiting')).toEqual([400, { error: 'status must be one of pending, processing, completed, failed, dead' }]);
    expect(await list('?limit=0')).toEqual([400, { error: 'limit must be an integer between 1 and 100' }]);
    expect(await list('?offset=-1')).toEqual([400, { error: 'offset must be an integer between 0 and 10000' }]);
    expect(await list('', other.key)).toEqual([200, { data: [], total: 0, limit: 20, offset: 0 }]);
    const stats = await t.request({ method: 'GET', url: '/v1/retry-queue/stats', key: other.key });
    expect(stats.json()).toEqual({ pending: 0, processing: 0, completed: 0, failed: 0, dead: 0, total: 0 });
  });

  it('stats: entries still waiting are counted however long ago they were last touched; ended ones over the last 24 h', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    await createTx(t, key, saleBody(loc));
    await createTx(t, key, saleBody(loc, { metadata: { sandbox_outcome: 'error:500' } }));
    await t.worker.drain();
    const stats = async () => (await t.request({ method: 'GET', url: '/v1/retry-queue/stats', key })).json();
    expect(await stats()).toEqual({ pending: 0, processing: 0, completed: 1, failed: 1, dead: 0, total: 2 });
    // The workers are down for 25 hours (no drain): the failed entry is still there, waiting.
    clock.advance(25 * 3600_000);
    expect((await t.request({ method: 'GET', url: '/v1/retry-queue?status=failed', key })).json().total).toBe(1);
    expect(await stats()).toEqual({ pending: 0, processing: 0, completed: 0, failed: 1, dead: 0, total: 1 });
  });
});
