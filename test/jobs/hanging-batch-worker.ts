/**
 * Child process for worker-kill-batch.test.ts: a worker with the real submit task, against
 * the parent's fake AEAT (which hangs), on DATABASE_URL. It claims a VERI*FACTU job, adopts
 * the chain's waiting jobs into a batch and sends it; the request never gets an answer, and
 * the test kills the process with SIGKILL while it waits.
 */
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { systemClock } from '../../src/core/clock.ts';
import { deriveKeys } from '../../src/crypto/master-key.ts';
import { createWorker } from '../../src/jobs/runner.ts';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import { createRuntime } from '../../src/runtime.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';

const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const db = await openPostgresDb(process.env.DATABASE_URL!);
const rt = createRuntime({
  db, clock: systemClock, limiter: createMemoryLimiter(), log,
  keys: deriveKeys(Buffer.from(process.env.MASTER_KEY_HEX!, 'hex')),
  config: {
    liveEnabled: false, mode: 'cloud', webhookAllowInsecure: true,
    authorityBaseUrls: { 'es-verifactu:test': process.env.AEAT_URL! },
    authorityCa: process.env.AEAT_CA!,
  },
});
const worker = createWorker({
  db, clock: systemClock, log, handlers: { submit: rt.handlers.submit! },
  leaseMs: Number(process.env.LEASE_MS ?? 60_000), workerId: `batch-child:${process.pid}`,
});
worker.start();
process.stdout.write('READY\n');
