import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { createEventPublisher, isDeadLetterType, type WebhookEventPublisher } from '../../services/event-publisher.ts';
import type { Deps } from '../../services/deps.ts';
import type { EventPublisher } from '../../services/events.ts';
import { WEBHOOK_TEST_EVENT, openWebhookSecret, webhookUrlPolicy } from '../../services/webhooks.ts';
import type { Queryable } from '../../store/db.ts';
import { webhookDeliveriesRepo, webhooksRepo, type AttemptRow, type DeliveryRow, type WebhookRow } from '../../store/repos/webhooks-repo.ts';
import { signatureHeaders } from '../../webhooks/signing.ts';
import { guardedLookup, parseWebhookUrl, type LookupAll, type ParsedWebhookUrl, type UrlPolicy } from '../../webhooks/url-guard.ts';
import type { AttemptResult, JobHandler } from '../runner.ts';
import type { JobRow } from '../../store/repos/jobs-repo.ts';
import { NO_WEBHOOK_METRICS, type WebhookObserver } from '../../metrics/observers.ts';

/** Retry delays after attempts 1..4 (spec "Delivery"): 5 attempts in all. */
export const WEBHOOK_RETRY_DELAYS_MS = [10_000, 60_000, 300_000, 600_000] as const;
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** How much of an answer the delivery log keeps. */
export const RESPONSE_EXCERPT_BYTES = 1024;
const USER_AGENT = 'fiscalization-webhooks/1';

/** What the handler needs: the app's dependencies, plus optional overrides. */
export type DeliverWebhookDeps = Pick<Deps, 'db' | 'clock' | 'keys' | 'config' | 'log'> & {
  /** Per attempt: connect, send, answer (default 10 s). */
  timeoutMs?: number | undefined;
  /** DNS for the delivery-time check (tests inject one). */
  lookup?: LookupAll | undefined;
  /**
   * The publisher of the dead-letter event of an exhausted delivery. It must be ours
   * (createEventPublisher: it can leave out the failing subscription); anything else is
   * replaced by one.
   */
  events?: EventPublisher | undefined;
  /** Each attempt's outcome and duration (src/metrics). */
  metrics?: WebhookObserver | undefined;
};

export interface PostResult {
  status: number | null;
  excerpt: string | null;
  error: string | null;
  durationMs: number;
}

/** PostgreSQL text cannot hold NUL; an answer's excerpt is for people, so drop them. */
const clean = (s: string) => s.replace(/\u0000/g, '');

/**
 * One POST. Node's http(s) client rather than fetch: its `lookup` hook lets the socket
 * connect only to the addresses the URL guard approved a moment before (DNS rebinding);
 * a literal address was checked by parseWebhookUrl. Redirects are not followed (a 3xx
 * is a failed attempt). No connection reuse (`agent: false`): every attempt resolves
 * and checks again.
 */
export function postWebhook(
  target: ParsedWebhookUrl, headers: Record<string, string>, body: string, timeoutMs: number, policy: UrlPolicy, lookup?: LookupAll,
): Promise<PostResult> {
  const started = performance.now();
  const client = target.plainHttp ? http : https;
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    const excerpt = () => clean(Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'));
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, excerpt: status === null ? null : excerpt(), error: status === null ? error : null, durationMs: Math.round(performance.now() - started) });
      req.destroy();
    };
    const req = client.request(target.url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: false,
      ...(target.ip ? {} : { lookup: guardedLookup(policy, target.plainHttp, lookup) as never }),
    }, (res) => {
      status = res.statusCode ?? null;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        size += c.length;
        if (size >= RESPONSE_EXCERPT_BYTES) finish(null); // the status decides; the rest is not needed
      });
      res.on('end', () => finish(null));
      res.on('error', () => finish(null));
      res.on('aborted', () => finish(null));
    });
    // Once the status line is in, a slow body does not turn an answer into a timeout.
    const timer = setTimeout(() => finish(`timeout after ${timeoutMs} ms`), timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish(describeError(err)));
    req.end(body);
  });
}

function describeError(err: NodeJS.ErrnoException): string {
  if (err.code === 'EWEBHOOKURL') return `refused: ${err.message}`;
  if (err.code === 'ECONNREFUSED') return 'connection refused';
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return `DNS lookup failed (${err.code})`;
  if (err.code === 'ECONNRESET') return 'connection reset';
  return err.code ? `${err.code}: ${err.message}` : err.message;
}

/**
 * The `deliver_webhook` job handler: one attempt of one delivery.
 *
 * - The subscription is read at delivery time: a deleted or disabled one cancels the
 *   delivery; a changed URL is used; the secret is unsealed now, so after a rotation
 *   every later attempt (pending retries included) is signed with the new secret.
 * - 2xx → succeeded. Anything else (status, timeout, refused URL, network error) →
 *   retried at +10 s, +60 s, +300 s, +600 s (application clock); the 5th failure → dead,
 *   and a `fiscalization.dead_letter` event (≡ `transaction.failed`) is published in the
 *   same commit — never to the subscription that failed, and never for a delivery that
 *   itself carried a dead-letter event (no loops).
 * - Every attempt is recorded (webhook_delivery_attempts) with the delivery's new state,
 *   in the commit that records the job's outcome.
 */
export function createDeliverWebhookHandler(deps: DeliverWebhookDeps): JobHandler {
  const { db, clock, keys, log } = deps;
  const metrics = deps.metrics ?? NO_WEBHOOK_METRICS;
  const policy = webhookUrlPolicy(deps.config);
  const timeoutMs = deps.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const publisher: WebhookEventPublisher =
    deps.events && 'publishEvent' in deps.events ? (deps.events as WebhookEventPublisher) : createEventPublisher(deps);

  function deadLetter(tx: Queryable, job: JobRow, delivery: DeliveryRow, sub: WebhookRow, error: string, now: Date) {
    const txId = delivery.payload.transaction_id;
    return publisher.publishEvent(tx, {
      accountId: delivery.account_id,
      type: 'fiscalization.dead_letter',
      data: {
        source: 'webhook_delivery',
        entry_id: delivery.id,
        transaction_id: typeof txId === 'string' ? txId : null,
        account_id: delivery.account_id,
        status: 'dead',
        attempt: job.attempt,
        max_attempts: job.max_attempts,
        last_error: error,
        webhook_id: sub.id,
        webhook_url: sub.url,
        failed_event: { id: delivery.event_id, event: delivery.event_type },
      },
    }, now, { excludeSubscriptionIds: [sub.id] });
  }

  return async (job): Promise<AttemptResult> => {
    const deliveryId = typeof job.payload.delivery_id === 'string' ? job.payload.delivery_id : '';
    const delivery = await webhookDeliveriesRepo.get(db, deliveryId);
    if (!delivery) return { outcome: 'dead', error: 'delivery not found' };
    if (delivery.status === 'succeeded' || delivery.status === 'dead' || delivery.status === 'cancelled') return { outcome: 'completed' };
    const sub = await webhooksRepo.getAny(db, delivery.subscription_id);
    // A "send test" goes to its webhook enabled or not (docs/decisions.md "Webhook send
    // test"): a merchant checks a paused endpoint before turning it back on. Only a
    // deleted webhook cancels it.
    const disabledCancels = delivery.event_type !== WEBHOOK_TEST_EVENT;
    if (!sub || sub.deleted_at || (!sub.enabled && disabledCancels)) {
      const reason = !sub || sub.deleted_at ? 'webhook deleted' : 'webhook disabled';
      metrics.delivery('cancelled');
      return { outcome: 'completed', commit: (tx) => webhookDeliveriesRepo.cancel(tx, delivery.id, reason, clock.now()) };
    }

    const attemptedAt = clock.now();
    const timestamp = Math.floor(attemptedAt.getTime() / 1000);
    const body = JSON.stringify(delivery.payload);
    let result: PostResult;
    try {
      const target = parseWebhookUrl(sub.url, policy); // the rules in force now, on the URL as it is now
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...signatureHeaders({ secret: openWebhookSecret(keys, sub), messageId: delivery.id, timestamp, body }),
      };
      result = await postWebhook(target, headers, body, timeoutMs, policy, deps.lookup);
    } catch (err) {
      result = { status: null, excerpt: null, error: (err as Error).message, durationMs: 0 };
    }

    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const error = ok ? null : result.error ?? `HTTP ${result.status}${result.status! >= 300 && result.status! < 400 ? ' (redirects are not followed)' : ''}`;
    const now = clock.now();
    const attempt: AttemptRow = {
      delivery_id: delivery.id,
      attempt: job.attempt,
      outcome: ok ? 'succeeded' : 'failed',
      response_status: result.status,
      response_body: result.excerpt,
      error,
      duration_ms: result.durationMs,
      attempted_at: attemptedAt,
    };
    log.debug({ deliveryId: delivery.id, attempt: job.attempt, status: result.status, error }, 'webhook attempt');

    const seconds = result.status !== null || result.durationMs > 0 ? result.durationMs / 1000 : undefined;
    if (ok) {
      metrics.delivery('succeeded', seconds);
      return { outcome: 'completed', commit: (tx) => webhookDeliveriesRepo.recordAttempt(tx, attempt, { status: 'succeeded', nextAttemptAt: null, deliveredAt: now, at: now }) };
    }
    if (job.attempt >= job.max_attempts) {
      metrics.delivery('dead', seconds);
      return {
        outcome: 'dead',
        error: error!,
        commit: async (tx) => {
          await webhookDeliveriesRepo.recordAttempt(tx, attempt, { status: 'dead', nextAttemptAt: null, deliveredAt: null, at: now });
          // A test delivery's failure is shown in its log; it is not an incident to announce.
          if (!isDeadLetterType(delivery.event_type) && delivery.event_type !== WEBHOOK_TEST_EVENT) await deadLetter(tx, job, delivery, sub, error!, now);
        },
      };
    }
    metrics.delivery('failed', seconds);
    const delay = WEBHOOK_RETRY_DELAYS_MS[Math.min(job.attempt, WEBHOOK_RETRY_DELAYS_MS.length) - 1]!;
    const runAt = new Date(now.getTime() + delay);
    return {
      outcome: 'retry',
      error: error!,
      runAt,
      commit: (tx) => webhookDeliveriesRepo.recordAttempt(tx, attempt, { status: 'failed', nextAttemptAt: runAt, deliveredAt: null, at: now }),
    };
  };
}
