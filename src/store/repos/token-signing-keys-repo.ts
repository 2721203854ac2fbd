import type { Queryable } from '../db.ts';

export interface TokenSigningKeyRow {
  /** RFC 7638 thumbprint of the public JWK. */
  kid: string;
  /** The public key as a JWK (JSON text): what GET /management/v1/keys publishes. */
  public_jwk: string;
  /** The PKCS#8 private key PEM, sealed with MASTER_KEY (services/offline-tokens.ts). */
  key_material: string;
  created_at: Date;
  /**
   * When it starts signing: its creation for the first key and an operator's rotation;
   * later than its creation for a key published ahead of a scheduled rotation (migration 0053).
   */
  signs_from: Date;
  /**
   * When it stops signing: null for the newest key (one at most, the partial unique index);
   * possibly in the future, the `signs_from` of the key published to replace it.
   */
  retired_at: Date | null;
}

export const tokenSigningKeysRepo = {
  /** The newest key, the one not yet given a successor (locked when `forUpdate`, inside a transaction). */
  async newest(q: Queryable, forUpdate = false): Promise<TokenSigningKeyRow | undefined> {
    return (await q.query<TokenSigningKeyRow>(`SELECT * FROM token_signing_keys WHERE retired_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`)).rows[0];
  },

  /** Sets when the newest key stops signing (now, or the instant its successor starts). */
  async retire(q: Queryable, kid: string, at: Date): Promise<void> {
    await q.query('UPDATE token_signing_keys SET retired_at = $2 WHERE kid = $1 AND retired_at IS NULL', [kid, at]);
  },

  /**
   * Every key stops signing at `at` (an operator's rotation): a key published ahead that has
   * not signed yet is deleted (no token of its can exist), the others are retired at `at`.
   */
  async retireAll(q: Queryable, at: Date): Promise<void> {
    await q.query('DELETE FROM token_signing_keys WHERE signs_from > $1', [at]);
    await q.query('UPDATE token_signing_keys SET retired_at = $1 WHERE retired_at IS NULL OR retired_at > $1', [at]);
  },

  /** Stores a new newest key unless another writer stored one first; returns the newest one. */
  async insertOrNewest(q: Queryable, row: TokenSigningKeyRow): Promise<TokenSigningKeyRow> {
    await q.query(
      `INSERT INTO token_signing_keys (kid, public_jwk, key_material, created_at, signs_from, retired_at) VALUES ($1, $2, $3, $4, $5, NULL)
       ON CONFLICT DO NOTHING`,
      [row.kid, row.public_jwk, row.key_material, row.created_at, row.signs_from],
    );
    return (await tokenSigningKeysRepo.newest(q))!;
  },

  /** Deletes every key retired by `at` (their tokens stop verifying); returns their kids. */
  async deleteRetired(q: Queryable, at: Date): Promise<string[]> {
    return (await q.query<{ kid: string }>('DELETE FROM token_signing_keys WHERE retired_at <= $1 RETURNING kid', [at])).rows.map((r) => r.kid);
  },

  /** The keys not retired by `since` (the newest, the one signing, those whose tokens may live), newest first. */
  async published(q: Queryable, since: Date): Promise<TokenSigningKeyRow[]> {
    return (
      await q.query<TokenSigningKeyRow>(
        'SELECT * FROM token_signing_keys WHERE retired_at IS NULL OR retired_at > $1 ORDER BY created_at DESC, kid',
        [since],
      )
    ).rows;
  },
};
