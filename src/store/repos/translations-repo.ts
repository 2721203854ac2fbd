import { isUuid } from '../../core/ids.ts';
import type { Queryable } from '../db.ts';

export type TranslationCategory = 'validation' | 'auth' | 'submission' | 'network' | 'configuration' | 'unknown';
export type TranslationSeverity = 'error' | 'warning' | 'info';

/** The cache key: system is '' when the caller named none; code trimmed and upper-cased. */
export interface TranslationKey {
  country: string;
  system: string;
  error_code: string;
  message_hash: string;
}

export interface CachedTranslationRow extends TranslationKey {
  original_message: string | null;
  translation: string;
  category: TranslationCategory;
  severity: TranslationSeverity;
  retriable: boolean;
  user_message: string;
  model: string;
  created_at: Date;
}

const KEY_WHERE = 'country = $1 AND system = $2 AND error_code = $3 AND message_hash = $4';
const keyParams = (k: TranslationKey) => [k.country, k.system, k.error_code, k.message_hash];

export const translationsRepo = {
  async getCached(q: Queryable, key: TranslationKey): Promise<CachedTranslationRow | undefined> {
    return (await q.query<CachedTranslationRow>(`SELECT * FROM error_translations WHERE ${KEY_WHERE}`, keyParams(key))).rows[0];
  },

  /**
   * Stores an AI answer once. A concurrent writer of the same key loses quietly (the
   * primary key settles the race); returns whether this call inserted the row.
   */
  async insertCached(q: Queryable, r: CachedTranslationRow): Promise<boolean> {
    const res = await q.query(
      `INSERT INTO error_translations (country, system, error_code, message_hash, original_message, translation, category, severity, retriable, user_message, model, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (country, system, error_code, message_hash) DO NOTHING`,
      [...keyParams(r), r.original_message, r.translation, r.category, r.severity, r.retriable, r.user_message, r.model, r.created_at],
    );
    return res.rowCount === 1;
  },

  /**
   * Is the transaction still waiting for the translation of this error? True while its
   * `error_message` is null and its current `response_payload.submit_error.error_code`
   * is this code (a newer failure, or a success, makes an older translation job moot).
   */
  async awaitsErrorMessage(q: Queryable, transactionId: string, errorCode: string): Promise<boolean> {
    if (!isUuid(transactionId)) return false;
    const res = await q.query(
      `SELECT 1 FROM transactions
       WHERE id = $1 AND error_message IS NULL AND response_payload -> 'submit_error' ->> 'error_code' = $2`,
      [transactionId, errorCode],
    );
    return res.rows.length === 1; // rows, not rowCount: PGlite counts only changed rows
  },

  /**
   * Fills `transactions.error_message` with the translated text, under the same
   * condition as `awaitsErrorMessage` (checked again here, inside the job's commit, so
   * a failure recorded meanwhile is never overwritten with a stale translation).
   * Returns whether the row was changed.
   */
  async setTransactionErrorMessage(q: Queryable, transactionId: string, errorCode: string, text: string, at: Date): Promise<boolean> {
    if (!isUuid(transactionId)) return false;
    const res = await q.query(
      `UPDATE transactions SET error_message = $3, updated_at = $4
       WHERE id = $1 AND error_message IS NULL AND response_payload -> 'submit_error' ->> 'error_code' = $2`,
      [transactionId, errorCode, text, at],
    );
    return res.rowCount === 1;
  },
};
