import type { Queryable } from '../store/db.ts';

export type { EventInput, EventType } from '../core/events.ts';
export { EVENT_TYPES } from '../countries/registry.ts';
import type { EventInput } from '../core/events.ts';
import { SYSTEM_EVENT_ALIASES } from '../countries/registry.ts';

/** The core's two names of one fact (DECISIONS "Events and webhooks"), one pair each. */
const CORE_ALIAS_PAIRS: readonly (readonly [string, string])[] = [
  ['fiscalization.completed', 'transaction.fiscalized'],
  ['fiscalization.dead_letter', 'transaction.failed'],
];

/** Every event's other name, both ways: the core's pairs and each system's (`FiscalSystem.eventAliases`). */
export const EVENT_ALIASES: ReadonlyMap<string, string> = new Map([
  ...CORE_ALIAS_PAIRS.flatMap(([a, b]): [string, string][] => [[a, b], [b, a]]),
  ...SYSTEM_EVENT_ALIASES,
]);

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
