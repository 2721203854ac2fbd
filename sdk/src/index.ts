/**
 * @fiscal/sdk: the Fiscalization API from TypeScript.
 *
 *   const fiscal = createFiscalClient({ baseUrl: 'https://api.example.com', apiKey: 'svc_test_…' });
 *   const location = await fiscal.createLocation({ body: { name: 'Café Paris', country: 'FR', country_config: { … } } });
 *   const sale = await fiscal.createTransaction({ body: { location_id: location.id, … } });
 *
 * Every operation of the OpenAPI document is a method (its operationId), typed from the
 * document (src/generated/, made by scripts/generate-sdk.ts; do not edit). Around it:
 * - creates that take an Idempotency-Key get a generated one (idempotency.ts);
 * - 429 and 5xx are retried as retry.ts says; other 4xx never;
 * - each attempt has a time limit (`timeoutMs`); running out throws FiscalTimeoutError;
 * - a non-2xx answer throws FiscalApiError (status + the spec's `error` message);
 * - webhooks.ts and billing.ts verify and make the service's signatures.
 */
import { createClient, createConfig, type Client } from './generated/client/index.js';
import * as operations from './generated/sdk.gen.js';
import { toFiscalApiError } from './errors.js';
import { isRepeatableOperation, newIdempotencyKey, takesIdempotencyKey } from './idempotency.js';
import { retryingFetch, type RetryOptions } from './retry.js';

export * from './generated/types.gen.js';
export { FiscalApiError, FiscalTimeoutError } from './errors.js';
export { retryingFetch, type RetryOptions } from './retry.js';
export { isRepeatableOperation, newIdempotencyKey, takesIdempotencyKey } from './idempotency.js';
export * from './webhooks.js';
export * from './billing.js';

export interface FiscalClientOptions {
  /** The service's address, e.g. https://api.example.com or http://127.0.0.1:8080 (local mode). */
  baseUrl: string;
  /** `svc_test_…` (sandbox) or `svc_live_…`; or a portal session token for portal endpoints. */
  apiKey?: string;
  /** Retry policy (retry.ts); `false`: never retry. */
  retry?: RetryOptions | false;
  /**
   * Time limit of one attempt in ms, the answer's body included (default 60 s; 0: none).
   * Keep it above the inline wait asked with `X-Fiscalization-Timeout` (at most 10 s).
   */
  timeoutMs?: number;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** Headers sent on every request. */
  headers?: Record<string, string>;
}

type Ops = typeof operations;
type OpName = { [K in keyof Ops]: Ops[K] extends (...args: never[]) => unknown ? K : never }[keyof Ops];
type OptionsOf<F> = F extends (options: infer O) => unknown ? Omit<O, 'client' | 'throwOnError' | 'responseStyle'> : never;
type DataOf<F> = F extends (...args: never[]) => infer R ? (Awaited<R> extends infer A ? (A extends { data: infer D } ? Exclude<D, undefined> : never) : never) : never;

/** One method per operation: resolves with the response body, throws FiscalApiError otherwise. */
export type FiscalApi = {
  [K in OpName]: {} extends OptionsOf<Ops[K]>
    ? (options?: OptionsOf<Ops[K]>) => Promise<DataOf<Ops[K]>>
    : (options: OptionsOf<Ops[K]>) => Promise<DataOf<Ops[K]>>;
};

export type FiscalClient = FiscalApi & {
  /** The generated client underneath (its interceptors, setConfig, buildUrl). */
  client: Client;
};

export function createFiscalClient(options: FiscalClientOptions): FiscalClient {
  const base = options.fetch ?? globalThis.fetch.bind(globalThis);
  // Requests of the document's x-repeatable operations (marked by the interceptor below).
  const repeatable = new WeakSet<Request>();
  const client = createClient(
    createConfig({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      // With `retry: false` the one attempt still gets its time limit.
      fetch: retryingFetch(base, {
        ...(options.retry === false ? { maxRetries: 0 } : options.retry),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        repeatable: (request) => repeatable.has(request),
      }),
      ...(options.apiKey ? { auth: options.apiKey } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
      throwOnError: true,
    }),
  );
  client.interceptors.request.use((request, opts) => {
    // Set once, before the retrying fetch: every attempt of this call carries the same key.
    if (!request.headers.has('idempotency-key') && takesIdempotencyKey(request.method, String(opts.url))) {
      request.headers.set('idempotency-key', newIdempotencyKey());
    }
    if (isRepeatableOperation(request.method, String(opts.url))) repeatable.add(request);
    return request;
  });
  client.interceptors.error.use((error, response) => (response ? toFiscalApiError(error, response) : error));

  const api: Record<string, unknown> = { client };
  for (const [name, fn] of Object.entries(operations)) {
    if (typeof fn !== 'function') continue;
    api[name] = async (opts: Record<string, unknown> = {}) => {
      const result = await (fn as (o: unknown) => Promise<{ data: unknown }>)({ ...opts, client, throwOnError: true });
      return result.data;
    };
  }
  return api as FiscalClient;
}
