import { randomUUID } from 'node:crypto';
import type { BillingInterval } from '../store/repos/subscriptions-repo.ts';

/**
 * The billing provider behind subscriptions (DECISIONS: "Billing provider behind an
 * interface"). The service computes every amount itself (pricing.ts) and tells the
 * provider what to charge; the provider only holds customers, recurring charges and
 * one-off proration lines. Amounts are EUR minor units.
 */
export interface BillingProvider {
  readonly name: string;
  /**
   * `renewalOf`: when the account subscribes again after a suspension, the provider id of the
   * subscription it replaces (so a provider's idempotency keys tell the two apart, and a
   * retried renewal still makes one customer). Absent for the account's first subscription.
   */
  createCustomer(input: { accountId: string; companyName: string; email: string; paymentMethodId: string; renewalOf?: string | undefined }): Promise<{ customerId: string }>;
  /** A recurring charge of `periodAmount` every `interval`. */
  createSubscription(input: {
    customerId: string; accountId: string; periodAmount: number; interval: BillingInterval; renewalOf?: string | undefined;
  }): Promise<{ subscriptionId: string }>;
  /** Ends a recurring charge at once (the one a renewal replaces). One that has already ended is not an error. */
  cancelSubscription(input: { subscriptionId: string }): Promise<void>;
  /** The recurring charge from the next period on, and the prorated line for the rest of this one (0: none). */
  changeSubscription(input: {
    customerId: string; subscriptionId: string; periodAmount: number; interval: BillingInterval; prorationAmount: number; description: string;
  }): Promise<{ prorationRef: string | null }>;
}

/**
 * The default (local mode, or no billing configured): records the subscription with ids of
 * its own and charges nothing. The ids say where they come from (`emb_` prefixes).
 */
export function createEmbeddedBillingProvider(): BillingProvider {
  const id = (prefix: string) => `${prefix}${randomUUID().replaceAll('-', '')}`;
  return {
    name: 'embedded',
    createCustomer: async () => ({ customerId: id('emb_cus_') }),
    createSubscription: async () => ({ subscriptionId: id('emb_sub_') }),
    changeSubscription: async () => ({ prorationRef: null }),
    cancelSubscription: async () => {},
  };
}
