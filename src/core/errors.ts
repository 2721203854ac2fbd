/**
 * Errors that carry an HTTP status and the exact client-facing message.
 *
 * Every error body the API sends is `{error: string}`; the message given here is
 * that string verbatim, so it must be safe to show to a client (no internals).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Record<string, unknown> | undefined;

  constructor(status: number, message: string, opts: { headers?: Record<string, string>; body?: Record<string, unknown> } = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.headers = opts.headers ?? {};
    this.body = opts.body;
  }
}

/** 400: the request is invalid; the message says which field and why. */
export class ValidationError extends ApiError {
  constructor(message: string) {
    super(400, message);
    this.name = 'ValidationError';
  }
}

export const badRequest = (message: string) => new ValidationError(message);
export const unauthorized = (message: string) => new ApiError(401, message);
export const forbidden = (message: string) => new ApiError(403, message);
export const notFound = (message: string) => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);

/**
 * Why the store is unavailable (docs/decisions.md "PostgreSQL statement bounds"):
 * - `unreachable`: no connection (refused, reset, cut, the server shutting down, a connect
 *   that timed out);
 * - `timeout`: a statement ran out of its bound: PostgreSQL cancelled it at its
 *   statement_timeout (a lock held by another session, a runaway plan), or the server did not
 *   answer within the driver's query_timeout (a hung server, a network black hole).
 * Both answer 503 with Retry-After; the body and the log say which.
 */
export type DbUnavailableReason = 'unreachable' | 'timeout';

/** The database cannot be reached, or did not answer in time: a 503 with Retry-After, never a 500. */
export class DbUnavailableError extends Error {
  readonly reason: DbUnavailableReason;
  constructor(cause: unknown, reason: DbUnavailableReason = 'unreachable') {
    super(reason === 'timeout' ? 'database timed out' : 'database unreachable', { cause });
    this.name = 'DbUnavailableError';
    this.reason = reason;
  }
}
