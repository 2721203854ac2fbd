import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { SubscriptionService } from '../../../services/subscriptions.ts';
import { authOf } from '../../hooks/auth.ts';
import { DateTime, ErrorBody, StringEnum, authErrors } from '../../schemas.ts';

export const SubscriptionSchema = Type.Object({
  id: Type.String(),
  account_id: Type.String({ format: 'uuid' }),
  company_name: Type.String(),
  billing_email: Type.String(),
  billing_customer_id: Type.String({ description: 'The customer id at the billing provider' }),
  billing_subscription_id: Type.String({ description: 'The subscription id at the billing provider' }),
  status: StringEnum(['active', 'suspended']),
  merchant_count: Type.Integer(),
  billing_interval: StringEnum(['month', 'year']),
  current_tier: StringEnum(['starter', 'growth', 'scale', 'enterprise']),
  monthly_amount: Type.Integer({ description: 'Per month, EUR minor units: merchants × the tier price, at least 1000 per active location' }),
  period_amount: Type.Integer({ description: 'Per billing period, EUR minor units (a year is 10 months)' }),
  currency: Type.Literal('EUR'),
  current_period_start: DateTime,
  current_period_end: DateTime,
  created_at: DateTime,
  updated_at: DateTime,
}, { $id: 'Subscription' });

const ProrationSchema = Type.Object({
  amount: Type.Integer({ description: 'Charged (positive) or credited (negative) now, EUR minor units' }),
  currency: Type.Literal('EUR'),
  from_merchant_count: Type.Integer(),
  to_merchant_count: Type.Integer(),
  from_period_amount: Type.Integer(),
  to_period_amount: Type.Integer(),
  remaining_seconds: Type.Integer(),
  period_seconds: Type.Integer(),
  period_start: DateTime,
  period_end: DateTime,
});

// Messages: the spec's error table. Blank strings and the upper bounds are checked by the
// service (subscriptions.ts) so that "" is "is required", like an absent field.
const MerchantCount = Type.Integer({
  minimum: 1, 'x-error': 'merchant_count must be at least 1', 'x-error-required': 'merchant_count must be at least 1',
  'x-error-type': 'merchant_count must be a whole number of at least 1',
});
const CreateBody = Type.Object({
  company_name: Type.String({ 'x-error-required': 'company_name is required', 'x-error': 'company_name must be a string of 1-100 characters' }),
  billing_email: Type.String({ 'x-error-required': 'billing_email is required', 'x-error': 'billing_email must be a valid email address' }),
  payment_method_id: Type.String({ 'x-error-required': 'payment_method_id is required', 'x-error': 'payment_method_id must be a string' }),
  merchant_count: MerchantCount,
  billing_interval: Type.Optional(StringEnum(['month', 'year'], { 'x-error': 'billing_interval must be "month" or "year"' })),
});

export function subscriptionRoutes(app: FastifyInstance, s: { subscriptions: SubscriptionService }) {
  // A suspended account may read its subscription and subscribe again (its way back); a
  // PATCH waits until it is active.
  app.post('/v1/subscriptions', {
    config: { permission: 'account:write', portal: true, allowInactiveAccount: 'suspended' },
    schema: {
      tags: ['subscriptions'], summary: 'Subscribe: merchant count (sets the tier), billing interval, payment method. A suspended subscription is replaced and the account restored; 409 while one is active', security: [{ bearer: [] }],
      body: CreateBody,
      response: { 201: SubscriptionSchema, 400: ErrorBody, 409: ErrorBody, 502: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => reply.code(201).send(await s.subscriptions.create(authOf(req), req.body as never)));

  app.patch('/v1/subscriptions', {
    config: { permission: 'account:write', portal: true },
    schema: {
      tags: ['subscriptions'], summary: 'Change the merchant count: the tier changes at once, the rest of the period is prorated',
      security: [{ bearer: [] }],
      body: Type.Object({ merchant_count: MerchantCount }),
      response: { 200: Type.Object({ ...SubscriptionSchema.properties, proration: ProrationSchema }), 400: ErrorBody, 404: ErrorBody, 502: ErrorBody, ...authErrors },
    },
  }, async (req) => s.subscriptions.changeMerchantCount(authOf(req), req.body as never));

  app.get('/v1/subscriptions', {
    config: { permission: 'account:read', portal: true, allowInactiveAccount: 'suspended' },
    schema: {
      tags: ['subscriptions'], summary: "The account's subscription", security: [{ bearer: [] }],
      response: { 200: SubscriptionSchema, 404: ErrorBody, ...authErrors },
    },
  }, async (req) => s.subscriptions.get(authOf(req)));
}
