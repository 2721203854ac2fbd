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
 * 400 for a message the channel cannot read; 404 when no sent record matches; 409 when the
 * message does not apply to the transaction's status, or the authority's id it carries is
 * another record's than the fiscal id it names.
 */
import crypto from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { conflict, notFound, unauthorized } from '../core/errors.ts';
import { SYSTEMS, statuses } from '../countries/registry.ts';
import type { FiscalSystem, InboundChannel } from '../countries/types.ts';
import type { Db } from '../store/db.ts';
import { transactionsRepo, type TransactionRow } from '../store/repos/transactions-repo.ts';
import { recordFailure, type FailureTranslations } from './authority-outcome.ts';
import { cancelIfCancellationAccepted, cancelOriginalIfAccepted, relinkOriginal, wakeWaitingCancellation } from './cancellation.ts';
import type { EventPublisher } from './events.ts';
import { batchDeadLetterEvent, completionEvent, jobEvent, transactionEvent } from './transaction-view.ts';
import { ENTRY_KINDS } from './retry-queue.ts';
import { jobsRepo } from '../store/repos/jobs-repo.ts';
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
  /** A refusal's `error_message` when no AI call is needed (services/authority-outcome.ts). */
  translations: FailureTranslations;
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
   * exactly as a posted one (the one path for both), among the stub's records only, and
   * only the job's own record when it names one.
   */
  async function receiveTrusted(name: string, input: { body: string; contentType: string | undefined; transactionId?: string | undefined }): Promise<InboundResult> {
    return apply(name, { ...input, origin: 'internal' });
  }

  /** The statuses the authority may still move a record from (the status machine): where a message looks by fiscal id. */
  let authorityOpen: readonly string[] | undefined;
  const openToAuthority = () => (authorityOpen ??= statuses.names.filter((from) => statuses.names.some((to) => statuses.allows('authority', from, to))));

  /**
   * Reads (a posted message's signature verified by the channel), matches and applies a message.
   *
   * Only a record that was sent is matched (a submission was attempted), one of the
   * message's world first: a posted message (the real authority) prefers a record sent to
   * the authority to one the sandbox stub handled (which it matches only when no other
   * does: a developer posting notifications by hand to test invoices); an internal one
   * (the stub's) matches the record it was made for only. A message the authority's id
   * matches to a record of another fiscal id is refused (409).
   *
   * A move into an accepted status (from one that was not) is the record's fiscalization:
   * `fiscalization.completed`, as a submission's acceptance announces it. A message that
   * says the authority refused the record (`failure`) records the error as a failed
   * submission does (`submit_error`, the translated `error_message`) and announces the dead
   * letter. Either way the record's retry-queue entry closes with it (jobsRepo.settleLatest):
   * `dead` with the refusal, named by the dead letter; `completed` on an acceptance; an entry
   * in flight the same way when its attempt's answer comes. The channel's own status event
   * comes first.
   */
  async function apply(name: string, input: { body: string; contentType: string | undefined; origin: 'posted' | 'internal'; transactionId?: string | undefined }): Promise<InboundResult> {
    const found = channels.get(name);
    if (!found) throw notFound('inbound channel not found');
    const { system, channel } = found;
    const message = channel.read({ body: input.body, contentType: input.contentType, origin: input.origin, trustedCa: deps.trustedCa?.[name], now: deps.clock.now() });
    const match = await transactionsRepo.findByAuthorityId(deps.db, system.key, message.match, {
      prefer: input.origin === 'internal' ? 'stub' : 'authority',
      transactionId: input.origin === 'internal' ? input.transactionId : undefined,
      open: openToAuthority(),
    });
    if (!match) throw notFound('transaction not found');
    const { fiscalId, upstreamId } = message.match;
    if (fiscalId !== undefined && match.fiscal_id !== null && match.fiscal_id !== fiscalId) {
      throw conflict(`the message names ${fiscalId}, but the authority's id ${upstreamId ?? ''} is the one of ${match.fiscal_id}: not recorded`);
    }

    let originalCancelled = false;
    const result = await deps.db.transaction(async (tx): Promise<InboundResult> => {
      originalCancelled = false;
      const now = deps.clock.now();
      // The retry-queue entry is locked before the transaction's row, in the order a worker
      // finishing an attempt takes them: a message and an attempt's answer wait for each other.
      await jobsRepo.latestFor(tx, match.id, ENTRY_KINDS);
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
      // The outcome came: nothing is awaited any more; an earlier attempt's error (an
      // answer lost, the retries run out) is no longer the record's.
      const { awaiting_notification: _awaiting, submit_error: _submitError, error: _error, ...payload } = fields.response_payload as Record<string, unknown>;
      const from = statuses.sources(effect.status, 'authority');
      const accepted = statuses.isAccepted(effect.status);
      const completedAt = t.completed_at ?? now;
      const failure = effect.failure;
      const updated = failure
        ? await recordFailure(tx, t, failure, effect.status, now, from, {
          translations: deps.translations, fields: { fiscal_id_upstream: fields.fiscal_id_upstream, completed_at: completedAt }, payload,
        })
        : await transactionsRepo.update(tx, t.id, {
          status: effect.status, response_payload: payload, fiscal_id_upstream: fields.fiscal_id_upstream,
          ...(accepted ? { completed_at: completedAt, error_message: null } : {}),
        }, now, from);
      if (!updated) throw conflict(`the notification does not apply to a transaction in status ${t.status}`);
      // A cancellation out of a refused status (a file SdI had although its retries ran out):
      // its original names it again (a refusal is relinked by recordFailure).
      if (!failure) await relinkOriginal(tx, t.status, updated, now);
      if (await cancelOriginalIfAccepted(tx, updated, now)) originalCancelled = true;
      // Cancelled while still queued (a status `cancelledOnceAccepted`), its cancellation accepted first: cancelled now.
      const self = await cancelIfCancellationAccepted(tx, updated, now);
      // Settled (accepted or refused): a cancellation waiting for it goes now, not at its next look.
      await wakeWaitingCancellation(tx, system, updated, now);
      // The retry-queue entry tells the same story (spec "Retry queue entry"): decided by the
      // authority, it has nothing left to send: `dead` with the refusal (a retry still due
      // never runs, so a refused file is not sent again), `completed` on an acceptance. An
      // entry in flight (a resend) is ended so by its worker when the answer comes
      // (jobs/tasks/submit.ts `unlessSettledMeanwhile`); the events name it already.
      const lastError = failure ? `${failure.code}: ${failure.message}` : null;
      const entry = lastError !== null
        ? await jobsRepo.settleLatest(tx, t.id, ENTRY_KINDS, { status: 'dead', error: lastError }, now)
        : accepted ? await jobsRepo.settleLatest(tx, t.id, ENTRY_KINDS, { status: 'completed' }, now) : undefined;
      if (effect.event) await deps.events.publish(tx, transactionEvent(effect.event, updated, now), now);
      if (accepted && !statuses.isAccepted(t.status)) await deps.events.publish(tx, completionEvent(updated, now, entry), now);
      if (lastError !== null) {
        await deps.events.publish(tx, entry ? jobEvent('fiscalization.dead_letter', updated, entry, 'dead', lastError, now) : batchDeadLetterEvent(updated, lastError, now), now);
      }
      deps.log.info({ channel: name, transactionId: t.id, from: t.status, to: updated.status }, 'inbound authority message');
      return { transaction_id: t.id, status: (self ?? updated).status, changed: true };
    });
    if (result.changed) deps.metrics?.statusChanged(system.key, result.status);
    if (originalCancelled) deps.metrics?.statusChanged(system.key, 'cancelled');
    return result;
  }

  return { receive, receiveTrusted, channels: () => [...channels.keys()] };
}

export type InboundService = ReturnType<typeof createInboundService>;
