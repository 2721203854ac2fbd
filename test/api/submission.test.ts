import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { type SystemKey } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, getTx, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';

/**
 * Submission in the background: failures, retries with backoff, dead letters, Greece's
 * offline window and cancellations, driven by the sandbox's magic values and a manual
 * clock (50 attempts run in well under a second).
 */
let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-02T10:00:00.000Z');
  t = await startTestApp({ clock, random: () => 0.5 });
});
afterAll(() => t.close());

async function fresh(system: SystemKey) {
  const { key, accountId } = await t.signup();
  return { key, accountId, loc: await createLocation(t, key, system) };
}
const sale = (loc: string, system: SystemKey, outcome?: string) =>
  saleBody(loc, { ...saleLines[system], metadata: { ...(saleMetadata[system] ?? {}), ...(outcome ? { sandbox_outcome: outcome } : {}) } });

async function events(txId: string): Promise<string[]> {
  const res = await t.db.query<{ type: string }>(`SELECT type FROM events WHERE data->>'transaction_id' = $1 ORDER BY created_at, type`, [txId]);
  return res.rows.map((r) => r.type);
}
async function entry(txId: string) {
  return (await t.db.query<{ status: string; attempt: number; max_attempts: number; run_at: Date }>(
    `SELECT status, attempt, max_attempts, run_at FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [txId])).rows[0]!;
}

describe('failed submissions', () => {
  it('a non-retriable rejection: failed_permanent at once, submit_error, dead entry, dead-letter event, the catalog\'s English message at once', async () => {
    const { key, loc } = await fresh('es-verifactu');
    const id = (await createTx(t, key, sale(loc, 'es-verifactu', 'reject:4102'))).json().id;
    await t.worker.runOnce(); // the submission only
    const tx = await getTx(t, key, id);
    expect(tx.status).toBe('failed_permanent');
    expect(tx.response_payload.submit_error).toEqual({ error_code: '4102', raw_message: expect.any(String) });
    // A catalog code needs no AI: its English text is written with the failure, no translation job.
    expect(tx.error_message).toBe('The XML does not match the schema: a mandatory field is missing.');
    expect((await entry(id)).status).toBe('dead');
    expect(await events(id)).toContain('fiscalization.dead_letter');
    expect((await t.db.query(`SELECT 1 FROM jobs WHERE transaction_id = $1 AND kind = 'translate_error'`, [id])).rows).toEqual([]);
  });

  it('a retriable error is retried with backoff, exactly max_attempts times, then dead letter', async () => {
    const { key, loc } = await fresh('es-verifactu');
    const id = (await createTx(t, key, sale(loc, 'es-verifactu', 'error:0500'))).json().id;
    const runAts: number[] = [];
    for (let attempt = 1; attempt <= 50; attempt++) {
      await t.worker.drain();
      const e = await entry(id);
      expect(e.attempt).toBe(attempt);
      if (attempt < 50) {
        expect(e.status).toBe('failed');
        expect((await getTx(t, key, id)).status).toBe('failed');
        runAts.push(e.run_at.getTime() - clock.now().getTime());
        clock.set(e.run_at); // jump to the next retry
      }
    }
    // Delays: 2 s doubling (no jitter with random 0.5), capped at 1 h.
    expect(runAts.slice(0, 5)).toEqual([2000, 4000, 8000, 16000, 32000]);
    expect(Math.max(...runAts)).toBe(3_600_000);
    expect((await entry(id)).status).toBe('dead');
    const tx = await getTx(t, key, id);
    expect(tx.status).toBe('failed_permanent');
    expect(await events(id)).toEqual(expect.arrayContaining(['fiscalization.dead_letter']));
    clock.advance(86_400_000);
    await t.worker.drain();
    expect((await entry(id)).attempt).toBe(50); // no 51st attempt
  });

  it('a transport timeout counts as retriable', async () => {
    const { key, loc } = await fresh('es-sii');
    const id = (await createTx(t, key, sale(loc, 'es-sii', 'timeout'))).json().id;
    await t.worker.runOnce();
    const tx = await getTx(t, key, id);
    expect(tx.status).toBe('failed');
    expect(tx.response_payload.submit_error.error_code).toBe('timeout');
    expect((await entry(id)).status).toBe('failed');
  });
});

describe('Greece offline window', () => {
  it('an authority timeout inside the 5 s window → offline_pending with the late label; retried; grace expiry → failed_offline_grace_expired', async () => {
    const { key, loc } = await fresh('gr-mydata');
    const res = await createTx(t, key, sale(loc, 'gr-mydata', 'timeout'));
    expect(res.statusCode).toBe(201);
    const tx = res.json();
    expect(tx.status).toBe('offline_pending');
    expect(tx.render_hints.find((h: { key: string }) => h.key === 'late_transmission_label')).toMatchObject({ placement: 'footer_top', mandatory: true, kind: 'text' });
    expect((await entry(tx.id)).status).toBe('failed');

    // Retries go on until 7 days after creation, then the window closes.
    for (let i = 0; i < 400; i++) {
      const e = await entry(tx.id);
      if (e.status === 'dead') break;
      clock.set(e.run_at);
      await t.worker.drain();
    }
    const expired = await getTx(t, key, tx.id);
    expect(expired.status).toBe('failed_offline_grace_expired');
    expect(new Date(expired.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(tx.created_at).getTime() + 7 * 86_400_000);
    expect(await events(tx.id)).toEqual(expect.arrayContaining(['transaction.failed_offline_grace_expired', 'fiscalization.dead_letter']));
  });
});

describe('cancel', () => {
  it('France: the cancellation is signed at once and the original becomes cancelled; a second cancel returns it', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const original = (await createTx(t, key, sale(loc, 'fr-nf525'))).json();
    const c1 = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key, payload: { reason: 'wrong table' } });
    expect(c1.statusCode).toBe(201);
    expect(c1.json()).toMatchObject({ type: 'cancellation', status: 'success', cancels_transaction_id: original.id, amount: original.amount });
    const after = await getTx(t, key, original.id);
    expect(after).toMatchObject({ status: 'cancelled', cancellation_transaction_id: c1.json().id });
    const c2 = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key });
    expect(c2.statusCode).toBe(200);
    expect(c2.json().id).toBe(c1.json().id);
    // The cancellation record is in the same chain, right after the original.
    const rec = await t.request({ method: 'GET', url: `/v1/transactions/${c1.json().id}/fiscal-record`, key });
    expect(rec.headers['x-fiscal-record-seq']).toBe('2');
  });

  it('Spain: the annulment travels through the pipeline; the original is cancelled when it succeeds', async () => {
    const { key, loc } = await fresh('es-verifactu');
    const original = (await createTx(t, key, sale(loc, 'es-verifactu'))).json();
    const early = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key });
    expect(early.statusCode).toBe(409);
    expect(early.json()).toEqual({ error: 'transaction cannot be cancelled' });
    await t.worker.drain();
    const c = (await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key })).json();
    expect(c.status).toBe('pending');
    expect((await getTx(t, key, original.id)).status).toBe('success');
    await t.worker.drain();
    expect((await getTx(t, key, c.id)).status).toBe('success');
    expect((await getTx(t, key, original.id)).status).toBe('cancelled');
    // A cancelled original and a cancellation cannot be cancelled again (the existing one is returned for the original).
    expect((await t.request({ method: 'POST', url: `/v1/transactions/${c.id}/cancel`, key })).statusCode).toBe(409);
  });

  it('concurrent cancels create one cancellation', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const original = (await createTx(t, key, sale(loc, 'fr-nf525'))).json();
    const answers = await Promise.all(Array.from({ length: 10 }, () => t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key })));
    expect(new Set(answers.map((r) => r.json().id)).size).toBe(1);
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(1);
  });

  it('a cancel that read the original before another cancel committed replays that one (no second cancellation)', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const original = (await createTx(t, key, sale(loc, 'fr-nf525'))).json();
    const first = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key });
    expect(first.statusCode).toBe(201);
    // What a concurrent cancel saw: the original naming no cancellation yet (read before the
    // first one committed). It counts the original's cancellations after that commit.
    await t.db.query('UPDATE transactions SET cancelled_by_id = NULL, status = $2 WHERE id = $1', [original.id, original.status]);
    const late = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key });
    expect([late.statusCode, late.json().id]).toEqual([200, first.json().id]);
    const n = await t.db.query<{ n: string | number }>('SELECT count(*) AS n FROM transactions WHERE cancels_id = $1', [original.id]);
    expect(Number(n.rows[0]!.n)).toBe(1);
  });
});
