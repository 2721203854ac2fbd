import type { Queryable } from '../db.ts';
import { isUniqueViolation } from '../db.ts';

/**
 * Portugal's monthly SAF-T (PT) files (migration 0021; the Portuguese plug-in's month file):
 * one per location, environment and Lisbon calendar month, written once when the month
 * is produced and never changed; and the reads that produce them (the month's stored
 * records with their transactions).
 */
export interface SaftFileRow {
  id: string;
  account_id: string;
  environment: 'test' | 'live';
  location_id: string;
  /** YYYY-MM. */
  period: string;
  file_name: string;
  /** The file, Windows-1252, as produced. */
  content: Buffer;
  documents: number;
  total_debit: string;
  total_credit: string;
  run_id: string | null;
  created_at: Date;
}

/** A stored record of the system with what its transaction was built from. */
export interface SaftRecordRow {
  kind: 'record' | 'cancellation';
  body: string;
  normalized: unknown;
}

/** A closed month of a location with documents and no file yet. */
export interface OpenSaftMonth {
  location_id: string;
  period: string;
  /** Its documents (transactions that issued one). */
  documents: number;
}

/** The Lisbon calendar month of a stored instant. */
const LISBON_MONTH = `to_char(t.created_at AT TIME ZONE 'Europe/Lisbon', 'YYYY-MM')`;

const fix = (r: SaftFileRow | undefined): SaftFileRow | undefined =>
  r ? { ...r, content: Buffer.from(r.content as Uint8Array), documents: Number(r.documents) } : r;

/**
 * Months with documents (transactions of the system before `before` that issued a
 * document: not a cancellation, which only changes the status of one, and with a real
 * record) and no file.
 */
const OPEN_MONTHS = `
  SELECT d.account_id, d.environment, d.location_id, d.period, d.documents FROM (
    SELECT t.account_id, t.environment, t.location_id, ${LISBON_MONTH} AS period, count(*) AS documents FROM transactions t
    WHERE t.system = $1 AND t.created_at < $2 AND t.type <> 'cancellation' SCOPE
      AND EXISTS (SELECT 1 FROM fiscal_records r WHERE r.transaction_id = t.id AND r.kind = 'record' AND NOT r.placeholder)
    GROUP BY 1, 2, 3, 4) d
  WHERE NOT EXISTS (
    SELECT 1 FROM saft_files f WHERE f.location_id = d.location_id AND f.environment = d.environment AND f.period = d.period)`;

export const saftFilesRepo = {
  async get(q: Queryable, k: { locationId: string; environment: string; period: string }): Promise<SaftFileRow | undefined> {
    const res = await q.query<SaftFileRow>(
      'SELECT * FROM saft_files WHERE location_id = $1 AND environment = $2 AND period = $3',
      [k.locationId, k.environment, k.period],
    );
    return fix(res.rows[0]);
  },

  /**
   * Keeps a produced file. False when the month already has one (another run produced it
   * first): the stored one stands, never replaced.
   */
  async insert(q: Queryable, r: {
    id: string; accountId: string; environment: string; locationId: string; period: string; fileName: string; content: Buffer;
    documents: number; totalDebit: string; totalCredit: string; runId: string | null; now: Date;
  }): Promise<boolean> {
    try {
      const res = await q.query(
        `INSERT INTO saft_files (id, account_id, environment, location_id, period, file_name, content, documents, total_debit, total_credit, run_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT DO NOTHING`,
        [r.id, r.accountId, r.environment, r.locationId, r.period, r.fileName, r.content, r.documents, r.totalDebit, r.totalCredit, r.runId, r.now],
      );
      return res.rowCount === 1;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  },

  /**
   * The location's records of the system in one environment: documents created in
   * [`from`, `to`), and cancellations created from `from` on (they change the status of a
   * document they name). The caller widens the range a little and keeps the documents of
   * the month by their own InvoiceDate. Placeholder records are left out.
   */
  async records(q: Queryable, s: { locationId: string; environment: string; system: string; from: Date; to: Date }): Promise<SaftRecordRow[]> {
    const res = await q.query<SaftRecordRow>(
      `SELECT r.kind, r.body, t.normalized FROM fiscal_records r JOIN transactions t ON t.id = r.transaction_id
       WHERE t.location_id = $1 AND t.environment = $2 AND r.system = $3 AND NOT r.placeholder
         AND ((r.kind = 'record' AND r.created_at >= $4 AND r.created_at < $5) OR (r.kind = 'cancellation' AND r.created_at >= $4))
       ORDER BY r.created_at, r.id`,
      [s.locationId, s.environment, s.system, s.from, s.to],
    );
    return res.rows.map((row) => (typeof row.normalized === 'string' ? { ...row, normalized: JSON.parse(row.normalized) } : row));
  },

  /**
   * The months before `before` (the start of the current Lisbon month) in which a location
   * of the scope issued documents of `system` and that have no file yet, oldest first.
   */
  async openMonths(q: Queryable, s: { accountId: string; environment: string; system: string; before: Date }): Promise<OpenSaftMonth[]> {
    const res = await q.query<OpenSaftMonth>(
      `SELECT location_id, period, documents FROM (${OPEN_MONTHS.replace('SCOPE', 'AND t.account_id = $3 AND t.environment = $4')}) m ORDER BY period, location_id`,
      [s.system, s.before, s.accountId, s.environment],
    );
    return res.rows.map((r) => ({ ...r, documents: Number(r.documents) }));
  },

  /** The scopes with open months (the monthly run visits only these). */
  async scopesWithOpenMonths(q: Queryable, s: { system: string; before: Date }): Promise<Array<{ account_id: string; environment: 'test' | 'live' }>> {
    const res = await q.query<{ account_id: string; environment: 'test' | 'live' }>(
      `SELECT DISTINCT account_id, environment FROM (${OPEN_MONTHS.replace('SCOPE', '')}) m ORDER BY 1, 2`,
      [s.system, s.before],
    );
    return res.rows;
  },
};
