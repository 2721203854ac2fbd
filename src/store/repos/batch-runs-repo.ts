import type { Queryable } from '../db.ts';

/** The spec's Batch result counters (service-interface.md "Batch result"). */
export interface BatchCounters {
  batches_created: number;
  batches_retried: number;
  accepted: number;
  rejected: number;
  failed: number;
}

/** One processor run for one account and environment (migration 0010). */
export interface BatchRunRow extends BatchCounters {
  id: string;
  processor: string;
  account_id: string;
  environment: 'test' | 'live';
  trigger: 'manual' | 'scheduled';
  status: 'completed' | 'failed';
  errors_count: number;
  duration_ms: number;
  failure_rate: number;
  alert_triggered: boolean;
  requests: unknown[];
  errors: unknown[];
  started_at: Date;
  finished_at: Date;
}

/** Summed counters of a processor's runs in a window. */
export interface BatchRunTotals extends BatchCounters {
  processor: string;
}

const COLUMNS = [
  'id', 'processor', 'account_id', 'environment', 'trigger', 'status', 'batches_created', 'batches_retried', 'accepted', 'rejected',
  'failed', 'errors_count', 'duration_ms', 'failure_rate', 'alert_triggered', 'requests', 'errors', 'started_at', 'finished_at',
] as const satisfies readonly (keyof BatchRunRow)[];

export const batchRunsRepo = {
  async insert(q: Queryable, r: BatchRunRow): Promise<void> {
    const values = COLUMNS.map((c) => (c === 'requests' || c === 'errors' ? JSON.stringify(r[c]) : r[c]));
    await q.query(`INSERT INTO batch_runs (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`, values);
  },

  /** Counters per processor over the runs started since `since`. */
  async totals(q: Queryable, accountId: string, environment: string, since: Date): Promise<BatchRunTotals[]> {
    const res = await q.query<BatchRunTotals>(
      `SELECT processor,
              COALESCE(sum(batches_created), 0)::int AS batches_created, COALESCE(sum(batches_retried), 0)::int AS batches_retried,
              COALESCE(sum(accepted), 0)::int AS accepted, COALESCE(sum(rejected), 0)::int AS rejected, COALESCE(sum(failed), 0)::int AS failed
       FROM batch_runs WHERE account_id = $1 AND environment = $2 AND started_at >= $3
       GROUP BY processor`,
      [accountId, environment, since],
    );
    return res.rows;
  },

  async get(q: Queryable, id: string): Promise<BatchRunRow | undefined> {
    return (await q.query<BatchRunRow>('SELECT * FROM batch_runs WHERE id = $1', [id])).rows[0];
  },
};
