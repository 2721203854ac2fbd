import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';
import { createTestDatabase, STORE, startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, getTx, saleBody } from '../support/transactions.ts';

/**
 * A worker process killed with SIGKILL in the middle of a job: its claim is a lease, and
 * when the lease runs out another worker takes the job over and completes it. Several
 * worker processes share one PostgreSQL (the embedded store belongs to one process, so
 * this runs in the postgres project).
 */
const CHILD = path.join(import.meta.dirname, 'hanging-worker.ts');

describe.runIf(STORE === 'postgres')('worker killed mid-job', () => {
  let t: TestApp;
  let url: string;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    url = await createTestDatabase();
    t = await startTestApp({ db: await openPostgresDb(url), clock });
  });
  afterAll(async () => {
    await t.close();
    await t.db.close();
  });

  it('the job is reclaimed after its lease and completed by another worker', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = (await createTx(t, key, saleBody(loc))).json();
    expect(tx.status).toBe('pending');

    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, DATABASE_URL: url, LEASE_MS: '60000' }, stdio: ['ignore', 'pipe', 'inherit'] });
    const claimed = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the child worker claimed nothing within 20 s')), 20_000);
      child.stdout.on('data', (c: Buffer) => {
        const m = /CLAIMED (\S+) (\d+)/.exec(c.toString());
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    const held = (await t.db.query<{ status: string; locked_by: string; attempt: number }>('SELECT status, locked_by, attempt FROM jobs WHERE id = $1', [claimed])).rows[0]!;
    expect(held).toMatchObject({ status: 'processing', attempt: 1 });
    expect(held.locked_by).toContain(`:${child.pid}:`);

    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    // Within the lease, nobody else may take it.
    expect(await t.worker.drain()).toBe(0);
    // After the lease (60 s by the child's clock), it is reclaimed and completed.
    clock.set(new Date(Date.now() + 61_000));
    expect(await t.worker.drain()).toBeGreaterThanOrEqual(1);
    const job = (await t.db.query<{ status: string; attempt: number }>('SELECT status, attempt FROM jobs WHERE id = $1', [claimed])).rows[0]!;
    expect(job).toEqual({ status: 'completed', attempt: 2 });
    expect((await getTx(t, key, tx.id)).status).toBe('success');
  }, 60_000);
});

describe.runIf(STORE !== 'postgres')('worker killed mid-job', () => {
  it('runs in the postgres project (several worker processes need PostgreSQL)', () => {
    expect(STORE).toBe('pglite');
  });
});
