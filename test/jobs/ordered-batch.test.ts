import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { jobsRepo, type JobRow } from '../../src/store/repos/jobs-repo.ts';
import { STORE, startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';

/*
 * The queue side of batches (store/repos/jobs-repo.ts): adopting the jobs after a claimed head of an
 * ordered queue, reclaiming a dead worker's batch only through its head, and promoting the
 * next job only when nothing of the queue is active. The submit task's use of it is in
 * test/api/verifactu-batch.test.ts.
 */

let t: TestApp;
const clock = new ManualClock('2026-06-01T10:00:00Z');
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t.close());

const LEASE = 60_000;

/** A VERI*FACTU chain (stub) of `n` queued records: their submit jobs in queue order. */
async function queue(n: number): Promise<JobRow[]> {
  const { key } = await t.signup();
  const loc = await createLocation(t, key, 'es-verifactu');
  const txIds: string[] = [];
  for (let i = 0; i < n; i++) txIds.push((await createTx(t, key, saleBody(loc))).json().id);
  const { rows } = await t.db.query<{ id: string }>(
    `SELECT id FROM jobs WHERE kind = 'submit' AND transaction_id = ANY($1::uuid[]) ORDER BY queue_seq`, [txIds]);
  return Promise.all(rows.map(async (r) => (await jobsRepo.get(t.db, r.id))!));
}

const statusOf = async (jobs: JobRow[]) => Promise.all(jobs.map(async (j) => (await jobsRepo.get(t.db, j.id))!.status));
const opts = (limit: number) => ({ environment: 'test', sandboxMode: 'stub', limit, now: clock.now() });

async function claimHead(head: JobRow, worker = 'w1'): Promise<JobRow> {
  const claimed = await jobsRepo.claimById(t.db, head.id, worker, clock.now(), LEASE);
  expect(claimed).toBeDefined();
  return claimed!;
}

describe('ordered queues: batches', () => {
  it('adoptFollowers takes the next waiting jobs in order, at most `limit`, under the head\'s lease, as an attempt', async () => {
    const jobs = await queue(5);
    expect(await statusOf(jobs)).toEqual(['pending', 'waiting', 'waiting', 'waiting', 'waiting']);
    const head = await claimHead(jobs[0]!);
    const adopted = await jobsRepo.adoptFollowers(t.db, head, opts(2));
    expect(adopted.map((j) => j.id)).toEqual([jobs[1]!.id, jobs[2]!.id]);
    expect(adopted.every((j) => j.status === 'processing' && j.attempt === 1 && j.locked_by === 'w1' && j.locked_until!.getTime() === head.locked_until!.getTime())).toBe(true);
    expect(await statusOf(jobs)).toEqual(['processing', 'processing', 'processing', 'waiting', 'waiting']);
    // A second adoption finds the queue's next unfinished jobs busy: nothing (no gap in the chain).
    expect(await jobsRepo.adoptFollowers(t.db, head, opts(10))).toEqual([]);
  });

  it('nothing is adopted for a head whose lease was lost, nor of another environment or sandbox mode', async () => {
    const jobs = await queue(3);
    const head = await claimHead(jobs[0]!);
    expect(await jobsRepo.adoptFollowers(t.db, { ...head, locked_by: 'someone-else' }, opts(10))).toEqual([]);
    expect(await jobsRepo.adoptFollowers(t.db, head, { ...opts(10), sandboxMode: 'authority' })).toEqual([]);
    expect(await jobsRepo.adoptFollowers(t.db, head, { ...opts(10), environment: 'live' })).toEqual([]);
    expect((await jobsRepo.adoptFollowers(t.db, head, opts(10))).length).toBe(2);
  });

  it('a dead worker\'s batch is reclaimed only through its head; the head\'s new holder adopts the expired jobs again', async () => {
    const jobs = await queue(4);
    const head = await claimHead(jobs[0]!, 'dead-worker');
    expect((await jobsRepo.adoptFollowers(t.db, head, opts(10))).length).toBe(3);
    // The lease runs out: only the head is claimable, never an adopted job on its own.
    const later = new Date(clock.now().getTime() + LEASE + 1000);
    for (const j of jobs.slice(1)) expect(await jobsRepo.claimById(t.db, j.id, 'w2', later, LEASE)).toBeUndefined();
    const claimed = (await jobsRepo.claim(t.db, { kinds: ['submit'], workerId: 'w2', now: later, leaseMs: LEASE, limit: 100 }))
      .filter((j) => jobs.some((x) => x.id === j.id)); // (earlier tests' jobs are claimable by then too)
    expect(claimed.map((j) => j.id)).toEqual([jobs[0]!.id]);
    expect(claimed[0]!.attempt).toBe(2);
    const again = await jobsRepo.adoptFollowers(t.db, claimed[0]!, { ...opts(10), now: later });
    expect(again.map((j) => [j.id, j.locked_by, j.attempt])).toEqual(jobs.slice(1).map((j) => [j.id, 'w2', 2]));
    // The dead worker cannot finish anything any more.
    expect(await jobsRepo.finish(t.db, jobs[1]!.id, 'dead-worker', { status: 'completed' }, later)).toBe(false);
  });

  it('promoteNext waits while any job of the queue is active (a retried record holds the records after it)', async () => {
    const jobs = await queue(4);
    const head = await claimHead(jobs[0]!);
    await jobsRepo.adoptFollowers(t.db, head, opts(10));
    const now = clock.now();
    // The batch's outcome: head registered, job 2 to be retried, jobs 3-4 back to waiting.
    await t.db.transaction(async (tx) => {
      expect(await jobsRepo.finish(tx, jobs[0]!.id, 'w1', { status: 'completed' }, now)).toBe(true);
      expect(await jobsRepo.finish(tx, jobs[1]!.id, 'w1', { status: 'failed', runAt: new Date(now.getTime() + 2000), error: 'x' }, now)).toBe(true);
      for (const j of jobs.slice(2)) expect(await jobsRepo.finish(tx, j.id, 'w1', { status: 'waiting', uncount: true }, now)).toBe(true);
      await jobsRepo.promoteNext(tx, jobs[0]!.queue_key!, now);
    });
    expect(await statusOf(jobs)).toEqual(['completed', 'failed', 'waiting', 'waiting']);
    expect((await jobsRepo.get(t.db, jobs[2]!.id))!.attempt).toBe(0);
    // Job 2's retry: claimed alone, it completes; then job 3 is promoted.
    const retry = (await jobsRepo.claim(t.db, { kinds: ['submit'], workerId: 'w1', now: new Date(now.getTime() + 2000), leaseMs: LEASE, limit: 100 }))
      .filter((j) => jobs.some((x) => x.id === j.id));
    expect(retry.map((j) => j.id)).toEqual([jobs[1]!.id]);
    await t.db.transaction(async (tx) => {
      await jobsRepo.finish(tx, jobs[1]!.id, 'w1', { status: 'completed' }, now);
      await jobsRepo.promoteNext(tx, jobs[0]!.queue_key!, now);
    });
    expect(await statusOf(jobs)).toEqual(['completed', 'completed', 'pending', 'waiting']);
  });

  it.runIf(STORE === 'postgres')('adoption stops at a job locked by someone else (SKIP LOCKED never leaves a gap)', async () => {
    const jobs = await queue(4);
    const head = await claimHead(jobs[0]!);
    let adopted: JobRow[] = [];
    await t.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE', [jobs[2]!.id]);
      adopted = await jobsRepo.adoptFollowers(t.db, head, opts(10)); // another connection of the pool
    });
    expect(adopted.map((j) => j.id)).toEqual([jobs[1]!.id]);
    expect(await statusOf(jobs)).toEqual(['processing', 'processing', 'waiting', 'waiting']);
  });
});

describe('finishMany (the adopted jobs of a batch, in one statement)', () => {
  it('ends each job as told, and counts only the jobs this worker still holds', async () => {
    const jobs = await queue(4);
    const head = await claimHead(jobs[0]!);
    const adopted = await jobsRepo.adoptFollowers(t.db, head, opts(10));
    expect(adopted.map((j) => j.id)).toEqual(jobs.slice(1).map((j) => j.id));
    const later = new Date(clock.now().getTime() + 5_000);
    const items = [
      { id: jobs[1]!.id, next: { status: 'completed' as const } },
      { id: jobs[2]!.id, next: { status: 'failed' as const, error: 'E: boom', runAt: later } },
      { id: jobs[3]!.id, next: { status: 'waiting' as const, uncount: true } },
    ];
    expect(await jobsRepo.finishMany(t.db, 'someone-else', items, clock.now())).toBe(0); // not its jobs
    expect(await jobsRepo.finishMany(t.db, 'w1', items, clock.now())).toBe(3);
    const [one, two, three] = await Promise.all(jobs.slice(1).map(async (j) => (await jobsRepo.get(t.db, j.id))!));
    expect(one).toMatchObject({ status: 'completed', locked_by: null, attempt: 1 });
    expect(two).toMatchObject({ status: 'failed', last_error: 'E: boom', attempt: 1 });
    expect(two!.run_at.toISOString()).toBe(later.toISOString());
    expect(three).toMatchObject({ status: 'waiting', attempt: 0 });
    expect(await jobsRepo.finishMany(t.db, 'w1', items, clock.now())).toBe(0); // already ended
  });
});
