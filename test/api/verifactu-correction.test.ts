/**
 * POST /v1/transactions/{id}/correct (services/corrections.ts; beyond the spec): a VERI*FACTU
 * record AEAT accepted (with errors, above all) is corrected by a subsanación, a RegistroAlta
 * of the same IDFactura with Subsanacion S, chained like any record and sent by the worker.
 * Against the sandbox stub and against the fake AEAT (which holds the invoice and replaces it
 * with the subsanación). On the store TEST_STORE names (--project pglite / --project postgres).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { regFactuRequest } from '../../src/countries/es-verifactu/soap.ts';
import { SYSTEMS } from '../../src/countries/registry.ts';
import { verifyChains } from '../../src/cli/verify-chain.ts';
import type { TestApp } from '../support/harness.ts';
import type { FakeAeatVerifactu } from '../support/fake-aeat-verifactu.ts';
import { startVerifactuTestApp, verifactuAuthorityLocation } from '../support/authority-app.ts';
import { createLocation, createTx, fiscalRecordOf, getTx, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';

let t: TestApp;
let clock: ManualClock;
let aeat: FakeAeatVerifactu;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  clock = new ManualClock(new Date());
  ({ t, aeat, close } = await startVerifactuTestApp(clock));
  aeat.waitSeconds = 0;
});
afterAll(async () => {
  await close?.();
});

const CUSTOMER = { nif: 'B64717838', name: 'Cliente Ejemplo SA' };
const sale = (loc: string, over: Record<string, unknown> = {}) =>
  saleBody(loc, { timestamp: clock.now().toISOString(), customer_context: CUSTOMER, ...over });
const correct = (key: string, id: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: `/v1/transactions/${id}/correct`, key, payload: payload as object, headers });

/** The correction records of a transaction's chain, in chain order (they belong to no transaction row). */
async function correctionRecords(txId: string): Promise<{ body: string; seq: number; fingerprint: string }[]> {
  const res = await t.db.query<{ body: string; seq: number; fingerprint: string }>(
    `SELECT r.body, r.seq::int AS seq, r.fingerprint FROM transaction_corrections c JOIN fiscal_records r ON r.id = c.record_id
     WHERE c.transaction_id = $1 ORDER BY r.seq`, [txId]);
  return res.rows;
}

function expectXsdValid(body: string) {
  if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
  const valid = xsdValidate(regFactuRequest({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [body]), 'es/verifactu/SuministroLR.xsd');
  expect(valid.ok, valid.output).toBe(true);
}

async function acceptedSale(key: string, loc: string): Promise<Record<string, any>> {
  const res = await createTx(t, key, sale(loc));
  expect(res.statusCode, res.body).toBe(201);
  await t.worker.drain();
  const tx = await getTx(t, key, res.json().id);
  expect(tx.status).toBe('success');
  return tx;
}

describe('VERI*FACTU: correcting an accepted record (subsanación)', () => {
  it('stores a RegistroAlta of the same IDFactura with Subsanacion S, chained, sends it, and shows its answer on the transaction', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await acceptedSale(key, loc);
    const originalBody = await fiscalRecordOf(t, key, tx.id);

    const res = await correct(key, tx.id, { customer_context: { ...CUSTOMER, name: 'Cliente Ejemplo Sociedad Anónima' }, metadata: { description: 'Menú del día y vino' } });
    expect(res.statusCode, res.body).toBe(202);
    const pending = res.json();
    expect(pending).toMatchObject({ id: tx.id, status: 'success', amount: tx.amount, fiscal_id: tx.fiscal_id });
    expect(pending.response_payload.correction).toMatchObject({ status: 'pending', changes: { metadata: { description: 'Menú del día y vino' } } });

    const [rec] = await correctionRecords(tx.id);
    const id = /<sf:IDFactura>.*?<\/sf:IDFactura>/.exec(originalBody)![0];
    expect(rec!.body).toContain(id);
    expect(rec!.body).toContain('<sf:Subsanacion>S</sf:Subsanacion><sf:TipoFactura>F1</sf:TipoFactura>');
    expect(rec!.body).toContain('<sf:NombreRazon>Cliente Ejemplo Sociedad Anónima</sf:NombreRazon>');
    expect(rec!.body).toContain('<sf:DescripcionOperacion>Menú del día y vino</sf:DescripcionOperacion>');
    // Chained on the chain's head: the sale itself here.
    const originalHuella = /<sf:TipoHuella>01<\/sf:TipoHuella><sf:Huella>([^<]+)/.exec(originalBody)![1];
    expect(rec!.body).toContain(`<sf:Huella>${originalHuella}</sf:Huella></sf:RegistroAnterior>`);
    expectXsdValid(rec!.body);
    // The transaction keeps its record.
    expect(await fiscalRecordOf(t, key, tx.id)).toBe(originalBody);

    await t.worker.drain();
    const done = await getTx(t, key, tx.id);
    expect(done.status).toBe('success');
    expect(done.response_payload.correction).toMatchObject({ status: 'accepted', authority: { EstadoRegistro: 'Correcto' } });
    expect(done.response_payload.authority).toMatchObject({ EstadoRegistro: 'Correcto' });

    // The next record chains on the subsanación.
    const next = await createTx(t, key, sale(loc));
    expect(await fiscalRecordOf(t, key, next.json().id)).toContain(`<sf:Huella>${rec!.fingerprint}</sf:Huella></sf:RegistroAnterior>`);

    // The operator's verify-chain finds the subsanación's location through its correction, and the chain whole.
    const quiet = { start() {}, tick() {}, stop() {} };
    const verified = await verifyChains(
      { db: t.db, systems: SYSTEMS, software: t.rt.software, toFiscal: t.rt.locations.toFiscal, signingKey: async () => undefined },
      { locationIds: [loc] }, quiet,
    );
    expect(verified.chains.map((c) => [c.ok, c.records, c.break])).toEqual([[true, 3, undefined]]);
  });

  it('400 for amounts, lines, dates, the number or metadata the correction cannot change; 400 for nothing to correct', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await acceptedSale(key, loc);
    for (const [payload, field] of [
      [{ total_amount: 100 }, 'total_amount'], [{ items: [] }, 'items'], [{ timestamp: '2026-01-01T00:00:00Z' }, 'timestamp'],
      [{ metadata: { invoice_number: '9' } }, 'metadata.invoice_number'], [{ metadata: { invoice_type: 'F2' } }, 'metadata.invoice_type'],
    ] as const) {
      const res = await correct(key, tx.id, payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toContain(`${field} cannot be corrected`);
    }
    const none = await correct(key, tx.id, {});
    expect(none.statusCode).toBe(400);
    expect(none.json().error).toBe('nothing to correct: give customer_context and/or metadata');
    // An F2 names no recipient: its customer cannot be corrected (AEAT 1190).
    const ticket = await createTx(t, key, saleBody(loc, { timestamp: clock.now().toISOString() }));
    await t.worker.drain();
    const f2 = await correct(key, ticket.json().id, { customer_context: CUSTOMER });
    expect(f2.statusCode, f2.body).toBe(400);
    expect(f2.json().error).toContain('customer_context cannot be corrected on an F2 invoice');
    expect(await correctionRecords(tx.id)).toEqual([]);
  });

  it('409 unless accepted (pending, refused, cancelled, a cancellation, one correction at a time); 404 for another account\'s transaction', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const body = { metadata: { description: 'Otra descripción' } };

    const pending = await createTx(t, key, sale(loc));
    const early = await correct(key, pending.json().id, body);
    expect(early.statusCode, early.body).toBe(409);
    expect(early.json().error).toBe('transaction cannot be corrected: its status is pending; only a transaction its authority accepted (success) can be corrected');

    const refused = await createTx(t, key, sale(loc, { metadata: { sandbox_outcome: 'reject:1104' } }));
    await t.worker.drain();
    expect((await correct(key, refused.json().id, body)).statusCode).toBe(409);

    const tx = await acceptedSale(key, loc);
    const first = await correct(key, tx.id, body);
    expect(first.statusCode).toBe(202);
    const second = await correct(key, tx.id, { metadata: { description: 'Y otra' } });
    expect(second.statusCode).toBe(409);
    expect(second.json().error).toContain('still waiting for the authority');
    await t.worker.drain();

    const other = await t.signup();
    const foreign = await correct(other.key, tx.id, body);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error).toBe('transaction not found');

    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${tx.id}/cancel`, key, payload: {} });
    expect(cancel.statusCode, cancel.body).toBe(201);
    const whileCancelling = await correct(key, tx.id, body);
    expect(whileCancelling.statusCode).toBe(409);
    await t.worker.drain();
    expect((await correct(key, tx.id, body)).statusCode).toBe(409);
    const ofCancellation = await correct(key, cancel.json().id, body);
    expect(ofCancellation.statusCode).toBe(409);
    expect(ofCancellation.json().error).toContain('a cancellation cannot be corrected');
  });

  it('a system without corrections answers 409', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    const res = await createTx(t, key, saleBody(loc, { timestamp: clock.now().toISOString() }));
    expect(res.statusCode, res.body).toBe(201);
    await t.worker.drain();
    expect((await getTx(t, key, res.json().id)).status).toBe('success');
    const refused = await correct(key, res.json().id, { metadata: { description: 'x' } });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().error).toContain('es-ticketbai records cannot be corrected');
  });

  it('Idempotency-Key: the same key and body answer the transaction again (200, no second record); another body is a 409', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await acceptedSale(key, loc);
    const headers = { 'idempotency-key': 'fix-1' };
    const body = { metadata: { description: 'Corregida' } };
    expect((await correct(key, tx.id, body, headers)).statusCode).toBe(202);
    const again = await correct(key, tx.id, body, headers);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().response_payload.correction.status).toBe('pending');
    const other = await correct(key, tx.id, { metadata: { description: 'Otra' } }, headers);
    expect(other.statusCode).toBe(409);
    expect(other.json().error).toBe('idempotency key already used with a different request');
    await t.worker.drain();
    // After it was answered too.
    const late = await correct(key, tx.id, body, headers);
    expect(late.statusCode).toBe(200);
    expect(late.json().response_payload.correction.status).toBe('accepted');
    expect(await correctionRecords(tx.id)).toHaveLength(1);
  });

  it('Idempotency-Key, as a create\'s (r1: the text as received): the same JSON in other words is the same correction; another body, or the same body for another transaction, a 409', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await acceptedSale(key, loc);
    const headers = { 'idempotency-key': 'fix-words' };
    const body = { customer_context: { nif: 'B64717838', name: 'Cliente Ejemplo Corregido SA' }, metadata: { description: 'Corregida' }, sandbox_outcome: 'accept' };
    expect((await correct(key, tx.id, body, headers)).statusCode).toBe(202);
    const stored = await t.db.query<{ request_hash: string }>('SELECT request_hash FROM transaction_corrections WHERE transaction_id = $1', [tx.id]);
    expect(stored.rows[0]!.request_hash).toMatch(/^r1::[0-9a-f]{64}$/);
    // The same value written otherwise: keys in reverse order (nested ones too), indented.
    const reversed = (o: Record<string, unknown>): Record<string, unknown> =>
      Object.fromEntries(Object.entries(o).reverse().map(([k, v]) => [k, v !== null && typeof v === 'object' ? reversed(v as Record<string, unknown>) : v]));
    const again = await t.request({
      method: 'POST', url: `/v1/transactions/${tx.id}/correct`, key, payload: JSON.stringify(reversed(body), null, 2), headers: { 'content-type': 'application/json', ...headers },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().id).toBe(tx.id);
    expect(again.json().response_payload.correction.id).toBe((await getTx(t, key, tx.id)).response_payload.correction.id);
    // Another value under the key: 409, written alike or not.
    expect((await correct(key, tx.id, { ...body, sandbox_outcome: 'reject:3000' }, headers)).statusCode).toBe(409);
    const other = await correct(key, tx.id, { ...body, metadata: { description: 'Otra' } }, headers);
    expect(other.statusCode).toBe(409);
    expect(other.json().error).toBe('idempotency key already used with a different request');
    // The same text for another transaction is another request.
    const second = await acceptedSale(key, loc);
    const elsewhere = await correct(key, second.id, body, headers);
    expect(elsewhere.statusCode, elsewhere.body).toBe(409);
    expect(elsewhere.json().error).toBe('idempotency key already used with a different request');
    expect(await correctionRecords(tx.id)).toHaveLength(1);
    expect(await correctionRecords(second.id)).toHaveLength(0);
  });

  it('a correction stored with the older hash (stable JSON of the request as read) still answers its retries; another body is a 409', async () => {
    const { stableHash } = await import('../../src/core/stable-json.ts');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await acceptedSale(key, loc);
    const headers = { 'idempotency-key': 'fix-legacy' };
    const body = { metadata: { description: 'Corregida' }, sandbox_outcome: ' accept ' };
    expect((await correct(key, tx.id, body, headers)).statusCode).toBe(202);
    // As the endpoint hashed a correction before r1: the transaction, the changes, the outcome read.
    const legacy = stableHash({ transaction: tx.id, changes: { metadata: { description: 'Corregida' } }, sandbox_outcome: 'accept' });
    await t.db.query('UPDATE transaction_corrections SET request_hash = $2 WHERE transaction_id = $1', [tx.id, legacy]);
    const again = await correct(key, tx.id, { sandbox_outcome: 'accept', metadata: { description: 'Corregida' } }, headers);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().id).toBe(tx.id);
    expect((await correct(key, tx.id, { metadata: { description: 'Otra' }, sandbox_outcome: 'accept' }, headers)).statusCode).toBe(409);
    expect(await correctionRecords(tx.id)).toHaveLength(1);
  });

  it('a refused correction leaves the accepted answer; the next one goes as S/S (alta por rechazo de una subsanación)', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await acceptedSale(key, loc);
    const res = await correct(key, tx.id, { metadata: { description: 'Mal' }, sandbox_outcome: 'reject:1104' });
    expect(res.statusCode).toBe(202);
    await t.worker.drain();
    const after = await getTx(t, key, tx.id);
    expect(after.status).toBe('success');
    expect(after.response_payload.authority).toEqual(tx.response_payload.authority);
    expect(after.response_payload.correction).toMatchObject({ status: 'rejected', error: { code: '1104' } });

    expect((await correct(key, tx.id, { metadata: { description: 'Bien' } })).statusCode).toBe(202);
    const records = await correctionRecords(tx.id);
    expect(records).toHaveLength(2);
    expect(records[0]!.body).not.toContain('<sf:RechazoPrevio>');
    expect(records[1]!.body).toContain('<sf:Subsanacion>S</sf:Subsanacion><sf:RechazoPrevio>S</sf:RechazoPrevio>');
    expectXsdValid(records[1]!.body);
    await t.worker.drain();
    expect((await getTx(t, key, tx.id)).response_payload.correction.status).toBe('accepted');
  });

  it('against the fake AEAT: an invoice accepted with errors (2xxx) is corrected, AEAT answers Correcto and the warnings go', async () => {
    const { key, nif, loc } = await verifactuAuthorityLocation(t);
    aeat.behave({ kind: 'acceptWithErrors', code: '2001', description: 'El NIF del destinatario no está identificado.' });
    const res = await createTx(t, key, sale(loc), { 'x-svc-sandbox': 'authority' });
    expect(res.statusCode, res.body).toBe(201);
    await t.worker.drain();
    const accepted = await getTx(t, key, res.json().id);
    expect(accepted.status).toBe('success');
    expect(accepted.response_payload.warnings?.length).toBeGreaterThan(0);

    aeat.behave({ kind: 'normal' });
    const fix = await correct(key, accepted.id, { customer_context: { nif: 'B64717838', name: 'Cliente Corregido SA' } });
    expect(fix.statusCode, fix.body).toBe(202);
    await t.worker.drain();
    const done = await getTx(t, key, accepted.id);
    expect(done.status).toBe('success');
    expect(done.response_payload.correction).toMatchObject({ status: 'accepted', replaced: { warnings: accepted.response_payload.warnings } });
    expect(done.response_payload.warnings).toBeUndefined();
    expect(JSON.stringify(done.response_payload.authority)).toContain('Correcto');
    // AEAT received the subsanación after the alta, and holds it in place of the alta.
    const last = aeat.submissions.at(-1)!;
    expect(last.records).toEqual([expect.stringMatching(/^Alta /)]);
    expect(aeat.held(nif).filter((h) => h.type === 'Alta').map((h) => h.estado)).toEqual(['AceptadaConErrores', 'Correcta']);
  });
});
