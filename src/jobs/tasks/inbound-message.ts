import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../../core/errors.ts';
import type { InboundService } from '../../services/inbound.ts';
import type { JobHandler } from '../runner.ts';

export interface InboundMessageDeps {
  inbound: Pick<InboundService, 'receiveTrusted'>;
  log: FastifyBaseLogger;
}

/**
 * The inbound_message task: delivers a message an authority "sends later" that the sandbox
 * stub produced with its answer (`sent` with `notifications`: the SdI RC or NS) through
 * the system's inbound channel, the same code a posted message goes through
 * (services/inbound.ts `receiveTrusted`).
 *
 * - read and applied (or changing nothing: the same message again) → completed;
 * - refused by the receiver (400 unreadable, 404 no record, 409 not applicable): the stub
 *   produced a message its own channel refuses, a bug no retry mends → `dead` with the
 *   receiver's answer;
 * - anything else (the database) throws: the runner retries it later.
 */
export function createInboundMessageHandler(deps: InboundMessageDeps): JobHandler {
  return async (job) => {
    const p = job.payload as Record<string, unknown>;
    const channel = p.channel;
    const body = p.body;
    const contentType = typeof p.content_type === 'string' ? p.content_type : undefined;
    if (typeof channel !== 'string' || typeof body !== 'string') {
      return { outcome: 'dead', error: 'inbound_message job without a channel or body' };
    }
    try {
      // The stub made the message for this job's record: matched among it alone.
      const r = await deps.inbound.receiveTrusted(channel, { body, contentType, transactionId: job.transaction_id ?? undefined });
      deps.log.debug({ jobId: job.id, channel, transactionId: r.transaction_id, status: r.status, changed: r.changed }, 'inbound message delivered');
      return { outcome: 'completed' };
    } catch (err) {
      if (err instanceof ApiError) return { outcome: 'dead', error: `the ${channel} channel answered ${err.status}: ${err.message}` };
      throw err;
    }
  };
}
