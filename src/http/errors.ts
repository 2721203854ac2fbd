import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError, DbUnavailableError } from '../core/errors.ts';

/** Seconds a client should wait before retrying when the database is unreachable. */
const DB_RETRY_AFTER_SECONDS = 5;

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
    if (err instanceof DbUnavailableError || (err as { cause?: unknown }).cause instanceof DbUnavailableError) {
      req.log.error({ err }, 'database unreachable');
      void reply.header('retry-after', String(DB_RETRY_AFTER_SECONDS)).code(503).send({ error: 'service temporarily unavailable: database unreachable' });
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
    default:
      return err.message;
  }
}
