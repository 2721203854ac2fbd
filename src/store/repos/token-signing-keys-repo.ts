import type { Queryable } from '../db.ts';

export interface TokenSigningKeyRow {
  /** RFC 7638 thumbprint of the public JWK. */
  kid: string;
  /** The public key as a JWK (JSON text): what GET /management/v1/keys publishes. */
  public_jwk: string;
  /** The PKCS#8 private key PEM, sealed with MASTER_KEY (services/offline-tokens.ts). */
  key_material: string;
  created_at: Date;
  /** Null for the one key that signs now. */
  retired_at: Date | null;
}

export const tokenSigningKeysRepo = {
  /** The key that signs now (locked when `forUpdate`, inside a transaction). */
  async current(q: Queryable, forUpdate = false): Promise<TokenSigningKeyRow | undefined> {
    return (await q.query<TokenSigningKeyRow>(`SELECT * FROM token_signing_keys WHERE retired_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`)).rows[0];
  },

  async retire(q: Queryable, kid: string, at: Date): Promise<void> {
    await q.query('UPDATE token_signing_keys SET retired_at = $2 WHERE kid = $1 AND retired_at IS NULL', [kid, at]);
  },

  /** Stores a new current key unless another writer stored one first; returns the current one. */
  async insertOrCurrent(q: Queryable, row: TokenSigningKeyRow): Promise<TokenSigningKeyRow> {
    await q.query(
      `INSERT INTO token_signing_keys (kid, public_jwk, key_material, created_at, retired_at) VALUES ($1, $2, $3, $4, NULL)
       ON CONFLICT DO NOTHING`,
      [row.kid, row.public_jwk, row.key_material, row.created_at],
    );
    return (await tokenSigningKeysRepo.current(q))!;
  },

  /** Deletes every retired key (their tokens stop verifying); returns their kids. */
  async deleteRetired(q: Queryable): Promise<string[]> {
    return (await q.query<{ kid: string }>('DELETE FROM token_signing_keys WHERE retired_at IS NOT NULL RETURNING kid')).rows.map((r) => r.kid);
  },

  /** The current key and those retired after `since`, newest first. */
  async published(q: Queryable, since: Date): Promise<TokenSigningKeyRow[]> {
    return (
      await q.query<TokenSigningKeyRow>(
        'SELECT * FROM token_signing_keys WHERE retired_at IS NULL OR retired_at > $1 ORDER BY created_at DESC, kid',
        [since],
      )
    ).rows;
  },
};
