import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';
import { startFakeAeatVerifactu, type FakeAeatVerifactu } from '../support/fake-aeat-verifactu.ts';
import { createTestDatabase, STORE, startTestApp, TEST_MASTER_KEY, type TestApp } from '../support/harness.ts';
import { freshNif, uploadSpainCertificate } from '../support/spain.ts';
import { createTx, getTx, saleBody } from '../support/transactions.ts';

/**
 * A worker process killed with SIGKILL while its batch request is on the wire (VERI*FACTU,
 * several records of one chain in one request): the head and the jobs it adopted share
 * its lease; when the lease runs out another worker takes the head over, adopts the
 * others again and completes the batch in one request. AEAT never answered the dead
 * worker's request, so nothing is registered twice. Several processes share one
 * PostgreSQL, so this runs in the postgres project (the in-process variant, on both
 * stores, is in test/api/verifactu-batch.test.ts).
 */
const CHILD = path.join(import.meta.dirname, 'hanging-batch-worker.ts');

describe.runIf(STORE === 'postgres')('worker killed mid-batch', () => {
  let t: TestApp;
  let url: string;
  let aeat: FakeAeatVerifactu;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    aeat = await startFakeAeatVerifactu();
    aeat.waitSeconds = 0;
    url = await createTestDatabase();
    t = await startTestApp({ db: await openPostgresDb(url), clock, config: { authorityBaseUrls: { 'es-verifactu:test': aeat.url }, authorityCa: aeat.caPem } });
  });
  afterAll(async () => {
    await t.close();
    await t.db.close();
    await aeat.close();
  });

  it('the batch is reclaimed through its head after the lease and sent once, complete', async () => {
    const { key } = await t.signup();
    const nif = freshNif();
    const cert = await uploadSpainCertificate(t, key, nif);
    const loc = await t.request({
      method: 'POST', url: '/v1/locations', key,
      payload: { name: 'Tienda', country: 'ES', tax_id: nif, country_config: { system: 'verifactu', legal_name: 'Ejemplo SL', software_nif: 'B12345674', certificate_id: cert.certificateId } },
    });
    expect(loc.statusCode, loc.body).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await createTx(t, key, saleBody(loc.json().id, { timestamp: clock.now().toISOString() }), { 'x-svc-sandbox': 'authority' });
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().id);
    }

    aeat.behave({ kind: 'hang' });
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: { ...process.env, DATABASE_URL: url, LEASE_MS: '60000', AEAT_URL: aeat.url, AEAT_CA: aeat.caPem, MASTER_KEY_HEX: TEST_MASTER_KEY.toString('hex') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      // Its batch request reaches AEAT (and hangs there).
      const deadline = Date.now() + 20_000;
      while (aeat.requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(aeat.requests).toHaveLength(1);
      const { rows } = await t.db.query<{ status: string; locked_by: string; attempt: number }>(
        `SELECT status, locked_by, attempt FROM jobs WHERE kind = 'submit' AND transaction_id = ANY($1::uuid[])`, [ids]);
      expect(rows).toHaveLength(6);
      expect(rows.every((r) => r.status === 'processing' && r.locked_by === `batch-child:${child.pid}` && r.attempt === 1)).toBe(true);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    aeat.behave({ kind: 'normal' });

    // Within the lease, nobody else may take the head or any adopted job.
    expect(await t.worker.drain()).toBe(0);
    // After it (60 s by the child's clock), one worker takes the head and completes the batch.
    clock.set(new Date(Date.now() + 61_000));
    await t.worker.drain();
    expect(aeat.submissions.map((s) => s.records)).toEqual([['Alta A-1', 'Alta A-2', 'Alta A-3', 'Alta A-4', 'Alta A-5', 'Alta A-6']]);
    for (const id of ids) expect((await getTx(t, key, id)).status).toBe('success');
    const { rows } = await t.db.query<{ status: string; attempt: number }>(
      `SELECT status, attempt FROM jobs WHERE kind = 'submit' AND transaction_id = ANY($1::uuid[])`, [ids]);
    expect(rows.map((r) => [r.status, r.attempt])).toEqual(Array.from({ length: 6 }, () => ['completed', 2]));
    expect(aeat.held(nif).map((h) => h.id.NumSerieFactura)).toEqual(['A-1', 'A-2', 'A-3', 'A-4', 'A-5', 'A-6']);
  }, 60_000);
});

describe.runIf(STORE !== 'postgres')('worker killed mid-batch', () => {
  it('runs in the postgres project (several worker processes need PostgreSQL)', () => {
    expect(STORE).toBe('pglite');
  });
});
