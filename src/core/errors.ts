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

/** The database cannot be reached: a 503 with Retry-After, never a 500. */
export class DbUnavailableError extends Error {
  constructor(cause: unknown) {
    super('database unreachable', { cause });
    this.name = 'DbUnavailableError';
  }
}
