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

