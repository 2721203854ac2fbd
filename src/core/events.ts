/**
 * Events: facts the service announces to an account's webhook subscriptions.
 *
 * Two vocabularies name the same facts (spec "Events", DECISIONS "Events and webhooks"):
 * `fiscalization.completed` ≡ `transaction.fiscalized`, `fiscalization.dead_letter` ≡
 * `transaction.failed`. A publisher delivers an event to every subscription that asked
 * for either name of it.
 */
export const CORE_EVENT_TYPES = [
  'fiscalization.completed',
  'fiscalization.dead_letter',
  'transaction.fiscalized',
  'transaction.failed',
  // A correction of an accepted transaction (POST /v1/transactions/{id}/correct, beyond the
  // spec) answered by its authority: accepted, or refused (or out of retries). Beyond the
  // spec's vocabulary: neither of its facts fits (the transaction was fiscalized before and
  // stays so; a refused correction is no failed transaction).
  'transaction.corrected',
  'transaction.correction_failed',
  'certificate.expiring',
  'certificate.expired',
] as const;
export type CoreEventType = (typeof CORE_EVENT_TYPES)[number];
/**
 * A core event, or one a fiscal system announces (its plug-in's `events`: Greece's late
 * confirmation and grace expiry, SDI's status change). The full list, core and systems',
 * is the registry's `EVENT_TYPES` (countries/registry.ts).
 */
export type EventType = CoreEventType | (string & {});

export interface EventInput {
  accountId: string;
  type: EventType;
  /** The event body beyond `event`: the spec's retry-entry shape plus a transaction summary. */
  data: Record<string, unknown>;
}

