import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden, unauthorized } from '../../core/errors.ts';
import { hasPermission, type ActionPermission } from '../../core/permissions.ts';
import type { ApiKeyService } from '../../services/api-keys.ts';
import type { AuthContext } from '../../services/auth-context.ts';
import { PORTAL_ERRORS, isPortalToken, type PortalSessionService } from '../../services/portal-sessions.ts';
import type { RateLimitService } from '../../services/rate-limits.ts';

/** Per-route options read by the hooks (`config` in a route definition). */
export interface RouteAccess {
  /** No API key: health, version, sign-up, docs. */
  public?: boolean;
  /** Public route that draws from the per-address sign-up bucket. */
  signupLimited?: boolean;
  /** The permission a restricted key needs. */
  permission?: ActionPermission;
  /**
   * Reachable by an account that is not active: `true` for a suspended or cancelled one (to
   * see why, to withdraw a consent), `'suspended'` for a suspended one only (its way back:
   * subscribing again, the portal). Absent: 403 `account is <status>`.
   */
  allowInactiveAccount?: boolean | 'suspended';
  /**
   * A customer-portal endpoint: also accepts a portal session (`pss_…`, services/portal-sessions.ts).
   * Every other route refuses one (401).
   */
  portal?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig extends RouteAccess {}
}

/** Whether an account in this status may call a route with this `allowInactiveAccount`. */
export function accountMayCall(status: AuthContext['accountStatus'], allow: RouteAccess['allowInactiveAccount']): boolean {
  return status === 'active' || allow === true || (allow === 'suspended' && status === 'suspended');
}

/** The caller of an authenticated route; the hook guarantees it is set. */
export function authOf(req: FastifyRequest): AuthContext {
  if (!req.auth) throw new Error('authOf called on a public route');
  return req.auth;
}

/**
 * Every request, in order: authenticate (401), account state (403), live-mode gate
 * (403, inside authenticate), rate limit (429, headers on every authenticated answer),
 * permission (403). Runs at onRequest, before the body is read or parsed.
 */
export function registerAuth(app: FastifyInstance, apiKeys: ApiKeyService, rateLimits: RateLimitService, portalSessions?: PortalSessionService): void {
  app.decorateRequest('auth', null);
  const BEARER = /^Bearer[ ]+(\S+)\s*$/i;
  /** An API key, or on portal routes a portal session too; a session anywhere else is a 401. */
  const authenticate = (header: string | undefined, portal: boolean): Promise<AuthContext> => {
    const credential = header ? BEARER.exec(header)?.[1] : undefined;
    if (credential && isPortalToken(credential)) {
      if (!portal || !portalSessions) throw unauthorized(PORTAL_ERRORS.notPortalRoute);
      return portalSessions.authenticate(credential);
    }
    return apiKeys.authenticate(header);
  };
  app.addHook('onRequest', async (req, reply) => {
    const access = req.routeOptions.config as RouteAccess | undefined;
    if (!req.routeOptions.url) return; // unknown route: the 404 handler answers
    if (access?.public) {
      if (access.signupLimited) reply.headers(await rateLimits.forSignup(req.ip));
      return;
    }
    const auth = await authenticate(req.headers.authorization, access?.portal === true);
    if (!accountMayCall(auth.accountStatus, access?.allowInactiveAccount)) throw forbidden(`account is ${auth.accountStatus}`);
    req.auth = auth;
    reply.headers(await rateLimits.forKey(auth));
    if (access?.permission && !hasPermission(auth.permissions, access.permission)) {
      throw forbidden(`insufficient permission: ${access.permission} required`);
    }
  });
}
