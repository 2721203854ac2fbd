import { badRequest, forbidden, notFound, unauthorized } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { allPermissions, covers, unknownPermissions, type Grant } from '../core/permissions.ts';
import { COUNTRIES } from '../countries/registry.ts';
import { generateApiKey, hashApiKey, hashesEqual, parseApiKey, type Environment } from '../crypto/api-key.ts';
import { InvalidatingCache } from '../core/invalidating-cache.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import type { Queryable } from '../store/db.ts';
import { apiKeysRepo, type ApiKeyAuthRow, type ApiKeyRow } from '../store/repos/api-keys-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';
import type { ListResult, Page } from './pagination.ts';

/** Every permission a key may hold: the actions and a scope per country served (the registry's). */
export const PERMISSION_NAMES: readonly string[] = allPermissions(COUNTRIES);

/** Key metadata as listed; hashes never leave the store. */
export interface ApiKeyView {
  id: string;
  name: string;
  key_prefix: string;
  key_last4: string;
  environment: Environment;
  permissions: string[] | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** The one response that carries the plaintext key: creation and rotation. */
export interface ApiKeyWithSecret extends ApiKeyView {
  key: string;
}

export const toApiKeyView = (r: ApiKeyRow): ApiKeyView => ({
  id: r.id,
  name: r.name,
  key_prefix: r.key_prefix,
  key_last4: r.key_last4,
  environment: r.environment,
  permissions: r.permissions,
  created_at: r.created_at,
  last_used_at: r.last_used_at,
  revoked_at: r.revoked_at,
});

export interface CreateKeyInput {
  name?: string | undefined;
  environment?: Environment | undefined;
  permissions?: string[] | undefined;
}

export const KEY_NAME_ERROR = 'name must be 1-100 characters';

/**
 * A key's name (DECISIONS "Create body: name (1-100)"): trimmed, as account and company
 * names are; absent is the default, blank or longer than 100 characters (code points) a
 * 400. Checked here, not only in the route's schema, so every caller (the portal's form
 * too) gets the same rule.
 */
function keyNameOf(name: string | undefined): string {
  if (name === undefined) return 'API key';
  const trimmed = name.trim();
  if (trimmed === '' || [...trimmed].length > 100) throw badRequest(KEY_NAME_ERROR);
  return trimmed;
}

/** last_used_at is bookkeeping, not security: write it at most once a minute per key and process. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Authentication runs on every request: its rows (the key with its account's status) are
 * cached per lookup handle and dropped when the database reports a change of the key (revoked,
 * rotated) or of its account's status (store/change-feed.ts), on any node. Without a change
 * feed (or while it is down) every request reads the database.
 */
const AUTH_CACHE = { ttlMs: 300_000, maxEntries: 10_000 };
/**
 * The HMAC of each key that authenticated recently, by the key as presented: a pure
 * function, so never stale; computing it was ~2 % of a create's CPU on a busy node. Only
 * keys that matched a stored hash enter (a stream of wrong keys cannot fill it); bounded,
 * the oldest out. The keys are in this process's memory anyway while their requests run.
 */
const HASH_MEMO_MAX = 10_000;

export function createApiKeyService(deps: Deps, changes?: ChangeFeed) {
  const { db, clock, keys } = deps;
  const lastTouch = new Map<string, number>();
  const hashMemo = new Map<string, Buffer>();
  const cache = new InvalidatingCache<string, ApiKeyAuthRow[]>({ ...AUTH_CACHE, live: () => changes?.live() ?? false });
  changes?.on('api_keys', (lookup) => cache.invalidate(lookup));
  changes?.on('accounts', (accountId) => cache.invalidateWhere((rows) => rows.some((r) => r.account_id === accountId)));
  changes?.onReset(() => cache.clear());

  /** Rows for a lookup handle; an unknown handle is not cached (a new key may take it). */
  const candidatesOf = (lookup: string) => cache.get(lookup, () => apiKeysRepo.findByLookup(db, lookup), (rows) => rows.length > 0);

  /** Inserts a new key (inside the caller's transaction when given one). */
  async function issue(q: Queryable, accountId: string, name: string, environment: Environment, permissions: Grant): Promise<ApiKeyWithSecret> {
    const k = generateApiKey(environment);
    const row = {
      id: newId(),
      account_id: accountId,
      name,
      environment,
      key_prefix: k.prefix,
      lookup: k.lookup,
      key_hash: hashApiKey(keys.apiKeyHash, k.key),
      key_last4: k.last4,
      permissions: permissions === null ? null : [...permissions],
      created_at: clock.now(),
    };
    await apiKeysRepo.insert(q, row);
    return { ...toApiKeyView({ ...row, last_used_at: null, revoked_at: null, rotated_to: null }), key: k.key };
  }

  /**
   * Resolves the Authorization header to the calling key, or throws the spec's 401/403.
   * The lookup handle finds candidate rows; the HMAC of the whole key is compared in
   * constant time, so a stored hash never short-circuits on its first differing byte.
   */
  async function authenticate(header: string | undefined): Promise<AuthContext> {
    const m = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
    if (!m) throw unauthorized('missing or invalid Authorization header');
    const presented = m[1]!;
    const parsed = parseApiKey(presented);
    if (!parsed) throw unauthorized('invalid API key format');
    const memo = hashMemo.get(presented);
    const hash = memo ?? hashApiKey(keys.apiKeyHash, presented);
    const candidates = await candidatesOf(parsed.lookup);
    const row = candidates.find((c) => hashesEqual(Buffer.from(c.key_hash), hash));
    if (!row) throw unauthorized('invalid API key');
    if (memo === undefined) {
      hashMemo.set(presented, hash);
      if (hashMemo.size > HASH_MEMO_MAX) hashMemo.delete(hashMemo.keys().next().value!);
    }
    if (row.revoked_at) throw unauthorized('API key has been revoked');
    if (row.environment === 'live' && !deps.config.liveEnabled) throw forbidden('live mode is not enabled');

    const nowMs = clock.now().getTime();
    if ((lastTouch.get(row.id) ?? 0) + TOUCH_INTERVAL_MS <= nowMs) {
      lastTouch.set(row.id, nowMs);
      apiKeysRepo.touch(db, row.id, new Date(nowMs)).catch((err) => deps.log.warn({ err }, 'could not record api key use'));
    }
    return {
      accountId: row.account_id,
      keyId: row.id,
      environment: row.environment,
      permissions: row.permissions,
      accountStatus: row.account_status,
    };
  }

  async function list(auth: AuthContext, page: Page): Promise<ListResult<ApiKeyView>> {
    const { rows, total } = await apiKeysRepo.list(db, auth.accountId, page.limit, page.offset);
    return { data: rows.map(toApiKeyView), total, ...page };
  }

  async function create(auth: AuthContext, input: CreateKeyInput): Promise<ApiKeyWithSecret> {
    const permissions: Grant = input.permissions === undefined ? null : [...new Set(input.permissions)];
    if (permissions !== null) {
      const unknown = unknownPermissions(permissions, COUNTRIES);
      if (unknown.length) throw badRequest(`unknown permission: ${unknown.join(', ')}`);
      if (permissions.length === 0) throw badRequest('permissions must not be empty (omit it for a root key)');
    }
    const environment = input.environment ?? 'test';
    const name = keyNameOf(input.name);
    assertNoEscalation(auth, permissions, environment);
    return issue(db, auth.accountId, name, environment, permissions);
  }

  /** A target key this caller may manage: its own account's, live, not the calling key, not more privileged. */
  async function manageable(auth: AuthContext, id: string, verb: 'revoke' | 'rotate'): Promise<ApiKeyRow> {
    const row = await apiKeysRepo.get(db, auth.accountId, id);
    if (!row || row.revoked_at) throw notFound('API key not found');
    // The row's id, not the path's: PostgreSQL's uuid finds the key whatever the spelling.
    if (row.id === auth.keyId) throw badRequest(`cannot ${verb} the calling key`);
    assertNoEscalation(auth, row.permissions, row.environment);
    return row;
  }

  async function revoke(auth: AuthContext, id: string): Promise<void> {
    const row = await manageable(auth, id, 'revoke');
    if (!(await apiKeysRepo.revoke(db, auth.accountId, id, clock.now()))) throw notFound('API key not found');
    // This node stops accepting the key before answering; the others when the trigger's notification reaches them.
    cache.invalidate(row.lookup);
  }

  /** New key, same name, environment and permissions; the old one stops working in the same commit. */
  async function rotate(auth: AuthContext, id: string): Promise<ApiKeyWithSecret> {
    const old = await manageable(auth, id, 'rotate');
    const fresh = await db.transaction(async (tx) => {
      const issued = await issue(tx, auth.accountId, old.name, old.environment, old.permissions);
      // Revoking inside the transaction settles a concurrent rotate: only one revokes.
      if (!(await apiKeysRepo.revoke(tx, auth.accountId, id, clock.now(), issued.id))) throw notFound('API key not found');
      return issued;
    });
    cache.invalidate(old.lookup);
    return fresh;
  }

  return { issue, authenticate, list, create, revoke, rotate };
}

/**
 * A key may only create, rotate or revoke keys with equal or lesser permissions.
 * Environment counts too: a restricted test key cannot mint a live key. Root keys of
 * either environment may (that is how an account gets its first live key).
 */
function assertNoEscalation(auth: AuthContext, requested: Grant, environment: Environment): void {
  if (!covers(auth.permissions, requested) || (auth.permissions !== null && environment !== auth.environment)) {
    throw forbidden('privilege escalation: a key may only manage keys with equal or lesser permissions');
  }
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
