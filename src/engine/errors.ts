import { ApiError, DbUnavailableError } from '../core/errors.ts';

/**
 * The engine envelope's error codes (spec "Embedded engine call envelope": `{version: 1,
 * error: {code, message}}`). Stable: a POS program branches on them, so a code is never
 * renamed; docs/engine.md lists each with its meaning.
 */
export const ENGINE_ERROR_CODES = [
  'invalid_request', // the envelope is not JSON, not an object, or lacks `method`
  'unsupported_version', // `version` is not 1
  'unknown_method',
  'invalid_params', // `params` missing a field, of the wrong type, or out of range
  'not_initialized', // a method other than init before init (or after shutdown)
  'validation_error', // the service core refused the input (its 400 message, verbatim)
  'not_found', // 404: the transaction or location does not exist (in this account)
  'conflict', // 409: e.g. an idempotency key used with another request, a transaction that cannot be cancelled
  'unauthorized', // 401 from provisioning: invalid or revoked API key
  'forbidden', // 403: the key may not act in this country, or live mode is not enabled
  'environment_mismatch', // the key prefix does not match `environment`
  'network_unavailable', // the service could not be reached and no usable cached token exists
  'token_expired', // the cached token expired and the service could not be reached to renew it
  'unsupported_feature', // a parameter this build does not implement
  'store_error', // the embedded store failed (disk, corruption, closed)
  'internal_error', // anything else: a bug; the message is generic, details go to stderr
  'signing_device_error', // init's signing_device cannot be used: library, token, PIN or key label (the message names which)
] as const;
export type EngineErrorCode = (typeof ENGINE_ERROR_CODES)[number];

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  constructor(code: EngineErrorCode, message: string) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
  }
}

/** A failure of the store: a SQLSTATE-carrying database error, an unreachable or closed database. */
function isStoreError(err: unknown): boolean {
  if (err instanceof DbUnavailableError) return true;
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
  if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return true;
  if (typeof e?.message === 'string' && /PGlite is closed|database .*closed|ENOSPC|EACCES|EROFS/i.test(e.message)) return true;
  return e?.cause !== undefined && e.cause !== err && isStoreError(e.cause);
}

/**
 * Any thrown value → an envelope error. The service core's ApiError keeps its message (the
 * same string the HTTP API sends); its status picks the code.
 */
export function toEngineError(err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  if (err instanceof ApiError) {
    switch (err.status) {
      case 401: return new EngineError('unauthorized', err.message);
      case 403: return new EngineError('forbidden', err.message);
      case 404: return new EngineError('not_found', err.message);
      case 409: return new EngineError('conflict', err.message);
      default: return err.status < 500 ? new EngineError('validation_error', err.message) : new EngineError('internal_error', err.message);
    }
  }
  if (isStoreError(err)) return new EngineError('store_error', `embedded store error: ${(err as Error).message ?? String(err)}`);
  return new EngineError('internal_error', 'internal error (details in the engine log)');
}
