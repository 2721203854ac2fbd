import type { Queryable } from '../store/db.ts';
import type { EnqueueInput } from '../store/repos/jobs-repo.ts';
import type { DeliveryRow, EventBatch, WebhookRow } from '../store/repos/webhooks-repo.ts';

/**
 * Events: facts the service announces to an account's webhook subscriptions.
 *
 * Two vocabularies name the same facts (spec "Events", DECISIONS "Events and webhooks"):
 * `fiscalization.completed` ≡ `transaction.fiscalized`, `fiscalization.dead_letter` ≡
 * `transaction.failed`. A publisher delivers an event to every subscription that asked
 * for either name of it.
 */
export const EVENT_TYPES = [
  'fiscalization.completed',
  'fiscalization.dead_letter',
  'transaction.fiscalized',
  'transaction.failed',
  'transaction.late_authority_confirmed',
  'transaction.failed_offline_grace_expired',
  'transaction.sdi_status_changed',
  'certificate.expiring',
  'certificate.expired',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface EventInput {
  accountId: string;
  type: EventType;
  /** The event body beyond `event`: the spec's retry-entry shape plus a transaction summary. */
  data: Record<string, unknown>;
}

/**
 * Publishes inside the caller's database transaction: the event's deliveries are jobs
 * committed together with the change that caused them (nothing announced that did not
 * happen, nothing that happened left unannounced).
 */
export interface EventPublisher {
  publish(tx: Queryable, event: EventInput, now: Date): Promise<void>;
  /** Several events in one go (a batch of creates), each delivered as `publish` would. */
  publishMany(tx: Queryable, events: readonly EventInput[], now: Date): Promise<void>;
  /**
   * `publishMany` in two steps, for a caller that writes the events within a statement of
   * its own (the create's batch statement saves a round trip): `batch` is what to insert
   * and match (store/repos/webhooks-repo.ts `eventsInsertAndMatch`), `deliver` then writes
   * the deliveries for the subscriptions that statement matched. Same transaction.
   */
  prepareMany(events: readonly EventInput[], now: Date): {
    batch: EventBatch;
    deliver(tx: Queryable, matched: readonly WebhookRow[]): Promise<void>;
    /**
     * The deliveries `deliver` would write for these subscriptions (`subscriptionsOf`: an
     * account's), as rows and jobs, for a caller that writes them in its own statement.
     */
    deliveries(subscriptionsOf: (accountId: string) => readonly WebhookRow[]): { deliveries: DeliveryRow[]; jobs: EnqueueInput[] };
    /** Deliveries written by the caller were committed: wake a worker of this process. */
    enqueued(): void;
  };
}
