/**
 * What a correction's outcome does beyond the transaction's `response_payload`
 * (POST /v1/transactions/{id}/correct, services/corrections.ts; beyond the spec):
 * - the sandbox stub refuses a correction rehearsing an "already registered" code
 *   (`sandbox_outcome: 'reject:3000'`), and so does the worker when an authority answers a
 *   correction so (the fake AEAT);
 * - the outcome is announced: `transaction.corrected` / `transaction.correction_failed`,
 *   delivered to a real webhook receiver, signed.
 * On the store TEST_STORE names (--project pglite / --project postgres).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { CORRECTION_NOT_APPLIED } from '../../src/jobs/tasks/submit-correction.ts';
import type { TestApp } from '../support/harness.ts';
import type { FakeAeatVerifactu } from '../support/fake-aeat-verifactu.ts';
import { startVerifactuTestApp, verifactuAuthorityLocation } from '../support/authority-app.ts';
import { createLocation, createTx, getTx, saleBody } from '../support/transactions.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

let t: TestApp;
let clock: ManualClock;
let aeat: FakeAeatVerifactu;
let receiver: WebhookReceiver;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  clock = new ManualClock(new Date());
  ({ t, aeat, close } = await startVerifactuTestApp(clock));
  aeat.waitSeconds = 0;
  receiver = await startWebhookReceiver({ now: () => clock.now().getTime() });
});
afterAll(async () => {
  await receiver?.close();
  await close?.();
});

const CUSTOMER = { nif: 'B64717838', name: 'Cliente Ejemplo SA' };
const correct = (key: string, id: string, payload: unknown) =>
  t.request({ method: 'POST', url: `/v1/transactions/${id}/correct`, key, payload: payload as object });

async function accepted(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Record<string, any>> {
  const res = await createTx(t, key, body, headers);
  expect(res.statusCode, res.body).toBe(201);
  await t.worker.drain();
  const tx = await getTx(t, key, res.json().id);
  expect(tx.status, JSON.stringify(tx.response_payload)).toBe('success');
  return tx;
}

async function subscribe(key: string, events: string[]) {
  const res = await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: receiver.url, events } });
  expect(res.statusCode, res.body).toBe(201);
  receiver.secret = res.json().secret;
}

describe('a correction refused as "already registered"', () => {
  it('VERI*FACTU stub: sandbox_outcome reject:3000 on a correction is a refused correction, the accepted answer kept', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await accepted(key, saleBody(loc, { timestamp: clock.now().toISOString(), customer_context: CUSTOMER }));
    const res = await correct(key, tx.id, { metadata: { description: 'Corregida' }, sandbox_outcome: 'reject:3000' });
    expect(res.statusCode, res.body).toBe(202);
    await t.worker.drain();
    const after = await getTx(t, key, tx.id);
    expect(after.status).toBe('success');
    expect(after.response_payload.correction).toMatchObject({ status: 'rejected', error: { code: '3000' } });
    expect(after.response_payload.authority).toEqual(tx.response_payload.authority);
  });

  it('SII stub: the same', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const tx = await accepted(key, saleBody(loc, { timestamp: clock.now().toISOString(), metadata: { counterparty_nif: 'B64717838', counterparty_name: 'Cliente Ejemplo SA' } }));
    const res = await correct(key, tx.id, { metadata: { counterparty_name: 'Cliente Corregido SA' }, sandbox_outcome: 'reject:3000' });
    expect(res.statusCode, res.body).toBe(202);
    await t.worker.drain();
    const after = await getTx(t, key, tx.id);
    expect(after.response_payload.correction).toMatchObject({ status: 'rejected', error: { code: '3000' } });
    expect(after.response_payload.authority).toEqual(tx.response_payload.authority);
  });

  it('fake AEAT answering 3000 to the subsanación: refused (not applied), the warnings of the record AEAT holds kept', async () => {
    const { key, loc } = await verifactuAuthorityLocation(t);
    aeat.behave({ kind: 'acceptWithErrors', code: '2001', description: 'El NIF del destinatario no está identificado.' });
    const tx = await accepted(key, saleBody(loc, { timestamp: clock.now().toISOString(), customer_context: CUSTOMER }), { 'x-svc-sandbox': 'authority' });
    expect(tx.response_payload.warnings?.length).toBeGreaterThan(0);
    aeat.behave({ kind: 'reject', code: '3000', description: 'Registro de facturación duplicado.' });
    try {
      expect((await correct(key, tx.id, { customer_context: { ...CUSTOMER, name: 'Cliente Corregido SA' } })).statusCode).toBe(202);
      await t.worker.drain();
    } finally {
      aeat.behave({ kind: 'normal' });
    }
    const after = await getTx(t, key, tx.id);
    expect(after.response_payload.correction).toMatchObject({ status: 'rejected', error: { code: CORRECTION_NOT_APPLIED } });
    expect(after.response_payload.warnings).toEqual(tx.response_payload.warnings);
    expect(after.response_payload.authority).toEqual(tx.response_payload.authority);
  });
});

describe('webhook events of a correction\'s outcome', () => {
  it('transaction.correction_failed when refused, transaction.corrected when accepted: signed, retry-entry shaped, with the correction', async () => {
    const { key, accountId } = await t.signup();
    await subscribe(key, ['transaction.corrected', 'transaction.correction_failed']);
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await accepted(key, saleBody(loc, { timestamp: clock.now().toISOString(), customer_context: CUSTOMER }));
    receiver.received.length = 0;

    expect((await correct(key, tx.id, { metadata: { description: 'Mal' }, sandbox_outcome: 'reject:1104' })).statusCode).toBe(202);
    await t.worker.drain(); // the correction, then the delivery it enqueued
    expect(receiver.received.map((r) => r.json.event)).toEqual(['transaction.correction_failed']);
    const failed = receiver.received[0]!;
    expect(failed.check(receiver.secret!).all).toBe(true);
    expect(failed.json).toMatchObject({
      transaction_id: tx.id, account_id: accountId, status: 'dead', attempt: 1, last_error: expect.stringContaining('1104'),
      transaction: { id: tx.id, status: 'success', fiscal_id: tx.fiscal_id },
      correction: { status: 'rejected', error: { code: '1104' }, changes: { metadata: { description: 'Mal' } } },
    });
    expect(failed.json.entry_id).toEqual(expect.any(String));

    receiver.received.length = 0;
    expect((await correct(key, tx.id, { metadata: { description: 'Bien' } })).statusCode).toBe(202);
    await t.worker.drain();
    expect(receiver.received.map((r) => r.json.event)).toEqual(['transaction.corrected']);
    const done = receiver.received[0]!;
    expect(done.check(receiver.secret!).all).toBe(true);
    expect(done.json).toMatchObject({
      transaction_id: tx.id, status: 'completed', last_error: null,
      transaction: { id: tx.id, status: 'success' },
      correction: { status: 'accepted', changes: { metadata: { description: 'Bien' } }, authority: { EstadoRegistro: 'Correcto' } },
    });
    // Its id is the correction's own event, not the transaction's fiscalization.
    expect((await getTx(t, key, tx.id)).response_payload.correction.id).toBe(done.json.correction.id);
  });

  it('a subscription to the transaction\'s own events hears nothing of a correction', async () => {
    const { key } = await t.signup();
    await subscribe(key, ['fiscalization.completed', 'fiscalization.dead_letter']);
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await accepted(key, saleBody(loc, { timestamp: clock.now().toISOString(), customer_context: CUSTOMER }));
    receiver.received.length = 0;
    expect((await correct(key, tx.id, { metadata: { description: 'Mal' }, sandbox_outcome: 'reject:1104' })).statusCode).toBe(202);
    await t.worker.drain();
    expect((await correct(key, tx.id, { metadata: { description: 'Bien' } })).statusCode).toBe(202);
    await t.worker.drain();
    expect(receiver.received).toEqual([]);
  });
});

describe('the receipt after a correction', () => {
  const receipt = async (key: string, id: string): Promise<string> => {
    const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/receipt?format=text`, key });
    expect(res.statusCode, res.body).toBe(200);
    return res.body;
  };

  it('VERI*FACTU: prints the recipient of a full invoice; after an accepted correction, the corrected one (a refused one changes nothing)', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await accepted(key, saleBody(loc, { timestamp: clock.now().toISOString(), customer_context: CUSTOMER }));
    const before = await receipt(key, tx.id);
    expect(before).toContain('\nDestinatario: Cliente Ejemplo SA\nNIF destinatario: B64717838\n');

    expect((await correct(key, tx.id, { customer_context: { nif: 'A39200019', name: 'Otro Cliente SL' }, sandbox_outcome: 'reject:1104' })).statusCode).toBe(202);
    await t.worker.drain();
    expect(await receipt(key, tx.id)).toBe(before);

    expect((await correct(key, tx.id, { customer_context: { nif: 'A39200019', name: 'Cliente Corregido SL' } })).statusCode).toBe(202);
    expect(await receipt(key, tx.id)).toBe(before); // pending: AEAT holds the invoice as created
    await t.worker.drain();
    const after = await receipt(key, tx.id);
    expect(after).toContain('\nDestinatario: Cliente Corregido SL\nNIF destinatario: A39200019\n');
    expect(after).not.toContain('Cliente Ejemplo SA');
    // The stored draft is as created.
    expect((await getTx(t, key, tx.id)).request_payload).toMatchObject({ customer_context: CUSTOMER });
    const { rows } = await t.db.query<{ normalized: { customer_context: unknown } }>('SELECT normalized FROM transactions WHERE id = $1', [tx.id]);
    expect(rows[0]!.normalized.customer_context).toMatchObject(CUSTOMER);
  });

  it('VERI*FACTU: the recipient\'s domicile (customer_context) and the given description print, as corrected once accepted', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const tx = await accepted(key, saleBody(loc, {
      timestamp: clock.now().toISOString(), customer_context: { ...CUSTOMER, address: 'Calle Mayor 5, Madrid', postal_code: '28013' }, metadata: { description: 'Cena de empresa' },
    }));
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    expect(flat(await receipt(key, tx.id))).toContain('NIF destinatario: B64717838 Domicilio destinatario: Calle Mayor 5, Madrid, 28013 Descripción: Cena de empresa -----');
    expect((await correct(key, tx.id, { customer_context: { ...CUSTOMER, address: 'Gran Vía 2, Madrid', postal_code: '28013' } })).statusCode).toBe(202);
    await t.worker.drain();
    const after = flat(await receipt(key, tx.id));
    expect(after).toContain('NIF destinatario: B64717838 Domicilio destinatario: Gran Vía 2, Madrid, 28013 Descripción: Cena de empresa -----');
    expect(after).not.toContain('Calle Mayor 5');
  });

  it('SII: the counterparty as corrected (metadata.counterparty_*); a simplified invoice names none', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const tx = await accepted(key, saleBody(loc, {
      timestamp: clock.now().toISOString(), customer_context: { address: 'Calle Mayor 5', postal_code: '28013' }, metadata: { counterparty_nif: 'B64717838', counterparty_name: 'Cliente Ejemplo SA' },
    }));
    // The domicile customer_context gives (the SII record has no field for it: RD 1619/2012 art. 6.1.e).
    expect(await receipt(key, tx.id)).toContain('\nDestinatario: Cliente Ejemplo SA\nNIF destinatario: B64717838\nDomicilio destinatario: Calle Mayor 5, 28013\n');
    expect((await correct(key, tx.id, { metadata: { counterparty_name: 'Cliente Corregido SA' } })).statusCode).toBe(202);
    await t.worker.drain();
    const after = await receipt(key, tx.id);
    expect(after).toContain('\nDestinatario: Cliente Corregido SA\nNIF destinatario: B64717838\nDomicilio destinatario: Calle Mayor 5, 28013\n');
    expect(after).not.toContain('Cliente Ejemplo SA');

    const ticket = await accepted(key, saleBody(loc, { timestamp: clock.now().toISOString(), metadata: { simplified: true } }));
    expect(await receipt(key, ticket.id)).not.toContain('Destinatario');
  });
});
