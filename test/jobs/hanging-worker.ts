/**
 * Child process for worker-kill.test.ts: a worker that claims submit jobs from
 * DATABASE_URL, says so on stdout, and then hangs inside the job, as a worker does
 * whose authority call never returns. The test kills it with SIGKILL there.
 */
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { systemClock } from '../../src/core/clock.ts';
import { createWorker } from '../../src/jobs/runner.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';

const db = await openPostgresDb(process.env.DATABASE_URL!);
const worker = createWorker({
  db, clock: systemClock, log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
  leaseMs: Number(process.env.LEASE_MS ?? 60_000),
  handlers: {
    submit: async (job) => {
      process.stdout.write(`CLAIMED ${job.id} ${job.attempt}\n`);
      return new Promise(() => {}); // never answers
    },
  },
});
worker.start();
