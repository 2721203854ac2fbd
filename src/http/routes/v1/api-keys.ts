import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { PERMISSION_NAMES, type ApiKeyService, type CreateKeyInput } from '../../../services/api-keys.ts';
import { authOf } from '../../hooks/auth.ts';
import { StringEnum, authErrors, DateTime, ErrorBody, IdParams, ListOf, NullableDateTime, PageQuery } from '../../schemas.ts';

const ApiKeyMeta = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  key_prefix: Type.String({ description: '`svc_test_` or `svc_live_`' }),
  key_last4: Type.String({ description: 'last 4 characters of the key, to tell keys apart' }),
  environment: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  permissions: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'null for a root key' }),
  created_at: DateTime,
  last_used_at: NullableDateTime,
  revoked_at: NullableDateTime,
};
export const ApiKeySchema = Type.Object(ApiKeyMeta);
export const ApiKeyWithSecretSchema = Type.Object({ ...ApiKeyMeta, key: Type.String({ description: 'the full key: shown once, never again' }) });

const CreateKeyBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', 'x-error': 'name must be 1-100 characters', description: 'Trimmed; not blank' })),
  environment: Type.Optional(StringEnum(['test', 'live'], { 'x-error': 'environment must be "test" or "live"' })),
  permissions: Type.Optional(Type.Array(Type.String(), {
    maxItems: 64, 'x-error': 'permissions must be an array of permission names',
    description: `Omit for a root key. Names: ${PERMISSION_NAMES.join(', ')}`,
  })),
});

export function apiKeyRoutes(app: FastifyInstance, s: { apiKeys: ApiKeyService }) {
  const security = [{ bearer: [] }];
  app.get('/v1/api-keys', {
    config: { permission: 'api_keys:read' },
    schema: { tags: ['api keys'], summary: 'List keys (metadata only; revoked keys included)', security, querystring: Type.Object(PageQuery), response: { 200: ListOf(ApiKeySchema), ...authErrors } },
  }, async (req) => s.apiKeys.list(authOf(req), req.query as { limit: number; offset: number }));

  app.post('/v1/api-keys', {
    config: { permission: 'api_keys:write' },
    schema: { tags: ['api keys'], summary: 'Create a key (equal or lesser permissions than the caller)', security, body: CreateKeyBody, response: { 201: ApiKeyWithSecretSchema, 400: ErrorBody, ...authErrors } },
  }, async (req, reply) => reply.code(201).send(await s.apiKeys.create(authOf(req), (req.body ?? {}) as CreateKeyInput)));

  app.delete('/v1/api-keys/:id', {
    config: { permission: 'api_keys:write' },
    schema: { tags: ['api keys'], summary: 'Revoke a key: it stops working at once', security, params: IdParams, response: { 204: Type.Null(), 400: ErrorBody, 404: ErrorBody, ...authErrors } },
  }, async (req, reply) => {
    await s.apiKeys.revoke(authOf(req), (req.params as { id: string }).id);
    return reply.code(204).send();
  });

  app.post('/v1/api-keys/:id/rotate', {
    config: { permission: 'api_keys:write' },
    schema: { tags: ['api keys'], summary: 'Rotate a key: a new key, the old one revoked at once', security, params: IdParams, response: { 200: ApiKeyWithSecretSchema, 400: ErrorBody, 404: ErrorBody, ...authErrors } },
  }, async (req) => s.apiKeys.rotate(authOf(req), (req.params as { id: string }).id));
}
