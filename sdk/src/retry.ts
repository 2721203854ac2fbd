/**
 * A fetch that retries what is safe to retry (spec "Errors", client guidance: retry 5xx
 * with exponential backoff; do not retry 4xx unchanged):
 *
 * - 429: always (the request was refused before doing anything), after `Retry-After`
 *   (delta seconds or an HTTP date; never earlier); a wait longer than `maxRetryAfterMs`
 *   is not waited: the 429 is returned. A malformed Retry-After counts as absent (backoff).
 * - 5xx, network failures and attempt timeouts: only when repeating cannot do a thing
 *   twice: GET, HEAD, OPTIONS, PUT, DELETE, a request carrying an Idempotency-Key (a
 *   transaction create: the service answers the first one's result), or one of the
 *   document's `x-repeatable` operations (a cancel answers the first cancellation). Backoff: base ×
 *   2^attempt, capped, with jitter; a 503's Retry-After is honoured.
 * - any other 4xx: never.
 *
 * Each attempt has its own time limit (`timeoutMs`, default 60 s, covering the answer's
 * body too); an attempt that runs out is aborted. When no attempt is left (or the request
 * is not repeatable) the call rejects with FiscalTimeoutError. The caller's own
 * AbortSignal stops everything at once, waits between attempts included.
 */
import { FiscalTimeoutError } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** First backoff delay in ms (default 250). */
  baseDelayMs?: number;
  /** Longest backoff delay in ms (default 8000). */
  maxDelayMs?: number;
  /** Longest Retry-After the SDK waits for (default 60 s). */
  maxRetryAfterMs?: number;
  /** Time limit of one attempt in ms, answer body included (default 60 s; 0: none). */
  timeoutMs?: number;
  /**
   * Requests known to be repeatable beyond the methods and the Idempotency-Key (the client
   * marks its `x-repeatable` operations: index.ts).
   */
  repeatable?: (request: Request) => boolean;
  /** Test seam: how to wait. */
  sleep?: (ms: number) => Promise<void>;
  /** Test seam: jitter source in [0, 1). */
  random?: () => number;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** Whether repeating `request` cannot do its work twice. */
export const isRepeatable = (request: Request): boolean =>
  SAFE_METHODS.has(request.method.toUpperCase()) || request.headers.has('idempotency-key');

/** An HTTP-date (RFC 9110 §5.6.7: IMF-fixdate, obsolete RFC 850 and asctime forms): it names a month. */
const HTTP_DATE = /\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b/i;

/**
 * Milliseconds from a Retry-After header (RFC 9110 §10.2.3: delay-seconds or an HTTP-date),
 * or undefined when absent or malformed (`1.5`, `-5`, `soon`: the caller falls back to its
 * backoff instead of retrying at once). HTTP dates are GMT, also the asctime form that
 * does not say so.
 */
export function retryAfterMs(value: string | null, nowMs = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!HTTP_DATE.test(v)) return undefined;
  const at = Date.parse(/\b(GMT|UTC|Z)$|[+-]\d{4}$/i.test(v) ? v : `${v} GMT`);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Delay before retry number `attempt` (0-based): equal jitter over the capped exponential. */
export function backoffMs(attempt: number, o: { baseDelayMs: number; maxDelayMs: number; random: () => number }): number {
  const capped = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** attempt);
  return Math.round(capped / 2 + (o.random() * capped) / 2);
}

/** Waits `ms` unless `signal` aborts first (then rejects with its reason). */
async function waitFor(ms: number, sleep: (ms: number) => Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw signal.reason;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([sleep(ms), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}

/**
 * One attempt's copy of `original` (a body can be read only once) with its own signal:
 * aborted by the caller's signal or when `timeoutMs` runs out. The timer does not keep a
 * Node process alive; it stays armed after the answer so it also bounds the body read.
 */
function attempt(original: Request, timeoutMs: number): { request: Request; timedOut: () => boolean } {
  const controller = new AbortController();
  let timedOut = false;
  const caller = original.signal;
  if (caller.aborted) controller.abort(caller.reason);
  else caller.addEventListener('abort', () => controller.abort(caller.reason), { once: true, signal: controller.signal });
  if (timeoutMs > 0 && !controller.signal.aborted) {
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new FiscalTimeoutError(timeoutMs));
    }, timeoutMs);
    (timer as { unref?: () => void }).unref?.();
  }
  return { request: new Request(original.clone(), { signal: controller.signal }), timedOut: () => timedOut };
}

export function retryingFetch(base: typeof fetch, options: RetryOptions = {}): typeof fetch {
  const maxRetries = options.maxRetries ?? 3;
  const timing = { baseDelayMs: options.baseDelayMs ?? 250, maxDelayMs: options.maxDelayMs ?? 8000, random: options.random ?? Math.random };
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  return (async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const original = new Request(input, init);
    const repeatable = isRepeatable(original) || (input instanceof Request && options.repeatable?.(input) === true);
    for (let n = 0; ; n++) {
      const { request, timedOut } = attempt(original, timeoutMs);
      const last = n >= maxRetries;
      let response: Response;
      try {
        response = await base(request);
      } catch (err) {
        if (original.signal.aborted) throw original.signal.reason ?? err;
        const error = timedOut() ? new FiscalTimeoutError(timeoutMs) : err;
        if (last || !repeatable) throw error;
        await waitFor(backoffMs(n, timing), sleep, original.signal);
        continue;
      }
      if (last) return response;
      let wait: number | undefined;
      if (response.status === 429) {
        wait = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(n, timing);
        if (wait > maxRetryAfterMs) return response;
      } else if (response.status >= 500 && repeatable) {
        wait = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(n, timing);
        wait = Math.min(wait, maxRetryAfterMs);
      }
      if (wait === undefined) return response;
      await response.body?.cancel().catch(() => undefined);
      await waitFor(wait, sleep, original.signal);
    }
  }) as typeof fetch;
}
