import crypto from 'node:crypto';
import http from 'node:http';
import zlib from 'node:zlib';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import sjson from 'secure-json-parse';
import { ApiError, ValidationError } from '../core/errors.ts';
import { canonicalId } from '../core/ids.ts';
import { nestsDeeperThan, TOO_DEEP_BODY } from '../core/json-depth.ts';
import { createAccountService } from '../services/accounts.ts';
import { createApiKeyService } from '../services/api-keys.ts';
import { createConsentService } from '../services/consents.ts';
import { createRateLimitService } from '../services/rate-limits.ts';
import { createRetryQueueService } from '../services/retry-queue.ts';
import { createSubscriptionService } from '../services/subscriptions.ts';
import { createAccountUsageService } from '../services/account-usage.ts';
import type { Runtime } from '../runtime.ts';
import { registerErrorHandling } from './errors.ts';
import { registerAuth } from './hooks/auth.ts';
import { API_VERSION, publicRoutes } from './routes/public.ts';
import { accountRoutes } from './routes/v1/accounts.ts';
import { accountUsageRoutes } from './routes/v1/account-usage.ts';
import { apiKeyRoutes } from './routes/v1/api-keys.ts';
import { locationRoutes } from './routes/v1/locations.ts';
import { retryQueueRoutes } from './routes/v1/retry-queue.ts';
import { transactionRoutes } from './routes/v1/transactions.ts';
import { translationRoutes } from './routes/v1/translations.ts';
import { certificateRoutes } from './routes/v1/certificates.ts';
import { adminRoutes } from './routes/v1/admin.ts';
import { registerWebhookRoutes } from './routes/v1/webhooks.ts';
import { inboundRoutes } from './routes/v1/inbound.ts';
import { subscriptionRoutes } from './routes/v1/subscriptions.ts';
import { billingReceiverRoutes } from './routes/v1/billing-receiver.ts';
import { locationFileRoutes } from './routes/v1/location-files.ts';
import { portalSessionRoutes } from './routes/v1/portal-sessions.ts';
import { managementTokenRoutes } from './routes/management/tokens.ts';
import { createPortalSessionService } from '../services/portal-sessions.ts';
import { createOfflineTokenService } from '../services/offline-tokens.ts';
import { fleetRoutes } from './routes/v1/fleet.ts';
import { receiptRoutes } from './routes/v1/receipts.ts';
import { createReceiptService } from '../receipts/service.ts';
import { createFleetService } from '../fleet/service.ts';
import { schemaErrorFormatter, validatorCompiler } from './validation.ts';
import { portalPlugin } from '../portal/plugin.ts';
import { countRouterAnswer, metricsRoutes, registerRequestMetrics } from '../metrics/http.ts';
import { openapiTransform } from './openapi.ts';
import { CONTROL_IN_BODY, LONE_SURROGATE_IN_BODY, NUL_IN_BODY, hasLoneSurrogate } from '../core/body-strings.ts';

// The messages live in core/ (the engine's envelope refuses the same strings); re-exported for the HTTP tests.
export { CONTROL_IN_BODY, LONE_SURROGATE_IN_BODY, NUL_IN_BODY };

/** A JSON `\u0000` escape whose backslash is not itself escaped. */
const UNESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;
export const NUL_IN_PARAMETERS = 'path and query parameters may not contain the NUL character (%00)';
/**
 * A JSON escape of a character XML 1.0 cannot carry (C0 controls but tab, LF and CR, as
 * `\uXXXX` or the short `\b` and `\f`; U+FFFE, U+FFFF), its backslash not itself
 * escaped; or such a character raw (JSON strings may hold U+FFFE and U+FFFF as they are;
 * raw C0 controls are malformed JSON).
 */
const UNESCAPED_XML_FORBIDDEN = /(?:^|[^\\])(?:\\\\)*\\(?:[bf]|u(?:00(?:0[1-8bBcCeEfF]|1[0-9a-fA-F])|[fF]{3}[eEfF]))/;
const RAW_XML_FORBIDDEN = /[\uFFFE\uFFFF]/;
/**
 * A surrogate written as a JSON escape (`\uD800`–`\uDFFF`), its backslash not itself
 * escaped. Raw UTF-8 cannot encode a lone surrogate (the decoder gives U+FFFD), so only an
 * escape can bring one; a pair (an escaped emoji) matches too and is looked at closely.
 */
const ESCAPED_SURROGATE = /(?:^|[^\\])(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/** Whether every string (and key) in a parsed JSON value is well-formed UTF-16. */
function wellFormedStrings(v: unknown): boolean {
  if (typeof v === 'string') return !hasLoneSurrogate(v);
  if (Array.isArray(v)) return v.every(wellFormedStrings);
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) if (hasLoneSurrogate(k) || !wellFormedStrings(x)) return false;
  }
  return true;
}

/** Request bodies with these content codings are inflated before parsing; the body limit applies to the inflated size. */
const INFLATERS: Record<string, () => zlib.Gunzip | zlib.Inflate> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
};
export const UNSUPPORTED_ENCODING = 'unsupported content encoding: send the body uncompressed, or with Content-Encoding gzip or deflate';
export const UNSUPPORTED_CHARSET = 'unsupported charset: send application/json in UTF-8';
export const NOT_UTF8 = 'request body is not valid UTF-8';
const utf8 = new TextDecoder('utf-8', { fatal: true });
/** The charset parameter of a Content-Type, lower case and unquoted; undefined when absent. */
function charsetOf(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2] ?? '').toLowerCase() : undefined;
}

/**
 * What the HTTP parser refuses before Fastify sees a request (a request line and headers
 * over Node's 16 KB, a malformed request), in the API's `{error}` shape.
 */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: import('node:net').Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, error] = err.code === 'HPE_HEADER_OVERFLOW'
    ? [431, 'request line and headers too large (at most 16 KB in all)']
    : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'request timeout'] : [400, 'malformed HTTP request'];
  const body = JSON.stringify({ error });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

export interface AppOptions {
  bodyLimitBytes?: number;
  serviceVersion?: string;
  /** Trust X-Forwarded-For (behind a proxy) for the per-address sign-up limit. */
  trustProxy?: boolean;
  /** Overrides the runtime's METRICS_TOKEN (`rt.metricsToken`): `GET /metrics` then needs it as a bearer token (src/metrics/http.ts). */
  metricsToken?: string | undefined;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * A JSON body's text as it came (inflated, trimmed), kept for a create's (and a
     * correction's) idempotency hash (core/request-hash.ts): hashing it is one native call where re-writing the
     * parsed body in a canonical form cost every create; null without a JSON body.
     */
    jsonText: string | null;
  }
}

/**
 * The HTTP API as one Fastify instance over a runtime (the wired service core); every
 * dependency is passed in, so tests build their own.
 */
export async function buildApp(rt: Runtime, opts: AppOptions = {}): Promise<FastifyInstance> {
  const deps = rt.deps;
  const app = Fastify({
    loggerInstance: deps.log,
    bodyLimit: opts.bodyLimitBytes ?? 1024 * 1024,
    trustProxy: opts.trustProxy ?? false,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    // A caller's X-Request-Id is kept when it is sane, so logs can be joined across systems.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : crypto.randomUUID();
    },
    schemaErrorFormatter: schemaErrorFormatter as never,
    // Ids longer than this cannot be ours; the router answers them (frameworkErrors below).
    // In UTF-16 units: a telemetry agent_id may be 255 characters outside the BMP (510
    // units), and one a little too long must reach the route's own 400.
    routerOptions: { maxParamLength: 1024 },
    // Router-level failures (an over-long path parameter, a bad percent-encoding) never
    // reach the error handler: answer them here in the same {error} shape.
    frameworkErrors: (err, req, res) => {
      const reply = res as unknown as { header(k: string, v: string): unknown; code(n: number): { send(b: unknown): unknown } };
      reply.header('x-request-id', req.id);
      // These answers skip the request hooks: counted here (svc_http_requests_total holds every answer).
      const answer = (status: number, error: string) => {
        countRouterAnswer(rt.metrics, req.method, status);
        reply.code(status).send({ error });
      };
      if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return void answer(404, 'not found');
      if (err.code === 'FST_ERR_BAD_URL') return void answer(400, 'malformed URL');
      req.log.error({ err }, 'router error');
      return void answer(400, 'bad request');
    },
    ajv: { customOptions: { strict: false } },
    clientErrorHandler,
  });
  app.setValidatorCompiler(validatorCompiler);

  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  // JSON bodies: an empty body is "no body" (POST …/rotate with a JSON content type is
  // fine); anything else must parse, safely (no __proto__ poisoning), or it is a 400.
  // Only JSON is accepted (Fastify would also parse text/plain): anything else is a 415.
  app.removeAllContentTypeParsers();
  app.decorateRequest('jsonText', null);
  // A compressed body (gzip, deflate) is inflated on its way to the parser, the body limit
  // counting inflated bytes (no zip bomb); another coding is a 415, not bytes read as JSON.
  // A callback hook, not an async one: the common request (no Content-Encoding) pays no promise.
  app.addHook('preParsing', (req, _reply, payload, done) => {
    const header = req.headers['content-encoding'];
    if (header === undefined || req.method === 'GET' || req.method === 'HEAD') return done(null, payload);
    const coding = (Array.isArray(header) ? header.join(',') : header).trim().toLowerCase();
    if (coding === '' || coding === 'identity') return done(null, payload);
    const inflater = INFLATERS[coding]?.();
    if (!inflater) return done(new ApiError(415, UNSUPPORTED_ENCODING), payload);
    // Fastify compares Content-Length with the bytes received, not with the inflated ones.
    let encoded = 0;
    payload.on('data', (c: Buffer) => void ((inflater as unknown as { receivedEncodedLength: number }).receivedEncodedLength = encoded += c.length));
    payload.on('error', (err) => inflater.destroy(err));
    inflater.on('error', () => {}); // reported by the body reader (errors.ts: a 400), never unhandled
    done(null, payload.pipe(inflater));
  });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, raw, done) => {
    // JSON travels in UTF-8 (RFC 8259 §8.1): another declared charset is a 415, and bytes
    // that are not UTF-8 a 400, rather than text silently turned into U+FFFD.
    const charset = charsetOf(req.headers['content-type']);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return done(new ApiError(415, UNSUPPORTED_CHARSET), undefined);
    let decoded: string;
    try {
      decoded = utf8.decode(raw as Buffer);
    } catch {
      return done(new ValidationError(NOT_UTF8), undefined);
    }
    const text = decoded.trim();
    if (text === '') return done(null, undefined);
    // PostgreSQL's text and json cannot hold U+0000: refused here, with a 400, rather
    // than by the store with a 500 (a literal NUL, or an unescaped \u0000 escape).
    if (text.includes('\0') || UNESCAPED_NUL.test(text)) return done(new ValidationError(NUL_IN_BODY), undefined);
    // Nor can XML (every fiscal document but France's): a description or a name with a
    // control character would make a record that no authority reads (or a 500 on the
    // way), so it is refused here with a 400 naming why.
    if (RAW_XML_FORBIDDEN.test(text) || UNESCAPED_XML_FORBIDDEN.test(text)) return done(new ValidationError(CONTROL_IN_BODY), undefined);
    if (nestsDeeperThan(text)) return done(new ValidationError(TOO_DEEP_BODY), undefined);
    let parsed: unknown;
    try {
      parsed = sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
    } catch {
      return done(new ValidationError('malformed JSON body'), undefined);
    }
    // A lone surrogate is not a character: XML 1.0 cannot carry it (a SAF-T month file with
    // one as a character reference could not be parsed at all), and UTF-8 writes it as U+FFFD.
    // The walk runs only for a body that escapes a surrogate (rare: clients send UTF-8).
    if (ESCAPED_SURROGATE.test(text) && !wellFormedStrings(parsed)) return done(new ValidationError(LONE_SURROGATE_IN_BODY), undefined);
    req.jsonText = text;
    done(null, parsed);
  });

  // No body is an empty object: optional bodies (cancel's reason) need no special case,
  // and a create without a body reports its first missing field.
  // Ids in the path in one spelling (core/ids.ts canonicalId): a key's own id in capitals
  // is still the calling key.
  // A NUL in a path or query parameter is refused as in a body: PostgreSQL text cannot hold
  // it, and the store would answer a 500 (found on the telemetry agent_id).
  app.addHook('preValidation', async (req) => {
    if (req.body === undefined && (req.method === 'POST' || req.method === 'PATCH')) req.body = {};
    const params = req.params as Record<string, unknown> | undefined;
    const query = req.query as Record<string, unknown> | undefined;
    for (const v of [...Object.values(params ?? {}), ...Object.values(query ?? {}).flat()]) {
      if (typeof v === 'string' && v.includes('\0')) throw new ValidationError(NUL_IN_PARAMETERS);
    }
    if (params) for (const [k, v] of Object.entries(params)) if (typeof v === 'string') params[k] = canonicalId(v);
  });

  registerErrorHandling(app);
  registerRequestMetrics(app, rt.metrics);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Fiscalization API',
        version: API_VERSION,
        description:
          'Register merchant locations, send sales transactions, get fiscal records submitted to the tax authorities. ' +
          'Authenticate with `Authorization: Bearer svc_test_…` (sandbox) or `svc_live_…` (production). ' +
          'Every error is `{error: string}`.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key: svc_test_… or svc_live_…' } } },
    },
    // Documentation only: operationIds, every error, typed bodies and examples (openapi.ts).
    transform: openapiTransform as never,
  });
  // swagger-ui's own routes (the page and its assets) are public.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...(route.config as object), public: true };
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });

  const apiKeys = createApiKeyService(deps, rt.changes);
  const rateLimits = createRateLimitService(deps, rt.tiers, rt.metrics.rateLimits);
  const portalSessions = createPortalSessionService(deps);
  registerAuth(app, apiKeys, rateLimits, portalSessions);

  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  publicRoutes(app, { db: deps.db, serviceVersion: opts.serviceVersion ?? '0.0.0' });
  metricsRoutes(app, rt.metrics, { token: opts.metricsToken ?? rt.metricsToken });
  accountRoutes(app, { accounts: createAccountService(deps, apiKeys, rt.tiers), consents: createConsentService(deps) });
  apiKeyRoutes(app, { apiKeys });
  locationRoutes(app, { locations: rt.locations });
  locationFileRoutes(app, { locationFiles: rt.locationFiles });
  transactionRoutes(app, {
    transactions: rt.transactions,
  });
  retryQueueRoutes(app, { retryQueue: createRetryQueueService(deps) });
  translationRoutes(app, { translations: rt.translator });
  certificateRoutes(app, { certificates: rt.certificates });
  registerWebhookRoutes(app, deps);
  // The local host runs no scheduler (spec, Embedded-Local): its schedule announces no run.
  adminRoutes(app, { batch: rt.batch, scheduled: rt.deps.config.mode !== 'local' });
  inboundRoutes(app, { inbound: rt.inbound });
  portalSessionRoutes(app, { portalSessions });
  managementTokenRoutes(app, { tokens: createOfflineTokenService(deps) });
  subscriptionRoutes(app, { subscriptions: createSubscriptionService(deps, { provider: rt.billing, tiers: rt.tiers, prices: rt.prices }) });
  billingReceiverRoutes(app, { billing: rt.billingReceiver });
  fleetRoutes(app, { fleet: createFleetService(deps) });
  accountUsageRoutes(app, { usage: createAccountUsageService(deps, { prices: rt.prices }) });
  await app.register(portalPlugin, { prefix: '/portal', rt, apiKeys, portalSessions });
  receiptRoutes(app, {
    receipts: createReceiptService({
      db: deps.db, software: rt.software,
      journal: { ledger: rt.ledger, clock: deps.clock, log: deps.log, locations: rt.locations, signingKeys: rt.signingKeys },
    }),
    clock: deps.clock,
  });

  return app;
}
