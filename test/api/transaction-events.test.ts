import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * End to end: a transaction's outcome reaches the merchant's webhook endpoint, signed,
 * in the vocabulary the subscription asked for.
 */
let t: TestApp;
let receiver: WebhookReceiver;
const clock = new ManualClock(new Date());
beforeAll(async () => {
  t = await startTestApp({ clock });
  receiver = await startWebhookReceiver({ now: () => clock.now().getTime() });
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

async function subscribe(key: string, events: string[]) {
  const res = await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: receiver.url, events } });
  expect(res.statusCode, res.body).toBe(201);
  receiver.secret = res.json().secret;
  return res.json();
}

describe('transaction events to webhooks', () => {
  it('success → fiscalization.completed (and its alias transaction.fiscalized), signed', async () => {
    const { key, accountId } = await t.signup();
    await subscribe(key, ['transaction.fiscalized']);
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = (await createTx(t, key, saleBody(loc))).json();
    receiver.received.length = 0;
    await t.worker.drain(); // submission, then the deliveries it enqueued
    // DECISIONS: "delivers both names of the same fact to subscriptions that asked for either".
    expect(receiver.received.map((r) => r.json.event).sort()).toEqual(['fiscalization.completed', 'transaction.fiscalized']);
    for (const got of receiver.received) {
      expect(got.check(receiver.secret!)).toEqual({ spec: true, fiscalization: true, standard: true, fresh: true, all: true });
      expect(got.json).toMatchObject({
        transaction_id: tx.id, account_id: accountId, status: 'completed', attempt: 1,
        transaction: { id: tx.id, status: 'success' },
      });
    }
  });

  it('a dead submission → fiscalization.dead_letter', async () => {
    const { key } = await t.signup();
    await subscribe(key, ['fiscalization.dead_letter']);
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = (await createTx(t, key, saleBody(loc, { metadata: { sandbox_outcome: 'reject:4102' } }))).json();
    receiver.received.length = 0;
    await t.worker.drain();
    const deadLetters = receiver.received.filter((r) => r.json.event === 'fiscalization.dead_letter');
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0]!.json).toMatchObject({ transaction_id: tx.id, status: 'dead', last_error: expect.stringContaining('4102') });
    expect(deadLetters[0]!.check(receiver.secret!).all).toBe(true);
  });
});
