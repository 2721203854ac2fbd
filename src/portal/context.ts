/**
 * What the portal's plugin (plugin.ts) and its pages (pages.ts) share: the cookies, the
 * signed-in caller of a page, the redirect notices, and sending a page.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../services/auth-context.ts';
import type { SafeHtml } from './html.ts';

export const SESSION_COOKIE = 'portal_session';
export const CSRF_COOKIE = 'portal_csrf';
export const COOKIE_PATH = '/portal';

/** The signed-in caller of a page, with the CSRF token its forms carry. */
export interface PortalCaller {
  auth: AuthContext;
  csrf: string;
}

/** Fixed messages a redirect may ask for (`?notice=`): never text from the request. */
export const NOTICES: Record<string, string> = {
  signed_out: 'You are signed out.',
  location_created: 'Location created.',
  subscribed: 'Subscribed: the subscription is active.',
  location_saved: 'Location saved.',
  location_deactivated: 'Location deactivated.',
  location_activated: 'Location active again.',
  key_revoked: 'API key revoked.',
  test_sent: 'Test delivery queued: it appears in the delivery log below once the worker has sent it.',
};

declare module 'fastify' {
  interface FastifyRequest {
    portalCaller: PortalCaller | null;
  }
}

/** The signed-in caller; the session hook guarantees it on every non-open portal route. */
export function callerOf(req: FastifyRequest): PortalCaller {
  if (!req.portalCaller) throw new Error('callerOf on an open portal route');
  return req.portalCaller;
}

export const sessionView = (c: PortalCaller) => ({ csrf: c.csrf, environment: c.auth.environment });

export function sendPage(reply: FastifyReply, body: SafeHtml) {
  return reply.header('content-type', 'text/html; charset=utf-8').send(body.value);
}

