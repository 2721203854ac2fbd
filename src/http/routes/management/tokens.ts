import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { JWKS_MAX_AGE_S, type OfflineTokenService, type TokenRequest } from '../../../services/offline-tokens.ts';
import { authOf } from '../../hooks/auth.ts';
import { StringEnum, authErrors, DateTime, ErrorBody } from '../../schemas.ts';

const TokenBody = Type.Object({
  agent_id: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', 'x-error': 'agent_id is required (1-255 characters)' }),
  country: Type.String({ minLength: 2, maxLength: 2, 'x-error': 'country is required (ISO 3166-1 alpha-2, e.g. ES)' }),
  environment: StringEnum(['sandbox', 'production'], { 'x-error': 'environment must be "sandbox" or "production"' }),
});

const Jwk = Type.Object({
  kty: Type.String(), crv: Type.String(), x: Type.String(), kid: Type.String(), alg: Type.String(), use: Type.String(),
});

/**
 * The management plane (spec Versioning §1: `/management/v1`): what the embedded engine
 * calls on the hosted service. POST /tokens at `init`, GET /keys to verify tokens offline.
 */
export function managementTokenRoutes(app: FastifyInstance, s: { tokens: OfflineTokenService }) {
  const security = [{ bearer: [] }];
  app.post('/management/v1/tokens', {
    // The token lets an engine fiscalize offline: the key must be allowed to write transactions.
    config: { permission: 'transactions:write' },
    schema: {
      tags: ['management'], security,
      summary: 'Exchange an API key for an offline token (Ed25519-signed JWS, 30 days) for an embedded engine',
      description: 'The key prefix must match `environment` (sandbox: svc_test_, production: svc_live_) and the key must be allowed in `country`. ' +
        'Claims: iss, sub (account), account_id, key_id, environment, countries, agent_id, iat, exp, jti. Verify with GET /management/v1/keys.',
      body: TokenBody,
      response: { 200: Type.Object({ token: Type.String(), expires_at: DateTime }), 400: ErrorBody, ...authErrors },
    },
  }, async (req) => s.tokens.issue(authOf(req), req.body as TokenRequest));

  app.get('/management/v1/keys', {
    schema: {
      tags: ['management'], security,
      summary: 'The public keys offline tokens are verified with (JWKS): the current key, retired keys whose tokens may still be valid, and the next key',
      description: 'At a scheduled rotation the next key is listed here over an hour before it signs its first token, so a copy cached for up to max-age holds the key of every token handed out meanwhile.',
      response: { 200: Type.Object({ keys: Type.Array(Jwk) }), ...authErrors },
    },
  }, async (_req, reply) => {
    // Cacheable: a key is published ahead of its first token by more than this (offline-tokens.ts
    // KEY_PUBLISHED_AHEAD_MS), and stays published until the tokens it signed have expired.
    reply.header('cache-control', `public, max-age=${JWKS_MAX_AGE_S}`);
    return s.tokens.jwks();
  });
}
