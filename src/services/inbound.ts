/**
 * Inbound authority messages: what an authority sends us later about a record it holds
 * (Italy SDI notifications RC, NS, MC…; DECISIONS "Italy SDI inbound receiver"), received
 * at `POST /v1/inbound/<channel>`. The channel is a plug-in's (`FiscalSystem.inbound`):
 * it reads the message (which record, what happened); this service authenticates the
 * sender, finds the record, and moves its transaction as the status machine lets the
 * authority move it, announcing the change, in one database transaction.
 *
 * Answers: 200 with the transaction's id and status (also when the message changes
 * nothing: the same notification twice, or one that only informs); 401 for a missing or
 * wrong secret (and for a channel without a configured secret: nobody may post to it);
 * 400 for a message the channel cannot read; 404 when no record matches; 409 when the
 * message does not apply to the transaction's status.
 */
import crypto from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { conflict, notFound, unauthorized } from '../core/errors.ts';
import { SYSTEMS, statuses } from '../countries/registry.ts';
import type { FiscalSystem, InboundChannel } from '../countries/types.ts';
import type { Db } from '../store/db.ts';
import { transactionsRepo, type TransactionRow } from '../store/repos/transactions-repo.ts';
import { cancelOriginalIfAccepted } from './cancellation.ts';
import type { EventPublisher } from './events.ts';
import { transactionEvent } from './transaction-view.ts';
import type { SubmissionObserver } from '../metrics/observers.ts';

export interface InboundDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  events: EventPublisher;
  /** Each channel's shared secret, by channel name (config `<NAME>_INBOUND_SECRET`). */
  secrets: Readonly<Record<string, string>>;
  /** Each channel's trust anchors for signed messages (config `<NAME>_NOTIFICATION_CA_FILE`). */
  trustedCa?: Readonly<Record<string, string>>;
  /** The plug-ins (default: the registry's); a test may pass a system with a channel it lacks yet. */
  systems?: readonly FiscalSystem[];
  /** Counts the status changes the authority's messages make (src/metrics), once committed. */
  metrics?: Pick<SubmissionObserver, 'statusChanged'>;
}

export interface InboundMessageInput {
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: string;
  contentType: string | undefined;
}

export interface InboundResult {
  transaction_id: string;
  status: string;
  changed: boolean;
}

/** Constant-time comparison of the presented secret with the configured one. */
function sameSecret(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export function createInboundService(deps: InboundDeps) {
  const channels = new Map<string, { system: FiscalSystem; channel: InboundChannel }>();
  for (const system of deps.systems ?? SYSTEMS) {
    if (system.inbound) channels.set(system.inbound.name, { system, channel: system.inbound });
  }

  /** A message posted to `POST /v1/inbound/<name>`: the channel's secret checked, then read as any other. */
  async function receive(name: string, input: InboundMessageInput): Promise<InboundResult> {
    const found = channels.get(name);
    if (!found) throw notFound('inbound channel not found');
    const { channel } = found;
    const header = input.headers[channel.secretHeader.toLowerCase()];
    const expected = deps.secrets[name];
    if (expected === undefined || typeof header !== 'string' || !sameSecret(header, expected)) {
      throw unauthorized(`missing or invalid ${channel.secretHeader}`);
    }
    return apply(name, { body: input.body, contentType: input.contentType, origin: 'posted' });
  }

  /**
   * A message from inside the service (the sandbox stub's notifications, delivered by an
   * `inbound_message` job: jobs/tasks/inbound-message.ts): no secret to check, and no
   * signature (origin `internal`: the stub does not sign); read, matched and applied
   * exactly as a posted one (the one path for both).
   */
  async function receiveTrusted(name: string, input: { body: string; contentType: string | undefined }): Promise<InboundResult> {
    return apply(name, { ...input, origin: 'internal' });
  }

  /** Reads (a posted message's signature verified by the channel), matches and applies a message. */
  async function apply(name: string, input: { body: string; contentType: string | undefined; origin: 'posted' | 'internal' }): Promise<InboundResult> {
    const found = channels.get(name);
    if (!found) throw notFound('inbound channel not found');
    const { system, channel } = found;
    const message = channel.read({ ...input, trustedCa: deps.trustedCa?.[name], now: deps.clock.now() });
    const match = await transactionsRepo.findByAuthorityId(deps.db, system.key, message.match);
    if (!match) throw notFound('transaction not found');

    let originalCancelled = false;
    const result = await deps.db.transaction(async (tx): Promise<InboundResult> => {
      originalCancelled = false;
      const now = deps.clock.now();
      const t = (await transactionsRepo.getById(tx, match.id, { forUpdate: true }))!;
      const notifications = [
        ...((t.response_payload.notifications as unknown[] | undefined) ?? []),
        { received_at: now.toISOString(), ...message.response },
      ];
      const fields: Partial<TransactionRow> = {
        response_payload: { ...t.response_payload, notifications },
        fiscal_id_upstream: message.upstreamId ?? t.fiscal_id_upstream,
      };
      const effect = message.resolve ? message.resolve({ status: t.status, response_payload: t.response_payload }) : message;
      if (effect.status === undefined || effect.status === t.status) {
        await transactionsRepo.update(tx, t.id, fields, now);
        return { transaction_id: t.id, status: t.status, changed: false };
      }
      if (!statuses.allows('authority', t.status, effect.status)) {
        throw conflict(`the notification does not apply to a transaction in status ${t.status}`);
      }
      const updated = (await transactionsRepo.update(tx, t.id, {
        ...fields, status: effect.status, ...(statuses.isAccepted(effect.status) ? { completed_at: now } : {}),
      }, now, statuses.sources(effect.status, 'authority')))!;
      if (await cancelOriginalIfAccepted(tx, updated, now)) originalCancelled = true;
      if (effect.event) await deps.events.publish(tx, transactionEvent(effect.event, updated, now), now);
      deps.log.info({ channel: name, transactionId: t.id, from: t.status, to: updated.status }, 'inbound authority message');
      return { transaction_id: t.id, status: updated.status, changed: true };
    });
    if (result.changed) deps.metrics?.statusChanged(system.key, result.status);
    if (originalCancelled) deps.metrics?.statusChanged(system.key, 'cancelled');
    return result;
  }

  return { receive, receiveTrusted, channels: () => [...channels.keys()] };
}

export type InboundService = ReturnType<typeof createInboundService>;
