/**
 * The embedded engine's telemetry outbox (migration 0030): data points kept in the local
 * store until the service takes them (engine/telemetry.ts), capped, with the count of
 * points dropped to keep the cap.
 */
import type { Queryable } from '../db.ts';

export const engineTelemetryRepo = {
  /**
   * Keeps a point of `owner` (the session that took it: account, environment, agent); drops
   * the oldest beyond `max` (all owners: the cap is the data_dir's) and counts them.
   * Answers how many were dropped.
   */
  async keep(tx: Queryable, point: unknown, max: number, owner: string): Promise<number> {
    await tx.query('INSERT INTO engine_telemetry (point, owner) VALUES ($1, $2)', [JSON.stringify(point), owner]);
    const over = await tx.query<{ seq: string }>(
      'DELETE FROM engine_telemetry WHERE seq IN (SELECT seq FROM engine_telemetry ORDER BY seq DESC OFFSET $1) RETURNING seq', [max],
    );
    if (over.rowCount > 0) {
      await tx.query(
        `INSERT INTO engine_telemetry_dropped (id, dropped) VALUES (true, $1)
         ON CONFLICT (id) DO UPDATE SET dropped = engine_telemetry_dropped.dropped + $1`, [over.rowCount],
      );
    }
    return over.rowCount;
  },

  /**
   * The oldest points of `owner` (and those kept before points had one), oldest first (by
   * the bigint column: the text alias would order '10' before '9').
   */
  async oldest<P>(q: Queryable, limit: number, owner: string): Promise<{ s: string; point: P }[]> {
    return (await q.query<{ s: string; point: P }>(
      'SELECT seq::text AS s, point FROM engine_telemetry WHERE owner = $2 OR owner IS NULL ORDER BY seq LIMIT $1', [limit, owner],
    )).rows;
  },

  /** Forgets the points of `owner` up to `seq` (sent, or refused for good); other owners' stay. */
  async forgetThrough(q: Queryable, seq: string, owner: string): Promise<void> {
    await q.query('DELETE FROM engine_telemetry WHERE seq <= $1::bigint AND (owner = $2 OR owner IS NULL)', [seq, owner]);
  },

  async size(q: Queryable): Promise<{ points: number; dropped: number }> {
    const r = await q.query<{ points: string; dropped: string | null }>(
      'SELECT (SELECT count(*) FROM engine_telemetry)::text AS points, (SELECT dropped FROM engine_telemetry_dropped)::text AS dropped',
    );
    return { points: Number(r.rows[0]?.points ?? 0), dropped: Number(r.rows[0]?.dropped ?? 0) };
  },
};
