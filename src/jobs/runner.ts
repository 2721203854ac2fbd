import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { newId } from '../core/ids.ts';
import { DbUnavailableError } from '../core/errors.ts';
import type { Db, Queryable } from '../store/db.ts';
import { GroupCommitter } from '../core/group-commit.ts';
import { jobsRepo, promoteQueue, type FinishState, type JobRow } from '../store/repos/jobs-repo.ts';

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
 * What became of a job the handler adopted (store/repos/jobs-repo.ts `adoptFollowers`): an outcome
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
  /** The most jobs one claim takes (default 50). */
  batchSize?: number;
  /**
   * The most jobs a running worker has in flight (default 100). It claims again as soon as
   * half a claim's worth of room is free, not when a whole round is done: one slow
   * authority answer (a 30 s timeout) holds its own slot, never the jobs claimed with it.
   * With a real authority this bounds a worker's throughput: concurrency ÷ the authority's
   * latency (100 ÷ 0.2 s = 500 jobs/s).
   */
  concurrency?: number;
  /** Pause between claims when there was nothing to do (real time, not the app clock). */
  idleMs?: number;
  /** How often a running worker sweeps for stalled ordered queues (real time). */
  sweepMs?: number;
  workerId?: string;
  /** The most attempts recorded by one database transaction (see `finisher`). */
  commitGroup?: number;
}

/** An attempt whose outcome is to be recorded. */
interface Finished {
  job: JobRow;
  result: AttemptResult;
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
  const batchSize = opts.batchSize ?? 50;
  const concurrency = Math.max(1, opts.concurrency ?? 100);
  const idleMs = opts.idleMs ?? 250;
  const sweepMs = opts.sweepMs ?? 30_000;
  const kinds = Object.keys(handlers);
  let running = false;
  /** Who waits for the next notify(): the pump, or a drain (see `wake`). */
  const waiters = new Set<() => void>();
  /**
   * How many notify() calls so far. A job can end (and commit the job it enqueued) while a
   * claim is on its way: the claim saw the queue before that commit and answers nothing,
   * and the notify found no waiter. Comparing the count before and after a claim tells the
   * loops to look again rather than stop (drain) or sleep (the pump).
   */
  let notices = 0;
  let loop: Promise<void> | null = null;

  /**
   * Attempts end together: the outcomes that arrive while one group commits are recorded
   * by the next group's single database transaction (one commit, one WAL flush, for many
   * jobs). A worker's round runs its jobs side by side, so with a one-record-per-request
   * system each job used to pay a transaction of its own: the drain was bound by commits
   * (665 jobs/s for a one-record-per-request system, 1.6 ms of PostgreSQL CPU a job, measured). If a group fails
   * (a lost lease, a deadlock between two workers' groups, a bug in one commit), each of
   * its attempts is recorded again alone, so only the culprit fails (core/group-commit.ts).
   */
  const finisher = new GroupCommitter<Finished, void>(
    (_key, take) => db.transaction(async (tx) => {
      await finishGroup(tx, take());
      return [];
    }),
    opts.commitGroup ?? 64,
    1,
    // The store unavailable: each attempt recorded again alone would wait as long again;
    // the attempts' outcomes are lost together and their leases expire (the jobs run again).
    (err) => err instanceof DbUnavailableError,
  );

  /** Records the outcomes of a group of attempts in the caller's database transaction. */
  async function finishGroup(tx: Queryable, group: Finished[]): Promise<void> {
    const now = clock.now();
    const items = group.flatMap(({ job, result }) => [
      { id: job.id, next: nextState(result) },
      ...(result.followers ?? []).map((f) => ({ id: f.job.id, next: nextState(f.result) })),
    ]);
    // Only the worker holding the lease may end an attempt: a job taken over by another
    // worker (this one was too slow) fails the group, and alone it rolls back its own effects.
    if ((await jobsRepo.finishMany(tx, workerId, items, now)) !== items.length) throw new LeaseLost();
    for (const { result } of group) {
      await result.commit?.(tx);
      for (const f of result.followers ?? []) await f.result.commit?.(tx);
    }
    // The next job of an ordered queue (a chain's next record) may go now, unless one of
    // the batch holds the queue (promoteNext checks). Queue keys in one order: two workers'
    // groups take their advisory locks alike and do not deadlock.
    const queues = new Set<string>();
    for (const { job, result } of group) {
      const ended = [result, ...(result.followers ?? []).map((f) => f.result)].some((r) => r.outcome === 'completed' || r.outcome === 'dead');
      if (job.queue_key && ended) queues.add(job.queue_key);
    }
    for (const key of [...queues].sort()) await jobsRepo.promoteNext(tx, key, now);
  }

  /** Runs one claimed job through its handler and records the outcome. */
  async function runJob(job: JobRow, group = 'inline'): Promise<void> {
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
    try {
      // A batch (a head with adopted jobs) is recorded alone: it amortizes its commit
      // already, and batches of different chains then commit side by side.
      await finisher.run(result.followers?.length ? job.id : group, { job, result });
    } catch (err) {
      if (err instanceof LeaseLost) {
        log.warn({ jobId: job.id, followers: result.followers?.length ?? 0 }, 'job lease lost: another worker took it over; this attempt is discarded');
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

  /**
   * The jobs in flight (the pump's). Claims alternate between two commit groups, so the
   * outcomes of one claim commit while the next claim's jobs run (one group at a time left
   * the database idle while the worker waited for its commit, and the reverse).
   */
  const inFlight = new Set<Promise<void>>();
  let claims = 0;
  /** Room for a claim: half a claim's worth free, or nothing in flight. */
  const room = () => {
    const free = concurrency - inFlight.size;
    return inFlight.size === 0 || free >= Math.min(batchSize, concurrency) / 2 ? Math.min(free, batchSize) : 0;
  };

  /** Claims what there is room for and starts it; returns how many jobs it claimed. */
  async function claimMore(onError: (err: unknown) => void): Promise<number> {
    const limit = room();
    if (limit === 0) return 0;
    const jobs = await jobsRepo.claim(db, { kinds, workerId, now: clock.now(), leaseMs, limit });
    const group = `claim:${claims++ % 2}`;
    for (const job of jobs) {
      const running: Promise<void> = runJob(job, group).catch(onError).finally(() => {
        inFlight.delete(running);
        notify(); // room again: the pump may claim
      });
      inFlight.add(running);
    }
    return jobs.length;
  }

  /**
   * Runs jobs until none is runnable now and none is in flight (tests: drain the queue at
   * the current clock), the way the running worker does. Rethrows the first error of a job
   * once everything settled.
   */
  async function drain(maxClaims = 10_000): Promise<number> {
    let total = 0;
    let failure: { err: unknown } | undefined;
    const onError = (err: unknown) => void (failure ??= { err });
    for (let i = 0; i < maxClaims; i++) {
      const seen = notices;
      const n = await claimMore(onError);
      total += n;
      if (n > 0 && room() > 0) continue;
      if (notices !== seen) continue; // something ended or was enqueued during the claim
      if (inFlight.size === 0) break;
      await wake();
    }
    await Promise.all(inFlight);
    if (failure) throw failure.err;
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
    const onError = (err: unknown) => log.error({ err }, 'worker job failed');
    loop = (async () => {
      while (running) {
        let n = 0;
        const seen = notices;
        try {
          if (Date.now() - lastSweep >= sweepMs) {
            lastSweep = Date.now();
            await sweep();
          }
          n = await claimMore(onError);
        } catch (err) {
          log.error({ err }, 'worker claim failed');
        }
        if (n > 0 && room() > 0) continue;
        if (!running) break;
        if (notices !== seen && room() > 0) continue; // a job ended or was enqueued during the claim
        // Full, or nothing runnable: wait for a job to end, a notify(), or the idle pause
        // (retries fall due by the clock, not by an event).
        await wake(idleMs);
      }
      await Promise.all(inFlight);
    })();
  }

  /** Resolves at the next notify() (a job ended, one was enqueued, stop), or after `timeoutMs`. */
  function wake(timeoutMs?: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        waiters.delete(waiter);
        resolve();
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(waiter, timeoutMs);
      waiters.add(waiter);
    });
  }

  /** A job was just enqueued in this process: look now rather than after the idle pause. */
  function notify(): void {
    notices++;
    for (const w of [...waiters]) w();
  }

  async function stop(): Promise<void> {
    running = false;
    notify();
    await loop;
  }

  return { workerId, runOnce, drain, runJobNow, start, stop, notify, sweep };
}

export type Worker = ReturnType<typeof createWorker>;
