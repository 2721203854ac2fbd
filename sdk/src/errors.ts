/**
 * Every error the API answers is `{error: string}` (spec "Errors"); the SDK throws it as a
 * FiscalApiError carrying the HTTP status and the spec's message verbatim, so callers can
 * branch on `status` and show `message`.
 */
export class FiscalApiError extends Error {
  override readonly name = 'FiscalApiError';
  constructor(
    /** HTTP status (400, 401, 403, 404, 409, 429, 5xx…). */
    readonly status: number,
    /** The `error` string of the body, exactly as the service sent it. */
    message: string,
    /** The parsed body (`{error}`, or `{error, retry_after}` on a 429). */
    readonly body: unknown,
    /** The service's X-Request-Id, to quote to support. */
    readonly requestId: string | undefined,
  ) {
    super(message);
  }

  /** Seconds the service asked to wait (429 `retry_after`), if any. */
  get retryAfter(): number | undefined {
    const v = (this.body as { retry_after?: unknown } | null)?.retry_after;
    return typeof v === 'number' ? v : undefined;
  }
}

/** The FiscalApiError for an answer that is not 2xx. */
export function toFiscalApiError(body: unknown, response: Response): FiscalApiError {
  const message =
    body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string'
      ? (body as { error: string }).error
      : typeof body === 'string' && body !== ''
        ? body
        : `HTTP ${response.status}`;
  return new FiscalApiError(response.status, message, body, response.headers.get('x-request-id') ?? undefined);
}

/**
 * No answer within the client's time limit (`timeoutMs`, per attempt): thrown once the
 * retries allowed for the request are used up, or at once when repeating it is not safe
 * (a POST without an Idempotency-Key may have been done: check before sending it again).
 */
export class FiscalTimeoutError extends Error {
  override readonly name = 'FiscalTimeoutError';
  constructor(
    /** The time limit of one attempt, in ms. */
    readonly timeoutMs: number,
  ) {
    super(`no answer within ${timeoutMs} ms`);
  }
}
