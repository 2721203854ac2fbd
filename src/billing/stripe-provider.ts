import { lazyImport } from '../core/lazy-import.ts';
import type { BillingProvider } from './provider.ts';

export interface StripeProviderOptions {
  apiKey: string;
  /** Overrides https://api.stripe.com (tests: a fake on 127.0.0.1). */
  apiBaseUrl?: string | undefined;
  /** The product the recurring prices belong to; created once (and reused by this process) when not given. */
  productId?: string | undefined;
  timeoutMs?: number;
}

/**
 * The real billing API through the `stripe` package. The service prices everything
 * (pricing.ts): the provider gets one recurring line of the whole period amount (quantity
 * 1), changed without the provider's own proration (`proration_behavior: none`), and our
 * proration as a one-off invoice item on the customer's next invoice — so what the provider
 * charges is exactly what our billing ledger says.
 *
 * Every request carries an idempotency key derived from what it does, so a retried POST
 * (the client retries on network errors) cannot create a second customer or charge.
 */
export function createStripeBillingProvider(opts: StripeProviderOptions): BillingProvider {
  const base = opts.apiBaseUrl ? new URL(opts.apiBaseUrl) : undefined;
  // The `stripe` package is imported with the first call (core/lazy-import.ts): most
  // processes (the CLI, the local host, a node without billing) never make one.
  const client = lazyImport(async () => new (await import('stripe')).default(opts.apiKey, {
    maxNetworkRetries: 2,
    timeout: opts.timeoutMs ?? 20_000,
    ...(base ? {
      host: base.hostname,
      port: base.port || (base.protocol === 'http:' ? 80 : 443),
      protocol: base.protocol === 'http:' ? 'http' : 'https',
    } : {}),
  }));
  let product: Promise<string> | undefined = opts.productId ? Promise.resolve(opts.productId) : undefined;
  const productId = () => {
    product ??= client().then((stripe) => stripe.products.create({ name: 'Fiscalization API subscription' })).then((p) => p.id);
    product.catch(() => { product = undefined; }); // a failure is retried by the next call
    return product;
  };

  return {
    name: 'stripe',
    async createCustomer({ accountId, companyName, email, paymentMethodId, renewalOf }) {
      const stripe = await client();
      const c = await stripe.customers.create({
        name: companyName, email, payment_method: paymentMethodId,
        invoice_settings: { default_payment_method: paymentMethodId },
        metadata: { account_id: accountId },
      }, { idempotencyKey: `customer-${accountId}${renewalOf ? `-renewing-${renewalOf}` : ''}` });
      return { customerId: c.id };
    },
    async createSubscription({ customerId, accountId, periodAmount, interval, renewalOf }) {
      const stripe = await client();
      const s = await stripe.subscriptions.create({
        customer: customerId,
        items: [{ price_data: { currency: 'eur', product: await productId(), unit_amount: periodAmount, recurring: { interval } }, quantity: 1 }],
        metadata: { account_id: accountId },
      }, { idempotencyKey: `subscription-${accountId}${renewalOf ? `-renewing-${renewalOf}` : ''}` });
      return { subscriptionId: s.id };
    },
    async cancelSubscription({ subscriptionId }) {
      const stripe = await client();
      const current = await stripe.subscriptions.retrieve(subscriptionId);
      if (current.status === 'canceled' || current.status === 'incomplete_expired') return; // already over
      await stripe.subscriptions.cancel(subscriptionId);
    },
    async changeSubscription({ customerId, subscriptionId, periodAmount, interval, prorationAmount, description }) {
      const stripe = await client();
      const current = await stripe.subscriptions.retrieve(subscriptionId);
      const item = current.items.data[0];
      await stripe.subscriptions.update(subscriptionId, {
        items: [{ ...(item ? { id: item.id } : {}), price_data: { currency: 'eur', product: await productId(), unit_amount: periodAmount, recurring: { interval } }, quantity: 1 }],
        proration_behavior: 'none',
      });
      if (prorationAmount === 0) return { prorationRef: null };
      const line = await stripe.invoiceItems.create({
        customer: customerId, subscription: subscriptionId, amount: prorationAmount, currency: 'eur', description,
      });
      return { prorationRef: line.id };
    },
  };
}
