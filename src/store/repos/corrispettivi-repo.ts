import type { Queryable } from '../db.ts';
import { isUniqueViolation } from '../db.ts';

/**
 * Italy's daily takings submissions (migration 0019; the Documento Commerciale plug-in's
 * corrispettivi): one row per location, environment, register and Italian day. Accepted and rejected rows
 * are final: nothing here changes them again, and their xml is never rewritten.
 */
export type CorrispettiviStatus = 'pending' | 'sent' | 'accepted' | 'rejected';

export interface CorrispettiviRow {
  id: string;
  account_id: string;
  environment: 'test' | 'live';
  location_id: string;
  matricola: string;
  /** YYYY-MM-DD. */
  day: string;
  progressivo: number;
  mode: 'stub' | 'authority';
  xml: string;
  documents: number;
  status: CorrispettiviStatus;
  attempts: number;
  next_attempt_at: Date | null;
  claimed_until: Date | null;
  id_operazione: string | null;
  code: string | null;
  message: string | null;
  authority_code: string | null;
  authority_message: string | null;
  sent_at: Date | null;
  answered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A day of a location with documents (transactions of the system) and nothing final yet. */
export interface OpenDay {
  location_id: string;
  day: string;
}

const COLUMNS = `id, account_id, environment, location_id, matricola, to_char(day, 'YYYY-MM-DD') AS day, progressivo, mode, xml,
  documents, status, attempts, next_attempt_at, claimed_until, id_operazione, code, message, authority_code, authority_message,
  sent_at, answered_at, created_at, updated_at`;
const fix = (r: CorrispettiviRow | undefined): CorrispettiviRow | undefined => (r ? { ...r, progressivo: Number(r.progressivo) } : r);
/** The Italian calendar day of a stored instant. */
const ROME_DAY = `to_char((t.created_at AT TIME ZONE 'Europe/Rome')::date, 'YYYY-MM-DD')`;

export interface Outcome {
  status: 'pending' | 'accepted' | 'rejected';
  nextAttemptAt: Date | null;
  idOperazione: string | null;
  code: string | null;
  message: string | null;
  authorityCode: string | null;
  authorityMessage: string | null;
}

export const corrispettiviRepo = {
  async get(q: Queryable, k: { locationId: string; environment: string; matricola: string; day: string }): Promise<CorrispettiviRow | undefined> {
    const res = await q.query<CorrispettiviRow>(
      `SELECT ${COLUMNS} FROM corrispettivi_submissions WHERE location_id = $1 AND environment = $2 AND matricola = $3 AND day = $4::date`,
      [k.locationId, k.environment, k.matricola, k.day],
    );
    return fix(res.rows[0]);
  },

  async listForLocation(q: Queryable, locationId: string, environment: string): Promise<CorrispettiviRow[]> {
    const res = await q.query<CorrispettiviRow>(
      `SELECT ${COLUMNS} FROM corrispettivi_submissions WHERE location_id = $1 AND environment = $2 ORDER BY day, matricola`, [locationId, environment]);
    return res.rows.map((r) => fix(r)!);
  },

  /**
   * The days before `before` (the start of today in Rome) on which a location of the scope
   * issued documents of `system`, and whose submission is neither final nor waiting for a
   * later attempt (nor being sent by a live run), oldest first.
   */
  async openDays(q: Queryable, s: { accountId: string; environment: string; system: string; before: Date; now: Date }): Promise<OpenDay[]> {
    const res = await q.query<OpenDay>(
      `SELECT d.location_id, d.day FROM (
         SELECT t.location_id, ${ROME_DAY} AS day FROM transactions t
         WHERE t.system = $3 AND t.account_id = $1 AND t.environment = $2 AND t.created_at < $4
         GROUP BY 1, 2) d
       WHERE NOT EXISTS (
         SELECT 1 FROM corrispettivi_submissions c
         WHERE c.location_id = d.location_id AND c.environment = $2 AND c.day = d.day::date
           AND (c.status IN ('accepted', 'rejected')
                OR (c.status = 'pending' AND c.next_attempt_at > $5)
                OR (c.status = 'sent' AND c.claimed_until > $5)))
       ORDER BY d.day, d.location_id`,
      [s.accountId, s.environment, s.system, s.before, s.now],
    );
    return res.rows;
  },

  /** The scopes with open days (the daily run visits only these). */
  async scopesWithOpenDays(q: Queryable, s: { system: string; before: Date; now: Date }): Promise<Array<{ account_id: string; environment: 'test' | 'live' }>> {
    const res = await q.query<{ account_id: string; environment: 'test' | 'live' }>(
      `SELECT DISTINCT d.account_id, d.environment FROM (
         SELECT t.account_id, t.environment, t.location_id, ${ROME_DAY} AS day FROM transactions t
         WHERE t.system = $1 AND t.created_at < $2
         GROUP BY 1, 2, 3, 4) d
       WHERE NOT EXISTS (
         SELECT 1 FROM corrispettivi_submissions c
         WHERE c.location_id = d.location_id AND c.environment = d.environment AND c.day = d.day::date
           AND (c.status IN ('accepted', 'rejected')
                OR (c.status = 'pending' AND c.next_attempt_at > $3)
                OR (c.status = 'sent' AND c.claimed_until > $3)))
       ORDER BY 1, 2`,
      [s.system, s.before, s.now],
    );
    return res.rows;
  },

  /** The day's transactions of a location (the rows the totals are made of). */
  async dayTransactions<T>(q: Queryable, s: { locationId: string; environment: string; system: string; from: Date; to: Date }): Promise<T[]> {
    const res = await q.query<T>(
      `SELECT type, normalized, created_at, sandbox_mode FROM transactions
       WHERE location_id = $1 AND environment = $2 AND system = $3 AND created_at >= $4 AND created_at < $5
       ORDER BY created_at, id`,
      [s.locationId, s.environment, s.system, s.from, s.to],
    );
    return res.rows.map((r) => {
      const row = r as Record<string, unknown>;
      return (typeof row.normalized === 'string' ? { ...row, normalized: JSON.parse(row.normalized) } : row) as T;
    });
  },

  /** The register's next Progressivo (1 for its first file). */
  async nextProgressivo(q: Queryable, k: { locationId: string; environment: string; matricola: string }): Promise<number> {
    const res = await q.query<{ n: string | number }>(
      `SELECT COALESCE(MAX(progressivo), 0) + 1 AS n FROM corrispettivi_submissions WHERE location_id = $1 AND environment = $2 AND matricola = $3`,
      [k.locationId, k.environment, k.matricola],
    );
    return Number(res.rows[0]!.n);
  },

  /**
   * Inserts a new day already claimed (`sent`, until `claimedUntil`). Undefined when another
   * run created the day (or took its Progressivo) first: that run sends it.
   */
  async insertClaimed(q: Queryable, r: {
    id: string; accountId: string; environment: string; locationId: string; matricola: string; day: string; progressivo: number;
    mode: 'stub' | 'authority'; xml: string; documents: number; now: Date; claimedUntil: Date;
  }): Promise<CorrispettiviRow | undefined> {
    try {
      const res = await q.query<CorrispettiviRow>(
        `INSERT INTO corrispettivi_submissions (id, account_id, environment, location_id, matricola, day, progressivo, mode, xml, documents,
           status, attempts, claimed_until, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6::date, $7, $8, $9, $10, 'sent', 0, $12, $11, $11)
         ON CONFLICT DO NOTHING
         RETURNING ${COLUMNS}`,
        [r.id, r.accountId, r.environment, r.locationId, r.matricola, r.day, r.progressivo, r.mode, r.xml, r.documents, r.now, r.claimedUntil],
      );
      return fix(res.rows[0]);
    } catch (err) {
      if (isUniqueViolation(err)) return undefined;
      throw err;
    }
  },

  /**
   * Claims an existing day for sending: a pending one that is due, or one left `sent` by a
   * run that died (its claim lapsed). Final rows are never claimed.
   */
  async claim(q: Queryable, id: string, now: Date, claimedUntil: Date): Promise<CorrispettiviRow | undefined> {
    const res = await q.query<CorrispettiviRow>(
      `UPDATE corrispettivi_submissions SET status = 'sent', claimed_until = $3, updated_at = $2
       WHERE id = $1 AND ((status = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= $2))
                          OR (status = 'sent' AND claimed_until <= $2))
       RETURNING ${COLUMNS}`,
      [id, now, claimedUntil],
    );
    return fix(res.rows[0]);
  },

  /** Records an attempt's outcome on a claimed row (only a `sent` one: final rows never change). */
  async settle(q: Queryable, id: string, o: Outcome, now: Date): Promise<CorrispettiviRow | undefined> {
    const res = await q.query<CorrispettiviRow>(
      `UPDATE corrispettivi_submissions SET status = $3, attempts = attempts + 1, next_attempt_at = $4, claimed_until = NULL,
         id_operazione = COALESCE($5, id_operazione), code = $6, message = $7, authority_code = $8, authority_message = $9,
         sent_at = COALESCE(sent_at, $2), answered_at = $2, updated_at = $2
       WHERE id = $1 AND status = 'sent'
       RETURNING ${COLUMNS}`,
      [id, now, o.status, o.nextAttemptAt, o.idOperazione, o.code, o.message, o.authorityCode, o.authorityMessage],
    );
    return fix(res.rows[0]);
  },
};
