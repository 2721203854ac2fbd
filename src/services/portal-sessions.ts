/**
 * Portal sessions (spec Authentication §9, DECISIONS "Keys: portal session"): a root key
 * opens a short-lived `pss_…` token (1 h) that the customer portal uses instead of the key.
 * It is accepted only by the routes marked `config.portal` (subscriptions, consents,
 * account status, usage, onboarding); anywhere else it is refused, so a leaked portal
 * token cannot create keys or transactions.
 *
 * Stored like API keys: a lookup handle and an HMAC-SHA256 of the whole token under the
 * API-key hashing key (the `pss_` prefix keeps the two kinds of input apart), compared in
 * constant time. A session ends when it expires, when it is ended (DELETE
 * /v1/portal/sessions/current, the portal's log-out), or when the root key that opened it
 * is revoked or rotated: a session never outlives the authority it was derived from.
 * Sessions are read from the database on every request (portal traffic is light), so an
 * ending is seen at once on every node.
 */
import { badRequest, forbidden, notFound, unauthorized } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { hashApiKey, hashesEqual, randomBase62 } from '../crypto/api-key.ts';
import { portalSessionsRepo } from '../store/repos/portal-sessions-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';

export const PORTAL_SESSION_TTL_MS = 3600_000;
export const PORTAL_TOKEN_PREFIX = 'pss_';
const TOKEN_RE = /^pss_([0-9A-Za-z]{32})$/;
const LOOKUP_LENGTH = 8;

export const PORTAL_ERRORS = {
  rootOnly: 'insufficient permission: a portal session can only be opened with a root key',
  format: 'invalid portal session format',
  invalid: 'invalid portal session',
  expired: 'portal session has expired',
  revoked: 'portal session has been revoked',
  notPortalRoute: 'a portal session is accepted only by portal endpoints: use an API key',
  notSession: 'only a portal session can end itself: send its pss_ token',
} as const;

export interface PortalSessionView {
  id: string;
  token: string;
  created_at: Date;
  expires_at: Date;
}

/** Does this bearer credential look like a portal session (rather than an API key)? */
export const isPortalToken = (credential: string) => credential.startsWith(PORTAL_TOKEN_PREFIX);

export function createPortalSessionService(deps: Deps) {
  const { db, clock, keys } = deps;
  return {
    /** POST /v1/portal/sessions: root keys only (restricted keys hold less than the portal shows). */
    async open(auth: AuthContext): Promise<PortalSessionView> {
      if (auth.permissions !== null || auth.portalSessionId) throw forbidden(PORTAL_ERRORS.rootOnly);
      const secret = randomBase62(32);
      const token = PORTAL_TOKEN_PREFIX + secret;
      const now = clock.now();
      const row = {
        id: newId(), account_id: auth.accountId, key_id: auth.keyId, lookup: secret.slice(0, LOOKUP_LENGTH),
        token_hash: hashApiKey(keys.apiKeyHash, token), created_at: now, expires_at: new Date(now.getTime() + PORTAL_SESSION_TTL_MS),
      };
      await portalSessionsRepo.insert(db, row);
      return { id: row.id, token, created_at: row.created_at, expires_at: row.expires_at };
    },

    /** Resolves a `pss_` token to its caller (root permissions of its account), or the 401/403. */
    async authenticate(token: string): Promise<AuthContext> {
      const m = TOKEN_RE.exec(token);
      if (!m) throw unauthorized(PORTAL_ERRORS.format);
      const hash = hashApiKey(keys.apiKeyHash, token);
      const rows = await portalSessionsRepo.findByLookup(db, m[1]!.slice(0, LOOKUP_LENGTH));
      const row = rows.find((r) => hashesEqual(Buffer.from(r.token_hash), hash));
      if (!row) throw unauthorized(PORTAL_ERRORS.invalid);
      if (row.revoked_at || row.key_revoked_at) throw unauthorized(PORTAL_ERRORS.revoked);
      if (row.expires_at.getTime() <= clock.now().getTime()) throw unauthorized(PORTAL_ERRORS.expired);
      if (row.key_environment === 'live' && !deps.config.liveEnabled) throw forbidden('live mode is not enabled');
      return {
        accountId: row.account_id, keyId: row.key_id, environment: row.key_environment,
        permissions: null, accountStatus: row.account_status, portalSessionId: row.id,
      };
    },

    /** DELETE /v1/portal/sessions/current: the session ends itself (log-out). */
    async end(auth: AuthContext): Promise<void> {
      if (!auth.portalSessionId) throw badRequest(PORTAL_ERRORS.notSession);
      if (!(await portalSessionsRepo.revoke(db, auth.accountId, auth.portalSessionId, clock.now()))) throw notFound('portal session not found');
    },
  };
}

export type PortalSessionService = ReturnType<typeof createPortalSessionService>;
