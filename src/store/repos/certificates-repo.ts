import type { Queryable } from '../db.ts';

/** A certificate as stored; `key_material` is sealed (see services/certificates.ts). */
export interface CertificateRow {
  id: string;
  account_id: string;
  certificate_id: string;
  subject_cn: string | null;
  issuer: string | null;
  not_before: Date;
  not_after: Date;
  nif: string | null;
  key_material: string;
  created_at: Date;
}

export const CERTIFICATE_ID_UNIQUE = 'certificates_account_certificate_id_key';

/**
 * The locations of account `$1` that name certificate `$2` (`certificate_ref`: the location
 * service resolves it through the location's system's `certificateFields`, migration 0018).
 */
const REFERENCING = 'account_id = $1 AND certificate_ref = $2';

/** A certificate that a notice is due for. */
export interface ExpiryNotice {
  account_id: string;
  certificate_id: string;
  subject_cn: string | null;
  nif: string | null;
  not_after: Date;
}

export const certificatesRepo = {
  /** The account's (not deleted) locations that reference a certificate. */
  async referencingLocations(q: Queryable, accountId: string, certificateId: string): Promise<{ id: string; name: string; tax_id: string | null }[]> {
    return (await q.query<{ id: string; name: string; tax_id: string | null }>(
      `SELECT id, name, tax_id FROM locations WHERE ${REFERENCING} AND deleted_at IS NULL ORDER BY created_at`,
      [accountId, certificateId],
    )).rows;
  },

  /**
   * Marks, once each, the certificates that expire within the window (not yet expired)
   * and returns them: the `certificate.expiring` notices due now.
   */
  async takeExpiring(q: Queryable, now: Date, until: Date): Promise<ExpiryNotice[]> {
    return (await q.query<ExpiryNotice>(
      `UPDATE certificates SET expiring_notified_at = $1
       WHERE expiring_notified_at IS NULL AND not_after > $1 AND not_after <= $2
       RETURNING account_id, certificate_id, subject_cn, nif, not_after`,
      [now, until],
    )).rows;
  },

  /** Marks, once each, the certificates that have expired and returns them. */
  async takeExpired(q: Queryable, now: Date): Promise<ExpiryNotice[]> {
    return (await q.query<ExpiryNotice>(
      `UPDATE certificates SET expired_notified_at = $1
       WHERE expired_notified_at IS NULL AND not_after <= $1
       RETURNING account_id, certificate_id, subject_cn, nif, not_after`,
      [now],
    )).rows;
  },

  /**
   * Stores the certificate and sets cert_expiry on the account's locations that
   * reference it, in the caller's transaction. A duplicate certificate_id fails on the
   * unique index (CERTIFICATE_ID_UNIQUE).
   */
  async insert(q: Queryable, c: CertificateRow): Promise<void> {
    await q.query(
      `INSERT INTO certificates (id, account_id, certificate_id, subject_cn, issuer, not_before, not_after, nif, key_material, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [c.id, c.account_id, c.certificate_id, c.subject_cn, c.issuer, c.not_before, c.not_after, c.nif, c.key_material, c.created_at],
    );
    await q.query(`UPDATE locations SET cert_expiry = $3 WHERE ${REFERENCING}`, [c.account_id, c.certificate_id, c.not_after]);
  },

  async get(q: Queryable, accountId: string, certificateId: string): Promise<CertificateRow | undefined> {
    return (
      await q.query<CertificateRow>('SELECT * FROM certificates WHERE account_id = $1 AND certificate_id = $2', [accountId, certificateId])
    ).rows[0];
  },

  /** The account's certificates, newest first (metadata and sealed material). */
  async list(q: Queryable, accountId: string): Promise<CertificateRow[]> {
    return (
      await q.query<CertificateRow>('SELECT * FROM certificates WHERE account_id = $1 ORDER BY created_at DESC, certificate_id', [accountId])
    ).rows;
  },

  /** Deletes it and clears cert_expiry on the locations that referenced it. */
  async remove(q: Queryable, accountId: string, certificateId: string): Promise<boolean> {
    const res = await q.query('DELETE FROM certificates WHERE account_id = $1 AND certificate_id = $2', [accountId, certificateId]);
    if (res.rowCount !== 1) return false;
    await q.query(`UPDATE locations SET cert_expiry = NULL WHERE ${REFERENCING}`, [accountId, certificateId]);
    return true;
  },
};
