import type { Clock } from '../../core/clock.ts';
import type { WebhookEventPublisher } from '../../services/event-publisher.ts';
import type { JobHandler } from '../runner.ts';

/**
 * The `fan_out_events` task: writes the webhook deliveries of events the ledger recorded
 * with its entries (services/event-publisher.ts `fanOut`). The ledger writes this job in
 * the same statement as the events, and only for an account with a subscription that
 * wants them, so an acknowledged record's events are never left unannounced, and a chain
 * append never plans deliveries itself. The deliveries commit with the job's completion,
 * under its lease: an attempt that lost its lease writes nothing.
 */
export function createFanOutEventsHandler(deps: { clock: Clock; events: WebhookEventPublisher }): JobHandler {
  return async (job) => {
    const ids = job.payload.event_ids;
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) return { outcome: 'dead', error: 'fan-out job without event ids' };
    return {
      outcome: 'completed',
      commit: async (tx) => {
        await deps.events.fanOut(tx, ids as string[], deps.clock.now());
      },
    };
  };
}
