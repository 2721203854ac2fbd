/**
 * The embedded engine's telemetry outbox (migration 0030): data points kept in the local
 * store until the service takes them (engine/telemetry.ts), capped, with the count of
 * points dropped to keep the cap.
 */
import type { Queryable } from '../db.ts';

export const engineTelemetryRepo = {
  /** Keeps a point; drops the oldest beyond `max` and counts them. Answers how many were dropped. */
  async keep(tx: Queryable, point: unknown, max: number): Promise<number> {
    await tx.query('INSERT INTO engine_telemetry (point) VALUES ($1)', [JSON.stringify(point)]);
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

  /** The oldest points, oldest first (by the bigint column: the text alias would order '10' before '9'). */
  async oldest<P>(q: Queryable, limit: number): Promise<{ s: string; point: P }[]> {
    return (await q.query<{ s: string; point: P }>('SELECT seq::text AS s, point FROM engine_telemetry ORDER BY seq LIMIT $1', [limit])).rows;
  },

  /** Forgets the points up to `seq` (sent, or refused for good). */
  async forgetThrough(q: Queryable, seq: string): Promise<void> {
    await q.query('DELETE FROM engine_telemetry WHERE seq <= $1::bigint', [seq]);
  },

  async size(q: Queryable): Promise<{ points: number; dropped: number }> {
    const r = await q.query<{ points: string; dropped: string | null }>(
      'SELECT (SELECT count(*) FROM engine_telemetry)::text AS points, (SELECT dropped FROM engine_telemetry_dropped)::text AS dropped',
    );
    return { points: Number(r.rows[0]?.points ?? 0), dropped: Number(r.rows[0]?.dropped ?? 0) };
  },
};
