import { isUuid } from '../../core/ids.ts';
import type { Queryable } from '../db.ts';

export interface LocationRow {
  id: string;
  account_id: string;
  name: string;
  country: string;
  system: string | null;
  address: string | null;
  tax_id: string | null;
  country_config: Record<string, unknown>;
  status: 'active' | 'inactive';
  cert_expiry: Date | null;
  /** The certificate its config names, through its system's `certificateFields` (migration 0018). */
  certificate_ref: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** Columns a PATCH may change (column names are never taken from input). */
const UPDATABLE = new Set(['name', 'address', 'country_config', 'certificate_ref', 'system', 'status']);

export interface LocationFilter {
  country?: string | undefined;
  status?: 'active' | 'inactive' | undefined;
}

export const locationsRepo = {
  /** Returns the stored row: a trigger fills `cert_expiry` from a matching certificate. */
  async insert(q: Queryable, l: Omit<LocationRow, 'deleted_at'>): Promise<LocationRow> {
    const res = await q.query<LocationRow>(
      `INSERT INTO locations (id, account_id, name, country, system, address, tax_id, country_config, status, cert_expiry, created_at, updated_at, certificate_ref)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *`,
      [l.id, l.account_id, l.name, l.country, l.system, l.address, l.tax_id, JSON.stringify(l.country_config), l.status,
        l.cert_expiry, l.created_at, l.updated_at, l.certificate_ref],
    );
    return res.rows[0]!;
  },

  /** A location of this account that is not deleted; another account's id is simply not found. */
  async get(q: Queryable, accountId: string, id: string): Promise<LocationRow | undefined> {
    if (!isUuid(id)) return undefined; // not an id we could have issued: not found, not a SQL error
    return (
      await q.query<LocationRow>('SELECT * FROM locations WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL', [accountId, id])
    ).rows[0];
  },

  /**
   * A location of this account, deleted or not: what it recorded stays the account's to
   * read (its inspector's files: services/location-files.ts).
   */
  async getOwned(q: Queryable, accountId: string, id: string): Promise<LocationRow | undefined> {
    if (!isUuid(id)) return undefined;
    return (await q.query<LocationRow>('SELECT * FROM locations WHERE account_id = $1 AND id = $2', [accountId, id])).rows[0];
  },

  /** By id alone, deleted or not: workers load the location a stored transaction was made at. */
  async getById(q: Queryable, id: string): Promise<LocationRow | undefined> {
    return (await q.query<LocationRow>('SELECT * FROM locations WHERE id = $1', [id])).rows[0];
  },

  async list(q: Queryable, accountId: string, f: LocationFilter, limit: number, offset: number): Promise<{ rows: LocationRow[]; total: number }> {
    const where = ['account_id = $1', 'deleted_at IS NULL'];
    const params: unknown[] = [accountId];
    if (f.country) {
      params.push(f.country);
      where.push(`country = $${params.length}`);
    }
    if (f.status) {
      params.push(f.status);
      where.push(`status = $${params.length}`);
    }
    const cond = where.join(' AND ');
    const [rows, count] = await Promise.all([
      q.query<LocationRow>(
        `SELECT * FROM locations WHERE ${cond} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, limit, offset],
      ),
      q.query<{ n: number }>(`SELECT count(*)::int AS n FROM locations WHERE ${cond}`, params),
    ]);
    return { rows: rows.rows, total: count.rows[0]?.n ?? 0 };
  },

  async update(
    q: Queryable,
    accountId: string,
    id: string,
    patch: Partial<Pick<LocationRow, 'name' | 'address' | 'country_config' | 'certificate_ref' | 'system' | 'status'>>,
    at: Date,
  ): Promise<LocationRow | undefined> {
    if (!isUuid(id)) return undefined;
    const sets: string[] = [];
    const params: unknown[] = [accountId, id, at];
    for (const [col, value] of Object.entries(patch)) {
      if (value === undefined || !UPDATABLE.has(col)) continue;
      params.push(col === 'country_config' ? JSON.stringify(value) : value);
      sets.push(`${col} = $${params.length}`);
    }
    const res = await q.query<LocationRow>(
      `UPDATE locations SET ${[...sets, 'updated_at = $3'].join(', ')}
       WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING *`,
      params,
    );
    return res.rows[0];
  },

  async softDelete(q: Queryable, accountId: string, id: string, at: Date): Promise<boolean> {
    if (!isUuid(id)) return false;
    const res = await q.query(
      'UPDATE locations SET deleted_at = $3, updated_at = $3 WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL',
      [accountId, id, at],
    );
    return res.rowCount === 1;
  },

  /** Merchant count for the tier: active, not deleted locations. */
  async countActive(q: Queryable, accountId: string): Promise<number> {
    const res = await q.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM locations WHERE account_id = $1 AND deleted_at IS NULL AND status = 'active'",
      [accountId],
    );
    return res.rows[0]?.n ?? 0;
  },
};
