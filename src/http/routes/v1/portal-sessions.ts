import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { PortalSessionService } from '../../../services/portal-sessions.ts';
import { authOf } from '../../hooks/auth.ts';
import { authErrors, DateTime, ErrorBody } from '../../schemas.ts';

const PortalSessionSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  token: Type.String({ description: '`pss_…`: send as `Authorization: Bearer pss_…` to the portal endpoints only; shown once' }),
  created_at: DateTime,
  expires_at: DateTime,
});

export function portalSessionRoutes(app: FastifyInstance, s: { portalSessions: PortalSessionService }) {
  app.post('/v1/portal/sessions', {
    // A suspended account's way back goes through the portal (subscribing again).
    config: { allowInactiveAccount: 'suspended' },
    schema: {
      tags: ['portal'], summary: 'Open a customer-portal session (root key only): a pss_ token valid 1 hour, accepted only by portal endpoints',
      security: [{ bearer: [] }], response: { 201: PortalSessionSchema, ...authErrors },
    },
  }, async (req, reply) => reply.code(201).send(await s.portalSessions.open(authOf(req))));

  app.delete('/v1/portal/sessions/current', {
    config: { portal: true, allowInactiveAccount: true },
    schema: {
      tags: ['portal'], summary: 'End the calling portal session (log-out); its token stops working at once',
      security: [{ bearer: [] }], response: { 204: Type.Null(), 400: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => {
    await s.portalSessions.end(authOf(req));
    return reply.code(204).send();
  });
}
