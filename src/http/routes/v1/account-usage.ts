import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { AccountUsageService } from '../../../services/account-usage.ts';
import { ONBOARDING_STEPS, PERIOD_ERROR } from '../../../services/account-usage.ts';
import { authOf } from '../../hooks/auth.ts';
import { StringEnum, authErrors, DateTime, ErrorBody } from '../../schemas.ts';

const Env = StringEnum(['test', 'live']);

const OnboardingSchema = Type.Object({
  account_id: Type.String({ format: 'uuid' }),
  steps: Type.Array(Type.Object({ step: StringEnum([...ONBOARDING_STEPS]), done: Type.Boolean(), done_at: Type.Optional(DateTime) })),
  completed_steps: Type.Integer(),
  total_steps: Type.Integer(),
  completed: Type.Boolean(),
});

const UsageSchema = Type.Object({
  account_id: Type.String({ format: 'uuid' }),
  period: Type.String(),
  period_start: DateTime,
  period_end: DateTime,
  transactions: Type.Object({
    total: Type.Integer(), test: Type.Integer(), live: Type.Integer(),
    by_country: Type.Array(Type.Object({ country: Type.String(), environment: Env, count: Type.Integer() })),
  }),
  active_merchants: Type.Object({ live: Type.Integer(), test: Type.Integer() }),
  billing: Type.Object({
    basis: StringEnum(['subscription', 'none']),
    tier: Type.Union([Type.String(), Type.Null()]),
    merchant_count: Type.Union([Type.Integer(), Type.Null()]),
    billable_amount: Type.Integer(),
    estimated_amount: Type.Integer(),
    currency: Type.Literal('EUR'),
  }),
});

export function accountUsageRoutes(app: FastifyInstance, s: { usage: AccountUsageService }) {
  app.get('/v1/account/onboarding', {
    config: { permission: 'account:read', portal: true },
    schema: {
      tags: ['accounts'], summary: 'Onboarding checklist: each step done or not, from the account\'s own data', security: [{ bearer: [] }],
      response: { 200: OnboardingSchema, ...authErrors },
    },
  }, async (req) => s.usage.onboarding(authOf(req)));

  app.get('/v1/account/usage', {
    config: { permission: 'account:read', portal: true },
    schema: {
      tags: ['accounts'], summary: 'Usage of a month (UTC): transactions per country and environment, active merchants, billable amount',
      security: [{ bearer: [] }],
      querystring: Type.Object({ period: Type.Optional(Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', 'x-error': PERIOD_ERROR })) }),
      response: { 200: UsageSchema, 400: ErrorBody, ...authErrors },
    },
  }, async (req) => s.usage.usage(authOf(req), req.query as { period?: unknown }));
}
