import type { Queryable } from '../db.ts';

export interface SandboxCertificateRow {
  account_id: string;
  certificate_pem: string;
  /** Sealed with MASTER_KEY (services/signing-keys.ts). */
  key_material: string;
  created_at: Date;
}

export const sandboxCertificatesRepo = {
  async get(q: Queryable, accountId: string): Promise<SandboxCertificateRow | undefined> {
    return (await q.query<SandboxCertificateRow>('SELECT * FROM sandbox_certificates WHERE account_id = $1', [accountId])).rows[0];
  },

  /** Stores the account's certificate unless another request stored one first; returns the one kept. */
  async insertOrGet(q: Queryable, row: SandboxCertificateRow): Promise<SandboxCertificateRow> {
    await q.query(
      `INSERT INTO sandbox_certificates (account_id, certificate_pem, key_material, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (account_id) DO NOTHING`,
      [row.account_id, row.certificate_pem, row.key_material, row.created_at],
    );
    return (await sandboxCertificatesRepo.get(q, row.account_id))!;
  },
};
