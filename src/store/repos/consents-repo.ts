import { isUuid } from '../../core/ids.ts';
import type { Queryable } from '../db.ts';

export type ConsentType = 'terms' | 'privacy_policy' | 'marketing' | 'data_processing';

export interface ConsentRow {
  id: string;
  account_id: string;
  type: ConsentType;
  version: string;
  granted_at: Date;
  revoked_at: Date | null;
}

export const consentsRepo = {
  async insert(q: Queryable, c: ConsentRow): Promise<void> {
    await q.query(
      `INSERT INTO consents (id, account_id, type, version, granted_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [c.id, c.account_id, c.type, c.version, c.granted_at, c.revoked_at],
    );
  },

  async list(q: Queryable, accountId: string, limit: number, offset: number): Promise<{ rows: ConsentRow[]; total: number }> {
    const [rows, count] = await Promise.all([
      q.query<ConsentRow>(
        `SELECT * FROM consents WHERE account_id = $1 ORDER BY granted_at DESC, id DESC LIMIT $2 OFFSET $3`,
        [accountId, limit, offset],
      ),
      q.query<{ n: number }>('SELECT count(*)::int AS n FROM consents WHERE account_id = $1', [accountId]),
    ]);
    return { rows: rows.rows, total: count.rows[0]?.n ?? 0 };
  },

  async get(q: Queryable, accountId: string, id: string): Promise<ConsentRow | undefined> {
    if (!isUuid(id)) return undefined; // not an id we could have issued: not found, not a SQL error
    return (await q.query<ConsentRow>('SELECT * FROM consents WHERE account_id = $1 AND id = $2', [accountId, id])).rows[0];
  },

  /**
   * Serializes the grants of one account until the end of the calling transaction (an
   * advisory lock: the record to lock may not exist yet), so two concurrent identical grants
   * make one record.
   */
  async lockGrants(q: Queryable, accountId: string): Promise<void> {
    await q.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7340215004))', [`consents:${accountId}`]);
  },

  /** The active (not revoked) record of this type and version, if any (the newest). */
  async active(q: Queryable, accountId: string, type: ConsentType, version: string): Promise<ConsentRow | undefined> {
    return (await q.query<ConsentRow>(
      'SELECT * FROM consents WHERE account_id = $1 AND type = $2 AND version = $3 AND revoked_at IS NULL ORDER BY granted_at DESC, id DESC LIMIT 1',
      [accountId, type, version],
    )).rows[0];
  },

  /** Revokes once: a second revoke leaves the first revocation time in place. */
  async revoke(q: Queryable, accountId: string, id: string, at: Date): Promise<ConsentRow | undefined> {
    if (!isUuid(id)) return undefined;
    await q.query('UPDATE consents SET revoked_at = $3 WHERE account_id = $1 AND id = $2 AND revoked_at IS NULL', [accountId, id, at]);
    return this.get(q, accountId, id);
  },
};
