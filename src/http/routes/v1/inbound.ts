import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { InboundService } from '../../../services/inbound.ts';
import { ApiError } from '../../../core/errors.ts';
import { ErrorBody } from '../../schemas.ts';

const NOT_XML = 'unsupported content type: send the message as application/xml, text/xml or application/soap+xml';

/**
 * `POST /v1/inbound/{channel}`: an authority's later message about a record it holds
 * (DECISIONS "Italy SDI inbound receiver": `POST /v1/inbound/sdi`, the notification XML,
 * `X-SDI-Secret`). No API key: the channel's shared secret authenticates the sender
 * (services/inbound.ts). The body is taken as text (XML, or whatever the channel reads).
 */
export function inboundRoutes(app: FastifyInstance, s: { inbound: InboundService }) {
  app.register(async (scope) => {
    // The root accepts JSON only; authorities post XML (and SOAP) here, and nothing else:
    // JSON, any other type and a body without a type are a 415 that says so.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser(['application/xml', 'text/xml', 'application/soap+xml'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
    scope.addContentTypeParser('*', (_req, _payload, done) => done(new ApiError(415, NOT_XML), undefined));
    scope.post('/v1/inbound/:channel', {
      config: { public: true },
      schema: {
        tags: ['inbound'],
        summary: 'Receive an authority notification about a record (e.g. Italy SDI: RC, NS, MC)',
        description: 'Authenticated by the channel\'s shared secret header (SDI: `X-SDI-Secret`), not by an API key. ' +
          'Finds the record by the authority\'s id or its fiscal id and moves its transaction as the notification says.',
        params: Type.Object({ channel: Type.String() }),
        response: {
          200: Type.Object({ transaction_id: Type.String({ format: 'uuid' }), status: Type.String(), changed: Type.Boolean() }),
          400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 415: ErrorBody,
        },
      },
    }, async (req) => {
      const { channel } = req.params as { channel: string };
      return s.inbound.receive(channel, {
        headers: req.headers, body: typeof req.body === 'string' ? req.body : '', contentType: req.headers['content-type'],
      });
    });
  });
}
