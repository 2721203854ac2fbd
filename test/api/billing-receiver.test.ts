import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, openTestDb, startTestApp, type TestApp } from '../support/harness.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import type { Db } from '../../src/store/db.ts';
import { billingSignatureHeader } from '../../src/billing/signature.ts';
import { createBillingReceiver } from '../../src/billing/receiver.ts';
import { emailOutboxRepo } from '../../src/store/repos/email-outbox-repo.ts';
import { billingEventsRepo } from '../../src/store/repos/billing-events-repo.ts';
import { scheduleEmailOutbox } from '../../src/jobs/tasks/email-outbox.ts';

/*
 * POST /v1/webhooks/stripe: the billing provider's events, authenticated by their
 * signature only, each applied once; a failed payment suspends the account on every node
 * (403 on its keys) and e-mails its billing address, a paid invoice restores it.
 */
const SECRET = 'whsec_billing_test_secret_42';
let db: Db;
let a: TestApp; // node a: no SMTP (its e-mails wait in the outbox)
let b: TestApp; // node b: the same database, no SMTP either
let smtp: SmtpReceiver;
let mailing: TestApp; // a node with SMTP_URL, on the same database

beforeAll(async () => {
  db = await openTestDb();
  smtp = await startSmtpReceiver();
  [a, b, mailing] = await Promise.all([
    startTestApp({ db, config: { billingWebhookSecret: SECRET } }),
    startTestApp({ db, config: { billingWebhookSecret: SECRET } }),
    startTestApp({ db, config: { billingWebhookSecret: SECRET, smtpUrl: smtp.url, smtpFrom: 'Billing <billing@fiscal.test>' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), mailing?.close()]);
  await db?.close();
  await smtp?.close();
});

let seq = 0;
const eventId = () => `evt_${Date.now()}_${++seq}`;
function event(type: string, accountId: string, id = eventId(), object: Record<string, unknown> = {}) {
  return { id, object: 'event', type, created: Math.floor(Date.now() / 1000), data: { object: { object: type.startsWith('invoice') ? 'invoice' : 'subscription', metadata: { account_id: accountId }, ...object } } };
}
/** Delivers `payload` (an object, or raw text) signed at `at` (default: the app's clock now). */
function deliver(t: TestApp, payload: unknown, opts: { at?: number; secret?: string; header?: string | null } = {}) {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const ts = opts.at ?? Math.floor(t.clock.now().getTime() / 1000);
  const header = opts.header === undefined ? billingSignatureHeader(opts.secret ?? SECRET, ts, body) : opts.header;
  return t.request({
    method: 'POST', url: '/v1/webhooks/stripe', payload: body,
    headers: { 'content-type': 'application/json', ...(header === null ? {} : { 'billing-signature': header }) },
  });
}
const locations = (t: TestApp, key: string) => t.request({ method: 'GET', url: '/v1/locations', key });
const synced = () => Promise.all([a.rt.changes.sync(), b.rt.changes.sync()]);

describe('billing receiver: signature', () => {
  it('400 invalid signature for a wrong secret, a changed body, a missing or malformed header', async () => {
    const { accountId } = await a.signup();
    const body = JSON.stringify(event('invoice.payment_failed', accountId));
    const now = Math.floor(Date.now() / 1000);
    for (const res of [
      await deliver(a, body, { secret: 'another-secret-entirely' }),
      await deliver(a, body, { header: billingSignatureHeader(SECRET, now, body.replace('payment_failed', 'payment_succeeded')) }),
      await deliver(a, body, { header: null }),
      await deliver(a, body, { header: 'garbage' }),
      await deliver(a, body, { header: `t=${now},v1=` }),
    ]) {
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid signature' });
    }
    // Nothing applied: the account is still active.
    expect((await db.query('SELECT status FROM accounts WHERE id = $1', [accountId])).rows[0]).toEqual({ status: 'active' });
  });

  it('400 for a timestamp more than 5 minutes away; within 5 minutes it is accepted', async () => {
    const { accountId } = await a.signup();
    const now = Math.floor(Date.now() / 1000);
    const old = await deliver(a, event('customer.subscription.updated', accountId), { at: now - 6 * 60 });
    expect(old.statusCode).toBe(400);
    expect(old.json()).toEqual({ error: 'invalid signature' });
    expect((await deliver(a, event('customer.subscription.updated', accountId), { at: now + 6 * 60 })).statusCode).toBe(400);
    const recent = await deliver(a, event('customer.subscription.updated', accountId), { at: now - 4 * 60 });
    expect(recent.statusCode).toBe(200);
    expect(recent.json()).toMatchObject({ received: true, duplicate: false, outcome: 'logged' });
  });

  it('400 when the server has no BILLING_WEBHOOK_SECRET: nobody may post', async () => {
    const bare = await startTestApp({ db });
    try {
      const { accountId } = await a.signup();
      const res = await deliver(bare, event('invoice.payment_failed', accountId));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid signature' });
    } finally {
      await bare.close();
    }
  });

  it('413 beyond 64 KiB; a body of exactly 64 KiB is read and verified', async () => {
    const { accountId } = await a.signup();
    const base = event('customer.subscription.updated', accountId);
    const sized = (n: number) => {
      const empty = JSON.stringify({ ...base, pad: '' });
      return JSON.stringify({ ...base, pad: 'x'.repeat(n - Buffer.byteLength(empty)) });
    };
    const exact = sized(64 * 1024);
    expect(Buffer.byteLength(exact)).toBe(65536);
    expect((await deliver(a, exact)).statusCode).toBe(200);
    const over = sized(64 * 1024 + 1);
    const res = await deliver(a, { ...JSON.parse(over), id: eventId() });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'request body too large' });
  });

  it('the signature covers the raw bytes: whitespace and key order are not normalized', async () => {
    const { accountId } = await a.signup();
    const raw = `{ "type" : "customer.subscription.updated", "id": "${eventId()}",\n "data": {"object": {"metadata": {"account_id": "${accountId}"}}}}`;
    expect((await deliver(a, raw)).statusCode).toBe(200);
  });

  it('any content type, or none: the raw bytes are what is signed', async () => {
    const { accountId } = await a.signup();
    for (const contentType of ['application/json; charset=utf-8', 'text/plain', undefined]) {
      const body = JSON.stringify(event('customer.subscription.updated', accountId));
      const res = await a.app.inject({
        method: 'POST', url: '/v1/webhooks/stripe', payload: body,
        headers: { 'billing-signature': billingSignatureHeader(SECRET, Math.floor(Date.now() / 1000), body), ...(contentType ? { 'content-type': contentType } : {}) },
      });
      expect([contentType, res.statusCode, res.json()]).toMatchObject([contentType, 200, { outcome: 'logged' }]);
    }
  });
});

describe('billing receiver: payload', () => {
  it('400 invalid payload for a signed body that is not an event, or names no known account', async () => {
    expect((await deliver(a, 'not json')).json()).toEqual({ error: 'invalid payload' });
    expect((await deliver(a, { id: eventId(), type: 'invoice.payment_failed' })).json()).toEqual({ error: 'invalid payload' });
    expect((await deliver(a, { type: 'invoice.payment_failed', data: { object: {} } })).json()).toEqual({ error: 'invalid payload' });
    const unknown = await deliver(a, event('invoice.payment_failed', '018f0000-0000-7000-8000-000000000000'));
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toEqual({ error: 'invalid payload: the event names no known account' });
    const bad = await deliver(a, event('invoice.payment_failed', 'not-a-uuid'));
    expect(bad.json()).toEqual({ error: 'invalid payload: metadata.account_id is not an account id' });
    const none = await deliver(a, { id: eventId(), type: 'invoice.payment_failed', data: { object: { customer: 'cus_unknown' } } });
    expect(none.json()).toEqual({ error: 'invalid payload: the event names no known account' });
  });

  it('a subscription update naming no known account is recorded as ignored, 200 (it changes nothing: a 400 would only be retried)', async () => {
    for (const e of [
      event('customer.subscription.updated', '018f0000-0000-7000-8000-000000000000'),
      event('customer.subscription.updated', 'not-a-uuid'),
      { id: eventId(), type: 'customer.subscription.updated', data: { object: { object: 'subscription', customer: 'cus_unknown' } } },
    ]) {
      const res = await deliver(a, e);
      expect(res.statusCode, JSON.stringify(res.json())).toBe(200);
      expect(res.json()).toMatchObject({ received: true, type: 'customer.subscription.updated', duplicate: false, outcome: 'ignored' });
    }
  });

  it('an event type not acted on is recorded and answered 200 (the provider would retry otherwise)', async () => {
    const res = await deliver(a, { id: eventId(), type: 'charge.refunded', data: { object: { id: 'ch_1' } } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ received: true, type: 'charge.refunded', duplicate: false, outcome: 'ignored' });
  });

  it('the account named through the invoice subscription details metadata', async () => {
    const { accountId, key } = await a.signup();
    const e = { id: eventId(), type: 'invoice.payment_failed', data: { object: { object: 'invoice', customer: 'cus_x', parent: { subscription_details: { metadata: { account_id: accountId } } } } } };
    expect((await deliver(a, e)).json()).toMatchObject({ outcome: 'suspended' });
    expect((await locations(a, key)).json()).toEqual({ error: 'account is suspended' });
  });
});

describe('billing receiver: the customer id seam', () => {
  it('an event without metadata finds its account through findAccountByCustomer', async () => {
    const { accountId } = await a.signup();
    const receiver = createBillingReceiver({
      db, clock: a.clock, log: a.rt.deps.log, mailer: a.rt.mailer, secret: SECRET,
      findAccountByCustomer: async (_db, customer) => (customer === 'cus_linked' ? accountId : undefined),
    });
    const body = JSON.stringify({ id: eventId(), type: 'customer.subscription.deleted', data: { object: { object: 'subscription', customer: 'cus_linked' } } });
    const signature = billingSignatureHeader(SECRET, Math.floor(Date.now() / 1000), body);
    expect(await receiver.receive({ signature, body })).toMatchObject({ outcome: 'suspended', duplicate: false });
    expect((await db.query('SELECT status_reason FROM accounts WHERE id = $1', [accountId])).rows[0]).toEqual({ status_reason: 'subscription cancelled' });
    const other = JSON.stringify({ id: eventId(), type: 'customer.subscription.deleted', data: { object: { customer: 'cus_other' } } });
    await expect(receiver.receive({ signature: billingSignatureHeader(SECRET, Math.floor(Date.now() / 1000), other), body: other }))
      .rejects.toThrow('invalid payload: the event names no known account');
  });
});

describe('billing receiver: once per event id', () => {
  it('a replayed delivery is 200 and changes nothing', async () => {
    const { accountId, key } = await a.signup();
    const failed = event('invoice.payment_failed', accountId);
    expect((await deliver(a, failed)).json()).toMatchObject({ duplicate: false, outcome: 'suspended' });
    expect((await deliver(a, event('invoice.payment_succeeded', accountId))).json()).toMatchObject({ outcome: 'restored' });
    // The same failure again (re-signed now, as the provider retries): not applied twice.
    const again = await deliver(a, failed);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ event_id: failed.id, duplicate: true });
    expect((await locations(a, key)).statusCode).toBe(200);
    expect(await emailOutboxRepo.listForAccount(db, accountId)).toHaveLength(1);
  });

  it('20 concurrent deliveries of one event: applied once, one e-mail, every answer 200', async () => {
    const { accountId } = await a.signup();
    const e = event('invoice.payment_failed', accountId);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => deliver(i % 2 ? a : b, e)));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    const bodies = answers.map((r) => r.json());
    expect(bodies.filter((x) => !x.duplicate)).toHaveLength(1);
    expect(bodies.filter((x) => !x.duplicate)[0]).toMatchObject({ outcome: 'suspended' });
    expect(await billingEventsRepo.listForAccount(db, accountId)).toEqual([{ event_id: e.id, type: 'invoice.payment_failed', outcome: 'suspended' }]);
    expect(await emailOutboxRepo.listForAccount(db, accountId)).toHaveLength(1);
  });
});

describe('suspension and restoration across nodes', () => {
  it('payment failed on node a: 403 at once on node b (cached key); paid: restored on both', async () => {
    const { accountId, key } = await a.signup();
    expect((await locations(a, key)).statusCode).toBe(200);
    expect((await locations(b, key)).statusCode).toBe(200); // node b caches the key and its account
    const since = Date.now();
    expect((await deliver(a, event('invoice.payment_failed', accountId))).json()).toMatchObject({ outcome: 'suspended' });
    await synced();
    for (const t of [a, b]) {
      const res = await locations(t, key);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'account is suspended' });
    }
    // The status page stays readable, and says why and since when.
    const st = (await b.request({ method: 'GET', url: '/v1/account/status', key })).json();
    expect(st).toMatchObject({ account_id: accountId, status: 'suspended', enforcement: { state: 'suspended', reason: 'payment failed' } });
    expect(new Date(st.enforcement.since).getTime()).toBeGreaterThanOrEqual(since - 1000);

    // A second failure while suspended: no second e-mail.
    expect((await deliver(b, event('invoice.payment_failed', accountId))).json()).toMatchObject({ outcome: 'unchanged' });
    expect(await emailOutboxRepo.listForAccount(db, accountId)).toHaveLength(1);

    expect((await deliver(b, event('invoice.payment_succeeded', accountId))).json()).toMatchObject({ outcome: 'restored' });
    await synced();
    expect((await locations(a, key)).statusCode).toBe(200);
    expect((await locations(b, key)).statusCode).toBe(200);
    expect((await a.request({ method: 'GET', url: '/v1/account/status', key })).json())
      .toMatchObject({ status: 'active', enforcement: { state: 'ok', reason: null } });
  });

  it("the account's subscription follows: suspended with the account, active again when paid", async () => {
    const { accountId, key } = await a.signup();
    const made = await a.request({ method: 'POST', url: '/v1/subscriptions', key, payload: { company_name: 'Bar Pepe SL', billing_email: 'billing@barpepe.example', payment_method_id: 'pm_card_visa', merchant_count: 2 } });
    expect(made.statusCode, made.body).toBe(201);
    const status = async () => (await db.query<{ status: string }>('SELECT status FROM subscriptions WHERE account_id = $1', [accountId])).rows[0]!.status;
    expect(await status()).toBe('active');
    expect((await deliver(a, event('invoice.payment_failed', accountId))).json()).toMatchObject({ outcome: 'suspended' });
    expect(await status()).toBe('suspended');
    expect((await deliver(a, event('invoice.payment_succeeded', accountId))).json()).toMatchObject({ outcome: 'restored' });
    expect(await status()).toBe('active');
    expect((await a.request({ method: 'GET', url: '/v1/subscriptions', key })).json()).toMatchObject({ status: 'active' });
  });

  it('subscription deleted suspends too; subscription updated is only logged', async () => {
    const { accountId, key } = await a.signup();
    expect((await deliver(a, event('customer.subscription.updated', accountId))).json()).toMatchObject({ outcome: 'logged' });
    expect((await locations(b, key)).statusCode).toBe(200);
    expect((await deliver(a, event('customer.subscription.deleted', accountId))).json()).toMatchObject({ outcome: 'suspended' });
    await synced();
    expect((await locations(b, key)).json()).toEqual({ error: 'account is suspended' });
    expect((await b.request({ method: 'GET', url: '/v1/account/status', key })).json())
      .toMatchObject({ enforcement: { state: 'suspended', reason: 'subscription cancelled' } });
  });

  it('events apply in the order the provider made them: an older one that arrives later changes nothing', async () => {
    const { accountId, key } = await a.signup();
    const at = (type: string, created: number) => ({ ...event(type, accountId), created });
    const t0 = Math.floor(Date.now() / 1000);
    expect((await deliver(a, at('invoice.payment_failed', t0 - 300))).json()).toMatchObject({ outcome: 'suspended' });
    expect((await deliver(a, at('invoice.payment_succeeded', t0 - 100))).json()).toMatchObject({ outcome: 'restored' });
    // The failure of an invoice before the paid one, delivered late: still active.
    expect((await deliver(a, at('invoice.payment_failed', t0 - 200))).json()).toMatchObject({ outcome: 'unchanged' });
    expect((await a.request({ method: 'GET', url: '/v1/account/status', key })).json()).toMatchObject({ status: 'active' });
  });

  it('a deleted subscription is not revived by a payment; deleted while a payment had failed, the reason and the e-mail change', async () => {
    const { accountId, key } = await a.signup();
    const made = await a.request({ method: 'POST', url: '/v1/subscriptions', key, payload: { company_name: 'Acme', billing_email: 'bill@acme.example', payment_method_id: 'pm_1', merchant_count: 2 } });
    expect(made.statusCode, made.body).toBe(201);
    const t0 = Math.floor(Date.now() / 1000);
    expect((await deliver(a, { ...event('invoice.payment_failed', accountId), created: t0 + 1 })).json()).toMatchObject({ outcome: 'suspended' });
    expect((await deliver(a, { ...event('customer.subscription.deleted', accountId), created: t0 + 2 })).json()).toMatchObject({ outcome: 'suspended' });
    const status = async () => (await a.request({ method: 'GET', url: '/v1/account/status', key })).json();
    expect(await status()).toMatchObject({ status: 'suspended', enforcement: { reason: 'subscription cancelled' } });
    // Both e-mails, to the billing contact the subscription names.
    const mails = await emailOutboxRepo.listForAccount(db, accountId);
    expect(mails.map((m) => [m.to_address, m.subject])).toEqual([
      ['bill@acme.example', 'Your Fiscalization API account is suspended: payment failed'],
      ['bill@acme.example', 'Your Fiscalization API account is suspended: subscription cancelled'],
    ]);
    // A payment (of an older invoice, settled late) does not bring a deleted subscription back.
    expect((await deliver(a, { ...event('invoice.payment_succeeded', accountId), created: t0 + 3 })).json()).toMatchObject({ outcome: 'unchanged' });
    expect(await status()).toMatchObject({ status: 'suspended' });
    expect((await a.request({ method: 'GET', url: '/v1/subscriptions', key })).json()).toMatchObject({ status: 'suspended' });
  });

  it('a suspended merchant subscribes again: the subscription is replaced, the account active at once; events of the old one change nothing', async () => {
    const { accountId, key } = await a.signup();
    const body = { company_name: 'Acme', billing_email: 'bill@acme.example', payment_method_id: 'pm_old', merchant_count: 2 };
    const first = (await a.request({ method: 'POST', url: '/v1/subscriptions', key, payload: body })).json();
    // While it is active, a second one is a 409.
    expect((await a.request({ method: 'POST', url: '/v1/subscriptions', key, payload: body })).json()).toEqual({ error: 'subscription already exists' });
    expect((await deliver(a, event('customer.subscription.deleted', accountId, eventId(), { id: first.billing_subscription_id }))).json()).toMatchObject({ outcome: 'suspended' });
    await synced();
    expect((await locations(a, key)).json()).toEqual({ error: 'account is suspended' });
    // The way back: read the subscription, subscribe again (new payment method, another tier).
    expect((await a.request({ method: 'GET', url: '/v1/subscriptions', key })).json()).toMatchObject({ status: 'suspended' });
    const again = await a.request({ method: 'POST', url: '/v1/subscriptions', key, payload: { ...body, payment_method_id: 'pm_new', merchant_count: 12 } });
    expect(again.statusCode, again.body).toBe(201);
    const renewed = again.json();
    expect(renewed).toMatchObject({ id: first.id, status: 'active', merchant_count: 12, current_tier: 'growth' });
    expect(renewed.billing_subscription_id).not.toBe(first.billing_subscription_id);
    await synced();
    expect((await locations(a, key)).statusCode).toBe(200);
    expect((await a.request({ method: 'GET', url: '/v1/account/status', key })).json()).toMatchObject({ status: 'active', enforcement: { state: 'ok' } });
    // The ledger keeps both first charges, on the one subscription.
    const ledger = (await db.query<{ description: string }>('SELECT description FROM billing_ledger WHERE account_id = $1 ORDER BY created_at', [accountId])).rows;
    expect(ledger.map((l) => l.description)).toEqual(['first month: 2 merchants, starter', 'renewed, first month: 12 merchants, growth']);
    // A late failure of the replaced subscription's invoice: nothing happens.
    const late = event('invoice.payment_failed', accountId, eventId(), { subscription: first.billing_subscription_id });
    expect((await deliver(a, { ...late, created: Math.floor(Date.now() / 1000) + 5 })).json()).toMatchObject({ outcome: 'unchanged' });
    // The new one's does suspend.
    const current = event('invoice.payment_failed', accountId, eventId(), { subscription: renewed.billing_subscription_id });
    expect((await deliver(a, { ...current, created: Math.floor(Date.now() / 1000) + 6 })).json()).toMatchObject({ outcome: 'suspended' });
  });

  it('a NUL in the event type is a 400 invalid payload, never a 500', async () => {
    const res = await deliver(a, { id: eventId(), type: 'x\u0000', data: { object: {} } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid payload' });
  });

  it('a cancelled account is neither restored by a payment nor suspended', async () => {
    const { accountId } = await a.signup();
    await db.query("UPDATE accounts SET status = 'cancelled' WHERE id = $1", [accountId]);
    expect((await deliver(a, event('invoice.payment_succeeded', accountId))).json()).toMatchObject({ outcome: 'unchanged' });
    expect((await deliver(a, event('invoice.payment_failed', accountId))).json()).toMatchObject({ outcome: 'unchanged' });
    expect((await db.query('SELECT status FROM accounts WHERE id = $1', [accountId])).rows[0]).toEqual({ status: 'cancelled' });
  });
});

describe('notification e-mail', () => {
  it('with SMTP_URL: the suspension e-mail reaches the SMTP server, addressed to the billing e-mail', async () => {
    const { accountId, email } = await mailing.signup({ name: 'Bar Centrale SRL' });
    expect((await deliver(mailing, event('invoice.payment_failed', accountId))).json()).toMatchObject({ outcome: 'suspended' });
    await waitFor(async () => smtp.received.some((m) => m.to.includes(email)));
    const mail = smtp.received.find((m) => m.to.includes(email))!;
    expect(mail.from).toBe('billing@fiscal.test');
    expect(mail.subject).toBe('Your Fiscalization API account is suspended: payment failed');
    expect(mail.text).toContain('Hello Bar Centrale SRL');
    const [row] = await emailOutboxRepo.listForAccount(mailing.db, accountId);
    expect(mail.messageId).toBe(`<${row!.id}@outbox>`);
    await waitFor(async () => (await emailOutboxRepo.get(mailing.db, row!.id))?.sent_at != null);
  });

  it('without SMTP the e-mail waits in the outbox; a node with SMTP sends it later (the outbox job)', async () => {
    const { accountId, email } = await a.signup();
    expect((await deliver(a, event('customer.subscription.deleted', accountId))).json()).toMatchObject({ outcome: 'suspended' });
    const [row] = await emailOutboxRepo.listForAccount(db, accountId);
    expect(row).toMatchObject({ to_address: email, sent_at: null, attempts: 0 });
    expect(await a.rt.mailer.flush()).toEqual({ sent: 0, failed: 0 }); // no SMTP: nothing leaves, nothing lost
    expect(smtp.received.some((m) => m.to.includes(email))).toBe(false);

    // SMTP configured (a node started with SMTP_URL on the same database): the sweep sends it.
    await scheduleEmailOutbox(db, mailing.clock);
    await mailing.worker.drain();
    const mail = smtp.received.find((m) => m.to.includes(email));
    expect(mail?.subject).toBe('Your Fiscalization API account is suspended: subscription cancelled');
    expect((await emailOutboxRepo.get(db, row!.id))?.sent_at).toBeInstanceOf(Date);
    // The sweep scheduled its next run, a minute on.
    const next = (await db.query<{ run_at: Date }>("SELECT run_at FROM jobs WHERE kind = 'scheduled:email_outbox' AND status = 'pending'")).rows;
    expect(next).toHaveLength(1);
    expect(next[0]!.run_at.getTime()).toBeGreaterThan(Date.now() + 30_000);
  });

  it('a refused send stays in the outbox and is retried after its backoff', async () => {
    const clock = new ManualClock(new Date());
    const t = await startTestApp({ db: mailing.db, clock, config: { billingWebhookSecret: SECRET, smtpUrl: smtp.url } });
    try {
      const { accountId, email } = await t.signup();
      // The earlier tests' messages all delivered first, so the refusal below meets this one.
      await waitFor(async () => (await t.db.query('SELECT 1 FROM email_outbox WHERE sent_at IS NULL')).rows.length === 0, 20_000);
      smtp.failNext(1);
      expect((await deliver(t, event('invoice.payment_failed', accountId))).json()).toMatchObject({ outcome: 'suspended' });
      const [queued] = await emailOutboxRepo.listForAccount(t.db, accountId);
      await waitFor(async () => ((await emailOutboxRepo.get(t.db, queued!.id))?.attempts ?? 0) === 1);
      const failed = (await emailOutboxRepo.get(t.db, queued!.id))!;
      expect(failed.sent_at).toBeNull();
      expect(failed.last_error).toMatch(/451/);
      expect(failed.next_attempt_at.getTime()).toBe(clock.now().getTime() + 60_000); // the first retry after a minute
      expect(await t.rt.mailer.flush()).toEqual({ sent: 0, failed: 0 }); // not due yet
      clock.advance(60_000);
      expect(await t.rt.mailer.flush()).toEqual({ sent: 1, failed: 0 });
      expect(smtp.received.filter((m) => m.to.includes(email))).toHaveLength(1);
      expect((await emailOutboxRepo.get(t.db, queued!.id))).toMatchObject({ attempts: 2, last_error: null });
    } finally {
      await t.close();
    }
  });
});

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
