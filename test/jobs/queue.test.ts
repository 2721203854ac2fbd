import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { DbUnavailableError } from '../../src/core/errors.ts';
import { jobsRepo } from '../../src/store/repos/jobs-repo.ts';
import { createWorker } from '../../src/jobs/runner.ts';
import type { Db, Queryable } from '../../src/store/db.ts';
import { openTestDb } from '../support/harness.ts';

const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
let db: Db;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(() => db.close());

const enqueue = (kind: string, runAt: Date, now: Date) => jobsRepo.enqueue(db, { kind, maxAttempts: 3, runAt }, now);

describe('job queue', () => {
  it('claims only due jobs, as a lease; only the lease holder may finish', async () => {
    const clock = new ManualClock('2026-05-01T00:00:00Z');
    const now = clock.now();
    const due = await enqueue('q1', now, now);
    const later = await enqueue('q1', new Date(now.getTime() + 10_000), now);
    const claimed = await jobsRepo.claim(db, { kinds: ['q1'], workerId: 'w1', now, leaseMs: 5000, limit: 10 });
    expect(claimed.map((j) => j.id)).toEqual([due.id]);
    expect(claimed[0]).toMatchObject({ status: 'processing', attempt: 1, locked_by: 'w1' });
    // Another worker sees nothing while the lease holds.
    expect(await jobsRepo.claim(db, { kinds: ['q1'], workerId: 'w2', now, leaseMs: 5000, limit: 10 })).toEqual([]);
    // After the lease, w2 takes it over; w1's late finish is refused.
    const after = new Date(now.getTime() + 6000);
    const taken = await jobsRepo.claim(db, { kinds: ['q1'], workerId: 'w2', now: after, leaseMs: 5000, limit: 10 });
    expect(taken.map((j) => j.id)).toEqual([due.id]);
    expect(taken[0]!.attempt).toBe(2);
    expect(await jobsRepo.finish(db, due.id, 'w1', { status: 'completed' }, after)).toBe(false);
    expect(await jobsRepo.finish(db, due.id, 'w2', { status: 'completed' }, after)).toBe(true);
    expect((await jobsRepo.get(db, later.id))!.status).toBe('pending');
  });

  it('a dead worker\'s job is taken over before a backlog of due jobs, and a claim never exceeds its limit', async () => {
    const clock = new ManualClock('2026-05-02T00:00:00Z');
    const now = clock.now();
    const stuck = await enqueue('q5', now, now);
    expect((await jobsRepo.claim(db, { kinds: ['q5'], workerId: 'dead', now, leaseMs: 1000, limit: 1 })).map((j) => j.id)).toEqual([stuck.id]);
    const backlog = [];
    for (let i = 0; i < 5; i++) backlog.push(await enqueue('q5', now, now));
    const later = new Date(now.getTime() + 2000); // the dead worker's lease ran out
    const first = await jobsRepo.claim(db, { kinds: ['q5'], workerId: 'alive', now: later, leaseMs: 1000, limit: 2 });
    expect(first).toHaveLength(2);
    expect(first.map((j) => j.id)).toContain(stuck.id);
    expect(first.find((j) => j.id === stuck.id)).toMatchObject({ attempt: 2, locked_by: 'alive' });
    // The due jobs go in (run_at, id) order.
    const rest = await jobsRepo.claim(db, { kinds: ['q5'], workerId: 'alive', now: later, leaseMs: 1000, limit: 10 });
    expect([...first, ...rest].map((j) => j.id).filter((id) => id !== stuck.id)).toEqual(backlog.map((j) => j.id));
  });

  it('a handler that throws is retried later, and its effects are rolled back with the attempt', async () => {
    const clock = new ManualClock('2026-05-02T00:00:00Z');
    const job = await enqueue('q2', clock.now(), clock.now());
    let calls = 0;
    const worker = createWorker({
      db, clock, log,
      handlers: { q2: async () => { calls++; throw new Error('boom'); } },
    });
    await worker.drain();
    expect(calls).toBe(1);
    const row = (await jobsRepo.get(db, job.id))!;
    expect(row.status).toBe('failed');
    expect(row.last_error).toContain('boom');
    expect(row.run_at.getTime()).toBe(clock.now().getTime() + 60_000);
  });

  it('two workers draining together process every job exactly once', async () => {
    const clock = new ManualClock('2026-05-03T00:00:00Z');
    const ids = new Set<string>();
    for (let i = 0; i < 100; i++) ids.add((await enqueue('q3', clock.now(), clock.now())).id);
    const seen: string[] = [];
    const handler = async (j: { id: string }) => {
      seen.push(j.id);
      await new Promise((r) => setTimeout(r, 1));
      return { outcome: 'completed' as const };
    };
    const w1 = createWorker({ db, clock, log, handlers: { q3: handler }, batchSize: 7, workerId: 'a' });
    const w2 = createWorker({ db, clock, log, handlers: { q3: handler }, batchSize: 7, workerId: 'b' });
    await Promise.all([w1.drain(), w2.drain()]);
    expect(seen).toHaveLength(100);
    expect(new Set(seen)).toEqual(ids);
    const rows = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'q3' AND status = 'completed' AND attempt = 1`);
    expect(rows.rows[0]!.n).toBe(100);
  });

  it('ordered queues: one job of a queue at a time, in order; a retry holds the queue, completion or death releases the next', async () => {
    const clock = new ManualClock('2026-05-09T00:00:00Z');
    const now = clock.now();
    const queueKey = 'es-verifactu:test-queue';
    await db.query('INSERT INTO chain_heads (chain_key, seq, updated_at) VALUES ($1, 0, $2)', [queueKey, now]);
    const ids = await jobsRepo.enqueueMany(db, [1, 2, 3].map((seq) => ({
      kind: 'oq', maxAttempts: 5, runAt: now, queueKey, queueSeq: seq, waiting: seq > 1,
    })), now);
    expect(await jobsRepo.stalledQueues(db)).not.toContain(queueKey); // job 1 is active
    const order: number[] = [];
    let failFirst = true;
    const worker = createWorker({
      db, clock, log,
      handlers: {
        oq: async (job) => {
          const seq = ids.indexOf(job.id) + 1;
          order.push(seq);
          if (seq === 1 && failFirst) {
            failFirst = false;
            return { outcome: 'retry', error: 'technical error', runAt: new Date(clock.now().getTime() + 2000) };
          }
          return seq === 2 ? { outcome: 'dead', error: 'rejected' } : { outcome: 'completed' };
        },
      },
    });
    // Job 1 fails and waits for its retry: jobs 2 and 3 must not overtake it.
    await worker.drain();
    expect(order).toEqual([1]);
    expect((await Promise.all(ids.map((id) => jobsRepo.get(db, id)))).map((j) => j!.status)).toEqual(['failed', 'waiting', 'waiting']);
    clock.advance(2000);
    await worker.drain();
    // 1 completes → 2 runs and dies → 3 runs: a dead job does not block its queue.
    expect(order).toEqual([1, 1, 2, 3]);
    expect((await Promise.all(ids.map((id) => jobsRepo.get(db, id)))).map((j) => j!.status)).toEqual(['completed', 'dead', 'completed']);
    expect(await jobsRepo.stalledQueues(db)).not.toContain(queueKey);
  });

  it('a queue left with waiting jobs and nothing active (its creator died before promoting) is woken by the sweep', async () => {
    const clock = new ManualClock('2026-05-10T00:00:00Z');
    const now = clock.now();
    const queueKey = 'es-ticketbai:stalled-queue';
    const ids = await jobsRepo.enqueueMany(db, [1, 2].map((seq) => ({
      kind: 'sq', maxAttempts: 5, runAt: now, queueKey, queueSeq: seq, waiting: true,
    })), now);
    const order: string[] = [];
    const worker = createWorker({ db, clock, log, handlers: { sq: async (job) => (order.push(job.id), { outcome: 'completed' as const }) } });
    expect(await worker.drain()).toBe(0); // nothing runnable: both wait
    expect(await jobsRepo.stalledQueues(db)).toContain(queueKey);
    expect(await worker.sweep()).toBeGreaterThanOrEqual(1);
    await worker.drain();
    expect(order).toEqual(ids); // the first, then (promoted by its completion) the second
    expect(await jobsRepo.stalledQueues(db)).not.toContain(queueKey);
  });
  it('the outcomes of a round are recorded by one database transaction, each with its own effects', async () => {
    const clock = new ManualClock('2026-05-11T00:00:00Z');
    await db.query('CREATE TABLE IF NOT EXISTS test_marks (job_id uuid PRIMARY KEY, outcome text NOT NULL)');
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await enqueue('g1', clock.now(), clock.now())).id);
    let transactions = 0;
    const counting: Db = {
      kind: db.kind, query: (sql, params) => db.query(sql, params), subscribe: (c, l) => db.subscribe(c, l), close: () => db.close(),
      transaction: (fn) => (transactions++, db.transaction(fn)),
    } as Db;
    const worker = createWorker({
      db: counting, clock, log, batchSize: 10,
      handlers: {
        g1: async (job) => {
          const n = ids.indexOf(job.id);
          const mark = (outcome: string) => async (tx: Queryable) => {
            await tx.query('INSERT INTO test_marks (job_id, outcome) VALUES ($1, $2)', [job.id, outcome]);
          };
          if (n % 3 === 1) return { outcome: 'retry', error: 'later', runAt: new Date(clock.now().getTime() + 5000), commit: mark('retry') };
          if (n % 3 === 2) return { outcome: 'dead', error: 'refused', commit: mark('dead') };
          return { outcome: 'completed', commit: mark('completed') };
        },
      },
    });
    expect(await worker.runOnce()).toBe(10);
    expect(transactions).toBe(1);
    const rows = await db.query<{ id: string; status: string; last_error: string | null; outcome: string }>(
      'SELECT j.id, j.status, j.last_error, m.outcome FROM jobs j JOIN test_marks m ON m.job_id = j.id WHERE j.id = ANY($1::uuid[])', [ids],
    );
    const byId = new Map(rows.rows.map((r) => [r.id, r]));
    ids.forEach((id, n) => {
      const want = n % 3 === 1 ? ['failed', 'retry', 'later'] : n % 3 === 2 ? ['dead', 'dead', 'refused'] : ['completed', 'completed', null];
      expect([byId.get(id)?.status, byId.get(id)?.outcome, byId.get(id)?.last_error]).toEqual(want);
    });
  });

  it('drain runs the job another job enqueued even when that job ended during a claim that saw nothing', async () => {
    // The race: drain's claim reads the queue before a running job commits the job it
    // enqueues; the running job ends (and notifies, with nobody waiting) before the claim
    // answers; drain then sees nothing claimed and nothing in flight. It must look again.
    const clock = new ManualClock('2026-05-11T12:00:00Z');
    await enqueue('r1', clock.now(), clock.now());
    let claims = 0;
    let secondClaimRead!: () => void;
    const read = new Promise<void>((r) => (secondClaimRead = r));
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const gated: Db = {
      kind: db.kind, subscribe: (c, l) => db.subscribe(c, l), close: () => db.close(), exec: (sql) => db.exec(sql),
      transaction: (fn) => db.transaction(fn),
      query: async (sql, params) => {
        const res = await db.query(sql, params);
        if (sql.includes('WITH due AS') && ++claims === 2) {
          expect(res.rows).toEqual([]); // read before the first job committed its follower
          secondClaimRead();
          // Answer only once the first job has committed and its slot is free again.
          for (let i = 0; i < 500 && !(await db.query(`SELECT 1 FROM jobs WHERE kind = 'r2'`)).rows.length; i++) await sleep(5);
          await sleep(50);
        }
        return res as never;
      },
    } as Db;
    const ran: string[] = [];
    const worker = createWorker({
      db: gated, clock, log,
      handlers: {
        r1: async () => {
          await read;
          ran.push('r1');
          return { outcome: 'completed', commit: async (tx) => void (await jobsRepo.enqueue(tx, { kind: 'r2', maxAttempts: 1, runAt: clock.now() }, clock.now())) };
        },
        r2: async () => {
          ran.push('r2');
          return { outcome: 'completed' };
        },
      },
    });
    expect(await worker.drain()).toBe(2);
    expect(ran).toEqual(['r1', 'r2']);
  });

  it('the store unavailable when a round\'s outcomes are recorded: one transaction tried for the group, not one more per attempt; the jobs stay leased', async () => {
    const clock = new ManualClock('2026-05-12T06:00:00Z');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await enqueue('g3', clock.now(), clock.now())).id);
    let transactions = 0;
    const down: Db = {
      kind: db.kind, query: (sql, params) => db.query(sql, params), subscribe: (c, l) => db.subscribe(c, l), close: () => db.close(), exec: (sql) => db.exec(sql),
      transaction: () => ((transactions += 1), Promise.reject(new DbUnavailableError(new Error('connect ECONNREFUSED')))),
    } as Db;
    const worker = createWorker({ db: down, clock, log, batchSize: 5, handlers: { g3: async () => ({ outcome: 'completed' }) } });
    await worker.runOnce().catch(() => undefined);
    expect(transactions).toBe(1);
    const rows = await db.query<{ status: string }>('SELECT status FROM jobs WHERE id = ANY($1::uuid[])', [ids]);
    expect(rows.rows.map((r) => r.status)).toEqual(ids.map(() => 'processing'));
  });

  it('a lost lease in a group discards that attempt alone: the others of the group are recorded', async () => {
    const clock = new ManualClock('2026-05-12T00:00:00Z');
    await db.query('CREATE TABLE IF NOT EXISTS test_marks (job_id uuid PRIMARY KEY, outcome text NOT NULL)');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await enqueue('g2', clock.now(), clock.now())).id);
    const stolen = ids[2]!;
    const worker = createWorker({
      db, clock, log, batchSize: 4, workerId: 'slow',
      handlers: {
        g2: async (job) => {
          // Another worker took this one over while it ran (its lease ran out).
          if (job.id === stolen) await db.query(`UPDATE jobs SET locked_by = 'fast' WHERE id = $1`, [job.id]);
          return { outcome: 'completed', commit: async (tx) => void (await tx.query('INSERT INTO test_marks (job_id, outcome) VALUES ($1, $2)', [job.id, 'completed'])) };
        },
      },
    });
    expect(await worker.runOnce()).toBe(4);
    const rows = await db.query<{ id: string; status: string; locked_by: string | null; outcome: string | null }>(
      'SELECT j.id, j.status, j.locked_by, m.outcome FROM jobs j LEFT JOIN test_marks m ON m.job_id = j.id WHERE j.id = ANY($1::uuid[])', [ids],
    );
    const byId = new Map(rows.rows.map((r) => [r.id, r]));
    for (const id of ids) {
      if (id === stolen) expect(byId.get(id)).toMatchObject({ status: 'processing', locked_by: 'fast', outcome: null });
      else expect(byId.get(id)).toMatchObject({ status: 'completed', locked_by: null, outcome: 'completed' });
    }
  });
  it('a running worker claims again as slots free: jobs that hang hold only their own slots', async () => {
    const clock = new ManualClock('2026-05-13T00:00:00Z');
    let release!: () => void;
    const hung = new Promise<void>((r) => (release = r));
    const slow: string[] = [];
    const done = new Set<string>();
    const worker = createWorker({
      db, clock, log, batchSize: 4, concurrency: 6, idleMs: 20,
      handlers: {
        g3: async (job) => {
          if (slow.includes(job.id)) await hung;
          done.add(job.id);
          return { outcome: 'completed' };
        },
      },
    });
    worker.start();
    try {
      // Two jobs that hang, arriving one after the other (each in a claim of its own).
      for (let n = 0; n < 2; n++) {
        const id = (await enqueue('g3', clock.now(), clock.now())).id;
        slow.push(id);
        worker.notify();
        for (let i = 0; i < 200 && !(await db.query(`SELECT 1 FROM jobs WHERE id = $1 AND status = 'processing'`, [id])).rows.length; i++) {
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      // Both slow jobs hang in their slots; 30 more jobs arrive and all go through beside them.
      const fast: string[] = [];
      for (let i = 0; i < 30; i++) fast.push((await enqueue('g3', clock.now(), clock.now())).id);
      worker.notify();
      for (let i = 0; i < 300 && fast.some((id) => !done.has(id)); i++) await new Promise((r) => setTimeout(r, 10));
      expect(fast.filter((id) => !done.has(id))).toEqual([]);
      // A handler returns before its outcome is committed (outcomes commit in groups): wait
      // for the commits too, not only for the handlers.
      const statuses = () => db.query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) GROUP BY status ORDER BY status', [[...slow, ...fast]]);
      let rows = await statuses();
      for (let i = 0; i < 300 && rows.rows.find((r) => r.status === 'completed')?.n !== 30; i++) {
        await new Promise((r) => setTimeout(r, 10));
        rows = await statuses();
      }
      expect(rows.rows).toEqual([{ status: 'completed', n: 30 }, { status: 'processing', n: 2 }]);
    } finally {
      release();
      await worker.stop();
    }
    expect(slow.every((id) => done.has(id))).toBe(true);
  });
});
