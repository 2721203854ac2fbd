import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { CERTIFICATE_EXPIRY_JOB, nextDailyRun } from '../../src/jobs/tasks/certificate-expiry.ts';
import { scheduleRecurringJobs } from '../../src/runtime.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';

/** The daily scan: certificate.expiring once inside 30 days, certificate.expired once after. */
let t: TestApp;
const clock = new ManualClock(new Date());
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t.close());

async function events(accountId: string) {
  return (await t.db.query<{ type: string; data: Record<string, unknown> }>(
    `SELECT type, data FROM events WHERE account_id = $1 AND type LIKE 'certificate.%' ORDER BY created_at`, [accountId])).rows;
}

describe('certificate expiry scan', () => {
  it('next run is the next 03:00 UTC', () => {
    expect(nextDailyRun(new Date('2026-05-01T02:59:00Z')).toISOString()).toBe('2026-05-01T03:00:00.000Z');
    expect(nextDailyRun(new Date('2026-05-01T03:00:00Z')).toISOString()).toBe('2026-05-02T03:00:00.000Z');
  });

  it('warns once 30 days ahead, then once when expired; one scheduled instance whatever the nodes', async () => {
    const { key, accountId } = await t.signup();
    const soon = exportP12(generateCert({ days: 20 }), 'pw');
    const later = exportP12(generateCert({ days: 200 }), 'pw');
    const notAfter: Record<string, string> = {};
    for (const [id, file] of [['soon', soon], ['later', later]] as const) {
      const { payload, headers } = uploadForm({ certificateId: id, password: 'pw', file });
      const res = await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
      expect(res.statusCode).toBe(201);
      notAfter[id] = res.json().not_after;
    }
    // Certificate times are whole seconds: place the clock 20.5 days before `soon` expires.
    clock.set(new Date(new Date(notAfter.soon!).getTime() - 20.5 * 86_400_000));

    await scheduleRecurringJobs(t.rt);
    await scheduleRecurringJobs(t.rt); // a second node starting
    const live = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE kind = $1 AND status = 'pending'`, [CERTIFICATE_EXPIRY_JOB]);
    expect(live.rows[0]!.n).toBe(1);

    await t.worker.drain();
    let seen = await events(accountId);
    expect(seen.map((e) => e.type)).toEqual(['certificate.expiring']);
    expect(seen[0]!.data).toMatchObject({ certificate_id: 'soon', nif: '12345678Z', days_left: 20 });

    // The next days: no repeat.
    for (let day = 0; day < 5; day++) {
      clock.advance(86_400_000);
      await t.worker.drain();
    }
    expect((await events(accountId)).map((e) => e.type)).toEqual(['certificate.expiring']);

    clock.advance(20 * 86_400_000);
    await t.worker.drain();
    seen = await events(accountId);
    expect(seen.map((e) => e.type)).toEqual(['certificate.expiring', 'certificate.expired']);
    expect(seen[1]!.data).toMatchObject({ certificate_id: 'soon', days_left: 0 });
  });
});
