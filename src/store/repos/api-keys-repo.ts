import type { Environment } from '../../crypto/api-key.ts';
import { isUuid } from '../../core/ids.ts';
import type { Queryable } from '../db.ts';
import type { AccountStatus } from './accounts-repo.ts';

export interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  environment: Environment;
  key_prefix: string;
  lookup: string;
  key_hash: Buffer | Uint8Array;
  key_last4: string;
  permissions: string[] | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  rotated_to: string | null;
}

/** A key row joined with its account's status: what authentication needs, in one query. */
export interface ApiKeyAuthRow extends ApiKeyRow {
  account_status: AccountStatus;
}

const COLUMNS = 'id, account_id, name, environment, key_prefix, lookup, key_hash, key_last4, permissions, created_at, last_used_at, revoked_at, rotated_to';

export const apiKeysRepo = {
  async insert(q: Queryable, k: Omit<ApiKeyRow, 'last_used_at' | 'revoked_at' | 'rotated_to'>): Promise<void> {
    await q.query(
      `INSERT INTO api_keys (id, account_id, name, environment, key_prefix, lookup, key_hash, key_last4, permissions, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [k.id, k.account_id, k.name, k.environment, k.key_prefix, k.lookup, k.key_hash, k.key_last4,
        k.permissions === null ? null : JSON.stringify(k.permissions), k.created_at],
    );
  },

  /** Candidates for a presented key: the lookup handle narrows, the HMAC decides (in the service). */
  async findByLookup(q: Queryable, lookup: string): Promise<ApiKeyAuthRow[]> {
    return (
      await q.query<ApiKeyAuthRow>(
        `SELECT k.id, k.account_id, k.name, k.environment, k.key_prefix, k.lookup, k.key_hash, k.key_last4, k.permissions,
                k.created_at, k.last_used_at, k.revoked_at, k.rotated_to, a.status AS account_status
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
         WHERE k.lookup = $1`,
        [lookup],
      )
    ).rows;
  },

  async get(q: Queryable, accountId: string, id: string): Promise<ApiKeyRow | undefined> {
    if (!isUuid(id)) return undefined; // not an id we could have issued: not found, not a SQL error
    return (await q.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE account_id = $1 AND id = $2`, [accountId, id])).rows[0];
  },

  async list(q: Queryable, accountId: string, limit: number, offset: number): Promise<{ rows: ApiKeyRow[]; total: number }> {
    const [rows, count] = await Promise.all([
      q.query<ApiKeyRow>(
        `SELECT ${COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
        [accountId, limit, offset],
      ),
      q.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1', [accountId]),
    ]);
    return { rows: rows.rows, total: count.rows[0]?.n ?? 0 };
  },

  /** Revokes a live key; false when it was already revoked (or is not this account's). */
  async revoke(q: Queryable, accountId: string, id: string, at: Date, rotatedTo: string | null = null): Promise<boolean> {
    if (!isUuid(id)) return false;
    const res = await q.query(
      'UPDATE api_keys SET revoked_at = $3, rotated_to = $4 WHERE account_id = $1 AND id = $2 AND revoked_at IS NULL',
      [accountId, id, at, rotatedTo],
    );
    return res.rowCount === 1;
  },

  async touch(q: Queryable, id: string, at: Date): Promise<void> {
    await q.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)', [id, at]);
  },
};
