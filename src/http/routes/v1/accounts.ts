import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { createAccountService } from '../../../services/accounts.ts';
import type { createConsentService } from '../../../services/consents.ts';
import { authOf } from '../../hooks/auth.ts';
import { StringEnum, authErrors, DateTime, ErrorBody, IdParams, ListOf, NullableDateTime, PageQuery } from '../../schemas.ts';
import { ApiKeyWithSecretSchema } from './api-keys.ts';

export const AccountSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  billing_email: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('suspended'), Type.Literal('cancelled')]),
  created_at: DateTime,
}, { $id: 'Account' });

const CreateAccountBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  billing_email: Type.String({ format: 'email', maxLength: 254 }),
  terms_accepted_at: Type.Optional(Type.String({ format: 'date-time', 'x-error': 'terms_accepted_at must be an ISO 8601 date-time' })),
  privacy_policy_version: Type.Optional(Type.String({ minLength: 1, maxLength: 50, pattern: '\\S', 'x-error': 'privacy_policy_version must be a string of 1-50 characters' })),
});

const ConsentType = StringEnum(['terms', 'privacy_policy', 'marketing', 'data_processing'], {
  'x-error': 'type must be one of terms, privacy_policy, marketing, data_processing',
});

const ConsentSchema = Type.Object({
  id: Type.String({ format: 'uuid' }), type: StringEnum(['terms', 'privacy_policy', 'marketing', 'data_processing']), version: Type.String(),
  granted_at: DateTime, revoked_at: NullableDateTime, active: Type.Boolean(),
});

const AccountStatusSchema = Type.Object({
  account_id: Type.String({ format: 'uuid' }),
  status: StringEnum(['active', 'suspended', 'cancelled']),
  tier: Type.String(),
  features: Type.Array(Type.String()),
  merchant_count: Type.Integer(),
  enforcement: Type.Object({ state: StringEnum(['ok', 'grace', 'suspended']), reason: Type.Union([Type.String(), Type.Null()]), since: DateTime }),
  rate_limit: Type.Object({ requests_per_minute: Type.Integer(), burst: Type.Integer() }),
});

export function accountRoutes(
  app: FastifyInstance,
  s: { accounts: ReturnType<typeof createAccountService>; consents: ReturnType<typeof createConsentService> },
) {
  app.post('/v1/accounts', {
    config: { public: true, signupLimited: true },
    schema: {
      tags: ['accounts'], summary: 'Sign up: create an account and its first (test, root) API key',
      body: CreateAccountBody,
      response: { 201: Type.Object({ account: AccountSchema, api_key: ApiKeyWithSecretSchema }), 400: ErrorBody, 409: ErrorBody, 429: authErrors[429] },
    },
  }, async (req, reply) => {
    const result = await s.accounts.create(req.body as Parameters<typeof s.accounts.create>[0]);
    return reply.code(201).send(result);
  });

  app.get('/v1/account/status', {
    config: { permission: 'account:read', allowInactiveAccount: true, portal: true },
    schema: { tags: ['accounts'], summary: 'Tier, features, merchant count, enforcement and rate limit', security: [{ bearer: [] }], response: { 200: AccountStatusSchema, ...authErrors } },
  }, async (req) => s.accounts.status(authOf(req)));

  // Consents stay readable and revocable whatever the account's state: withdrawing one must
  // not depend on having paid (GDPR art. 7.3, as easy to withdraw as to give).
  app.get('/v1/account/consents', {
    config: { permission: 'account:read', allowInactiveAccount: true, portal: true },
    schema: {
      tags: ['accounts'], summary: 'Consent records, revoked ones included', security: [{ bearer: [] }],
      querystring: Type.Object(PageQuery), response: { 200: ListOf(ConsentSchema), ...authErrors },
    },
  }, async (req) => s.consents.list(authOf(req), req.query as { limit: number; offset: number }));

  app.post('/v1/account/consents', {
    config: { permission: 'account:write', portal: true },
    schema: {
      tags: ['accounts'], summary: 'Grant a consent',
      description: 'A new grant answers 201 with the new record. The same type and version while a record of them is active (a repeated or retried request) answers 200 with that record, and stores nothing.',
      security: [{ bearer: [] }],
      body: Type.Object({ type: ConsentType, version: Type.String({ minLength: 1, maxLength: 50, pattern: '\\S', 'x-error': 'version is required (1-50 characters)' }) }),
      response: { 200: ConsentSchema, 201: ConsentSchema, 400: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => {
    const { consent, created } = await s.consents.grant(authOf(req), req.body as never);
    return reply.code(created ? 201 : 200).send(consent);
  });

  app.delete('/v1/account/consents/:id', {
    config: { permission: 'account:write', allowInactiveAccount: true, portal: true },
    schema: {
      tags: ['accounts'], summary: 'Revoke a consent (the record stays, with revoked_at)', security: [{ bearer: [] }],
      params: IdParams, response: { 200: ConsentSchema, 404: ErrorBody, ...authErrors },
    },
  }, async (req) => s.consents.revoke(authOf(req), (req.params as { id: string }).id));
}
