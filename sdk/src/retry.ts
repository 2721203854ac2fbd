/**
 * A fetch that retries what is safe to retry (spec "Errors", client guidance: retry 5xx
 * with exponential backoff; do not retry 4xx unchanged):
 *
 * - 429: always (the request was refused before doing anything), after `Retry-After`
 *   seconds (never earlier); a wait longer than `maxRetryAfterMs` is not waited: the 429
 *   is returned.
 * - 5xx and network failures: only when repeating cannot do a thing twice: GET, HEAD,
 *   OPTIONS, PUT, DELETE, or a request carrying an Idempotency-Key (a transaction create:
 *   the service answers the first one's result). Backoff: base × 2^attempt, capped,
 *   with jitter; a 503's Retry-After is honoured.
 * - any other 4xx: never.
 */
export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** First backoff delay in ms (default 250). */
  baseDelayMs?: number;
  /** Longest backoff delay in ms (default 8000). */
  maxDelayMs?: number;
  /** Longest Retry-After the SDK waits for (default 60 s). */
  maxRetryAfterMs?: number;
  /** Test seam: how to wait. */
  sleep?: (ms: number) => Promise<void>;
  /** Test seam: jitter source in [0, 1). */
  random?: () => number;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** Whether repeating `request` cannot do its work twice. */
export const isRepeatable = (request: Request): boolean =>
  SAFE_METHODS.has(request.method.toUpperCase()) || request.headers.has('idempotency-key');

/** Milliseconds from a Retry-After header (delta seconds or an HTTP date), or undefined. */
export function retryAfterMs(value: string | null, nowMs = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Delay before retry number `attempt` (0-based): equal jitter over the capped exponential. */
export function backoffMs(attempt: number, o: { baseDelayMs: number; maxDelayMs: number; random: () => number }): number {
  const capped = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** attempt);
  return Math.round(capped / 2 + (o.random() * capped) / 2);
}

export function retryingFetch(base: typeof fetch, options: RetryOptions = {}): typeof fetch {
  const maxRetries = options.maxRetries ?? 3;
  const timing = { baseDelayMs: options.baseDelayMs ?? 250, maxDelayMs: options.maxDelayMs ?? 8000, random: options.random ?? Math.random };
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  return (async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const original = new Request(input, init);
    for (let attempt = 0; ; attempt++) {
      // Each attempt sends a fresh copy: a body can be read only once.
      const request = original.clone();
      const last = attempt >= maxRetries;
      let response: Response;
      try {
        response = await base(request);
      } catch (err) {
        if (last || !isRepeatable(original) || original.signal?.aborted) throw err;
        await sleep(backoffMs(attempt, timing));
        continue;
      }
      if (last) return response;
      let wait: number | undefined;
      if (response.status === 429) {
        wait = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(attempt, timing);
        if (wait > maxRetryAfterMs) return response;
      } else if (response.status >= 500 && isRepeatable(original)) {
        wait = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(attempt, timing);
        wait = Math.min(wait, maxRetryAfterMs);
      }
      if (wait === undefined) return response;
      await response.body?.cancel().catch(() => undefined);
      await sleep(wait);
    }
  }) as typeof fetch;
}
