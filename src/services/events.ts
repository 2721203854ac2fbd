import type { Queryable } from '../store/db.ts';

export type { EventInput, EventType } from '../core/events.ts';
export { EVENT_TYPES } from '../countries/registry.ts';
import type { EventInput } from '../core/events.ts';

/**
 * Publishes inside the caller's database transaction: the event's deliveries are jobs
 * committed together with the change that caused them (nothing announced that did not
 * happen, nothing that happened left unannounced).
 */
export interface EventPublisher {
  publish(tx: Queryable, event: EventInput, now: Date): Promise<void>;
  /** Several events in one go (a batch of creates), each delivered as `publish` would. */
  publishMany(tx: Queryable, events: readonly EventInput[], now: Date): Promise<void>;
}
