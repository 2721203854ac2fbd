import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { corrispettiviRepo } from '../../src/store/repos/corrispettivi-repo.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { saftFilesRepo } from '../../src/store/repos/saft-files-repo.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';

const saleBodyPt = (loc: string) => saleBody(loc, { timestamp: '2026-05-10T10:00:00Z', items: [{ description: 'Prato', quantity: 1, unit_price: 1200, tax_rate: 23, tax_amount: 276, total_amount: 1476 }], pretax_amount: 1200, tax_amount: 276, total_amount: 1476 });

/*
 * Batch processors that stop half-way (batch audit): a stored record a processor's builder
 * cannot read is that unit's failure (a day, a month), counted in the run's result and
 * in GET /v1/admin/batch-stats; the run goes on with the other locations and days, and the
 * unit is tried again on the next run. Before: one unreadable day of one Italian register
 * stopped the account's whole `italy/corrispettivi` run, every night, with nothing in the
 * counters (failed 0, failure_rate 0, no alert).
 */

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-02T08:00:00.000Z');
  t = await startTestApp({ clock });
});
afterAll(() => t?.close());

const ITEMS = {
  items: [
    { description: 'Pizza', quantity: 1, unit_price: 800, tax_rate: 10, tax_amount: 80, total_amount: 880 },
    { description: 'Vino', quantity: 1, unit_price: 1500, tax_rate: 22, tax_amount: 330, total_amount: 1830 },
  ],
  pretax_amount: 2300, tax_amount: 410, total_amount: 2710,
};

async function sale(key: string, loc: string) {
  const res = await createTx(t, key, { location_id: loc, timestamp: clock.now().toISOString(), currency: 'EUR', payment_method: 'cash', ...ITEMS });
  expect(res.statusCode, res.body).toBe(201);
  await t.worker.drain();
  return res.json() as { id: string };
}

async function italy(key: string) {
  const res = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key });
  expect([200, 207], res.body).toContain(res.statusCode);
  return (res.json().results as Array<Record<string, any>>).find((r) => r.processor === 'italy/corrispettivi')!;
}

describe('italy/corrispettivi: a day that cannot be built', () => {
  it('counts as failed, is retried on the next run, and does not hold back the other registers and days', async () => {
    const { key } = await t.signup();
    const broken = await createLocation(t, key, 'it-dc', { country_config: { system: 'dc', codice_fiscale: '01234567897', legal_name: 'Esempio Srl', cau_code: 'A1B2', pem_matricola: '99AB-000001', seal_certificate_id: 'seal_1', partita_iva: '01234567897' } });
    const fine = await createLocation(t, key, 'it-dc', { country_config: { system: 'dc', codice_fiscale: '01234567897', legal_name: 'Esempio Srl', cau_code: 'A1B2', pem_matricola: '99AB-000002', seal_certificate_id: 'seal_1', partita_iva: '01234567897' } });
    clock.set('2026-03-02T08:00:00.000Z');
    const bad = await sale(key, broken);
    await sale(key, fine);
    clock.set('2026-03-03T08:00:00.000Z');
    await sale(key, fine);
    // A stored transaction the day's builder cannot read (a 0 % line without a Natura code).
    await t.db.query(
      `UPDATE transactions SET normalized = jsonb_set(normalized::jsonb, '{items,0,tax_rate}', '0')::jsonb WHERE id = $1`, [bad.id]);

    clock.set('2026-03-04T01:00:00.000Z');
    const run = await italy(key);
    expect(run).toMatchObject({ status: 'completed', batches_created: 2, accepted: 2, failed: 1, errors_count: 1 });
    expect(run.errors[0]).toMatchObject({ code: 'corrispettivi_build_error', kind: 'corrispettivi', records: 1 });
    expect(run.errors[0].message).toMatch(/^2026-03-02: corrispettivi: /);
    expect(run.failure_rate).toBeCloseTo(1 / 3);
    expect(run.alert_triggered).toBe(true);
    for (const day of ['2026-03-02', '2026-03-03']) {
      expect(await corrispettiviRepo.get(t.db, { locationId: fine, environment: 'test', matricola: '99AB-000002', day })).toMatchObject({ status: 'accepted' });
    }
    expect(await corrispettiviRepo.get(t.db, { locationId: broken, environment: 'test', matricola: '99AB-000001', day: '2026-03-02' })).toBeUndefined();

    const stats = (await t.request({ method: 'GET', url: '/v1/admin/batch-stats', key })).json().stats as Array<Record<string, any>>;
    expect(stats.find((s) => s.processor === 'italy/corrispettivi')).toMatchObject({ batches_created: 2, accepted: 2, failed: 1 });

    // Repaired: the next run sends the day, once.
    await t.db.query(
      `UPDATE transactions SET normalized = jsonb_set(normalized::jsonb, '{items,0,tax_rate}', '10')::jsonb WHERE id = $1`, [bad.id]);
    expect(await italy(key)).toMatchObject({ batches_created: 1, accepted: 1, failed: 0 });
    expect(await italy(key)).toMatchObject({ batches_created: 0, accepted: 0, failed: 0 });
  });
});

describe('a processor stopped by an unexpected error', () => {
  it('italy/corrispettivi: the day it stopped on is counted failed (result and stats), and sent by a later run', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'it-dc', { country_config: { system: 'dc', codice_fiscale: '01234567897', legal_name: 'Esempio Srl', cau_code: 'A1B2', pem_matricola: '99AB-000003', seal_certificate_id: 'seal_1', partita_iva: '01234567897' } });
    clock.set('2026-04-02T08:00:00.000Z');
    const s = await sale(key, loc);
    const original = (await t.db.query<{ normalized: unknown }>('SELECT normalized FROM transactions WHERE id = $1', [s.id])).rows[0]!.normalized;
    // Not a builder's refusal: an error the processor does not expect (no lines at all).
    await t.db.query(`UPDATE transactions SET normalized = jsonb_set(normalized::jsonb, '{items}', 'null')::jsonb WHERE id = $1`, [s.id]);
    clock.set('2026-04-03T01:00:00.000Z');
    const run = await italy(key);
    expect(run).toMatchObject({ status: 'failed', batches_created: 0, accepted: 0, failed: 1, failure_rate: 1, alert_triggered: true });
    const stats = (await t.request({ method: 'GET', url: '/v1/admin/batch-stats', key })).json().stats as Array<Record<string, any>>;
    expect(stats.find((x) => x.processor === 'italy/corrispettivi')).toMatchObject({ failed: 1, failure_rate: 1 });

    await t.db.query('UPDATE transactions SET normalized = $2 WHERE id = $1', [s.id, JSON.stringify(original)]);
    expect(await italy(key)).toMatchObject({ status: 'completed', batches_created: 1, accepted: 1, failed: 0 });
  });

  it('portugal/saft: the month it stopped on counts its documents failed, and is produced by a later run', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    clock.set('2026-05-10T10:00:00.000Z');
    const one = (await createTx(t, key, { ...saleBodyPt(loc), metadata: { document_type: 'FT' }, customer_context: { nif: '500000000', name: 'Empresa, S.A.' } })).json() as { id: string };
    expect((await createTx(t, key, saleBodyPt(loc))).statusCode).toBe(201);
    const original = (await t.db.query<{ normalized: unknown }>('SELECT normalized FROM transactions WHERE id = $1', [one.id])).rows[0]!.normalized;
    // Not a builder's refusal: an error the processor does not expect (the document's transaction unreadable).
    await t.db.query(`UPDATE transactions SET normalized = 'null'::jsonb WHERE id = $1`, [one.id]);
    clock.set('2026-06-01T02:00:00.000Z');
    const res = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key });
    const run = (res.json().results as Array<Record<string, any>>).find((r) => r.processor === 'portugal/saft')!;
    expect(run).toMatchObject({ status: 'failed', batches_created: 0, accepted: 0, failed: 2, failure_rate: 1, alert_triggered: true });
    const stats = (await t.request({ method: 'GET', url: '/v1/admin/batch-stats', key })).json().stats as Array<Record<string, any>>;
    expect(stats.find((x) => x.processor === 'portugal/saft')).toMatchObject({ failed: 2 });
    expect(await saftFilesRepo.get(t.db, { locationId: loc, environment: 'test', period: '2026-05' })).toBeUndefined();

    await t.db.query('UPDATE transactions SET normalized = $2 WHERE id = $1', [one.id, JSON.stringify(original)]);
    const again = (await t.request({ method: 'POST', url: '/v1/admin/process-pending', key })).json().results.find((r: { processor: string }) => r.processor === 'portugal/saft');
    expect(again).toMatchObject({ status: 'completed', batches_created: 1, accepted: 2, failed: 0 });
  });
});
