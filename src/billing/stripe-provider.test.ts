import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeStripe, type FakeStripe } from '../../test/support/fake-stripe.ts';
import { createStripeBillingProvider } from './stripe-provider.ts';

let fake: FakeStripe;
beforeAll(async () => {
  fake = await startFakeStripe();
});
afterAll(() => fake.close());

describe('Stripe billing provider (against a local fake of the API)', () => {
  it('creates the customer with the payment method, then one recurring line of the period amount', async () => {
    const p = createStripeBillingProvider({ apiKey: fake.key, apiBaseUrl: fake.url });
    const before = fake.calls.length;
    const { customerId } = await p.createCustomer({ accountId: 'acc-1', companyName: 'Bar Pepe SL', email: 'pepe@example.com', paymentMethodId: 'pm_card_visa' });
    const { subscriptionId } = await p.createSubscription({ customerId, accountId: 'acc-1', periodAmount: 45_000, interval: 'year' });
    const calls = fake.calls.slice(before);
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(['POST /v1/customers', 'POST /v1/products', 'POST /v1/subscriptions']);
    expect(calls.every((c) => c.authorization === `Bearer ${fake.key}`)).toBe(true);
    expect(calls[0]!.body).toMatchObject({
      name: 'Bar Pepe SL', email: 'pepe@example.com', payment_method: 'pm_card_visa',
      invoice_settings: { default_payment_method: 'pm_card_visa' }, metadata: { account_id: 'acc-1' },
    });
    expect(calls[0]!.idempotencyKey).toBe('customer-acc-1');
    expect(calls[2]!.body).toMatchObject({
      customer: customerId,
      items: { 0: { quantity: '1', price_data: { currency: 'eur', unit_amount: '45000', recurring: { interval: 'year' } } } },
    });
    expect(fake.subscriptions.get(subscriptionId)).toMatchObject({ customer: customerId });
  });

  it('a change replaces the recurring line without the provider prorating, and adds our proration as an invoice item', async () => {
    const p = createStripeBillingProvider({ apiKey: fake.key, apiBaseUrl: fake.url, productId: 'prod_given' });
    const { customerId } = await p.createCustomer({ accountId: 'acc-2', companyName: 'X', email: 'x@example.com', paymentMethodId: 'pm_1' });
    const { subscriptionId } = await p.createSubscription({ customerId, accountId: 'acc-2', periodAmount: 15_000, interval: 'month' });
    const itemId = (fake.subscriptions.get(subscriptionId) as { items: { data: { id: string }[] } }).items.data[0]!.id;
    const before = fake.calls.length;
    const { prorationRef } = await p.changeSubscription({
      customerId, subscriptionId, periodAmount: 26_400, interval: 'month', prorationAmount: 5700, description: '10 → 22 merchants',
    });
    const calls = fake.calls.slice(before);
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([`GET /v1/subscriptions/${subscriptionId}`, `POST /v1/subscriptions/${subscriptionId}`, 'POST /v1/invoiceitems']);
    expect(calls[1]!.body).toMatchObject({
      proration_behavior: 'none',
      items: { 0: { id: itemId, quantity: '1', price_data: { product: 'prod_given', unit_amount: '26400', currency: 'eur' } } },
    });
    expect(fake.invoiceItems.get(prorationRef!)).toMatchObject({ customer: customerId, subscription: subscriptionId, amount: 5700, currency: 'eur', description: '10 → 22 merchants' });

    // Nothing to prorate: no invoice item.
    const n = fake.invoiceItems.size;
    expect((await p.changeSubscription({ customerId, subscriptionId, periodAmount: 26_400, interval: 'month', prorationAmount: 0, description: 'same' })).prorationRef).toBeNull();
    expect(fake.invoiceItems.size).toBe(n);
  });

  it('a retried create (same idempotency key) gets the same customer, not a second one', async () => {
    const p = createStripeBillingProvider({ apiKey: fake.key, apiBaseUrl: fake.url });
    const a = await p.createCustomer({ accountId: 'acc-3', companyName: 'X', email: 'x@example.com', paymentMethodId: 'pm_1' });
    const b = await p.createCustomer({ accountId: 'acc-3', companyName: 'X', email: 'x@example.com', paymentMethodId: 'pm_1' });
    expect(b.customerId).toBe(a.customerId);
  });

  it('a renewal after a suspension is a new customer and subscription (its own idempotency keys); cancelling the old one twice is not an error', async () => {
    const p = createStripeBillingProvider({ apiKey: fake.key, apiBaseUrl: fake.url, productId: 'prod_given' });
    const first = await p.createCustomer({ accountId: 'acc-6', companyName: 'X', email: 'x@example.com', paymentMethodId: 'pm_1' });
    const { subscriptionId: old } = await p.createSubscription({ customerId: first.customerId, accountId: 'acc-6', periodAmount: 15_000, interval: 'month' });
    const before = fake.calls.length;
    const renewed = await p.createCustomer({ accountId: 'acc-6', companyName: 'X', email: 'x@example.com', paymentMethodId: 'pm_2', renewalOf: old });
    const { subscriptionId } = await p.createSubscription({ customerId: renewed.customerId, accountId: 'acc-6', periodAmount: 15_000, interval: 'month', renewalOf: old });
    expect(renewed.customerId).not.toBe(first.customerId);
    expect(subscriptionId).not.toBe(old);
    expect(fake.calls.slice(before).map((c) => c.idempotencyKey)).toEqual([`customer-acc-6-renewing-${old}`, `subscription-acc-6-renewing-${old}`]);
    await p.cancelSubscription({ subscriptionId: old });
    expect(fake.subscriptions.get(old)).toMatchObject({ status: 'canceled' });
    await p.cancelSubscription({ subscriptionId: old }); // already over: nothing sent
    expect(fake.calls.filter((c) => c.method === 'DELETE')).toHaveLength(1);
  });

  it('a wrong key and a declined card are errors', async () => {
    const wrong = createStripeBillingProvider({ apiKey: 'sk_test_wrong', apiBaseUrl: fake.url });
    await expect(wrong.createCustomer({ accountId: 'acc-4', companyName: 'X', email: 'x@example.com', paymentMethodId: 'pm_1' })).rejects.toThrow(/Invalid API Key/);
    const p = createStripeBillingProvider({ apiKey: fake.key, apiBaseUrl: fake.url });
    fake.declineNext = true;
    await expect(p.createCustomer({ accountId: 'acc-5', companyName: 'X', email: 'x@example.com', paymentMethodId: 'pm_1' })).rejects.toThrow(/declined/);
  });
});
