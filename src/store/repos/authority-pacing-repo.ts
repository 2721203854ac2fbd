import type { Queryable } from '../db.ts';

/**
 * The authorities' wait-before-sending times (migration 0016; countries/types.ts
 * `AuthorityPacing`). One row per key, moved forward only.
 */
export const authorityPacingRepo = {
  async notBefore(q: Queryable, key: string): Promise<Date | null> {
    const res = await q.query<{ not_before: Date }>('SELECT not_before FROM authority_pacing WHERE pacing_key = $1', [key]);
    return res.rows[0]?.not_before ?? null;
  },

  /**
   * Records `until` unless a later time is already there (two workers told different waits
   * keep the longer one). A time that would not move the row writes nothing.
   */
  async hold(q: Queryable, key: string, until: Date): Promise<void> {
    await q.query(
      `INSERT INTO authority_pacing (pacing_key, not_before) VALUES ($1, $2)
       ON CONFLICT (pacing_key) DO UPDATE SET not_before = EXCLUDED.not_before
       WHERE authority_pacing.not_before < EXCLUDED.not_before`,
      [key, until],
    );
  },
};
