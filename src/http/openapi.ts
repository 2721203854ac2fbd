/**
 * The API reference (GET /openapi.json) made complete, for integrators and for the SDK
 * generated from it (sdk/, scripts/generate-sdk.ts):
 *
 * - every operation has a stable `operationId` (the SDK's function names): the route's
 *   own if it sets one, else this file's table, else one derived from method and path
 *   (so a route added later is never missing one);
 * - every operation lists the errors it can answer, each an `{error}` body: the ones the
 *   route declares, plus the ones every route of its kind can give (authentication and
 *   rate limit on authenticated routes, 400/413/415 where a body is parsed, 404 where a
 *   path names a resource, 500 and 503 everywhere);
 * - request bodies the services validate themselves (the transaction create body, a
 *   location's `country_config`) are typed in the document only, with an example per
 *   fiscal system (src/countries/api-docs.ts).
 *
 * Documentation only: this is @fastify/swagger's `transform`, applied when the document is
 * built, on copies. The routes' own schemas (validation, serialization, the spec's exact
 * error messages) are untouched — test/api/openapi.test.ts proves the messages unchanged.
 */
import type { RouteOptions } from 'fastify';
import { EXAMPLE_LOCATION_ID, SYSTEM_API_DOCS, type JsonSchema } from '../countries/api-docs.ts';

type Schema = Record<string, any>;

/** `METHOD /path/{param}` → operationId. Names are the SDK's API: never rename one. */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'GET /health': 'getHealth',
  'GET /version': 'getVersion',
  'POST /v1/accounts': 'createAccount',
  'GET /v1/account/status': 'getAccountStatus',
  'GET /v1/account/consents': 'listConsents',
  'POST /v1/account/consents': 'grantConsent',
  'DELETE /v1/account/consents/{id}': 'revokeConsent',
  'GET /v1/account/onboarding': 'getAccountOnboarding',
  'GET /v1/account/usage': 'getAccountUsage',
  'GET /v1/api-keys': 'listApiKeys',
  'POST /v1/api-keys': 'createApiKey',
  'DELETE /v1/api-keys/{id}': 'revokeApiKey',
  'POST /v1/api-keys/{id}/rotate': 'rotateApiKey',
  'POST /v1/locations': 'createLocation',
  'GET /v1/locations': 'listLocations',
  'GET /v1/locations/{id}': 'getLocation',
  'PATCH /v1/locations/{id}': 'updateLocation',
  'DELETE /v1/locations/{id}': 'deleteLocation',
  'GET /v1/locations/{id}/corrispettivi': 'getLocationCorrispettivi',
  'GET /v1/locations/{id}/closures': 'listLocationClosures',
  'GET /v1/locations/{id}/jet': 'listLocationJet',
  'GET /v1/locations/{id}/archives': 'listLocationArchives',
  'GET /v1/locations/{id}/archives/{archive_id}': 'getLocationArchive',
  'GET /v1/locations/{id}/saft': 'getLocationSaft',
  'POST /v1/transactions': 'createTransaction',
  'GET /v1/transactions': 'listTransactions',
  'GET /v1/transactions/{id}': 'getTransaction',
  'GET /v1/transactions/{id}/fiscal-record': 'getFiscalRecord',
  'GET /v1/transactions/{id}/qr.png': 'getTransactionQrImage',
  'POST /v1/transactions/{id}/cancel': 'cancelTransaction',
  'POST /v1/transactions/{id}/correct': 'correctTransaction',
  'POST /v1/transactions/preview': 'previewTransaction',
  'GET /v1/transactions/{id}/receipt': 'getTransactionReceipt',
  'POST /v1/transactions/{id}/receipt/duplicate': 'createTransactionReceiptDuplicate',
  'GET /v1/retry-queue': 'listRetryQueue',
  'GET /v1/retry-queue/stats': 'getRetryQueueStats',
  'POST /v1/translations/errors': 'translateError',
  'GET /v1/certificates': 'listCertificates',
  'POST /v1/certificates': 'uploadCertificate',
  'DELETE /v1/certificates/{id}': 'deleteCertificate',
  'POST /v1/webhooks': 'createWebhook',
  'GET /v1/webhooks': 'listWebhooks',
  'GET /v1/webhooks/{id}': 'getWebhook',
  'PATCH /v1/webhooks/{id}': 'updateWebhook',
  'DELETE /v1/webhooks/{id}': 'deleteWebhook',
  'POST /v1/webhooks/{id}/rotate-secret': 'rotateWebhookSecret',
  'GET /v1/webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'POST /v1/admin/process-pending': 'processPending',
  'GET /v1/admin/batch-stats': 'getBatchStats',
  'GET /v1/batch/schedule': 'getBatchSchedule',
  'POST /v1/portal/sessions': 'createPortalSession',
  'DELETE /v1/portal/sessions/current': 'endPortalSession',
  'POST /management/v1/tokens': 'createOfflineToken',
  'GET /management/v1/keys': 'listOfflineTokenKeys',
  'POST /v1/subscriptions': 'createSubscription',
  'PATCH /v1/subscriptions': 'updateSubscription',
  'GET /v1/subscriptions': 'getSubscription',
  'POST /v1/agents/{agent_id}/telemetry': 'sendTelemetry',
  'GET /v1/fleet/metrics': 'getFleetMetrics',
  'POST /v1/inbound/{channel}': 'receiveInbound',
  'POST /v1/webhooks/stripe': 'receiveBillingEvent',
  'GET /metrics': 'getMetrics',
};

/** `/v1/locations/:id` → `/v1/locations/{id}` (the document's form). */
export const openapiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** A route's operationId when the table has none: `post /v1/agents/{agent_id}/telemetry` → `postV1AgentsByAgentIdTelemetry`. */
export function derivedOperationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .flatMap((seg) => {
      const param = /^\{(.+)\}$/.exec(seg);
      return param ? ['by', ...param[1]!.split(/[^A-Za-z0-9]+/)] : seg.split(/[^A-Za-z0-9]+/);
    })
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

const ERROR = (description: string, extra: Schema = {}): Schema => ({
  description, type: 'object', required: ['error'], properties: { error: { type: 'string' } }, ...extra,
});

/** What each error status means here (spec "Errors"; DECISIONS "Idempotency, retries, status codes"). */
const ERROR_TEXT: Record<string, string> = {
  400: 'Validation error: `error` names the field, with the spec\'s message where it gives one',
  401: 'Missing or malformed Authorization header, invalid or revoked key',
  403: 'Inactive account, live mode not enabled, missing permission or country scope',
  404: 'Not found, or another account\'s resource',
  409: 'Duplicate or state conflict',
  413: 'Request body too large (a gzip or deflate body: counted inflated)',
  415: 'Unsupported content type, content encoding (gzip and deflate are read) or charset (JSON is UTF-8 only)',
  429: 'Rate limit exceeded: wait `retry_after` seconds (also the Retry-After header)',
  500: 'Unexpected failure',
  502: 'An upstream service (billing provider, authority) failed',
  503: 'Database unreachable or timed out (`service temporarily unavailable: database unreachable` / `… database timed out`), or signing device unavailable: retry after the Retry-After header',
};

const RETRY_AFTER = { 'Retry-After': { type: 'integer', description: 'seconds to wait before retrying' } };

const ERROR_RESPONSES: Record<string, () => Schema> = {
  400: () => ERROR(ERROR_TEXT[400]!),
  401: () => ERROR(ERROR_TEXT[401]!),
  403: () => ERROR(ERROR_TEXT[403]!),
  404: () => ERROR(ERROR_TEXT[404]!),
  413: () => ERROR(ERROR_TEXT[413]!),
  415: () => ERROR(ERROR_TEXT[415]!),
  429: () => ({
    description: ERROR_TEXT[429], headers: RETRY_AFTER, type: 'object', required: ['error', 'retry_after'],
    properties: { error: { type: 'string', enum: ['rate_limit_exceeded'] }, retry_after: { type: 'integer' } },
  }),
  500: () => ERROR(ERROR_TEXT[500]!),
  503: () => ERROR(ERROR_TEXT[503]!, { headers: RETRY_AFTER }),
};

/** The error statuses every route of this kind can answer, whatever its own schema lists. */
export function genericErrorStatuses(route: { method: string; url: string; isPublic: boolean }): string[] {
  const out = ['500', '503'];
  const method = route.method.toUpperCase();
  // Every POST/PATCH body goes through the JSON parser (app.ts): malformed JSON, NUL, size, type.
  if (method === 'POST' || method === 'PATCH' || method === 'PUT') out.push('400', '413', '415');
  if (/[:{]/.test(route.url)) out.push('404');
  if (!route.isPublic) out.push('401', '403', '429');
  return out;
}

// ---------------------------------------------------------------------------------------
// Documentation-only request bodies

const money = (description: string): JsonSchema => ({ type: 'integer', description: `${description}, integer minor units (cents)` });

/** Line-item fields some systems read, each once, naming the systems (their api-docs.ts). */
function systemItemProperties(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const d of SYSTEM_API_DOCS) {
    for (const [name, schema] of Object.entries(d.itemProperties ?? {})) {
      const seen = out[name];
      out[name] = seen
        ? { ...seen, description: `${d.title}; ${String(seen.description)}` }
        : { ...schema, description: `${d.title}: ${String(schema.description ?? '')}` };
    }
  }
  return out;
}

const CanonicalItem: JsonSchema = {
  type: 'object',
  required: ['description', 'quantity', 'unit_price', 'tax_rate', 'tax_amount', 'total_amount'],
  properties: {
    description: { type: 'string' },
    quantity: { type: 'number', description: 'may be fractional (kg, litres)' },
    unit_price: money('pretax price of one unit'),
    tax_rate: { type: 'number', description: 'percentage, e.g. 21 or 5.5' },
    tax_amount: money('round-half-up(quantity × unit_price × tax_rate / 100)'),
    total_amount: money('quantity × unit_price + tax_amount'),
    // Fields a system alone reads, from its own docs (countries/<system>/api-docs.ts).
    ...systemItemProperties(),
  },
};

const Metadata: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  description:
    'Country-dependent (see the quickstarts, docs/quickstart/). ' +
    SYSTEM_API_DOCS.filter((d) => d.metadata).map((d) => `${d.title}: ${d.metadata}.`).join(' '),
  properties: {
    sandbox_outcome: {
      type: 'string',
      description: 'Test keys only: what the sandbox authority answers. accept (default) | reject:<authority_code> | timeout | error:<authority_code> (retriable).',
      examples: ['accept', 'reject:1100', 'timeout', 'error:500'],
    },
  },
};

const CanonicalTransaction: JsonSchema = {
  title: 'Canonical transaction request',
  type: 'object',
  required: ['location_id', 'timestamp', 'items', 'pretax_amount', 'tax_amount', 'total_amount', 'currency', 'payment_method'],
  properties: {
    location_id: { type: 'string', format: 'uuid', description: 'an active location of the account' },
    type: { type: 'string', enum: ['sale', 'refund', 'void'], default: 'sale' },
    timestamp: { type: 'string', format: 'date-time' },
    items: { type: 'array', minItems: 1, items: CanonicalItem },
    pretax_amount: money('sum of the lines\' quantity × unit_price'),
    tax_amount: money('sum of the lines\' tax_amount'),
    total_amount: money('pretax_amount + tax_amount, plus the lines\' surcharge amounts where the location\'s system takes a line surcharge'),
    currency: { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217' },
    payment_method: { type: 'string', enum: ['cash', 'card', 'transfer', 'other'] },
    customer_context: { type: 'object', additionalProperties: true, description: 'customer data for the receipt' },
    metadata: Metadata,
  },
};

const GuideTransaction: JsonSchema = {
  title: 'Guide-form transaction request (normalized to the canonical form)',
  type: 'object',
  required: ['location_id', 'amount', 'line_items'],
  properties: {
    location_id: { type: 'string', format: 'uuid' },
    type: { type: 'string', enum: ['sale', 'refund', 'void'], default: 'sale' },
    amount: money('total'),
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    timestamp: { type: 'string', format: 'date-time' },
    payment_method: { type: 'string', enum: ['cash', 'card', 'transfer', 'other'] },
    line_items: {
      type: 'array', minItems: 1,
      items: {
        type: 'object', required: ['description', 'quantity', 'unit_price', 'vat_rate'],
        properties: {
          description: { type: 'string' },
          quantity: { type: 'number' },
          unit_price: money('gross or net unit price as the guide shows'),
          vat_rate: { type: 'integer', description: 'hundredths of a percent (2100 = 21 %)' },
        },
      },
    },
    metadata: Metadata,
  },
};

const CountryConfigDoc = (): JsonSchema => ({
  description: 'Country- and system-specific, validated on create and PATCH; secret fields are masked when read. One of:',
  anyOf: SYSTEM_API_DOCS.map((d) => ({ ...d.configSchema, title: d.title })),
});

const byKey = <T>(pick: (d: (typeof SYSTEM_API_DOCS)[number]) => T) =>
  Object.fromEntries(SYSTEM_API_DOCS.map((d) => [d.key, { summary: d.title, value: pick(d) }]));

/** Per operation: a documentation body replacing (or completing) the route's own. */
const DOC_BODIES: Record<string, (own: Schema | undefined) => Schema> = {
  'POST /v1/transactions': () => ({
    description:
      'Canonical form (integer minor units, tax_rate a percentage) or the guide form. Validation and its messages are the service\'s. ' +
      `Examples use location_id ${EXAMPLE_LOCATION_ID}: put your location's id there.`,
    anyOf: [CanonicalTransaction, GuideTransaction],
    'x-examples': byKey((d) => d.sale),
  }),
  'POST /v1/transactions/preview': () => ({ anyOf: [CanonicalTransaction, GuideTransaction], 'x-examples': byKey((d) => d.sale) }),
  'POST /v1/locations': (own) => ({
    ...own,
    properties: { ...own?.properties, country_config: CountryConfigDoc() },
    'x-examples': byKey((d) => d.location),
  }),
  'PATCH /v1/locations/{id}': (own) => ({ ...own, properties: { ...own?.properties, country_config: CountryConfigDoc() } }),
};

/** Bodies that are not JSON: their media types, for the document (the routes parse them themselves). */
const DOC_CONSUMES: Record<string, string[]> = {
  'POST /v1/certificates': ['multipart/form-data'],
  'POST /v1/inbound/{channel}': ['application/xml'],
};

DOC_BODIES['POST /v1/certificates'] = () => ({
  type: 'object',
  required: ['certificate', 'password', 'certificate_id'],
  properties: {
    certificate: { type: 'string', format: 'binary', description: 'the PKCS#12 file (.p12/.pfx: certificate, private key, intermediates), at most 10 MB' },
    password: { type: 'string', description: 'the PKCS#12 password' },
    certificate_id: { type: 'string', pattern: '^[A-Za-z0-9._-]+$', description: 'your id for it (letters, digits, hyphen, underscore, dot); locations name it' },
  },
});
DOC_BODIES['POST /v1/inbound/{channel}'] = () => ({
  type: 'string',
  description: 'The authority\'s notification as sent (Italy SDI: the RC, NS, MC, NE, DT or AT XML), authenticated by the channel\'s X-SDI-Secret header',
});
DOC_BODIES['POST /v1/webhooks/stripe'] = () => ({
  type: 'object',
  required: ['id', 'type', 'data'],
  additionalProperties: true,
  description: 'The billing provider\'s event, raw (the signature covers the exact bytes), at most 64 KiB; header Billing-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">',
  properties: {
    id: { type: 'string', description: 'processed once per id; a repeat answers 200 without reprocessing' },
    type: { type: 'string', description: 'invoice.payment_succeeded, invoice.payment_failed, customer.subscription.deleted, customer.subscription.updated' },
    created: { type: 'integer' },
    data: { type: 'object', additionalProperties: true, properties: { object: { type: 'object', additionalProperties: true } } },
  },
});

/** Success responses of routes that answer a file, not JSON. */
const DOC_RESPONSES: Record<string, Schema> = {
  'GET /v1/transactions/{id}/fiscal-record': {
    200: {
      description: 'The record as signed or sent. Headers X-Fiscal-Record-Placeholder, X-Fiscal-Record-Seq.',
      content: { 'application/xml': { schema: { type: 'string' } }, 'application/json': { schema: { type: 'object', additionalProperties: true } } },
    },
  },
  'GET /v1/transactions/{id}/qr.png': {
    200: { description: 'PNG image of the receipt QR code', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } },
  },
};

const clone = <T>(v: T): T => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

interface TransformInput {
  schema: Schema | undefined;
  url: string;
  route: RouteOptions;
}

/** @fastify/swagger's `transform`: one route's schema as the document shows it (a copy). */
export function openapiTransform({ schema, url, route }: TransformInput): { schema: Schema; url: string } {
  const own: Schema = schema ?? {};
  if (own.hide) return { schema: own, url };
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
  const path = openapiPath(url);
  const key = `${method.toUpperCase()} ${path}`;
  const isPublic = Boolean((route.config as { public?: boolean } | undefined)?.public);

  const out: Schema = { ...own };
  out.operationId = own.operationId ?? OPERATION_IDS[key] ?? derivedOperationId(method, path);

  // A query parameter with a default (limit, offset) may be left out: the document says so
  // (the route's schema lists it as required only so that validation fills the default in).
  if (own.querystring?.properties && Array.isArray(own.querystring.required)) {
    const props = own.querystring.properties as Schema;
    out.querystring = { ...clone(own.querystring), required: own.querystring.required.filter((n: string) => props[n]?.default === undefined) };
  }

  const docBody = DOC_BODIES[key];
  if (docBody) out.body = clone(docBody(clone(own.body)));
  if (DOC_CONSUMES[key]) out.consumes = DOC_CONSUMES[key];

  const response: Schema = { ...(own.response ?? {}) };
  for (const [status, r] of Object.entries(DOC_RESPONSES[key] ?? {})) response[status] ??= clone(r);
  for (const status of Object.keys(response)) {
    const r = response[status];
    // A declared error without its own words gets the status's (the shared ErrorBody's are generic).
    if (Number(status) >= 400 && (!r.description || r.description.startsWith('Every error'))) {
      response[status] = { ...r, description: ERROR_TEXT[status] ?? 'Error: `{error: string}`' };
    }
    if (status === '429' && !response[status].headers) response[status] = { ...response[status], headers: RETRY_AFTER };
  }
  for (const status of genericErrorStatuses({ method, url, isPublic })) response[status] ??= ERROR_RESPONSES[status]!();
  // A route without any documented success would show none: its success is a JSON answer.
  if (!Object.keys(response).some((s) => s.startsWith('2'))) response[200] = { description: 'Success' };
  out.response = response;
  return { schema: out, url };
}
