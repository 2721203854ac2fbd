import { newId } from '../core/ids.ts';
import { jobsRepo, type EnqueueInput } from '../store/repos/jobs-repo.ts';
import type { Queryable } from '../store/db.ts';
import { eventsRepo, webhookDeliveriesRepo, webhooksRepo, type DeliveryRow, type WebhookRow } from '../store/repos/webhooks-repo.ts';
import type { Deps } from './deps.ts';
import { EVENT_TYPES, type EventInput, type EventPublisher, type EventType } from './events.ts';

/** The job kind of one webhook delivery (register its handler: jobs/tasks/deliver-webhook.ts). */
export const DELIVER_WEBHOOK = 'deliver_webhook';
/** At once, then +10 s, +60 s, +300 s, +600 s. */
export const WEBHOOK_MAX_ATTEMPTS = 5;

/** The two names of one fact (DECISIONS "Events and webhooks"). */
const ALIAS: Partial<Record<EventType, EventType>> = {
  'fiscalization.completed': 'transaction.fiscalized',
  'transaction.fiscalized': 'fiscalization.completed',
  'fiscalization.dead_letter': 'transaction.failed',
  'transaction.failed': 'fiscalization.dead_letter',
};

/** Every name an event of this type is known by: itself, and its alias if it has one. */
export function namesOf(type: EventType): EventType[] {
  const alias = ALIAS[type];
  return alias ? [type, alias] : [type];
}

/** Dead-letter events (either name): a failed delivery of one never announces another. */
export const isDeadLetterType = (type: string): boolean => type === 'fiscalization.dead_letter' || type === 'transaction.failed';

export interface PublishOptions {
  /** Subscriptions not to deliver to (a webhook's own dead letter never goes back to it). */
  excludeSubscriptionIds?: readonly string[];
}

export interface PublishResult {
  eventId: string;
  deliveryIds: string[];
}

export interface WebhookEventPublisher extends EventPublisher {
  /** `publish` with options and the ids it created. */
  publishEvent(tx: Queryable, event: EventInput, now: Date, opts?: PublishOptions): Promise<PublishResult>;
}

/** Fields the service sets in every body; the caller's `data` cannot override them. */
const RESERVED = new Set(['id', 'event', 'timestamp']);

/**
 * The EventPublisher. Inside the caller's database transaction it records the event,
 * and for every enabled subscription of the account that asked for the event's type or
 * its alias it writes a delivery (the log row) and enqueues one `deliver_webhook` job,
 * runnable at once, 5 attempts. All of it commits with the change that caused the event,
 * or not at all.
 *
 * Body delivered: `{id: <event id>, event: <the name the subscription asked for>,
 * account_id, ...data, timestamp: <event time, ISO 8601>}`. A subscription that asked
 * for both names of one fact gets one delivery, under the published name.
 *
 * `onEnqueued` (optional) is called after the publish returns, e.g. `worker.notify` in
 * a process that runs a worker; it is a hint (the transaction may still roll back).
 */
export function createEventPublisher(deps: Pick<Deps, 'log'>, opts: { onEnqueued?: () => void } = {}): WebhookEventPublisher {
  const checkType = (event: EventInput) => {
    if (!(EVENT_TYPES as readonly string[]).includes(event.type)) throw new Error(`unknown event type ${event.type}`);
  };

  async function publishEvent(tx: Queryable, event: EventInput, now: Date, o: PublishOptions = {}): Promise<PublishResult> {
    checkType(event);
    const eventId = newId();
    const names = namesOf(event.type);
    const excluded = new Set(o.excludeSubscriptionIds ?? []);
    const matched = await eventsRepo.insertAndMatch(tx, { id: eventId, account_id: event.accountId, type: event.type, data: event.data, created_at: now }, names);
    return deliverTo(tx, eventId, event, matched.filter((s) => !excluded.has(s.id)), now);
  }

  /**
   * What delivering an event to these subscriptions writes, without writing it: per
   * subscription that asked for the event under either name, a delivery (the log row) and
   * its `deliver_webhook` job, runnable at once, 5 attempts.
   */
  function deliveriesOf(eventId: string, event: EventInput, subs: readonly WebhookRow[], now: Date): { delivery: DeliveryRow; job: EnqueueInput }[] {
    const names = namesOf(event.type);
    const rest = Object.fromEntries(Object.entries(event.data).filter(([k]) => !RESERVED.has(k)));
    return subs.filter((sub) => names.some((n) => sub.events.includes(n))).map((sub) => {
      const name = sub.events.includes(event.type) ? event.type : names.find((n) => sub.events.includes(n))!;
      const deliveryId = newId();
      const jobId = newId();
      return {
        job: { id: jobId, kind: DELIVER_WEBHOOK, accountId: event.accountId, payload: { delivery_id: deliveryId }, maxAttempts: WEBHOOK_MAX_ATTEMPTS, runAt: now },
        delivery: {
          id: deliveryId,
          subscription_id: sub.id,
          account_id: event.accountId,
          event_id: eventId,
          event_type: name,
          payload: { id: eventId, event: name, account_id: event.accountId, ...rest, timestamp: now.toISOString() },
          job_id: jobId,
          status: 'pending',
          attempt: 0,
          max_attempts: WEBHOOK_MAX_ATTEMPTS,
          response_status: null,
          response_body: null,
          error: null,
          duration_ms: null,
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
          delivered_at: null,
        },
      };
    });
  }

  /** One delivery (log row + job) per subscription that asked for the event under either name. */
  async function deliverTo(tx: Queryable, eventId: string, event: EventInput, subs: readonly WebhookRow[], now: Date): Promise<PublishResult> {
    const planned = deliveriesOf(eventId, event, subs, now);
    // The jobs first: a delivery names its job.
    await jobsRepo.enqueueMany(tx, planned.map((p) => p.job), now);
    await webhookDeliveriesRepo.insertMany(tx, planned.map((p) => p.delivery));
    if (planned.length) {
      deps.log.debug({ eventId, type: event.type, deliveries: planned.length }, 'event published');
      opts.onEnqueued?.();
    }
    return { eventId, deliveryIds: planned.map((p) => p.delivery.id) };
  }

  function prepareMany(events: readonly EventInput[], now: Date) {
    events.forEach(checkType);
    const rows = events.map((e) => ({ id: newId(), account_id: e.accountId, type: e.type, data: e.data, created_at: now }));
    return {
      batch: { rows, types: [...new Set(events.flatMap((e) => namesOf(e.type)))] },
      async deliver(tx: Queryable, matched: readonly WebhookRow[]) {
        for (const [i, e] of events.entries()) {
          const names = namesOf(e.type);
          const subs = matched.filter((s) => s.account_id === e.accountId && names.some((n) => s.events.includes(n)));
          if (subs.length) await deliverTo(tx, rows[i]!.id, e, subs, now);
        }
      },
      deliveries(subscriptionsOf: (accountId: string) => readonly WebhookRow[]) {
        const planned = events.flatMap((e, i) => deliveriesOf(rows[i]!.id, e, subscriptionsOf(e.accountId), now));
        return { deliveries: planned.map((p) => p.delivery), jobs: planned.map((p) => p.job) };
      },
      enqueued: () => opts.onEnqueued?.(),
    };
  }

  return {
    publishEvent,
    async publish(tx, event, now) {
      await publishEvent(tx, event, now);
    },
    /** Several events of one batch: one insert and one subscription lookup for all of them. */
    async publishMany(tx, events, now) {
      if (events.length === 0) return;
      const { batch, deliver } = prepareMany(events, now);
      await deliver(tx, await eventsRepo.insertManyAndMatch(tx, batch.rows, batch.types));
    },
    prepareMany,
  };
}
