import type { FastifyError, FastifyInstance } from 'fastify';
import { SigningDeviceError } from '../signing/pkcs11/errors.ts';
import { ApiError, DbUnavailableError, type DbUnavailableReason } from '../core/errors.ts';

/** Seconds a client should wait before retrying when the database is unreachable. */
const DB_RETRY_AFTER_SECONDS = 5;
/** The 503's body when the store is unavailable, by reason (DbUnavailableError). */
export const DB_UNAVAILABLE_MESSAGES: Record<DbUnavailableReason, string> = {
  unreachable: 'service temporarily unavailable: database unreachable',
  timeout: 'service temporarily unavailable: database timed out',
};
/** Seconds a client waits before sending again when the signing device is gone (HardwareDevice mode). */
const DEVICE_RETRY_AFTER_SECONDS = 30;

/**
 * Turns every failure into `{error: string}` with the right status. Bad input is never
 * a 500: Fastify's own client errors keep their 4xx status with a clear message.
 * A 500 logs its cause and answers a generic message.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError) {
      void reply.headers(err.headers).code(err.status).send(err.body ?? { error: err.message });
      return;
    }
    const unavailable = err instanceof DbUnavailableError ? err : (err as { cause?: unknown }).cause instanceof DbUnavailableError ? (err as { cause: DbUnavailableError }).cause : undefined;
    if (unavailable) {
      // Told apart for the operator and the client (docs/decisions.md "PostgreSQL statement
      // bounds"): no connection, or a statement past its bound (a lock held elsewhere, a
      // server gone silent). The spec fixes the status and Retry-After, not the message.
      req.log.error({ err, db_unavailable: unavailable.reason }, unavailable.message);
      void reply.header('retry-after', String(DB_RETRY_AFTER_SECONDS)).code(503).send({ error: DB_UNAVAILABLE_MESSAGES[unavailable.reason] });
      return;
    }
    if (err instanceof SigningDeviceError && err.field === 'device') {
      // HardwareDevice mode: the token went away at signing time (device.ts re-opens it once
      // first). Nothing was written; the caller may send the same request again.
      req.log.error({ err }, 'signing device unavailable');
      void reply.header('retry-after', String(DEVICE_RETRY_AFTER_SECONDS)).code(503).send({ error: 'service temporarily unavailable: the signing device is unavailable' });
      return;
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      void reply.code(status).send({ error: clientMessage(err) });
      return;
    }
    req.log.error({ err }, 'unhandled error');
    void reply.code(500).send({ error: 'internal server error' });
  });

  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send({ error: `route not found: ${req.method} ${req.url.split('?')[0]}` });
  });
}

function clientMessage(err: FastifyError): string {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'request body too large';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'unsupported content type: send application/json';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'request body size did not match Content-Length';
    case 'Z_DATA_ERROR':
    case 'Z_BUF_ERROR':
      return 'request body is not valid gzip or deflate data';
    default:
      return err.message;
  }
}
