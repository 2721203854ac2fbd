/**
 * The billing provider's events (spec "Inbound billing-provider receiver",
 * `POST /v1/webhooks/stripe`): signature checked (./signature.ts), then each event id
 * applied once:
 * - `invoice.payment_succeeded`: an account suspended because a payment failed is restored
 *   (one whose subscription was deleted is not: it subscribes again; a cancelled one stays);
 * - `invoice.payment_failed`, `customer.subscription.deleted`: an active account is
 *   suspended and its billing contact told why (email/mailer.ts, through the outbox); a
 *   deletion also turns a payment-failed suspension into a subscription-cancelled one;
 * - events come in any order (a provider retries for days): one older (its `created`) than
 *   the latest that changed the account, or about a subscription the account has since
 *   replaced, changes nothing (`unchanged`);
 * - `customer.subscription.updated`: logged; one that names no account of ours is recorded as
 *   `ignored` and answered 200 (it changes nothing, so a 400 would only make the provider
 *   retry it for days);
 * - any other type: recorded and answered 200 (the provider would otherwise retry it).
 *
 * The suspension shows at once on every node: the accounts row change is announced by the
 * store (migration 0013's trigger) and every node's key cache forgets the account
 * (store/change-feed.ts), the same path as key revocation.
 *
 * Which account: `metadata.account_id` on the event's object (we put it on the customer,
 * the subscription and, through subscription_details, the invoice), else the provider's
 * customer id looked up among our subscriptions (`findAccountByCustomer`). An event that
 * names no account of ours is a 400 and is NOT recorded (an event we act on: a payment or a
 * deletion), so the provider's retry can
 * apply it once the subscription that links the customer exists.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { badRequest } from '../core/errors.ts';
import { isUuid } from '../core/ids.ts';
import type { Mailer } from '../email/mailer.ts';
import type { Db, Queryable } from '../store/db.ts';
import { accountsRepo } from '../store/repos/accounts-repo.ts';
import { billingEventsRepo, type BillingOutcome } from '../store/repos/billing-events-repo.ts';
import { subscriptionsRepo } from '../store/repos/subscriptions-repo.ts';
import { verifyBillingSignature } from './signature.ts';

/** Spec Limits: "Billing receiver body 64 KiB". */
export const BILLING_BODY_LIMIT = 64 * 1024;

export const SUSPENDING_EVENTS: Record<string, { reason: string; subject: string; text: (name: string) => string }> = {
  'invoice.payment_failed': {
    reason: 'payment failed',
    subject: 'Your Fiscalization API account is suspended: payment failed',
    text: (name) => `Hello ${name},\n\nthe payment of your latest invoice failed, so your account is suspended: ` +
      'its API keys are refused (403) until the invoice is paid. The account is restored as soon as the payment succeeds; ' +
      'to pay with another payment method, subscribe again in the customer portal (or POST /v1/subscriptions), ' +
      'which replaces the unpaid subscription.\n',
  },
  'customer.subscription.deleted': {
    reason: 'subscription cancelled',
    subject: 'Your Fiscalization API account is suspended: subscription cancelled',
    text: (name) => `Hello ${name},\n\nyour subscription has ended, so your account is suspended: ` +
      'its API keys are refused (403). Subscribe again in the customer portal (or POST /v1/subscriptions) to restore it.\n',
  },
};
export const RESTORING_EVENT = 'invoice.payment_succeeded';
export const LOGGED_EVENT = 'customer.subscription.updated';

export interface BillingReceiverDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  mailer: Mailer;
  /** BILLING_WEBHOOK_SECRET; undefined: every delivery is refused (nobody may post). */
  secret: string | undefined;
  /**
   * The account of a billing-provider customer id, for events without metadata.account_id.
   * Default: `subscriptions.billing_customer_id` (the subscriptions feature's table), read
   * defensively, as the table may not exist in this build.
   */
  findAccountByCustomer?: (db: Db, customerId: string) => Promise<string | undefined>;
}

export interface BillingReceipt {
  received: true;
  event_id: string;
  type: string;
  duplicate: boolean;
  outcome: BillingOutcome;
}

interface ProviderEvent {
  id: string;
  type: string;
  /** The provider's creation time (`created`, Unix seconds), when given. */
  created: Date | undefined;
  object: Record<string, unknown>;
}

/** The reason a payment failure suspends with: the one a later payment lifts. */
const PAYMENT_FAILED = SUSPENDING_EVENTS['invoice.payment_failed']!.reason;
const SUBSCRIPTION_DELETED = 'customer.subscription.deleted';

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

function parseEvent(raw: string): ProviderEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badRequest('invalid payload');
  }
  const e = obj(parsed);
  const id = e?.id;
  const type = e?.type;
  if (typeof id !== 'string' || id.length === 0 || id.length > 255 || id.includes('\0')) throw badRequest('invalid payload');
  // No NUL in what is stored (PostgreSQL text cannot hold one).
  if (typeof type !== 'string' || type.length === 0 || type.length > 255 || type.includes('\0')) throw badRequest('invalid payload');
  const object = obj(obj(e!.data)?.object);
  if (!object) throw badRequest('invalid payload');
  const created = typeof e!.created === 'number' && Number.isFinite(e!.created) && e!.created > 0 && e!.created < 1e11
    ? new Date(e!.created * 1000) : undefined;
  return { id, type, created, object };
}

/** The provider subscription an event is about, when it names one (a subscription, or an invoice of one). */
function subscriptionOf(e: ProviderEvent): string | undefined {
  const o = e.object;
  const candidates = [
    o.object === 'subscription' ? o.id : undefined,
    o.subscription,
    obj(obj(o.parent)?.subscription_details)?.subscription,
  ];
  return candidates.find((c): c is string => typeof c === 'string' && c !== '');
}

/** metadata.account_id on the object, or on the invoice's subscription details (both places the provider copies it). */
function metadataAccountId(o: Record<string, unknown>): unknown {
  const candidates = [
    obj(o.metadata),
    obj(obj(o.subscription_details)?.metadata),
    obj(obj(obj(o.parent)?.subscription_details)?.metadata),
  ];
  for (const m of candidates) if (m && m.account_id !== undefined) return m.account_id;
  return undefined;
}

async function subscriptionsByCustomer(db: Db, customerId: string): Promise<string | undefined> {
  try {
    const exists = await db.query<{ t: string | null }>("SELECT to_regclass('subscriptions')::text AS t");
    if (!exists.rows[0]?.t) return undefined;
    const r = await db.query<{ account_id: string }>('SELECT account_id FROM subscriptions WHERE billing_customer_id = $1 LIMIT 1', [customerId]);
    return r.rows[0]?.account_id;
  } catch {
    return undefined; // a table of another shape: no customer link in this build
  }
}

export function createBillingReceiver(deps: BillingReceiverDeps) {
  const findByCustomer = deps.findAccountByCustomer ?? subscriptionsByCustomer;

  async function accountOf(e: ProviderEvent): Promise<string> {
    const fromMeta = metadataAccountId(e.object);
    if (fromMeta !== undefined) {
      if (typeof fromMeta !== 'string' || !isUuid(fromMeta)) throw badRequest('invalid payload: metadata.account_id is not an account id');
      return fromMeta;
    }
    const customer = e.object.object === 'customer' ? e.object.id : e.object.customer;
    if (typeof customer === 'string' && customer !== '') {
      const found = await findByCustomer(deps.db, customer);
      if (found) return found;
    }
    throw badRequest('invalid payload: the event names no known account');
  }

  /** The event's effect; `mail`: the outbox id of the e-mail it queued. */
  async function apply(tx: Queryable, e: ProviderEvent, accountId: string, now: Date): Promise<{ outcome: BillingOutcome; mail?: string }> {
    const suspending = SUSPENDING_EVENTS[e.type];
    if (!suspending && e.type !== RESTORING_EVENT) return { outcome: 'logged' };
    // The row lock orders two events of one account; the second sees what the first did.
    const account = await accountsRepo.get(tx, accountId, true);
    if (!account) return { outcome: 'unchanged' };
    const at = e.created ?? now;
    // Older than what we applied changes nothing. In whole seconds (the provider's `created`
    // has no more), so an event of the same second as a renewal still counts.
    if (account.billing_event_at && at.getTime() < Math.floor(account.billing_event_at.getTime() / 1000) * 1000) return { outcome: 'unchanged' };
    const subscription = await subscriptionsRepo.getByAccount(tx, accountId);
    const about = subscriptionOf(e);
    if (about !== undefined && subscription && about !== subscription.billing_subscription_id) return { outcome: 'unchanged' }; // a replaced subscription
    if (suspending) {
      let changed = await accountsRepo.suspendIfActive(tx, accountId, suspending.reason, now, at);
      // Deleted while suspended for a failed payment: a payment no longer lifts it, and the e-mail says what does.
      if (!changed && e.type === SUBSCRIPTION_DELETED) changed = await accountsRepo.resuspend(tx, accountId, PAYMENT_FAILED, suspending.reason, now, at);
      if (!changed) return { outcome: 'unchanged' }; // already suspended (so), or cancelled: no second e-mail
      // The subscription says so too (spec: Subscription status `active` | `suspended`).
      await subscriptionsRepo.setStatus(tx, accountId, 'suspended', now);
      // The billing contact the subscription names, else the sign-up's.
      const to = subscription?.billing_email ?? changed.billing_email;
      const mail = await deps.mailer.enqueue(tx, { accountId, to, subject: suspending.subject, text: suspending.text(changed.name) });
      return { outcome: 'suspended', mail };
    }
    if (!(await accountsRepo.restoreIfSuspended(tx, accountId, now, { reason: PAYMENT_FAILED, eventAt: at }))) return { outcome: 'unchanged' };
    await subscriptionsRepo.setStatus(tx, accountId, 'active', now);
    return { outcome: 'restored' };
  }

  async function receive(input: { signature: string | undefined; body: string }): Promise<BillingReceipt> {
    const now = deps.clock.now();
    if (deps.secret === undefined) {
      deps.log.warn('billing event refused: BILLING_WEBHOOK_SECRET is not set');
      throw badRequest('invalid signature');
    }
    const check = verifyBillingSignature(input.signature, input.body, deps.secret, now.getTime());
    if (!check.ok) {
      // One message for every failure: a caller learns nothing about which part was wrong.
      deps.log.info({ reason: check.reason }, 'billing event refused');
      throw badRequest('invalid signature');
    }
    const e = parseEvent(input.body);
    const acting = e.type in SUSPENDING_EVENTS || e.type === RESTORING_EVENT;
    const handled = acting || e.type === LOGGED_EVENT;
    let accountId = handled ? await accountOf(e).catch((err: unknown) => { if (acting) throw err; return null; }) : null;
    if (accountId && !(await accountsRepo.get(deps.db, accountId))) {
      if (acting) throw badRequest('invalid payload: the event names no known account');
      accountId = null;
    }

    let queuedMail: string | undefined;
    const result = await deps.db.transaction(async (tx) => {
      // The id first: a duplicate stops here (a racing one waits for this commit, then finds it).
      const first = await billingEventsRepo.claim(tx, { event_id: e.id, type: e.type, account_id: accountId, outcome: handled ? 'logged' : 'ignored', received_at: now });
      if (!first) return { duplicate: true, outcome: 'unchanged' as BillingOutcome };
      if (!accountId) return { duplicate: false, outcome: 'ignored' as BillingOutcome };
      const { outcome, mail } = await apply(tx, e, accountId, now);
      if (outcome !== 'logged') await billingEventsRepo.setOutcome(tx, e.id, outcome);
      queuedMail = mail;
      return { duplicate: false, outcome };
    });
    deps.log.info({ event_id: e.id, type: e.type, account_id: accountId, ...result }, 'billing event');
    // Sent after the commit, not awaited (the provider wants its answer fast; the outbox row
    // exists whatever happens to this send). Only this message: the backlog is the job's.
    if (queuedMail && deps.mailer.configured) {
      deps.mailer.flush({ ids: [queuedMail] }).catch((err) => deps.log.warn({ err }, 'sending the suspension e-mail failed; it stays in the outbox'));
    }
    return { received: true, event_id: e.id, type: e.type, ...result };
  }

  return { receive };
}

export type BillingReceiver = ReturnType<typeof createBillingReceiver>;
