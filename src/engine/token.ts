/**
 * The engine's offline token (spec Authentication §6, DECISIONS "Fleet, tokens, embedded
 * engine"): at `init` the API key is exchanged ONCE for a signed token
 * (`POST {service_url}/management/v1/tokens`), the service's public keys are fetched
 * (`GET /management/v1/keys`), the token is verified (EdDSA, jose) and both are cached in
 * `data_dir`. A later init with the same key, environment, country and agent reuses the
 * cached token without the network, verified again with the cached keys, until it expires.
 *
 * The cache is sealed with an HMAC keyed by the API key (given at every init, never
 * written): the keys that verify the token sit beside it, so without the seal whoever can
 * write `data_dir` could put a key pair of their own there and a token signed with it, and
 * fiscalize on after the licence (the token) ran out or the key was revoked. A cache whose
 * seal does not match is not used.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as jose from 'jose';
import type { Clock } from '../core/clock.ts';
import { TOKEN_ALG, TOKEN_ISSUER, type EngineEnvironment, type OfflineTokenClaims } from '../services/offline-tokens.ts';
import { EngineError } from './errors.ts';

export const TOKEN_FILE = 'engine-token.json';
/** A provisioning call that takes longer than this is treated as the network being down. */
const NETWORK_TIMEOUT_MS = 10_000;

interface CachedToken {
  /** SHA-256 of the API key: the cache belongs to one key, and the key itself is never written. */
  key_hash: string;
  environment: EngineEnvironment;
  country: string;
  agent_id: string;
  service_url: string;
  token: string;
  expires_at: string;
  jwks: { keys: jose.JWK[] };
}

/** The file's content: the cache and its seal. */
interface SealedCache extends CachedToken {
  /** HMAC-SHA256, keyed by the API key, of the cache's canonical JSON (every field but this one). */
  seal: string;
}

export interface TokenRequest {
  apiKey: string;
  environment: EngineEnvironment;
  country: string;
  agentId: string;
  serviceUrl: string;
  dataDir: string;
}

export interface VerifiedToken {
  token: string;
  claims: OfflineTokenClaims;
  expiresAt: Date;
  /** True: the cached token was used and the service was not called. */
  offline: boolean;
}

const keyHash = (apiKey: string) => crypto.createHash('sha256').update(apiKey).digest('hex');

/** The cache's fields in a fixed order: what the seal covers. */
const canonical = (c: CachedToken): string => JSON.stringify([
  c.key_hash, c.environment, c.country, c.agent_id, c.service_url, c.token, c.expires_at, c.jwks,
]);
const sealOf = (apiKey: string, c: CachedToken): string => crypto.createHmac('sha256', apiKey).update(canonical(c)).digest('hex');

type CacheRead = { state: 'absent' } | { state: 'altered' } | { state: 'ok'; cache: CachedToken };

/** The cache, if there is one and its seal matches `apiKey`'s. */
function readCache(dataDir: string, apiKey: string): CacheRead {
  let raw: SealedCache;
  try {
    raw = JSON.parse(fs.readFileSync(path.join(dataDir, TOKEN_FILE), 'utf8')) as SealedCache;
  } catch {
    return { state: 'absent' }; // absent or unreadable: provision again
  }
  if (raw === null || typeof raw !== 'object' || typeof raw.seal !== 'string') return { state: 'altered' };
  const { seal, ...cache } = raw;
  const expected = Buffer.from(sealOf(apiKey, cache), 'hex');
  const given = Buffer.from(seal, 'hex');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
    // Another key's cache (its hash differs too) is not altered: it is simply not ours.
    return cache.key_hash === keyHash(apiKey) ? { state: 'altered' } : { state: 'absent' };
  }
  return { state: 'ok', cache };
}

function writeCache(dataDir: string, apiKey: string, c: CachedToken): void {
  // Written aside then renamed: a crash mid-write never leaves half a cache.
  const file = path.join(dataDir, TOKEN_FILE);
  const sealed: SealedCache = { ...c, seal: sealOf(apiKey, c) };
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(sealed), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
}

/** Verifies `token` with `jwks` at the clock's time and checks it is the one asked for. */
async function verify(token: string, jwks: { keys: jose.JWK[] }, req: TokenRequest, clock: Clock): Promise<OfflineTokenClaims> {
  let payload: jose.JWTPayload;
  try {
    ({ payload } = await jose.jwtVerify(token, jose.createLocalJWKSet(jwks as jose.JSONWebKeySet), {
      issuer: TOKEN_ISSUER, algorithms: [TOKEN_ALG], currentDate: clock.now(),
    }));
  } catch (err) {
    if (err instanceof jose.errors.JWTExpired) throw new EngineError('token_expired', 'the offline token has expired: connect to the service and call init again');
    throw new EngineError('unauthorized', `the offline token does not verify with the service's published keys (${(err as Error).message})`);
  }
  const claims = payload as unknown as OfflineTokenClaims;
  if (claims.environment !== req.environment || !claims.countries?.includes(req.country) || typeof claims.account_id !== 'string') {
    throw new EngineError('unauthorized', 'the offline token was issued for another environment or country');
  }
  return claims;
}

async function call(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(NETWORK_TIMEOUT_MS) });
  } catch (err) {
    throw new EngineError('network_unavailable', `the service at ${new URL(url).origin} cannot be reached (${(err as Error).message})`);
  }
}

/** The service's answer as an envelope error: its `{error}` message is kept. */
async function failure(res: Response, what: string): Promise<EngineError> {
  let message = `${what}: HTTP ${res.status}`;
  try {
    const body = (await res.json()) as { error?: unknown };
    if (typeof body.error === 'string') message = body.error;
  } catch {
    // not JSON: keep the status line
  }
  if (res.status === 401) return new EngineError('unauthorized', message);
  if (res.status === 403) return new EngineError(/does not match environment/.test(message) ? 'environment_mismatch' : 'forbidden', message);
  if (res.status === 400) return new EngineError('invalid_params', message);
  // No such route: the service is there, but service_url is not its base URL (a path in it,
  // another server). A configuration error, not an outage: retrying will not help.
  if (res.status === 404 || res.status === 405) {
    return new EngineError('invalid_params', `service_url does not lead to the service (HTTP ${res.status}: ${message}): give the service's base URL, without a path`);
  }
  return new EngineError('network_unavailable', message); // 5xx, 429, a proxy's page: the service is not usable now
}

/** The two provisioning calls: the token, then the keys that verify it. */
async function provision(req: TokenRequest, clock: Clock): Promise<VerifiedToken> {
  const base = req.serviceUrl.replace(/\/+$/, '');
  const auth = { authorization: `Bearer ${req.apiKey}` };
  const res = await call(`${base}/management/v1/tokens`, {
    method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: req.agentId, country: req.country, environment: req.environment }),
  });
  if (res.status !== 200) throw await failure(res, 'token request refused');
  const issued = (await res.json()) as { token: string; expires_at: string };
  const keysRes = await call(`${base}/management/v1/keys`, { headers: auth });
  if (keysRes.status !== 200) throw await failure(keysRes, 'key request refused');
  const jwks = (await keysRes.json()) as { keys: jose.JWK[] };
  const claims = await verify(issued.token, jwks, req, clock);
  writeCache(req.dataDir, req.apiKey, {
    key_hash: keyHash(req.apiKey), environment: req.environment, country: req.country, agent_id: req.agentId,
    service_url: base, token: issued.token, expires_at: new Date(claims.exp * 1000).toISOString(), jwks,
  });
  return { token: issued.token, claims, expiresAt: new Date(claims.exp * 1000), offline: false };
}

/**
 * The token for this init: the cached one while it is valid for the same key,
 * environment, country and agent (no network); otherwise a new one from the service. An
 * expired cached token with the service unreachable is `token_expired`.
 */
export async function obtainToken(req: TokenRequest, clock: Clock): Promise<VerifiedToken> {
  const read = readCache(req.dataDir, req.apiKey);
  if (read.state === 'altered') {
    // Not trusted, not used: the service decides again, and without it there is no licence.
    try {
      return await provision(req, clock);
    } catch (e) {
      if (e instanceof EngineError && e.code === 'network_unavailable') {
        throw new EngineError('unauthorized', `the cached offline token in data_dir does not match its seal (it was changed outside the engine): connect to the service and call init again (${e.message})`);
      }
      throw e;
    }
  }
  const cached = read.state === 'ok' ? read.cache : undefined;
  const same = cached && cached.key_hash === keyHash(req.apiKey) && cached.environment === req.environment
    && cached.country === req.country && cached.agent_id === req.agentId;
  if (same) {
    try {
      const claims = await verify(cached.token, cached.jwks, req, clock);
      return { token: cached.token, claims, expiresAt: new Date(claims.exp * 1000), offline: true };
    } catch (err) {
      if (!(err instanceof EngineError) || err.code !== 'token_expired') throw err;
      // Expired: renew online; offline, the engine must stop fiscalizing (the token is its licence).
      try {
        return await provision(req, clock);
      } catch (e) {
        if (e instanceof EngineError && e.code === 'network_unavailable') throw err;
        throw e;
      }
    }
  }
  return provision(req, clock);
}
