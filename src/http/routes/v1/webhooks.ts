import { Type } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../../services/deps.ts';
import { EVENT_TYPES } from '../../../services/events.ts';
import { createWebhookService, type CreateWebhookInput, type PatchWebhookInput, type WebhookService } from '../../../services/webhooks.ts';
import type { DeliveryStatus } from '../../../store/repos/webhooks-repo.ts';
import { authOf } from '../../hooks/auth.ts';
import { StringEnum, authErrors, DateTime, ErrorBody, IdParams, ListOf, Nullable, NullableDateTime, PageQuery } from '../../schemas.ts';

const EventName = StringEnum(EVENT_TYPES, { 'x-error': 'invalid event type' });
const Description = Type.Unsafe<string | null>({
  type: ['string', 'null'], maxLength: 500, 'x-error': 'description must be a string of at most 500 characters, or null',
});
const Enabled = Type.Boolean({ 'x-error': 'enabled must be true or false' });

const WebhookFields = {
  id: Type.String({ format: 'uuid' }),
  account_id: Type.String({ format: 'uuid' }),
  url: Type.String({ description: 'HTTPS endpoint' }),
  events: Type.Array(Type.String()),
  description: Nullable(Type.String()),
  enabled: Type.Boolean(),
  created_at: DateTime,
  updated_at: DateTime,
};
export const WebhookSchema = Type.Object(WebhookFields);
export const WebhookWithSecretSchema = Type.Object({
  ...WebhookFields,
  secret: Type.String({ description: '`whsec_` + 32 base62 characters: shown on creation and rotation only' }),
});

const Events = Type.Array(EventName, {
  maxItems: 64,
  'x-error': 'events must be an array of event types',
  'x-error-required': 'events is required',
  description: `Event types (either name of a fact is accepted): ${EVENT_TYPES.join(', ')}`,
});
const Url = Type.String({
  'x-error': 'invalid url',
  'x-error-required': 'url is required',
  description: 'https URL; plain http only to loopback when the server allows insecure webhooks. Private addresses are refused in the cloud.',
});

const CreateBody = Type.Object({
  url: Url,
  events: Events,
  description: Type.Optional(Description),
  enabled: Type.Optional(Enabled),
});

const PatchBody = Type.Object({
  url: Type.Optional(Url),
  events: Type.Optional(Events),
  description: Type.Optional(Description),
  enabled: Type.Optional(Enabled),
});

const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'dead', 'cancelled'] as const;

const AttemptSchema = Type.Object({
  attempt: Type.Integer(),
  outcome: StringEnum(['succeeded', 'failed']),
  response_status: Nullable(Type.Integer()),
  response_body: Nullable(Type.String({ description: 'first 1 KiB of the answer' })),
  error: Nullable(Type.String()),
  duration_ms: Type.Integer(),
  attempted_at: DateTime,
});

export const DeliverySchema = Type.Object({
  id: Type.String({ format: 'uuid', description: 'the delivery; also the `webhook-id` header, the same on every attempt' }),
  webhook_id: Type.String({ format: 'uuid' }),
  event_id: Type.String({ format: 'uuid', description: 'the event (the body\'s `id`): a fact delivered under both its names has two deliveries with one event_id' }),
  event: Type.String({ description: 'the name delivered (a fact with two names is delivered under each)' }),
  status: StringEnum(DELIVERY_STATUSES, { description: 'pending (not tried yet), succeeded, failed (a retry is scheduled), dead (5 attempts failed), cancelled (webhook deleted or disabled)' }),
  attempt: Type.Integer(),
  max_attempts: Type.Integer(),
  response_status: Nullable(Type.Integer()),
  response_body: Nullable(Type.String()),
  error: Nullable(Type.String()),
  duration_ms: Nullable(Type.Integer()),
  next_attempt_at: NullableDateTime,
  created_at: DateTime,
  delivered_at: NullableDateTime,
  payload: Type.Record(Type.String(), Type.Unknown(), { description: 'the body sent' }),
  attempts: Type.Array(AttemptSchema),
});

const DeliveriesQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(StringEnum(DELIVERY_STATUSES, { 'x-error': `status must be one of ${DELIVERY_STATUSES.join(', ')}` })),
});

export function webhookRoutes(app: FastifyInstance, s: { webhooks: WebhookService }) {
  const security = [{ bearer: [] }];
  const tags = ['webhooks'];
  const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;
  // Another account's (or an unknown) id is a 404 before any 400 of the body or query
  // (docs/decisions.md "Webhooks"): schema validation runs after preValidation.
  const exists = async (req: FastifyRequest) => {
    await s.webhooks.get(authOf(req), idOf(req));
  };

  app.post('/v1/webhooks', {
    config: { permission: 'webhooks:write' },
    schema: { tags, summary: 'Subscribe a URL to events (the answer carries the signing secret, once)', security, body: CreateBody, response: { 201: WebhookWithSecretSchema, 400: ErrorBody, 409: ErrorBody, ...authErrors } },
  }, async (req, reply) => reply.code(201).send(await s.webhooks.create(authOf(req), req.body as CreateWebhookInput)));

  app.get('/v1/webhooks', {
    config: { permission: 'webhooks:read' },
    schema: { tags, summary: 'List webhooks, newest first (no secrets)', security, response: { 200: Type.Object({ data: Type.Array(WebhookSchema) }), ...authErrors } },
  }, async (req) => s.webhooks.list(authOf(req)));

  app.get('/v1/webhooks/:id', {
    config: { permission: 'webhooks:read' },
    schema: { tags, summary: 'Get a webhook (no secret)', security, params: IdParams, response: { 200: WebhookSchema, 404: ErrorBody, ...authErrors } },
  }, async (req) => s.webhooks.get(authOf(req), idOf(req)));

  app.patch('/v1/webhooks/:id', {
    config: { permission: 'webhooks:write' },
    preValidation: exists,
    schema: { tags, summary: 'Change url, events, description or enabled', security, params: IdParams, body: PatchBody, response: { 200: WebhookSchema, 400: ErrorBody, 404: ErrorBody, ...authErrors } },
  }, async (req) => s.webhooks.patch(authOf(req), idOf(req), (req.body ?? {}) as PatchWebhookInput));

  app.delete('/v1/webhooks/:id', {
    config: { permission: 'webhooks:write' },
    schema: { tags, summary: 'Delete a webhook; deliveries not yet made are cancelled', security, params: IdParams, response: { 204: Type.Null(), 404: ErrorBody, ...authErrors } },
  }, async (req, reply) => {
    await s.webhooks.remove(authOf(req), idOf(req));
    return reply.code(204).send();
  });

  app.post('/v1/webhooks/:id/rotate-secret', {
    config: { permission: 'webhooks:write' },
    schema: { tags, summary: 'A new signing secret; the old one is invalid at once (pending retries too)', security, params: IdParams, response: { 200: Type.Object({ secret: Type.String() }), 404: ErrorBody, ...authErrors } },
  }, async (req) => s.webhooks.rotateSecret(authOf(req), idOf(req)));

  app.get('/v1/webhooks/:id/deliveries', {
    config: { permission: 'webhooks:read' },
    preValidation: exists,
    schema: { tags, summary: 'The delivery log of a webhook, newest first, with every attempt', security, params: IdParams, querystring: DeliveriesQuery, response: { 200: ListOf(DeliverySchema), 400: ErrorBody, 404: ErrorBody, ...authErrors } },
  }, async (req) => {
    const q = req.query as { limit: number; offset: number; status?: DeliveryStatus };
    return s.webhooks.deliveries(authOf(req), idOf(req), { status: q.status }, { limit: q.limit, offset: q.offset });
  });
}

/** The app's one call: builds the service from the app's dependencies and registers the routes. */
export function registerWebhookRoutes(app: FastifyInstance, deps: Deps) {
  webhookRoutes(app, { webhooks: createWebhookService(deps) });
}
