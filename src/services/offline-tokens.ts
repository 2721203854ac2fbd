/**
 * Offline tokens for the embedded engine (spec Authentication §6, DECISIONS "Fleet, tokens,
 * embedded engine"): at `init` the engine exchanges its API key once for a signed token,
 * then works without the network, verifying the token with the service's public key
 * (GET /management/v1/keys, a JWKS).
 *
 * The token is a compact JWS (JWT), EdDSA over Ed25519, `kid` in the header. Claims:
 * `iss`, `sub` and `account_id` (the account), `key_id` (the API key that asked),
 * `environment` (`sandbox` | `production`), `countries` (the one asked for: a token grants
 * no more than the engine was initialised for), `agent_id`, `iat`, `exp` (30 days), `jti`.
 *
 * Signing keys: generated on first use (a token exchange, or a JWKS read: so the key is
 * published before it signs), the private key sealed with MASTER_KEY (as record keys are,
 * migration 0020), one current key at a time. Rotation (`rotate`, and
 * automatically once the current key is older than `rotateAfterMs`) retires the current
 * key and makes a new one: new tokens are signed with the new key, and the retired key
 * stays in the JWKS until every token it can have signed has expired, so tokens already
 * handed out keep verifying. Every token exchange reads which key is current (one indexed
 * row; an exchange is once per engine `init`), so a rotation made by another process
 * (`rotate-token-key`) signs the very next token on every node: after
 * `--drop-retired` no node goes on signing with the dropped key (its tokens would never
 * verify). Only the opened private key is memoised, by kid.
 */
import crypto from 'node:crypto';
import * as jose from 'jose';
import { badRequest, forbidden } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { allowsCountry } from '../core/permissions.ts';
import { COUNTRIES } from '../countries/registry.ts';
import { seal, unseal } from '../crypto/sealed.ts';
import { tokenSigningKeysRepo, type TokenSigningKeyRow } from '../store/repos/token-signing-keys-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';

export const TOKEN_TTL_MS = 30 * 24 * 3600_000;
/** Default age after which the signing key is replaced at its next use. */
export const ROTATE_AFTER_MS = 90 * 24 * 3600_000;
/** A token signed as its key is being retired elsewhere (read, then signed): a minute covers it. */
const SIGNING_RACE_MS = 60_000;
/** How long a retired key stays published: the longest a token it signed can live, plus the signing race and a day of clock skew. */
export const RETIRED_KEY_PUBLISHED_MS = TOKEN_TTL_MS + SIGNING_RACE_MS + 24 * 3600_000;
export const TOKEN_ISSUER = 'fiscalization-service';
export const TOKEN_ALG = 'EdDSA';

const keyAad = (kid: string) => `token-signing-key:${kid}`;

/** The engine's environment names (DECISIONS engine `init`), and the API key environment each needs. */
export const ENGINE_ENVIRONMENTS = { sandbox: 'test', production: 'live' } as const;
export type EngineEnvironment = keyof typeof ENGINE_ENVIRONMENTS;

export const TOKEN_ERRORS = {
  environmentMismatch: (env: EngineEnvironment) =>
    `API key does not match environment ${env}: ${env} needs a ${ENGINE_ENVIRONMENTS[env] === 'test' ? 'svc_test_' : 'svc_live_'} key`,
  country: (cc: string) => `API key is not allowed to act in country ${cc}`,
  unknownCountry: `country must be one of ${COUNTRIES.join(', ')}`,
} as const;

export interface TokenRequest {
  agent_id: string;
  country: string;
  environment: EngineEnvironment;
}

export interface OfflineTokenClaims {
  iss: string;
  sub: string;
  account_id: string;
  key_id: string;
  environment: EngineEnvironment;
  countries: string[];
  agent_id: string;
  iat: number;
  exp: number;
  jti: string;
}

export interface PublicJwk extends jose.JWK {
  kid: string;
  alg: string;
  use: 'sig';
}

interface SigningKey {
  kid: string;
  privateKey: crypto.KeyObject;
  createdAt: Date;
}

export interface OfflineTokenOptions {
  rotateAfterMs?: number;
}

export function createOfflineTokenService(deps: Deps, opts: OfflineTokenOptions = {}) {
  const { db, clock, keys } = deps;
  const rotateAfterMs = opts.rotateAfterMs ?? ROTATE_AFTER_MS;
  /** The last key opened (unsealing costs a little): reused while it is still the current one. */
  let opened: SigningKey | undefined;

  function open(row: TokenSigningKeyRow): SigningKey {
    if (opened?.kid === row.kid) return opened;
    const privateKey = crypto.createPrivateKey(unseal(keys.seal, row.key_material, keyAad(row.kid)));
    // The published key must be the one that signs: check the sealed key against the clear one.
    const jwk = crypto.createPublicKey(privateKey).export({ format: 'jwk' });
    if (jwk.x !== (JSON.parse(row.public_jwk) as jose.JWK).x) throw new Error(`token signing key ${row.kid}: stored public key does not match the sealed key`);
    opened = { kid: row.kid, privateKey, createdAt: row.created_at };
    return opened;
  }

  async function newKeyRow(now: Date): Promise<TokenSigningKeyRow> {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
    const jwk = publicKey.export({ format: 'jwk' }) as jose.JWK;
    const kid = await jose.calculateJwkThumbprint(jwk);
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    return { kid, public_jwk: JSON.stringify(jwk), key_material: seal(keys.seal, pem, keyAad(kid)), created_at: now, retired_at: null };
  }

  /**
   * Replaces the current key (if `onlyIfKid` is given, only when that is still the current
   * one: two nodes rotating the same old key make one new key). Returns the current key.
   */
  async function replace(onlyIfKid: string | null): Promise<SigningKey> {
    const now = clock.now();
    const fresh = await newKeyRow(now);
    const row = await db.transaction(async (tx) => {
      const current = await tokenSigningKeysRepo.current(tx, true);
      if (current && onlyIfKid !== null && current.kid !== onlyIfKid) return current;
      if (current) await tokenSigningKeysRepo.retire(tx, current.kid, now);
      return tokenSigningKeysRepo.insertOrCurrent(tx, fresh);
    });
    return open(row);
  }

  /**
   * The installation's first key, unless another writer (a token exchange, a JWKS read, on
   * any node) stored one first: then that one. Never retires a key (`replace` does).
   */
  async function firstKey(): Promise<TokenSigningKeyRow> {
    const fresh = await newKeyRow(clock.now());
    return db.transaction((tx) => tokenSigningKeysRepo.insertOrCurrent(tx, fresh));
  }

  /** The key that signs now, read from the store at each use (never a node's stale copy). */
  async function currentKey(): Promise<SigningKey> {
    const now = clock.now();
    const row = await tokenSigningKeysRepo.current(db);
    if (!row) return open(await firstKey());
    if (now.getTime() - row.created_at.getTime() >= rotateAfterMs) return replace(row.kid);
    return open(row);
  }

  return {
    /** POST /management/v1/tokens: checks the key against the environment and country, then signs. */
    async issue(auth: AuthContext, input: TokenRequest): Promise<{ token: string; expires_at: Date }> {
      const country = input.country.toUpperCase();
      if (!(COUNTRIES as readonly string[]).includes(country)) throw badRequest(TOKEN_ERRORS.unknownCountry);
      // Spec §6: the prefix must match the configured environment (sandbox ↔ test keys, production ↔ live keys).
      if (ENGINE_ENVIRONMENTS[input.environment] !== auth.environment) throw forbidden(TOKEN_ERRORS.environmentMismatch(input.environment));
      if (!allowsCountry(auth.permissions, country)) throw forbidden(TOKEN_ERRORS.country(country));
      const key = await currentKey();
      const now = clock.now();
      const iat = Math.floor(now.getTime() / 1000);
      const exp = iat + TOKEN_TTL_MS / 1000;
      const claims: Omit<OfflineTokenClaims, 'iss' | 'sub' | 'iat' | 'exp' | 'jti'> = {
        account_id: auth.accountId,
        key_id: auth.keyId,
        environment: input.environment,
        countries: [country],
        agent_id: input.agent_id,
      };
      const token = await new jose.SignJWT({ ...claims })
        .setProtectedHeader({ alg: TOKEN_ALG, kid: key.kid, typ: 'JWT' })
        .setIssuer(TOKEN_ISSUER)
        .setSubject(auth.accountId)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .setJti(newId())
        .sign(key.privateKey);
      return { token, expires_at: new Date(exp * 1000) };
    },

    /**
     * GET /management/v1/keys: the current key and the retired ones whose tokens may still
     * be alive. Never an empty set: before the first token, the key that will sign it is
     * made now and published (a verifier that read the set first, and cached it for the
     * answer's max-age, would otherwise hold `[]` and refuse the first tokens).
     */
    async jwks(): Promise<{ keys: PublicJwk[] }> {
      const since = new Date(clock.now().getTime() - RETIRED_KEY_PUBLISHED_MS);
      let rows = await tokenSigningKeysRepo.published(db, since);
      if (!rows.some((r) => r.retired_at === null)) {
        await firstKey();
        rows = await tokenSigningKeysRepo.published(db, since);
      }
      return { keys: rows.map((r) => ({ ...(JSON.parse(r.public_jwk) as jose.JWK), kid: r.kid, alg: TOKEN_ALG, use: 'sig' as const })) };
    },

    /**
     * Retires the current key now and makes a new one (an operator's rotation,
     * `main.ts rotate-token-key`). Retired keys stay published so their tokens keep
     * verifying, unless `dropRetired` (a suspected leak): then every retired key is deleted
     * and the tokens it signed stop verifying as soon as engines refresh the JWKS.
     */
    async rotate(opts: { dropRetired?: boolean } = {}): Promise<{ kid: string; dropped: string[] }> {
      const key = await replace(null);
      const dropped = opts.dropRetired ? await tokenSigningKeysRepo.deleteRetired(db) : [];
      return { kid: key.kid, dropped };
    },
  };
}

export type OfflineTokenService = ReturnType<typeof createOfflineTokenService>;
