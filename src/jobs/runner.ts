import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { newId } from '../core/ids.ts';
import type { Db, Queryable } from '../store/db.ts';
import { jobsRepo, promoteQueue, type FinishState, type JobRow } from './queue.ts';

/**
 * What a handler decides about one attempt. `commit` runs in the same database
 * transaction that records the job's new state, so the effect of an attempt (a status
 * change, an event) and the job's bookkeeping land together or not at all.
 */
export type AttemptOutcome =
  | { outcome: 'completed'; commit?: (tx: Queryable) => Promise<void> }
  | { outcome: 'retry'; error: string; runAt: Date; commit?: (tx: Queryable) => Promise<void> }
  /** Not attempted after all (flow control): back to pending at `runAt`, the attempt not counted. */
  | { outcome: 'defer'; runAt: Date; commit?: (tx: Queryable) => Promise<void> }
  | { outcome: 'dead'; error: string; commit?: (tx: Queryable) => Promise<void> };

/**
 * What became of a job the handler adopted (jobs/queue.ts `adoptFollowers`): an outcome
 * of its own, or `release`: not judged (the request failed as a whole, or an earlier
 * record of the batch waits for its retry), back to `waiting` in its queue with the
 * attempt not counted.
 */
export type FollowerOutcome =
  | Exclude<AttemptOutcome, { outcome: 'defer' }>
  | { outcome: 'release'; commit?: (tx: Queryable) => Promise<void> };

/**
 * `followers`: the jobs the handler took along with `job` (a batch); each is finished with
 * its own outcome in the same database transaction as the head's, each under the lease
 * check: if any of them was taken over, the whole attempt rolls back.
 */
export type AttemptResult = AttemptOutcome & { followers?: { job: JobRow; result: FollowerOutcome }[] };

export type JobHandler = (job: JobRow) => Promise<AttemptResult>;

export interface WorkerOptions {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  handlers: Record<string, JobHandler>;
  /** How long a claim lasts before another worker may take the job over. */
  leaseMs?: number;
  /** Jobs claimed per round. */
  batchSize?: number;
  /** Pause between rounds when there was nothing to do (real time, not the app clock). */
  idleMs?: number;
  /** How often a running worker sweeps for stalled ordered queues (real time). */
  sweepMs?: number;
  workerId?: string;
}

/** The job row's next state for an outcome. */
function nextState(r: AttemptOutcome | FollowerOutcome): FinishState {
  switch (r.outcome) {
    case 'completed': return { status: 'completed' };
    case 'dead': return { status: 'dead', error: r.error };
    case 'defer': return { status: 'pending', runAt: r.runAt, uncount: true };
    case 'release': return { status: 'waiting', uncount: true };
    case 'retry': return { status: 'failed', error: r.error, runAt: r.runAt };
  }
}

/** Thrown inside the commit transaction when the lease was lost: roll back the attempt's effects. */
class LeaseLost extends Error {}

export function createWorker(opts: WorkerOptions) {
  const { db, clock, log, handlers } = opts;
  const workerId = opts.workerId ?? `${os.hostname()}:${process.pid}:${newId().slice(0, 8)}`;
  const leaseMs = opts.leaseMs ?? 60_000;
  const batchSize = opts.batchSize ?? 20;
  const idleMs = opts.idleMs ?? 250;
  const sweepMs = opts.sweepMs ?? 30_000;
  const kinds = Object.keys(handlers);
  let running = false;
  let wake: (() => void) | null = null;
  let loop: Promise<void> | null = null;

  /** Runs one claimed job through its handler and records the outcome. */
  async function runJob(job: JobRow): Promise<void> {
    // Let the event loop turn between jobs: with the embedded store (PGlite runs in this
    // thread) a backlog would otherwise starve HTTP requests and timers for its whole drain.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const handler = handlers[job.kind];
    let result: AttemptResult;
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      result = await handler(job);
    } catch (err) {
      // A handler bug is not the authority's fault: retry later with the cause logged.
      log.error({ err, jobId: job.id, kind: job.kind }, 'job handler failed');
      result = { outcome: 'retry', error: `internal error: ${(err as Error).message}`, runAt: new Date(clock.now().getTime() + 60_000) };
    }
    const now = clock.now();
    const followers = result.followers ?? [];
    try {
      await db.transaction(async (tx) => {
        const next = nextState(result);
        if (!(await jobsRepo.finish(tx, job.id, workerId, next, now))) throw new LeaseLost();
        let finished = next.status === 'completed' || next.status === 'dead';
        const adopted = followers.map((f) => ({ id: f.job.id, next: nextState(f.result) }));
        if ((await jobsRepo.finishMany(tx, workerId, adopted, now)) !== adopted.length) throw new LeaseLost();
        finished ||= adopted.some((a) => a.next.status === 'completed' || a.next.status === 'dead');
        await result.commit?.(tx);
        for (const f of followers) await f.result.commit?.(tx);
        // The next job of an ordered queue (a chain's next record) may go now, unless one
        // of the batch holds the queue (promoteNext checks).
        if (job.queue_key && finished) await jobsRepo.promoteNext(tx, job.queue_key, now);
      });
    } catch (err) {
      if (err instanceof LeaseLost) {
        log.warn({ jobId: job.id, followers: followers.length }, 'job lease lost: another worker took it over; this attempt is discarded');
        return;
      }
      throw err;
    }
  }

  /** One round: claim a batch and run it. Returns how many jobs ran. */
  async function runOnce(limit = batchSize): Promise<number> {
    const jobs = await jobsRepo.claim(db, { kinds, workerId, now: clock.now(), leaseMs, limit });
    await Promise.all(jobs.map((j) => runJob(j)));
    return jobs.length;
  }

  /** Runs rounds until no job is runnable now (tests: drain the queue at the current clock). */
  async function drain(maxRounds = 10_000): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxRounds; i++) {
      const n = await runOnce();
      if (n === 0) break;
      total += n;
    }
    return total;
  }

  /** Claims and runs one specific job now, if it is runnable (the create call's inline path). */
  async function runJobNow(id: string): Promise<boolean> {
    const job = await jobsRepo.claimById(db, id, workerId, clock.now(), leaseMs);
    if (!job) return false;
    await runJob(job);
    return true;
  }

  /**
   * Wakes ordered queues left with waiting jobs and nothing active (a create that died
   * between its commit and its promotion). Returns how many such queues it found.
   */
  async function sweep(): Promise<number> {
    const stalled = await jobsRepo.stalledQueues(db);
    for (const key of stalled) await promoteQueue(db, key, clock.now());
    return stalled.length;
  }

  function start(): void {
    if (running) return;
    running = true;
    let lastSweep = 0;
    loop = (async () => {
      while (running) {
        let n = 0;
        try {
          if (Date.now() - lastSweep >= sweepMs) {
            lastSweep = Date.now();
            await sweep();
          }
          n = await runOnce();
        } catch (err) {
          log.error({ err }, 'worker round failed');
        }
        if (n === 0 && running) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, idleMs);
            wake = () => {
              clearTimeout(t);
              resolve();
            };
          });
          wake = null;
        }
      }
    })();
  }

  /** A job was just enqueued in this process: look now rather than after the idle pause. */
  function notify(): void {
    wake?.();
  }

  async function stop(): Promise<void> {
    running = false;
    wake?.();
    await loop;
  }

  return { workerId, runOnce, drain, runJobNow, start, stop, notify, sweep };
}

export type Worker = ReturnType<typeof createWorker>;
