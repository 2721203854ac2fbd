import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { BILLING_BODY_LIMIT, type BillingReceiver } from '../../../billing/receiver.ts';
import { ErrorBody } from '../../schemas.ts';

/**
 * `POST /v1/webhooks/stripe` (spec "Inbound billing-provider receiver"; the path keeps the
 * provider's word). Public: the `Billing-Signature` header is the authentication. The
 * signature covers the body byte for byte, so it is taken raw (any content type, as a
 * string, never re-serialized) and capped at 64 KiB (413 beyond, before it is read whole).
 */
export function billingReceiverRoutes(app: FastifyInstance, s: { billing: BillingReceiver }) {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BILLING_BODY_LIMIT }, (_req, body, done) => done(null, body));
    scope.post('/v1/webhooks/stripe', {
      bodyLimit: BILLING_BODY_LIMIT,
      config: { public: true },
      schema: {
        tags: ['billing'],
        summary: 'Receive a billing-provider event (payment succeeded or failed, subscription updated or deleted)',
        description: 'Authenticated by `Billing-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with ' +
          '`BILLING_WEBHOOK_SECRET`, within 5 minutes of server time. Each event id is applied once; a duplicate delivery gets 200. ' +
          'The event names the account by `data.object.metadata.account_id` or by the provider customer id of its subscription.',
        response: {
          200: Type.Object({
            received: Type.Boolean(), event_id: Type.String(), type: Type.String(), duplicate: Type.Boolean(),
            outcome: Type.String({ description: 'suspended, restored, unchanged, logged or ignored (an event type not acted on)' }),
          }),
          400: ErrorBody, 413: ErrorBody,
        },
      },
    }, async (req) => {
      const sig = req.headers['billing-signature'];
      return s.billing.receive({ signature: typeof sig === 'string' ? sig : undefined, body: typeof req.body === 'string' ? req.body : '' });
    });
  });
}
