import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { verifactu } from '../../src/countries/es-verifactu/index.ts';
import type { Db } from '../../src/store/db.ts';
import { authorityPacingRepo } from '../../src/store/repos/authority-pacing-repo.ts';
import { startFakeAeatVerifactu, type FakeAeatVerifactu } from '../support/fake-aeat-verifactu.ts';
import { TEST_MASTER_KEY, startTestApp, type TestApp } from '../support/harness.ts';
import { freshNif, uploadSpainCertificate } from '../support/spain.ts';
import { createTx, getTx, saleBody } from '../support/transactions.ts';

/*
 * AEAT's TiempoEsperaEnvio (FORMATS.md §2.5) holds back the issuer's next submission,
 * whichever worker makes it: the wait is kept in the store (services/authority-pacing.ts,
 * migration 0016), not in the worker that read the answer. Two service instances on one
 * store: A (the harness app and its worker) and B, a second worker whose modules are
 * loaded afresh (vi.resetModules), so it holds no module state of A's, as a second process
 * would not. With the wait kept per process, B would send at once.
 */

let a: TestApp;
let b: { drain: () => Promise<number>; close: () => Promise<void> };
let clock: ManualClock;
let aeat: FakeAeatVerifactu;

/** Another worker on A's store, built from a fresh copy of the service's modules. */
async function anotherInstance(db: Db, config: Record<string, unknown>) {
  vi.resetModules();
  const [{ createRuntime }, { createMemoryLimiter }, { deriveKeys }, authorityHttp, plugin] = await Promise.all([
    import('../../src/runtime.ts'),
    import('../../src/ratelimit/memory-limiter.ts'),
    import('../../src/crypto/master-key.ts'),
    import('../../src/countries/shared/authority-http.ts'),
    import('../../src/countries/es-verifactu/index.ts'),
  ]);
  // The premise: B's VERI*FACTU plug-in (and its client) is not A's.
  expect(plugin.verifactu).not.toBe(verifactu);
  const limiter = createMemoryLimiter();
  const rt = createRuntime({
    db, clock, limiter, keys: deriveKeys(TEST_MASTER_KEY), random: () => 0.5,
    log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
    config: { liveEnabled: false, mode: 'cloud', webhookAllowInsecure: true, ...config },
  });
  return {
    drain: () => rt.worker.drain(),
    async close() {
      await rt.worker.stop();
      rt.changes.close();
      await limiter.close();
      await authorityHttp.closeAuthorityConnections();
    },
  };
}

beforeAll(async () => {
  aeat = await startFakeAeatVerifactu();
  clock = new ManualClock(new Date());
  const config = { authorityBaseUrls: { 'es-verifactu:test': aeat.url }, authorityCa: aeat.caPem };
  a = await startTestApp({ clock, random: () => 0.5, config });
  b = await anotherInstance(a.db, config);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  await aeat?.close();
});

const AUTHORITY = { 'x-svc-sandbox': 'authority' } as const;

async function submitJob(transactionId: string) {
  const { rows } = await a.db.query<{ status: string; attempt: number; run_at: Date }>(
    `SELECT status, attempt, run_at FROM jobs WHERE kind = 'submit' AND transaction_id = $1`, [transactionId]);
  return rows[0]!;
}

describe('AEAT\'s wait before the next submission holds for every worker sharing the store', () => {
  it('a wait A was given holds B back, and the wait B was given then holds A back', async () => {
    const { key } = await a.signup();
    const nif = freshNif();
    const cert = await uploadSpainCertificate(a, key, nif);
    const loc = await a.request({
      method: 'POST', url: '/v1/locations', key,
      payload: {
        name: `Tienda ${nif}`, country: 'ES', tax_id: nif,
        country_config: { system: 'verifactu', legal_name: 'Ejemplo Madrid SL', software_nif: 'B12345674', certificate_id: cert.certificateId },
      },
    });
    expect(loc.statusCode, loc.body).toBe(201);
    const sale = async () => {
      const res = await createTx(a, key, saleBody(loc.json().id, { timestamp: clock.now().toISOString() }), AUTHORITY);
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    aeat.waitSeconds = 60;

    // A sends the first record; AEAT answers "wait 60 s" and A records it in the store.
    const first = await sale();
    await a.worker.drain();
    expect(aeat.requests).toHaveLength(1);
    expect((await getTx(a, key, first)).status).toBe('success');
    const key60 = `es-verifactu:${nif}:test`;
    expect(await authorityPacingRepo.notBefore(a.db, key60)).toEqual(new Date(clock.now().getTime() + 60_000));

    // 10 s later B runs the next record's job: it does not send, the job waits the 50 s left
    // (flow control: still pending, the attempt not counted).
    const second = await sale();
    clock.advance(10_000);
    await b.drain();
    expect(aeat.requests).toHaveLength(1);
    const held = await submitJob(second);
    expect(held).toMatchObject({ status: 'pending', attempt: 0 });
    expect(held.run_at.getTime() - clock.now().getTime()).toBe(50_000);
    expect((await getTx(a, key, second)).status).toBe('pending');

    // Once the wait is over B sends it, and is told to wait again.
    clock.set(held.run_at);
    await b.drain();
    expect(aeat.requests).toHaveLength(2);
    expect((await getTx(a, key, second)).status).toBe('success');

    // A honours the wait B was given.
    const third = await sale();
    clock.advance(1_000);
    await a.worker.drain();
    expect(aeat.requests).toHaveLength(2);
    expect(await submitJob(third)).toMatchObject({ status: 'pending', attempt: 0 });
    clock.set((await submitJob(third)).run_at);
    await a.worker.drain();
    expect((await getTx(a, key, third)).status).toBe('success');
    expect(aeat.held(nif).map((h) => h.id.NumSerieFactura)).toEqual(['A-1', 'A-2', 'A-3']);
  });
});

describe('the pacing store (store/repos/authority-pacing-repo.ts)', () => {
  it('keeps one time per key and only moves it forward', async () => {
    const t0 = new Date('2026-03-02T09:30:00.000Z');
    const at = (s: number) => new Date(t0.getTime() + s * 1000);
    expect(await authorityPacingRepo.notBefore(a.db, 'test:k1')).toBeNull();
    await authorityPacingRepo.hold(a.db, 'test:k1', at(60));
    await authorityPacingRepo.hold(a.db, 'test:k1', at(30)); // a shorter wait told to another worker meanwhile
    expect(await authorityPacingRepo.notBefore(a.db, 'test:k1')).toEqual(at(60));
    await authorityPacingRepo.hold(a.db, 'test:k1', at(90));
    expect(await authorityPacingRepo.notBefore(a.db, 'test:k1')).toEqual(at(90));
    expect(await authorityPacingRepo.notBefore(a.db, 'test:k2')).toBeNull();
    // Concurrent holds of one new key: no unique violation, the latest time wins.
    await Promise.all([at(10), at(40), at(20)].map((until) => authorityPacingRepo.hold(a.db, 'test:k3', until)));
    expect(await authorityPacingRepo.notBefore(a.db, 'test:k3')).toEqual(at(40));
  });
});
