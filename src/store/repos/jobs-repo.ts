import { newId } from '../../core/ids.ts';
import { jobsInsertSql } from './job-rows.ts';
import type { Db, Queryable } from '../db.ts';

/**
 * The PostgreSQL-backed job queue (the only SQL for jobs).
 *
 * A job is enqueued in the same database transaction as the change that needs it
 * (transactional outbox): the transaction, its record and its submit job commit
 * together, or not at all. Workers claim runnable jobs with FOR UPDATE SKIP LOCKED, so
 * several worker processes never take the same job; a claim is a lease, and a job
 * whose lease ran out (its worker died) is claimed again. All times come from the
 * application clock, passed in, so tests drive them.
 *
 * Statuses (the spec's retry entry): pending (never tried) → processing → completed;
 * an attempt that fails → failed (waits for its retry) → processing …; after the last
 * attempt, or a permanent error → dead.
 */
/** `waiting`: a job of an ordered queue behind an unfinished earlier one (not claimable). */
export type JobStatus = 'waiting' | 'pending' | 'processing' | 'completed' | 'failed' | 'dead';

export interface JobRow {
  id: string;
  kind: string;
  account_id: string | null;
  transaction_id: string | null;
  payload: Record<string, unknown>;
  status: JobStatus;
  attempt: number;
  max_attempts: number;
  run_at: Date;
  locked_by: string | null;
  locked_until: Date | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  /** The ordered queue the job belongs to, if any. */
  queue_key: string | null;
  /** Its place in that queue (the record's chain sequence). */
  queue_seq: number | null;
}

export interface EnqueueInput {
  /** The job's id when the caller needs it before the insert (a delivery row names its job); else a new one. */
  id?: string;
  kind: string;
  accountId?: string | null;
  transactionId?: string | null;
  payload?: Record<string, unknown>;
  maxAttempts: number;
  runAt: Date;
  /**
   * An ordered queue (migration 0011): the job runs only after every job of the same key
   * with a lower `queueSeq` has finished (completed or dead). Submit jobs of a chain: the
   * key is the chain key. Such jobs enter `waiting`, and `promoteNext` wakes them in order.
   */
  queueKey?: string | null;
  queueSeq?: number | null;
  /** `waiting` (not runnable until `promoteNext` makes it so); default `pending`. New jobs of an ordered queue always wait. */
  waiting?: boolean;
}

/** How an attempt ends for a job (`finish`). */
export interface FinishState {
  status: 'completed' | 'failed' | 'dead' | 'pending' | 'waiting';
  runAt?: Date;
  error?: string | null;
  uncount?: boolean;
}

/** How a job ends once its transaction was decided by the authority (`settle`): completed, or dead with the refusal. */
export type JobSettlement = { status: 'completed' } | { status: 'dead'; error: string };

export interface ClaimOptions {
  kinds: readonly string[];
  workerId: string;
  now: Date;
  leaseMs: number;
  limit: number;
}

const RETURNING = 'id, kind, account_id, transaction_id, payload, status, attempt, max_attempts, run_at, locked_by, locked_until, last_error, created_at, updated_at, queue_key, queue_seq::float8 AS queue_seq';

/**
 * The claimable clause of a job `j`: due pending/failed, or processing with an expired
 * lease (its worker died). For a job of an ordered queue an expired lease is claimable only
 * when no earlier job of its queue is still active: the jobs a dead worker had adopted into
 * a batch (`adoptFollowers`) expire together with their head, and must be taken over by
 * whoever takes the head (it adopts them again), never run on their own beside it or
 * before it.
 */
const DUE = `(j.status IN ('pending', 'failed') AND j.run_at <= $NOW)`;
const EXPIRED = `(j.status = 'processing' AND j.locked_until < $NOW
       AND (j.queue_key IS NULL OR NOT EXISTS (
         SELECT 1 FROM jobs e WHERE e.queue_key = j.queue_key AND e.queue_seq < j.queue_seq
           AND e.status IN ('pending', 'failed', 'processing'))))`;
const CLAIMABLE = `(${DUE} OR ${EXPIRED})`;

/** Statuses of an ordered queue's jobs that hold the queue (a job that will run, or runs). */
const ACTIVE = `('pending', 'failed', 'processing')`;

export const jobsRepo = {
  /**
   * Jobs of the kinds by status, for one account and environment (through the job's
   * transaction: an engine's data_dir may hold a sandbox session's queue and then a
   * production one's, and each session counts its own).
   */
  async countByStatus(q: Queryable, scope: { accountId: string; environment: string }, kinds: readonly string[]): Promise<Record<string, number>> {
    const r = await q.query<{ status: string; n: string }>(
      `SELECT j.status, count(*)::text AS n FROM jobs j JOIN transactions t ON t.id = j.transaction_id
        WHERE j.account_id = $1 AND t.environment = $2 AND j.kind = ANY($3::text[]) GROUP BY j.status`,
      [scope.accountId, scope.environment, kinds],
    );
    return Object.fromEntries(r.rows.map((row) => [row.status, Number(row.n)]));
  },

  async enqueue(q: Queryable, input: EnqueueInput, now: Date): Promise<JobRow> {
    const values: unknown[] = [];
    const { sql } = jobsInsertSql([input], now, (v) => `$${values.push(v)}`);
    return (await q.query<JobRow>(`${sql} RETURNING ${RETURNING}`, values)).rows[0]!;
  },

  /** Enqueues several jobs in one statement; returns their ids in order. */
  async enqueueMany(q: Queryable, inputs: readonly EnqueueInput[], now: Date): Promise<string[]> {
    if (inputs.length === 0) return [];
    const values: unknown[] = [];
    const { ids, sql } = jobsInsertSql(inputs, now, (v) => `$${values.push(v)}`);
    await q.query(sql, values);
    return ids;
  },

  /**
   * Enqueues a scheduled job (kind `scheduled:…`) unless one is already waiting or running:
   * any number of nodes may call this at start; one instance exists.
   */
  async enqueueScheduled(q: Queryable, input: EnqueueInput, now: Date): Promise<void> {
    if (!input.kind.startsWith('scheduled:')) throw new Error(`not a scheduled job kind: ${input.kind}`);
    await q.query(
      `INSERT INTO jobs (id, kind, account_id, transaction_id, payload, status, attempt, max_attempts, run_at, created_at, updated_at)
       VALUES ($1, $2, NULL, NULL, $3, 'pending', 0, $4, $5, $6, $6)
       ON CONFLICT (kind) WHERE status IN ('pending', 'failed', 'processing') AND kind LIKE 'scheduled:%' DO NOTHING`,
      [newId(), input.kind, JSON.stringify(input.payload ?? {}), input.maxAttempts, input.runAt, now],
    );
  },

  /**
   * Claims up to `limit` runnable jobs: due pending/failed ones, and processing ones whose
   * lease expired (a dead worker's; of an ordered queue only the first active one, see
   * `CLAIMABLE`). Each claim counts as an attempt.
   */
  async claim(q: Queryable, o: ClaimOptions): Promise<JobRow[]> {
    // Two branches, each walking its own partial index in order (due jobs by run_at,
    // expired leases by locked_until): one query with an OR between them made PostgreSQL
    // read and sort every runnable job at each claim (18 ms with 20,000 queued, measured).
    // Expired leases first: their jobs are the oldest, and a backlog of due jobs must not
    // keep a dead worker's job waiting.
    const res = await q.query<JobRow>(
      `WITH due AS (
         SELECT j.id FROM jobs j
         WHERE ${DUE.replaceAll('$NOW', '$4')} AND j.kind = ANY($1::text[])
         ORDER BY j.run_at, j.id
         LIMIT $5
         FOR UPDATE SKIP LOCKED),
       expired AS (
         SELECT j.id FROM jobs j
         WHERE ${EXPIRED.replaceAll('$NOW', '$4')} AND j.kind = ANY($1::text[])
         ORDER BY j.locked_until
         LIMIT $5
         FOR UPDATE SKIP LOCKED)
       UPDATE jobs SET status = 'processing', attempt = attempt + 1, locked_by = $2, locked_until = $3::timestamptz, updated_at = $4
       WHERE id IN (SELECT id FROM (SELECT id FROM expired UNION ALL SELECT id FROM due) runnable LIMIT $5)
       RETURNING ${RETURNING}`,
      [o.kinds, o.workerId, new Date(o.now.getTime() + o.leaseMs), o.now, o.limit],
    );
    return res.rows;
  },

  /** Claims one given job if it is runnable now (the inline path of a create). */
  async claimById(q: Queryable, id: string, workerId: string, now: Date, leaseMs: number): Promise<JobRow | undefined> {
    const res = await q.query<JobRow>(
      `UPDATE jobs SET status = 'processing', attempt = attempt + 1, locked_by = $2, locked_until = $3::timestamptz, updated_at = $4
       WHERE id = (
         SELECT j.id FROM jobs j WHERE j.id = $1
           AND ${CLAIMABLE.replaceAll('$NOW', '$4')}
         FOR UPDATE SKIP LOCKED)
       RETURNING ${RETURNING}`,
      [id, workerId, new Date(now.getTime() + leaseMs), now],
    );
    return res.rows[0];
  },

  /**
   * Makes the first `waiting` job of an ordered queue `pending`, unless a job of the queue
   * is active (pending, failed or processing). Called after every change that may leave a
   * queue idle: a job of it ended (the worker, in the transaction that ends it), new jobs
   * were enqueued (the create, after its commit: new jobs of an ordered queue always enter
   * `waiting`), and by the worker's periodic sweep (`stalledQueues`).
   *
   * After a batch (`adoptFollowers`) a record that failed retriably is `failed` while later
   * ones of its batch went back to `waiting`: it must be retried before any of them starts,
   * and its own completion (or death) promotes them then. So a queue has at most one active
   * job outside a batch.
   *
   * Promotions of one queue are serialized by an advisory lock on its key, taken in a
   * statement of its own so that the check runs on a snapshot taken after the lock was
   * granted: whatever committed before sees or is seen, and no job waits forever. Appends
   * never take it (they decide nothing), so the worker and the create path no longer
   * queue behind each other on the chain head row.
   */
  async promoteNext(q: Queryable, queueKey: string, now: Date): Promise<void> {
    await q.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7340215002))', [queueKey]);
    await q.query(
      `UPDATE jobs SET status = 'pending', run_at = $2, updated_at = $2
       WHERE id = (SELECT id FROM jobs WHERE queue_key = $1 AND status = 'waiting' ORDER BY queue_seq LIMIT 1)
         AND NOT EXISTS (SELECT 1 FROM jobs WHERE queue_key = $1 AND status IN ${ACTIVE})`,
      [queueKey, now],
    );
  },

  /**
   * The queues holding `waiting` jobs and nothing active: a create that committed its jobs
   * but died before promoting them, or any other missed wake-up. The worker sweeps them now
   * and then; returns the queue keys it found.
   */
  async stalledQueues(q: Queryable, limit = 100): Promise<string[]> {
    const res = await q.query<{ queue_key: string }>(
      `SELECT DISTINCT w.queue_key FROM jobs w
       WHERE w.status = 'waiting' AND w.queue_key IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM jobs a WHERE a.queue_key = w.queue_key AND a.status IN ${ACTIVE})
       LIMIT $1`,
      [limit],
    );
    return res.rows.map((r) => r.queue_key);
  },

  /**
   * A batch: the job `head` (claimed, of an ordered queue) takes along the jobs that follow
   * it in its queue, so one request carries their records (`FiscalSystem.submitMany`). In
   * one statement it takes, in `queue_seq` order, the consecutive unfinished jobs after the
   * head that are `waiting`, or `processing` with an expired lease (a dead worker's batch,
   * see `CLAIMABLE`), whose transactions have the head's environment and sandbox mode, at
   * most `limit`; it stops at the first that does not qualify or is locked by someone else
   * (FOR UPDATE SKIP LOCKED), so the batch never has a gap in the chain. The adopted jobs
   * become `processing` under the head's lease (same worker, same `locked_until`), and the
   * adoption counts as an attempt, as a claim does; `finish` with `uncount` gives it back
   * when their records were not judged. Nothing is adopted once the head's lease is lost.
   * Jobs already finished (a record AEAT accepted in an earlier batch while an earlier one
   * waits for its retry) are not in the way: they are not in the queue any more.
   */
  async adoptFollowers(
    q: Queryable,
    head: Pick<JobRow, 'id' | 'kind' | 'queue_key' | 'queue_seq' | 'locked_by' | 'locked_until'>,
    o: { environment: string; sandboxMode: string; limit: number; now: Date },
  ): Promise<JobRow[]> {
    if (!head.queue_key || head.queue_seq === null || !head.locked_by || !head.locked_until || o.limit < 1) return [];
    const res = await q.query<JobRow>(
      `WITH cand AS (
         SELECT j.id, j.queue_seq,
                (j.kind = $3 AND (j.status = 'waiting' OR (j.status = 'processing' AND j.locked_until < $7))
                 AND t.environment = $4 AND COALESCE(t.sandbox_mode, 'stub') = $5) AS adoptable
         FROM jobs j LEFT JOIN transactions t ON t.id = j.transaction_id
         WHERE j.queue_key = $1 AND j.queue_seq > $2 AND j.status IN ('waiting', ${ACTIVE.slice(1, -1)})
           AND EXISTS (SELECT 1 FROM jobs h WHERE h.id = $8 AND h.status = 'processing' AND h.locked_by = $9)
         ORDER BY j.queue_seq
         LIMIT $6),
       locked AS (
         SELECT l.id FROM jobs l
         WHERE l.id IN (SELECT id FROM cand WHERE adoptable)
           AND (l.status = 'waiting' OR (l.status = 'processing' AND l.locked_until < $7))
         FOR UPDATE SKIP LOCKED),
       stop AS (
         SELECT min(queue_seq) AS seq FROM cand WHERE NOT adoptable OR id NOT IN (SELECT id FROM locked))
       UPDATE jobs SET status = 'processing', attempt = attempt + 1, locked_by = $9, locked_until = $10, updated_at = $7
       WHERE id IN (SELECT id FROM locked)
         AND ((SELECT seq FROM stop) IS NULL OR queue_seq < (SELECT seq FROM stop))
       RETURNING ${RETURNING}`,
      [head.queue_key, head.queue_seq, head.kind, o.environment, o.sandboxMode, o.limit, o.now, head.id, head.locked_by, head.locked_until],
    );
    return res.rows.sort((a, b) => (a.queue_seq ?? 0) - (b.queue_seq ?? 0));
  },

  /**
   * Ends an attempt. Only the worker holding the lease may: a worker that lost its lease
   * (it was too slow, another took the job over) gets false and must roll back.
   */
  async finish(
    q: Queryable,
    id: string,
    workerId: string,
    next: FinishState,
    now: Date,
  ): Promise<boolean> {
    // `uncount`: the attempt did not happen (flow control; a batch that was not judged), so
    // it does not use up one of the job's attempts. `waiting`: an adopted job handed back to
    // its queue, promoted in order again.
    const res = await q.query(
      `UPDATE jobs SET status = $3, run_at = COALESCE($4, run_at), last_error = COALESCE($5, last_error),
              locked_by = NULL, locked_until = NULL, updated_at = $6, attempt = attempt - $7
       WHERE id = $1 AND locked_by = $2 AND status = 'processing'`,
      [id, workerId, next.status, next.runAt ?? null, next.error ?? null, now, next.uncount ? 1 : 0],
    );
    return res.rowCount === 1;
  },

  /**
   * `finish` for many jobs of one worker in one statement (the jobs a batch adopted).
   * Returns how many were still held by this worker: fewer than given means a lease was lost.
   * One statement rather than one per job: besides the round trips, a per-job UPDATE could
   * be planned on the partial index of processing jobs (statistics taken while none was)
   * and scan every adopted job each time (10 ms a job with 20,000 adopted, measured).
   */
  async finishMany(
    q: Queryable,
    workerId: string,
    items: readonly { id: string; next: FinishState }[],
    now: Date,
  ): Promise<number> {
    if (items.length === 0) return 0;
    const rows = items.map(({ id, next }) => ({
      id, status: next.status, run_at: next.runAt?.toISOString() ?? null, error: next.error ?? null, uncount: next.uncount ? 1 : 0,
    }));
    const res = await q.query(
      `UPDATE jobs j SET status = v.status, run_at = COALESCE(v.run_at, j.run_at), last_error = COALESCE(v.error, j.last_error),
              locked_by = NULL, locked_until = NULL, updated_at = $3, attempt = j.attempt - v.uncount
       FROM json_to_recordset($1::json) AS v(id uuid, status text, run_at timestamptz, error text, uncount int)
       WHERE j.id = v.id AND j.locked_by = $2 AND j.status = 'processing'`,
      [JSON.stringify(rows), workerId, now],
    );
    return res.rowCount;
  },

  /**
   * Makes every waiting retry of an account due now (`pending`/`failed` jobs whose `run_at`
   * is later): the local host's catch-up after an outage (jobs/catch-up.ts).
   */
  async bringForward(q: Queryable, accountId: string, now: Date): Promise<number> {
    const r = await q.query(
      `UPDATE jobs SET run_at = $2, updated_at = $2
        WHERE account_id = $1 AND status IN ('pending', 'failed') AND run_at > $2`,
      [accountId, now],
    );
    return r.rowCount;
  },

  /**
   * Makes a transaction's waiting job of these kinds due now (one waiting for something that
   * just happened: a cancellation waiting for its original, jobs/tasks/submit.ts). A job in
   * flight is left to its worker.
   */
  async bringForwardFor(q: Queryable, transactionId: string, kinds: readonly string[], now: Date): Promise<number> {
    const r = await q.query(
      `UPDATE jobs SET run_at = $3, updated_at = $3
        WHERE transaction_id = $1 AND kind = ANY($2::text[]) AND status IN ('pending', 'failed') AND run_at > $3`,
      [transactionId, [...kinds], now],
    );
    return r.rowCount;
  },

  /**
   * A transaction's latest job of these kinds (its retry-queue entry), locked. The inbound
   * service locks it before the transaction's row, in the order a worker's finish takes them
   * (the job, then the transaction in the attempt's commit): a notification and the answer of
   * an attempt in flight then wait for each other instead of deadlocking.
   */
  async latestFor(q: Queryable, transactionId: string, kinds: readonly string[]): Promise<JobRow | undefined> {
    return (await q.query<JobRow>(
      `SELECT ${RETURNING} FROM jobs WHERE transaction_id = $1 AND kind = ANY($2::text[]) ORDER BY created_at DESC, id DESC LIMIT 1 FOR UPDATE`,
      [transactionId, [...kinds]],
    )).rows[0];
  },

  /**
   * Closes a transaction's latest job of these kinds (its retry-queue entry) once the
   * authority has decided the record by a later message (services/inbound.ts): `dead` with
   * the authority's refusal as its last error, or `completed` (an acceptance: nothing is
   * left to send). An entry still waiting for a retry will not run; a `completed` entry
   * becomes `dead` on a refusal, a `dead` one (its retries ran out although the authority
   * had the record) `completed` on an acceptance. An entry in flight (`processing`) is left
   * to its worker, which ends it the same way when its answer comes (jobs/tasks/submit.ts
   * `unlessSettledMeanwhile`): it is returned as it stands, for the events to name. Returns
   * the entry, or undefined (none). A closed entry of an ordered queue lets the queue's next
   * job go.
   */
  async settleLatest(
    q: Queryable, transactionId: string, kinds: readonly string[], next: JobSettlement, now: Date,
  ): Promise<JobRow | undefined> {
    const job = await jobsRepo.latestFor(q, transactionId, kinds);
    if (!job || job.status === 'processing') return job;
    return jobsRepo.settle(q, job, next, now);
  },

  /**
   * Ends a job as its transaction was decided (`settleLatest`, and a worker whose attempt
   * was overtaken by the authority's message): `dead` with the refusal as its last error,
   * or `completed`. A job of an ordered queue that was still waiting to run lets the
   * queue's next job go.
   */
  async settle(q: Queryable, job: JobRow, next: JobSettlement, now: Date): Promise<JobRow> {
    if (next.status === 'completed' && job.status === 'completed') return job;
    const res = await q.query<JobRow>(
      `UPDATE jobs SET status = $2, last_error = COALESCE($3, last_error), locked_by = NULL, locked_until = NULL, updated_at = $4
        WHERE id = $1 RETURNING ${RETURNING}`,
      [job.id, next.status, next.status === 'dead' ? next.error : null, now],
    );
    if (job.queue_key && ['pending', 'failed'].includes(job.status)) await jobsRepo.promoteNext(q, job.queue_key, now);
    return res.rows[0]!;
  },

  /** One job by id (any account: callers scope it). */
  async get(q: Queryable, id: string): Promise<JobRow | undefined> {
    return (await q.query<JobRow>(`SELECT ${RETURNING} FROM jobs WHERE id = $1`, [id])).rows[0];
  },

  async list(q: Queryable, accountId: string, kinds: readonly string[], status: JobStatus | undefined, limit: number, offset: number): Promise<{ rows: JobRow[]; total: number }> {
    const params: unknown[] = [accountId, [...kinds]];
    let where = 'account_id = $1 AND kind = ANY($2::text[])';
    if (status) {
      // The API's `pending` includes jobs waiting behind an earlier one of their chain.
      params.push(status === 'pending' ? ['pending', 'waiting'] : [status]);
      where += ` AND status = ANY($${params.length}::text[])`;
    }
    const [rows, count] = await Promise.all([
      q.query<JobRow>(`SELECT ${RETURNING} FROM jobs WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`, [...params, limit, offset]),
      q.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE ${where}`, params),
    ]);
    return { rows: rows.rows, total: count.rows[0]?.n ?? 0 };
  },

  /**
   * Counts per status of an account's jobs of these kinds: every one still waiting or running
   * (pending, waiting, processing, failed), whenever it was last touched, and those that
   * ended (completed, dead) since `since`. A backlog is a backlog however old: counted by
   * last touch, entries stuck while the workers were down (or behind a failing chain head)
   * fell out of the counts after a day, and the stats said the queue was empty.
   */
  async stats(q: Queryable, accountId: string, kinds: readonly string[], since: Date): Promise<Record<Exclude<JobStatus, 'waiting'>, number>> {
    const res = await q.query<{ status: JobStatus; n: number }>(
      `SELECT status, count(*)::int AS n FROM jobs
       WHERE account_id = $1 AND kind = ANY($2::text[]) AND (status NOT IN ('completed', 'dead') OR updated_at >= $3)
       GROUP BY status`,
      [accountId, [...kinds], since],
    );
    const out: Record<Exclude<JobStatus, 'waiting'>, number> = { pending: 0, processing: 0, completed: 0, failed: 0, dead: 0 };
    for (const r of res.rows) out[r.status === 'waiting' ? 'pending' : r.status] += r.n;
    return out;
  },
};

/** `promoteNext` in a transaction of its own (after a create's commit, and the worker's sweep). */
export const promoteQueue = (db: Db, queueKey: string, now: Date): Promise<void> =>
  db.transaction((tx) => jobsRepo.promoteNext(tx, queueKey, now));
