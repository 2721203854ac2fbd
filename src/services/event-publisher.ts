import { newId } from '../core/ids.ts';
import { jobsRepo, type EnqueueInput } from '../store/repos/jobs-repo.ts';
import type { Queryable } from '../store/db.ts';
import { eventsRepo, webhookDeliveriesRepo, webhooksRepo, type DeliveryRow, type WebhookRow } from '../store/repos/webhooks-repo.ts';
import type { Deps } from './deps.ts';
import type { LedgerEvents } from '../ledger/types.ts';
import { EVENT_ALIASES, EVENT_TYPES, type EventInput, type EventPublisher, type EventType } from './events.ts';

/** The job kind of one webhook delivery (register its handler: jobs/tasks/deliver-webhook.ts). */
export const DELIVER_WEBHOOK = 'deliver_webhook';
/** At once, then +10 s, +60 s, +300 s, +600 s. */
export const WEBHOOK_MAX_ATTEMPTS = 5;
/** The job kind that writes the deliveries of events recorded by the ledger (jobs/tasks/fan-out-events.ts). */
export const FAN_OUT_EVENTS = 'fan_out_events';
/** Writing deliveries only fails with the database: retried like any job, then dead (and visible). */
const FAN_OUT_MAX_ATTEMPTS = 10;

/** Every name an event of this type is known by: itself, and its other name if it has one. */
export function namesOf(type: EventType): EventType[] {
  const alias = EVENT_ALIASES.get(type);
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

export interface WebhookEventPublisher extends EventPublisher, LedgerEvents {
  /** `publish` with options and the ids it created. */
  publishEvent(tx: Queryable, event: EventInput, now: Date, opts?: PublishOptions): Promise<PublishResult>;
  /** Writes the deliveries of recorded events (the `fan_out_events` job); answers how many. */
  fanOut(tx: Queryable, eventIds: readonly string[], now: Date): Promise<number>;
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
 * Body delivered: `{id: <event id>, event: <one of the fact's names>, account_id, ...data,
 * timestamp: <event time, ISO 8601>}`. A subscription that asked for either name of a
 * fact with two gets two deliveries, one under each (DECISIONS), the same `id`.
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
  function deliveriesOf(eventId: string, event: EventInput, subs: readonly WebhookRow[], now: Date, eventAt: Date): { delivery: DeliveryRow; job: EnqueueInput }[] {
    const names = namesOf(event.type);
    const rest = Object.fromEntries(Object.entries(event.data).filter(([k]) => !RESERVED.has(k)));
    // DECISIONS "Events and webhooks": "on every emission the service delivers both names
    // of the same fact to subscriptions that asked for either". One delivery per name, the
    // published name first; the event id is the fact's, the same in both.
    return subs.filter((sub) => names.some((n) => sub.events.includes(n))).flatMap((sub) => names.map((name) => {
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
          payload: { id: eventId, event: name, account_id: event.accountId, ...rest, timestamp: eventAt.toISOString() },
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
    }));
  }

  /** One delivery (log row + job) per subscription that asked for the event under either name. */
  async function deliverTo(tx: Queryable, eventId: string, event: EventInput, subs: readonly WebhookRow[], now: Date, eventAt = now): Promise<PublishResult> {
    const planned = deliveriesOf(eventId, event, subs, now, eventAt);
    // The jobs first: a delivery names its job.
    await jobsRepo.enqueueMany(tx, planned.map((p) => p.job), now);
    await webhookDeliveriesRepo.insertMany(tx, planned.map((p) => p.delivery));
    if (planned.length) {
      deps.log.debug({ eventId, type: event.type, deliveries: planned.length }, 'event published');
      opts.onEnqueued?.();
    }
    return { eventId, deliveryIds: planned.map((p) => p.delivery.id) };
  }

  /** The rows of events the caller writes itself (the ledger's batch statement). */
  function rows(events: readonly EventInput[], now: Date) {
    events.forEach(checkType);
    return {
      rows: events.map((e) => ({ id: newId(), account_id: e.accountId, type: e.type, data: e.data, created_at: now })),
      types: [...new Set(events.flatMap((e) => namesOf(e.type)))],
    };
  }

  /**
   * Ordinary fan-out of events already recorded (the ledger writes its entries' events and
   * a `fan_out_events` job, and this job writes their deliveries): each event goes to the
   * enabled subscriptions of its account that asked for it under either name and existed
   * when it happened, exactly as `publish` would have delivered it then (same body, same
   * event time).
   */
  async function fanOut(tx: Queryable, eventIds: readonly string[], now: Date): Promise<number> {
    let n = 0;
    const events = await eventsRepo.getByIds(tx, eventIds);
    // One lookup per account for every name its events go by (a batch's events share one).
    const subsOf = new Map<string, WebhookRow[]>();
    for (const accountId of new Set(events.map((e) => e.account_id))) {
      const names = [...new Set(events.filter((e) => e.account_id === accountId).flatMap((e) => namesOf(e.type as EventType)))];
      subsOf.set(accountId, await webhooksRepo.matching(tx, accountId, names));
    }
    for (const e of events) {
      const event: EventInput = { accountId: e.account_id, type: e.type as EventType, data: e.data };
      // deliverTo keeps those that asked for this event under either name.
      const subs = subsOf.get(e.account_id)!.filter((s) => s.created_at.getTime() <= e.created_at.getTime());
      n += (await deliverTo(tx, e.id, event, subs, now, e.created_at)).deliveryIds.length;
    }
    return n;
  }

  return {
    publishEvent,
    async publish(tx, event, now) {
      await publishEvent(tx, event, now);
    },
    /** Several events of one batch: one insert and one subscription lookup for all of them. */
    async publishMany(tx, events, now) {
      if (events.length === 0) return;
      const batch = rows(events, now);
      const matched = await eventsRepo.insertManyAndMatch(tx, batch.rows, batch.types);
      for (const [i, e] of events.entries()) {
        const names = namesOf(e.type);
        const subs = matched.filter((s) => s.account_id === e.accountId && names.some((n) => s.events.includes(n)));
        if (subs.length) await deliverTo(tx, batch.rows[i]!.id, e, subs, now);
      }
    },
    rows,
    fanOutJob: (accountId, eventIds, now) => ({
      kind: FAN_OUT_EVENTS, accountId, payload: { event_ids: [...eventIds] }, maxAttempts: FAN_OUT_MAX_ATTEMPTS, runAt: now,
    }),
    enqueued: () => opts.onEnqueued?.(),
    fanOut,
  };
}
