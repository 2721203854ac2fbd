import { badRequest, conflict, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { DerivedKeys } from '../crypto/master-key.ts';
import { seal, unseal } from '../crypto/sealed.ts';
import { jobsRepo } from '../store/repos/jobs-repo.ts';
import {
  eventsRepo, webhookDeliveriesRepo, webhooksRepo, type AttemptRow, type DeliveryRow, type DeliveryStatus, type WebhookRow,
} from '../store/repos/webhooks-repo.ts';
import { checkWebhookUrl, WebhookUrlError, type LookupAll, type UrlPolicy } from '../webhooks/url-guard.ts';
import { generateWebhookSecret } from '../webhooks/signing.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';
import { EVENT_TYPES, type EventType } from './events.ts';
import { DELIVER_WEBHOOK } from './event-publisher.ts';
import type { ListResult, Page } from './pagination.ts';

/** A subscription as read: never the secret. */
export interface WebhookView {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Creation's answer: the one time (with rotation) the secret is shown. */
export interface WebhookWithSecret extends WebhookView {
  secret: string;
}

export interface CreateWebhookInput {
  url?: unknown;
  events?: unknown;
  description?: string | null | undefined;
  enabled?: boolean | undefined;
}

export type PatchWebhookInput = CreateWebhookInput;

export interface DeliveryAttemptView {
  attempt: number;
  outcome: 'succeeded' | 'failed';
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date;
}

export interface DeliveryView {
  id: string;
  webhook_id: string;
  event_id: string;
  event: string;
  status: DeliveryStatus;
  attempt: number;
  max_attempts: number;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
  payload: Record<string, unknown>;
  attempts: DeliveryAttemptView[];
}

/** A soft cap: every event fans out to every matching subscription. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 100;

/**
 * The event a "send test" delivery carries (the portal's button): not one of EVENT_TYPES,
 * so no subscription ever receives it unasked; sent once (no retries) and, when it fails,
 * it announces no dead letter (jobs/tasks/deliver-webhook.ts).
 */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/** The sealed secret is bound to its subscription: copied to another row it does not open. */
export const webhookSecretAad = (id: string) => `webhook:${id}:secret`;

/** The plaintext secret of a subscription (signing a delivery). */
export function openWebhookSecret(keys: DerivedKeys, row: Pick<WebhookRow, 'id' | 'secret'>): string {
  return unseal(keys.seal, row.secret, webhookSecretAad(row.id));
}

/** The URL rules in force: WEBHOOK_ALLOW_INSECURE defaults to on in local mode, off in the cloud. */
export function webhookUrlPolicy(config: Deps['config']): UrlPolicy {
  return { mode: config.mode, allowInsecure: config.webhookAllowInsecure ?? config.mode === 'local' };
}

export const toWebhookView = (r: WebhookRow): WebhookView => ({
  id: r.id,
  account_id: r.account_id,
  url: r.url,
  events: r.events,
  description: r.description,
  enabled: r.enabled,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const toAttemptView = (a: AttemptRow): DeliveryAttemptView => ({
  attempt: a.attempt,
  outcome: a.outcome,
  response_status: a.response_status,
  response_body: a.response_body,
  error: a.error,
  duration_ms: a.duration_ms,
  attempted_at: a.attempted_at,
});

export interface WebhookServiceOptions {
  /** DNS for the registration check (tests inject one). */
  lookup?: LookupAll;
}

export function createWebhookService(deps: Deps, opts: WebhookServiceOptions = {}) {
  const { db, clock, keys } = deps;
  const policy = webhookUrlPolicy(deps.config);

  async function validUrl(url: unknown): Promise<string> {
    if (url === undefined || url === null) throw badRequest('url is required');
    if (typeof url !== 'string') throw badRequest('invalid url');
    const text = url.trim();
    if (!text) throw badRequest('url is required');
    try {
      await checkWebhookUrl(text, policy, { lookup: opts.lookup });
    } catch (err) {
      if (err instanceof WebhookUrlError) throw badRequest(err.message);
      throw err;
    }
    return text;
  }

  function validEvents(events: unknown): EventType[] {
    if (events === undefined || events === null) throw badRequest('events is required');
    if (!Array.isArray(events)) throw badRequest('events must be an array of event types');
    if (events.length === 0) throw badRequest('events is required');
    for (const e of events) {
      if (typeof e !== 'string' || !(EVENT_TYPES as readonly string[]).includes(e)) throw badRequest('invalid event type');
    }
    return [...new Set(events as EventType[])];
  }

  async function create(auth: AuthContext, input: CreateWebhookInput): Promise<WebhookWithSecret> {
    const url = await validUrl(input.url);
    const events = validEvents(input.events);
    if ((await webhooksRepo.countLive(db, auth.accountId)) >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw conflict(`webhook limit reached: at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account`);
    }
    const id = newId();
    const secret = generateWebhookSecret();
    const now = clock.now();
    const row: Omit<WebhookRow, 'deleted_at'> = {
      id,
      account_id: auth.accountId,
      url,
      secret: seal(keys.seal, secret, webhookSecretAad(id)),
      events,
      description: input.description ?? null,
      enabled: input.enabled ?? true,
      created_at: now,
      updated_at: now,
    };
    await webhooksRepo.insert(db, row);
    return { ...toWebhookView({ ...row, deleted_at: null }), secret };
  }

  async function list(auth: AuthContext): Promise<{ data: WebhookView[] }> {
    return { data: (await webhooksRepo.list(db, auth.accountId)).map(toWebhookView) };
  }

  async function found(auth: AuthContext, id: string): Promise<WebhookRow> {
    const row = await webhooksRepo.get(db, auth.accountId, id);
    if (!row) throw notFound('webhook not found');
    return row;
  }

  async function get(auth: AuthContext, id: string): Promise<WebhookView> {
    return toWebhookView(await found(auth, id));
  }

  async function patch(auth: AuthContext, id: string, input: PatchWebhookInput): Promise<WebhookView> {
    await found(auth, id); // 404 before 400: another account's id tells nothing
    const url = input.url === undefined ? undefined : await validUrl(input.url);
    const events = input.events === undefined ? undefined : validEvents(input.events);
    const updated = await webhooksRepo.update(db, auth.accountId, id, {
      url,
      events,
      // null clears the description; undefined leaves it
      description: input.description,
      enabled: input.enabled,
    }, clock.now());
    if (!updated) throw notFound('webhook not found');
    return toWebhookView(updated);
  }

  async function remove(auth: AuthContext, id: string): Promise<void> {
    if (!(await webhooksRepo.softDelete(db, auth.accountId, id, clock.now()))) throw notFound('webhook not found');
  }

  /** A new secret; the old one signs nothing from this commit on (pending retries included). */
  async function rotateSecret(auth: AuthContext, id: string): Promise<{ secret: string }> {
    const secret = generateWebhookSecret();
    if (!(await webhooksRepo.setSecret(db, auth.accountId, id, seal(keys.seal, secret, webhookSecretAad(id)), clock.now()))) {
      throw notFound('webhook not found');
    }
    return { secret };
  }

  async function deliveries(auth: AuthContext, id: string, filter: { status?: DeliveryStatus | undefined }, page: Page): Promise<ListResult<DeliveryView>> {
    const sub = await found(auth, id);
    const { rows, total } = await webhookDeliveriesRepo.listForSubscription(db, auth.accountId, sub.id, filter, page.limit, page.offset);
    const attempts = await webhookDeliveriesRepo.attemptsOf(db, rows.map((r) => r.id));
    const byDelivery = new Map<string, DeliveryAttemptView[]>();
    for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), toAttemptView(a)]);
    return { data: rows.map((r) => toDeliveryView(r, byDelivery.get(r.id) ?? [])), total, ...page };
  }

  /**
   * A test delivery to this one webhook (enabled or not): a `webhook.test` event signed and
   * sent like any other, one attempt, recorded in its delivery log. Answers the delivery id.
   */
  async function sendTest(auth: AuthContext, id: string): Promise<{ delivery_id: string; event_id: string }> {
    const sub = await found(auth, id);
    const now = clock.now();
    const eventId = newId();
    const deliveryId = newId();
    const jobId = newId();
    const data = { webhook_id: sub.id, test: true };
    await db.transaction(async (tx) => {
      await eventsRepo.insert(tx, { id: eventId, account_id: auth.accountId, type: WEBHOOK_TEST_EVENT, data, created_at: now });
      await jobsRepo.enqueueMany(tx, [{
        id: jobId, kind: DELIVER_WEBHOOK, accountId: auth.accountId, payload: { delivery_id: deliveryId }, maxAttempts: 1, runAt: now,
      }], now);
      await webhookDeliveriesRepo.insertMany(tx, [{
        id: deliveryId, subscription_id: sub.id, account_id: auth.accountId, event_id: eventId, event_type: WEBHOOK_TEST_EVENT,
        payload: { id: eventId, event: WEBHOOK_TEST_EVENT, account_id: auth.accountId, ...data, timestamp: now.toISOString() },
        job_id: jobId, status: 'pending', attempt: 0, max_attempts: 1, response_status: null, response_body: null, error: null,
        duration_ms: null, next_attempt_at: now, created_at: now, updated_at: now, delivered_at: null,
      }]);
    });
    return { delivery_id: deliveryId, event_id: eventId };
  }

  return { create, list, get, patch, remove, rotateSecret, deliveries, sendTest };
}

const toDeliveryView = (r: DeliveryRow, attempts: DeliveryAttemptView[]): DeliveryView => ({
  id: r.id,
  webhook_id: r.subscription_id,
  event_id: r.event_id,
  event: r.event_type,
  status: r.status,
  attempt: r.attempt,
  max_attempts: r.max_attempts,
  response_status: r.response_status,
  response_body: r.response_body,
  error: r.error,
  duration_ms: r.duration_ms,
  next_attempt_at: r.next_attempt_at,
  created_at: r.created_at,
  delivered_at: r.delivered_at,
  payload: r.payload,
  attempts,
});

export type WebhookService = ReturnType<typeof createWebhookService>;
