import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorBody } from '../http/schemas.ts';
import type { Metrics } from './metrics.ts';

/** The route label of a request no route matched (404): the raw URL would put ids and garbage in labels. */
export const UNMATCHED_ROUTE = 'unmatched';

export const METRICS_ERRORS = {
  tokenRequired: 'metrics token required',
  tokenInvalid: 'invalid metrics token',
  loopbackOnly: 'metrics are served to loopback clients only; set METRICS_TOKEN to scrape from elsewhere',
} as const;

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (`::ffff:127.0.0.1`), as Node reports them. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase();
  if (a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/**
 * Whether a request without a token may read the metrics: it comes from this machine
 * (the socket's peer, never `req.ip`, which trusts X-Forwarded-For behind a proxy) and
 * was not forwarded for someone else. A reverse proxy on the same machine connects from
 * loopback; the forwarding headers it adds are what tell its clients apart.
 */
export function loopbackClient(req: Pick<FastifyRequest, 'headers'> & { socket: { remoteAddress?: string | undefined } }): boolean {
  if (req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined || req.headers['x-real-ip'] !== undefined) return false;
  return isLoopbackAddress(req.socket.remoteAddress);
}

/** Constant-time comparison of a presented bearer token with the configured one. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const presented = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  if (presented === undefined) return false;
  const a = crypto.createHash('sha256').update(presented).digest();
  const b = crypto.createHash('sha256').update(token).digest();
  return crypto.timingSafeEqual(a, b);
}

/**
 * The request metrics of every route: registered before the routes. onResponse runs after
 * the answer is sent, so nothing here delays it: a counter and a histogram observation.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? UNMATCHED_ROUTE;
    metrics.httpRequest(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
}

/**
 * An answer the router gives by itself (a malformed URL, an over-long path parameter),
 * which runs no request hook: counted here, route `unmatched`, so the HTTP counters hold
 * every answer. Nothing ran before it: its duration is 0.
 */
export function countRouterAnswer(metrics: Metrics, method: string | undefined, statusCode: number): void {
  metrics.httpRequest(method ?? 'UNKNOWN', UNMATCHED_ROUTE, statusCode, 0);
}

/**
 * `GET /metrics` (Prometheus text format); registered after @fastify/swagger, which
 * documents the routes declared after it. Access as DECISIONS "Beyond the spec" says:
 * with METRICS_TOKEN set, `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise);
 * without it, loopback clients only (403). The API keys play no part: the scraper is an
 * operator's, not an account's.
 */
export function metricsRoutes(app: FastifyInstance, metrics: Metrics, opts: { token?: string | undefined } = {}): void {
  const token = opts.token;
  app.get('/metrics', {
    config: { public: true },
    schema: {
      tags: ['service'],
      summary: 'Prometheus metrics (operators)',
      description: 'The Prometheus text format (docs/metrics.md). With METRICS_TOKEN set on the server: `Authorization: Bearer <METRICS_TOKEN>`; '
        + 'without it, only clients on the same machine (loopback, not forwarded by a proxy). API keys are not accepted here.',
      response: {
        200: { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
        401: ErrorBody,
        403: ErrorBody,
      },
    },
  }, async (req, reply) => {
    if (token !== undefined) {
      if (!req.headers.authorization) return reply.code(401).header('www-authenticate', 'Bearer').send({ error: METRICS_ERRORS.tokenRequired });
      if (!tokenMatches(req.headers.authorization, token)) return reply.code(401).header('www-authenticate', 'Bearer').send({ error: METRICS_ERRORS.tokenInvalid });
    } else if (!loopbackClient(req)) {
      return reply.code(403).send({ error: METRICS_ERRORS.loopbackOnly });
    }
    const body = await metrics.scrape();
    return reply.header('content-type', metrics.contentType).header('cache-control', 'no-store').send(body);
  });
}
