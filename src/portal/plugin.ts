/**
 * The merchant portal at /portal (DECISIONS "Beyond the spec"; issue #19 parts 2 and 3):
 * server-rendered pages over the same services the /v1 routes use, called directly with
 * the portal session's AuthContext (no HTTP to ourselves).
 *
 * Everything here lives in one encapsulated Fastify scope, so what it registers stays
 * here: form bodies (@fastify/formbody: the /v1 API keeps refusing non-JSON), cookies,
 * CSRF tokens (@fastify/csrf-protection, secret in an HttpOnly SameSite=Strict cookie),
 * security headers (@fastify/helmet: a strict CSP, no framing) and HTML error pages.
 *
 * Sign-in: a root API key opens a portal session (services/portal-sessions.ts, `pss_`,
 * 1 h); the session token goes in an HttpOnly, SameSite=Strict cookie on Path=/portal,
 * Secure when the request came over HTTPS (`req.protocol`: X-Forwarded-Proto behind a
 * trusted proxy). The key itself is never stored nor shown again. Every page resolves the
 * session on each request (an ended or expired session is signed out at once) and reads
 * only the session's account: another account's id is a 404 page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import { ApiError, forbidden } from '../core/errors.ts';
import type { Runtime } from '../runtime.ts';
import type { ApiKeyService } from '../services/api-keys.ts';
import type { AuthContext } from '../services/auth-context.ts';
import { accountMayCall } from '../http/hooks/auth.ts';
import type { PortalSessionService } from '../services/portal-sessions.ts';
import { PORTAL_SESSION_TTL_MS } from '../services/portal-sessions.ts';
import { createRetryQueueService } from '../services/retry-queue.ts';
import { createSubscriptionService } from '../services/subscriptions.ts';
import { createAccountUsageService } from '../services/account-usage.ts';
import { createWebhookService } from '../services/webhooks.ts';
import { PORTAL_CSS } from './assets.ts';
import { html, type SafeHtml } from './html.ts';
import { field, page } from './layout.ts';
import { COOKIE_PATH, CSRF_COOKIE, NOTICES, SESSION_COOKIE, callerOf, sendPage, sessionView } from './context.ts';
import { registerPages, type PortalServices } from './pages.ts';

export interface PortalOptions {
  rt: Runtime;
  apiKeys: ApiKeyService;
  portalSessions: PortalSessionService;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A portal route that needs no session (sign-in, the stylesheet). */
    portalOpen?: boolean;
  }
}

/**
 * The Content-Security-Policy of every portal page: only our own resources, no script at
 * all (the portal needs none), no inline style, no framing, forms post only to us.
 */
export const PORTAL_CSP = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'none'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  objectSrc: ["'none'"],
  upgradeInsecureRequests: null,
};

export async function portalPlugin(app: FastifyInstance, o: PortalOptions): Promise<void> {
  const deps = o.rt.deps;
  const services: PortalServices = {
    rt: o.rt,
    apiKeys: o.apiKeys,
    portalSessions: o.portalSessions,
    retryQueue: createRetryQueueService(deps),
    subscriptions: createSubscriptionService(deps, { provider: o.rt.billing, tiers: o.rt.tiers, prices: o.rt.prices }),
    usage: createAccountUsageService(deps, { prices: o.rt.prices }),
    webhooks: createWebhookService(deps),
  };

  // The API's auth hook (http/hooks/auth.ts) skips public routes: the portal authenticates
  // with its cookie instead. Hidden from the OpenAPI document (they are not API).
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config as object), public: true };
    route.schema = { ...(route.schema ?? {}), hide: true };
  });

  await app.register(formbody);
  await app.register(cookie);
  await app.register(csrf, {
    cookieKey: CSRF_COOKIE,
    cookieOpts: { path: COOKIE_PATH, sameSite: 'strict', httpOnly: true, secure: 'auto' },
  });
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: PORTAL_CSP },
    frameguard: { action: 'deny' },
    // HSTS is the whole host's choice (the operator's proxy), not one path's.
    hsts: false,
    referrerPolicy: { policy: 'same-origin' },
  });

  // Pages are never cached (they show account data; a new key's page most of all).
  app.addHook('onSend', async (_req, reply) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });

  // Every form POST carries the token of the CSRF secret cookie, checked before anything else.
  app.addHook('preHandler', (req, reply, done) => {
    if (req.method !== 'POST') return done();
    app.csrfProtection(req, reply, done);
  });

  app.setErrorHandler(async (err: Error & { code?: string; statusCode?: number }, req, reply) => {
    const signedIn = req.portalCaller;
    if (err.code === 'FST_CSRF_MISSING_SECRET' || err.code === 'FST_CSRF_INVALID_TOKEN') {
      return sendPage(reply.code(403), page({ title: 'Form expired', session: signedIn ? sessionView(signedIn) : undefined },
        html`<p class="alert" role="alert">This form expired or did not come from this portal, so nothing was changed.</p><p><a href="${req.url.split('?')[0] ?? '/portal'}">Reload the page</a> and try again.</p>`));
    }
    if (err instanceof ApiError && err.status === 404) return notFoundPage(req, reply);
    if (err instanceof ApiError || (err.statusCode !== undefined && err.statusCode < 500)) {
      const status = err instanceof ApiError ? err.status : err.statusCode!;
      return sendPage(reply.code(status), page({ title: status === 403 ? 'Not allowed' : 'Request refused', session: signedIn ? sessionView(signedIn) : undefined },
        html`<p class="alert" role="alert">${err instanceof ApiError ? err.message : 'The request could not be read.'}</p>`));
    }
    req.log.error({ err }, 'portal page failed');
    return sendPage(reply.code(500), page({ title: 'Something went wrong', session: signedIn ? sessionView(signedIn) : undefined },
      html`<p class="alert" role="alert">The page could not be shown. Try again in a moment.</p>`));
  });

  app.setNotFoundHandler(async (req, reply) => notFoundPage(req, reply));

  // The session: every page but sign-in and the stylesheet needs one.
  app.decorateRequest('portalCaller', null);
  app.addHook('preHandler', async (req, reply) => {
    if (req.routeOptions.config.portalOpen || !req.routeOptions.url) return;
    const token = req.cookies[SESSION_COOKIE];
    let auth: AuthContext | undefined;
    if (token) {
      try {
        auth = await o.portalSessions.authenticate(token);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
      }
    }
    if (!auth) {
      if (token) reply.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH });
      return reply.redirect('/portal/sign-in', 303);
    }
    req.portalCaller = { auth, csrf: reply.generateCsrf() };
    // As on the API: a suspended or cancelled account sees only its account page (to see why).
    if (!accountMayCall(auth.accountStatus, req.routeOptions.config.allowInactiveAccount)) throw forbidden(`account is ${auth.accountStatus}`);
  });

  app.get('/assets/portal.css', { config: { portalOpen: true } }, async (_req, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(PORTAL_CSS));

  app.get('/', async (_req, reply) => reply.redirect('/portal/account', 303));

  app.get('/sign-in', { config: { portalOpen: true } }, async (req, reply) => {
    const q = req.query as { notice?: string };
    return sendPage(reply, signInPage(reply.generateCsrf(), {}, q.notice ? NOTICES[q.notice] : undefined));
  });

  app.post('/sign-in', { config: { portalOpen: true } }, async (req, reply) => {
    const key = String((req.body as Record<string, unknown> | undefined)?.api_key ?? '').trim();
    const again = (error: string, status: number) => sendPage(reply.code(status), signInPage(reply.generateCsrf(), { error }));
    if (!key) return again('Enter your root API key.', 400);
    let session;
    try {
      const auth = await o.apiKeys.authenticate(`Bearer ${key}`);
      session = await o.portalSessions.open(auth);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return again(err.message, err.status);
      throw err;
    }
    reply.setCookie(SESSION_COOKIE, session.token, {
      path: COOKIE_PATH, httpOnly: true, sameSite: 'strict', secure: 'auto', maxAge: Math.floor(PORTAL_SESSION_TTL_MS / 1000),
    });
    // A new CSRF secret with the new session: no token issued before sign-in stays valid after it.
    reply.clearCookie(CSRF_COOKIE, { path: COOKIE_PATH });
    return reply.redirect('/portal/account', 303);
  });

  app.post('/sign-out', { config: { allowInactiveAccount: true } }, async (req, reply) => {
    await o.portalSessions.end(callerOf(req).auth);
    reply.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH });
    reply.clearCookie(CSRF_COOKIE, { path: COOKIE_PATH });
    return reply.redirect('/portal/sign-in?notice=signed_out', 303);
  });

  registerPages(app, services);
}

function notFoundPage(req: FastifyRequest, reply: FastifyReply) {
  const c = req.portalCaller;
  return sendPage(reply.code(404), page({ title: 'Not found', session: c ? sessionView(c) : undefined },
    html`<p>There is nothing here, or it belongs to another account.</p><p><a href="/portal">Back to the portal</a></p>`));
}

function signInPage(csrfToken: string, o: { error?: string }, notice?: string): SafeHtml {
  return page({ title: 'Sign in', notice }, html`
<div class="card">
<p>Sign in with a <strong>root</strong> API key of your account (<code>svc_test_…</code> or <code>svc_live_…</code>). The key opens a portal session of one hour; the key itself is not kept.</p>
<form class="stack" method="post" action="/portal/sign-in" novalidate>
<input type="hidden" name="_csrf" value="${csrfToken}">
${field({ name: 'api_key', label: 'Root API key', type: 'password', error: o.error, required: true, autocomplete: 'off', autofocus: true })}
<div><button type="submit">Sign in</button></div>
</form>
</div>`);
}
