import type { Queryable } from '../db.ts';

/** One group of the queue: jobs of one status, kind and fiscal system (null: no transaction). */
export interface QueueDepthRow {
  status: string;
  kind: string;
  system: string | null;
  jobs: number;
  /** The earliest `run_at` among the group's jobs that are due and not started (null: none). */
  oldest_due: Date | null;
}

/**
 * The queue as the metrics show it (src/metrics): one grouped statement at scrape time.
 * Completed jobs are never read (they stay in the table for good): each arm of the union
 * matches one partial index exactly, so the statement reads only the open and dead jobs
 * (jobs_runnable_idx, jobs_leased_idx, jobs_queue_idx, jobs_dead_idx), and the fiscal
 * system comes from each job's transaction by its primary key. Its cost grows with the
 * backlog, not with the history.
 */
export const queueMetricsRepo = {
  async depth(q: Queryable, now: Date): Promise<QueueDepthRow[]> {
    const res = await q.query<{ status: string; kind: string; system: string | null; jobs: number; oldest_due: Date | string | null }>(
      `SELECT j.status, j.kind, t.system, count(*)::int AS jobs,
              min(j.run_at) FILTER (WHERE j.status <> 'processing' AND j.status <> 'dead' AND j.run_at <= $1) AS oldest_due
       FROM (
         SELECT status, kind, transaction_id, run_at FROM jobs WHERE status IN ('pending', 'failed')
         UNION ALL
         SELECT status, kind, transaction_id, run_at FROM jobs WHERE status = 'processing'
         UNION ALL
         SELECT status, kind, transaction_id, run_at FROM jobs
           WHERE queue_key IS NOT NULL AND status = 'waiting'
         UNION ALL
         SELECT status, kind, transaction_id, run_at FROM jobs WHERE status = 'dead'
       ) j
       LEFT JOIN transactions t ON t.id = j.transaction_id
       GROUP BY j.status, j.kind, t.system`,
      [now],
    );
    return res.rows.map((r) => ({ ...r, oldest_due: r.oldest_due === null ? null : new Date(r.oldest_due) }));
  },
};
