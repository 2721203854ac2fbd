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
 * migration 0020), one key signing at a time. Scheduled rotation (the signing key is
 * `rotateAfterMs` old) publishes ahead: from `KEY_PUBLISHED_AHEAD_MS` before that instant
 * (or at the first use after it) the next key is stored with `signs_from` that far in the
 * future and listed in the JWKS, while the current key goes on signing until then (its
 * `retired_at` is set to that instant). A verifier whose JWKS copy is at most max-age old
 * thus always holds the key of any token. An operator's rotation (`rotate`, `main.ts
 * rotate-token-key`) is immediate: it is the leak procedure. A retired key stays in the
 * JWKS until every token it can have signed has expired, so tokens already handed out keep
 * verifying. Every token exchange reads which key signs from the store (a few indexed rows;
 * an exchange is once per engine `init`), so a rotation made by another process signs the
 * very next token on every node: after `--drop-retired` no node goes on signing with the
 * dropped key (its tokens would never verify). Only the opened private key is memoised, by kid.
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
/** Default age (from when it started signing) at which the signing key is replaced. */
export const ROTATE_AFTER_MS = 90 * 24 * 3600_000;
/** GET /management/v1/keys answers `Cache-Control: public, max-age=` this (seconds). */
export const JWKS_MAX_AGE_S = 300;
/**
 * Added to the JWKS max-age before a key published ahead signs. It covers what makes a
 * verifier's copy older than max-age, or the signing start earlier than planned: a copy a
 * shared cache kept for max-age and a downstream cache then kept again (one that ignores
 * `Age`: up to twice max-age); verifier libraries that keep a JWKS longer than the header
 * says (jose's remote set: 10 minutes); a JWKS read whose snapshot predates the key's commit
 * reaching its cache a moment later; and the nodes' clocks (the node that stores the key
 * sets `signs_from` by its clock, each signing node compares it with its own). An hour
 * covers these with room to spare and costs nothing but the retiring key signing an hour
 * longer, once every 90 days.
 */
export const KEY_PUBLISH_MARGIN_MS = 3600_000;
/** How long the next signing key is published before it signs its first token. */
export const KEY_PUBLISHED_AHEAD_MS = JWKS_MAX_AGE_S * 1000 + KEY_PUBLISH_MARGIN_MS;
/**
 * A token signed as its key is being retired elsewhere (read, then signed): a minute covers
 * it. (A scheduled retirement is announced `KEY_PUBLISHED_AHEAD_MS` ahead; only an
 * operator's rotation retires a key that another node may have just read.)
 */
const SIGNING_RACE_MS = 60_000;
/**
 * How long a retired key stays published after `retired_at` (when it stopped signing, not
 * when its successor was stored): the longest a token it signed can live, plus the signing
 * race and a day of clock skew.
 */
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
}

export interface OfflineTokenOptions {
  rotateAfterMs?: number;
}

export function createOfflineTokenService(deps: Deps, opts: OfflineTokenOptions = {}) {
  const { db, clock, keys } = deps;
  const rotateAfterMs = opts.rotateAfterMs ?? ROTATE_AFTER_MS;
  /** The last key opened (unsealing costs a little): reused while it is still the one signing. */
  let opened: SigningKey | undefined;

  function open(row: TokenSigningKeyRow): SigningKey {
    if (opened?.kid === row.kid) return opened;
    const privateKey = crypto.createPrivateKey(unseal(keys.seal, row.key_material, keyAad(row.kid)));
    // The published key must be the one that signs: check the sealed key against the clear one.
    const jwk = crypto.createPublicKey(privateKey).export({ format: 'jwk' });
    if (jwk.x !== (JSON.parse(row.public_jwk) as jose.JWK).x) throw new Error(`token signing key ${row.kid}: stored public key does not match the sealed key`);
    opened = { kid: row.kid, privateKey };
    return opened;
  }

  async function newKeyRow(now: Date, signsFrom: Date = now): Promise<TokenSigningKeyRow> {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
    const jwk = publicKey.export({ format: 'jwk' }) as jose.JWK;
    const kid = await jose.calculateJwkThumbprint(jwk);
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    return { kid, public_jwk: JSON.stringify(jwk), key_material: seal(keys.seal, pem, keyAad(kid)), created_at: now, signs_from: signsFrom, retired_at: null };
  }

  /**
   * The key that signs at `now` among the published ones: the latest whose `signs_from` has
   * come and that is not retired by `now`. Failing that, the earliest key not retired: the
   * first key stored by a node whose clock runs a little ahead of this one's (it is meant to
   * sign at once), or a store edited by hand.
   */
  function signerAt(rows: TokenSigningKeyRow[], now: Date): TokenSigningKeyRow | undefined {
    const live = rows
      .filter((r) => r.retired_at === null || r.retired_at > now)
      .sort((x, y) => x.signs_from.getTime() - y.signs_from.getTime());
    return live.filter((r) => r.signs_from <= now).at(-1) ?? live[0];
  }

  /**
   * The installation's first key, unless another writer (a token exchange, a JWKS read, on
   * any node) stored one first. Never retires a key.
   */
  async function firstKey(now: Date): Promise<void> {
    const fresh = await newKeyRow(now);
    await db.transaction((tx) => tokenSigningKeysRepo.insertOrNewest(tx, fresh));
  }

  /**
   * Scheduled rotation: stores the key that replaces `signer`, signing from
   * `KEY_PUBLISHED_AHEAD_MS` after now at the earliest (never before `signer` is due), and
   * retires `signer` at that same instant. Only while `signer` is still the newest key:
   * two nodes (or a token exchange and a JWKS read) doing this at once store one next key
   * (the loser finds it, or is stopped by the partial unique index and keeps the winner's).
   */
  async function publishNext(signer: TokenSigningKeyRow, now: Date): Promise<void> {
    const signsFrom = new Date(Math.max(now.getTime() + KEY_PUBLISHED_AHEAD_MS, signer.signs_from.getTime() + rotateAfterMs));
    const fresh = await newKeyRow(now, signsFrom);
    await db.transaction(async (tx) => {
      const newest = await tokenSigningKeysRepo.newest(tx, true);
      if (newest && newest.kid !== signer.kid) return; // published already, or an operator rotated
      if (newest) await tokenSigningKeysRepo.retire(tx, newest.kid, signsFrom);
      await tokenSigningKeysRepo.insertOrNewest(tx, fresh);
    });
  }

  /**
   * The published keys and the one that signs now, read from the store at each use (never a
   * node's stale copy). Makes the first key if there is none, and publishes the next one
   * once the signing key is due to be replaced within `KEY_PUBLISHED_AHEAD_MS`.
   */
  async function keysAt(now: Date): Promise<{ published: TokenSigningKeyRow[]; signer: TokenSigningKeyRow }> {
    const since = new Date(now.getTime() - RETIRED_KEY_PUBLISHED_MS);
    let published = await tokenSigningKeysRepo.published(db, since);
    let signer = signerAt(published, now);
    if (!signer) {
      await firstKey(now);
      published = await tokenSigningKeysRepo.published(db, since);
      signer = signerAt(published, now)!;
    }
    // `retired_at` null: no successor yet (once one is published, the signer has its end).
    const due = signer.signs_from.getTime() + rotateAfterMs - KEY_PUBLISHED_AHEAD_MS;
    if (signer.retired_at === null && now.getTime() >= due) {
      await publishNext(signer, now);
      published = await tokenSigningKeysRepo.published(db, since);
    }
    return { published, signer };
  }

  /**
   * An operator's rotation: every key stops signing now (one published ahead and not yet
   * signing is dropped) and a new key signs at once. Two rotating at once make one new key.
   */
  async function rotateNow(): Promise<SigningKey> {
    const now = clock.now();
    const fresh = await newKeyRow(now);
    const row = await db.transaction(async (tx) => {
      // None found: another rotation committed meanwhile (PostgreSQL skips the row it changed); keep its key.
      if (await tokenSigningKeysRepo.newest(tx, true)) await tokenSigningKeysRepo.retireAll(tx, now);
      return tokenSigningKeysRepo.insertOrNewest(tx, fresh);
    });
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
      const now = clock.now();
      const key = open((await keysAt(now)).signer);
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
     * GET /management/v1/keys: the key published to sign next, the one signing, and the
     * retired ones whose tokens may still be alive. Never an empty set: before the first
     * token, the key that will sign it is made now and published (a verifier that read the
     * set first, and cached it for the answer's max-age, would otherwise hold `[]` and
     * refuse the first tokens). A read is also when the next key gets published, as an
     * exchange is.
     */
    async jwks(): Promise<{ keys: PublicJwk[] }> {
      const { published } = await keysAt(clock.now());
      return { keys: published.map((r) => ({ ...(JSON.parse(r.public_jwk) as jose.JWK), kid: r.kid, alg: TOKEN_ALG, use: 'sig' as const })) };
    },

    /**
     * Retires the signing key now and makes a new one that signs at once (an operator's
     * rotation, `main.ts rotate-token-key`; a key published ahead that has not signed yet
     * is dropped). Retired keys stay published so their tokens keep
     * verifying, unless `dropRetired` (a suspected leak): then every retired key is deleted
     * and the tokens it signed stop verifying as soon as engines refresh the JWKS.
     */
    async rotate(opts: { dropRetired?: boolean } = {}): Promise<{ kid: string; dropped: string[] }> {
      const key = await rotateNow();
      const dropped = opts.dropRetired ? await tokenSigningKeysRepo.deleteRetired(db, clock.now()) : [];
      return { kid: key.kid, dropped };
    },
  };
}

export type OfflineTokenService = ReturnType<typeof createOfflineTokenService>;
