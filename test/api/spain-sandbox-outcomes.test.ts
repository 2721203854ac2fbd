import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { configs, ES_NIF } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, getTx, saleBody, saleMetadata } from '../support/transactions.ts';

/*
 * Spain's sandbox stubs (test keys, no X-Svc-Sandbox) answer `sandbox_outcome:
 * "reject:<code>"` as the real clients read that code from the authority: an "already
 * registered" code is a duplicate (success) only for the service the record goes to.
 * TicketBAI Araba/Gipuzkoa: 005 and 019 for an alta, 019 alone for an annulment; Bizkaia's
 * LROE: B4_2000003 for an alta, B4_2000006 for an annulment; AEAT (VERI*FACTU, SII): 3000,
 * and 3001 on an annulment only. A cancellation's outcome is its own (the cancel body's
 * `sandbox_outcome`, docs/decisions.md "A cancellation's own sandbox outcome").
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T10:00:00.000Z'), random: () => 0.5 });
});
afterAll(() => t.close());

type Territory = 'gipuzkoa' | 'araba' | 'bizkaia';
const { certificate_id: _sandboxSigns, ...ticketBaiStub } = configs.ticketbai;

async function ticketBaiLocation(key: string, territory: Territory): Promise<string> {
  const res = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { name: `Bar ${territory}`, country: 'ES', address: 'Kale Nagusia 1', tax_id: ES_NIF, country_config: { ...ticketBaiStub, territory } },
  });
  expect(res.statusCode, res.body).toBe(201);
  if (territory === 'bizkaia') lroeKeys.add(key);
  return res.json().id;
}

/** Bizkaia's keys: their records go through the LROE batch. */
const lroeKeys = new Set<string>();

/** Lets the authority answer: the worker's submit jobs, and Bizkaia's LROE batch. */
async function settle(key: string): Promise<void> {
  await t.worker.drain();
  if (!lroeKeys.has(key)) return;
  const res = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key });
  expect(res.statusCode, res.body).toBe(200);
  await t.worker.drain(); // the translations of the refusals
}

async function sold(key: string, loc: string, metadata: Record<string, unknown> = {}) {
  const res = await createTx(t, key, saleBody(loc, { metadata }));
  expect(res.statusCode, res.body).toBe(201);
  await settle(key);
  return getTx(t, key, res.json().id);
}

async function cancelled(key: string, id: string, outcome: string) {
  const res = await t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key, payload: { sandbox_outcome: outcome } });
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().request_payload).toEqual({ reason: null, sandbox_outcome: outcome });
  await settle(key);
  return getTx(t, key, res.json().id);
}

/** A cancellation the stub refused: failed_permanent with the code; its original still stands. */
async function expectRefused(key: string, originalId: string, cancellation: Record<string, any>, code: string): Promise<void> {
  expect(cancellation).toMatchObject({ status: 'failed_permanent', cancels_transaction_id: originalId, error_message: expect.any(String) });
  expect(cancellation.response_payload.submit_error).toMatchObject({ error_code: code });
  expect(cancellation.response_payload.duplicate).toBeUndefined();
  expect(await getTx(t, key, originalId)).toMatchObject({ status: 'success', cancellation_transaction_id: null });
}

/** A cancellation the stub read as already registered: success, the original cancelled. */
async function expectHeld(key: string, originalId: string, cancellation: Record<string, any>): Promise<void> {
  expect(cancellation).toMatchObject({ status: 'success', error_message: null });
  expect(cancellation.response_payload.duplicate).toBe(true);
  expect(await getTx(t, key, originalId)).toMatchObject({ status: 'cancelled', cancellation_transaction_id: cancellation.id });
}

describe('TicketBAI cancellations in the sandbox stub', () => {
  it.each(['gipuzkoa', 'araba'] as const)('%s: reject:<code> refuses the annulment, the alta\'s duplicate code (005) and Batuz\'s codes included; 019 is the annulment\'s duplicate', async (territory) => {
    const { key } = await t.signup();
    const loc = await ticketBaiLocation(key, territory);
    const sale = await sold(key, loc);
    expect(sale.status).toBe('success');
    for (const code of ['1234', '005', 'B4_2000003', 'B4_2000006']) {
      await expectRefused(key, sale.id, await cancelled(key, sale.id, `reject:${code}`), code);
    }
    await expectHeld(key, sale.id, await cancelled(key, sale.id, 'reject:019'));
  });

  it('bizkaia (LROE): reject:<code> refuses the annulment, B4_2000003 (the alta\'s duplicate) and 019 included; B4_2000006 is the annulment\'s duplicate', async () => {
    const { key } = await t.signup();
    const loc = await ticketBaiLocation(key, 'bizkaia');
    const sale = await sold(key, loc);
    expect(sale.status).toBe('success');
    for (const code of ['1234', 'B4_2000003', '019', '005']) {
      await expectRefused(key, sale.id, await cancelled(key, sale.id, `reject:${code}`), code);
    }
    await expectHeld(key, sale.id, await cancelled(key, sale.id, 'reject:B4_2000006'));
  });

  it('bizkaia (LROE): an alta answered B4_2000006 (the annulment\'s duplicate) is refused; B4_2000003 is its duplicate', async () => {
    const { key } = await t.signup();
    const loc = await ticketBaiLocation(key, 'bizkaia');
    const refused = await sold(key, loc, { sandbox_outcome: 'reject:B4_2000006' });
    expect(refused).toMatchObject({ status: 'failed_permanent' });
    expect(refused.response_payload.submit_error).toMatchObject({ error_code: 'B4_2000006' });
    const held = await sold(key, loc, { sandbox_outcome: 'reject:B4_2000003' });
    expect(held).toMatchObject({ status: 'success' });
    expect(held.response_payload.duplicate).toBe(true);
  });
});

describe('AEAT cancellations in the sandbox stub', () => {
  it.each(['es-verifactu', 'es-sii'] as const)('%s: 3001 (already annulled) is the annulment\'s duplicate, a refusal of an alta; other codes refuse the annulment', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system);
    const meta = saleMetadata[system] ?? {};
    const refusedSale = await sold(key, loc, { ...meta, sandbox_outcome: 'reject:3001' });
    expect(refusedSale.status).toBe('failed_permanent');
    expect(refusedSale.response_payload.submit_error).toMatchObject({ error_code: '3001' });

    const sale = await sold(key, loc, meta);
    expect(sale.status).toBe('success');
    await expectRefused(key, sale.id, await cancelled(key, sale.id, 'reject:4102'), '4102');
    await expectHeld(key, sale.id, await cancelled(key, sale.id, 'reject:3001'));
  });

  it('VERI*FACTU: a duplicate answers as AEAT\'s does, without a CSV: success, fiscal_id null, and response_payload.warnings says why', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const dup = await sold(key, loc, { sandbox_outcome: 'reject:3000' });
    expect(dup).toMatchObject({ status: 'success', fiscal_id: null, error_message: null });
    expect(dup.response_payload.duplicate).toBe(true);
    expect(dup.response_payload.authority).toMatchObject({ EstadoEnvio: 'Incorrecto', EstadoRegistro: 'Incorrecto', CodigoErrorRegistro: '3000' });
    expect(dup.response_payload.authority.CSV).toBeUndefined();
    expect(dup.response_payload.warnings).toEqual([expect.stringMatching(/^3000: AEAT already holds this record\. .*no fiscal_id/)]);
    // An accepted record has its CSV, and no warning.
    const ok = await sold(key, loc);
    expect(ok.fiscal_id).toMatch(/^[A-Z0-9]{16}$/);
    expect(ok.response_payload.warnings).toBeUndefined();
  });
});
