import { isUuid } from '../../core/ids.ts';
import type { Queryable } from '../db.ts';
import type { AccountStatus } from './accounts-repo.ts';
import type { Environment } from '../../crypto/api-key.ts';

export interface PortalSessionRow {
  id: string;
  account_id: string;
  /** The root API key that opened the session. */
  key_id: string;
  lookup: string;
  token_hash: Buffer | Uint8Array;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

/** A session with what authentication needs: its account's status and its key's state. */
export interface PortalSessionAuthRow extends PortalSessionRow {
  account_status: AccountStatus;
  key_environment: Environment;
  key_revoked_at: Date | null;
}

export const portalSessionsRepo = {
  async insert(q: Queryable, s: Omit<PortalSessionRow, 'revoked_at'>): Promise<void> {
    await q.query(
      `INSERT INTO portal_sessions (id, account_id, key_id, lookup, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [s.id, s.account_id, s.key_id, s.lookup, s.token_hash, s.created_at, s.expires_at],
    );
  },

  async findByLookup(q: Queryable, lookup: string): Promise<PortalSessionAuthRow[]> {
    return (
      await q.query<PortalSessionAuthRow>(
        `SELECT s.*, a.status AS account_status, k.environment AS key_environment, k.revoked_at AS key_revoked_at
         FROM portal_sessions s JOIN accounts a ON a.id = s.account_id JOIN api_keys k ON k.id = s.key_id
         WHERE s.lookup = $1`,
        [lookup],
      )
    ).rows;
  },

  /** Ends a session once (a second call keeps the first time); false when it is not this account's or already ended. */
  async revoke(q: Queryable, accountId: string, id: string, at: Date): Promise<boolean> {
    if (!isUuid(id)) return false;
    const res = await q.query('UPDATE portal_sessions SET revoked_at = $3 WHERE account_id = $1 AND id = $2 AND revoked_at IS NULL', [accountId, id, at]);
    return res.rowCount === 1;
  },
};
