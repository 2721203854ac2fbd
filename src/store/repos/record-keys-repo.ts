import type { Queryable } from '../db.ts';

export interface RecordKeyRow {
  location_id: string;
  kind: string;
  account_id: string;
  /** Lowercase hex SHA-256 of the public key's DER SubjectPublicKeyInfo. */
  key_id: string;
  public_key_pem: string;
  /** The PKCS#8 private key PEM, sealed with MASTER_KEY (services/signing-keys.ts). */
  key_material: string;
  created_at: Date;
}

export const recordKeysRepo = {
  async get(q: Queryable, locationId: string, kind: string): Promise<RecordKeyRow | undefined> {
    return (await q.query<RecordKeyRow>('SELECT * FROM record_keys WHERE location_id = $1 AND kind = $2', [locationId, kind])).rows[0];
  },

  /** Stores the location's key unless another request stored one first; returns the one kept. */
  async insertOrGet(q: Queryable, row: RecordKeyRow): Promise<RecordKeyRow> {
    await q.query(
      `INSERT INTO record_keys (location_id, kind, account_id, key_id, public_key_pem, key_material, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (location_id, kind) DO NOTHING`,
      [row.location_id, row.kind, row.account_id, row.key_id, row.public_key_pem, row.key_material, row.created_at],
    );
    return (await recordKeysRepo.get(q, row.location_id, row.kind))!;
  },
};
