/**
 * The SII envelope's `Cabecera/Titular` is the holder of the books as the invoice was issued
 * (es-sii/soap.ts `titularFor`): a PATCH of the location's legal name between the sale and
 * its background submission (or a retry hours later) does not change what AEAT receives.
 * A correction (A1) and a cancellation's baja go under the Titular of the invoice they
 * modify or withdraw. Against the fake AEAT SII; on the store TEST_STORE names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { TestApp } from '../support/harness.ts';
import { startAuthorityTestApp } from '../support/authority-app.ts';
import { startFakeAeatSii, type FakeAeatSii } from '../support/fake-aeat-sii.ts';
import { freshNif, uploadSpainCertificate } from '../support/spain.ts';
import { createTx, getTx, saleBody } from '../support/transactions.ts';

let t: TestApp;
let clock: ManualClock;
let aeat: FakeAeatSii;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  clock = new ManualClock(new Date());
  ({ t, aeat, close } = await startAuthorityTestApp(clock, 'es-sii', startFakeAeatSii));
});
afterAll(async () => {
  await close?.();
});

const AUTHORITY = { 'x-svc-sandbox': 'authority' };
/** The Titular of a SOAP message sent, as NombreRazon|NIF. */
const titularOfSent = (xml: string): string => {
  const titular = /<sii:Titular>([\s\S]*?)<\/sii:Titular>/.exec(xml)![1]!;
  return `${/<sii:NombreRazon>([^<]*)</.exec(titular)![1]}|${/<sii:NIF>([^<]*)</.exec(titular)![1]}`;
};

/** A new account's SII location (legal name "Ejemplo Sevilla SL") with its own NIF and certificate. */
async function siiLocation(): Promise<{ key: string; nif: string; loc: string; config: Record<string, unknown> }> {
  const { key } = await t.signup();
  const nif = freshNif();
  const cert = await uploadSpainCertificate(t, key, nif);
  const config = { system: 'sii', legal_name: 'Ejemplo Sevilla SL', certificate_id: cert.certificateId };
  const created = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { name: `Tienda ${nif}`, country: 'ES', address: 'Calle Sierpes 1', tax_id: nif, country_config: config },
  });
  expect(created.statusCode, created.body).toBe(201);
  return { key, nif, loc: created.json().id as string, config };
}

describe('SII: the Titular sent is the one the invoice was issued under', () => {
  it('a PATCH of the legal name before the worker sends does not change the NombreRazon AEAT receives', async () => {
    const { key, nif, loc, config } = await siiLocation();

    const sale = await createTx(t, key, saleBody(loc, { timestamp: clock.now().toISOString(), metadata: { counterparty_nif: 'B64717838', counterparty_name: 'Cliente Ejemplo SA' } }), AUTHORITY);
    expect(sale.statusCode, sale.body).toBe(201);
    // Renamed after the sale, before its submission.
    const patched = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...config, legal_name: 'Nombre Nuevo SL' } } });
    expect(patched.statusCode, patched.body).toBe(200);

    const before = aeat.requests.length;
    await t.worker.drain();
    const tx = await getTx(t, key, sale.json().id);
    expect(tx.status, JSON.stringify(tx.response_payload)).toBe('success');
    const sent = aeat.requests.slice(before).map((r) => r.body.toString('utf8')).filter((b) => b.includes(nif));
    expect(sent.length).toBe(1);
    expect(titularOfSent(sent[0]!)).toBe(`Ejemplo Sevilla SL|${nif}`);

    // A sale made after the rename is sent under the new name.
    const later = await createTx(t, key, saleBody(loc, { timestamp: clock.now().toISOString(), metadata: { counterparty_nif: 'B64717838', counterparty_name: 'Cliente Ejemplo SA' } }), AUTHORITY);
    expect(later.statusCode, later.body).toBe(201);
    await t.worker.drain();
    expect((await getTx(t, key, later.json().id)).status).toBe('success');
    expect(titularOfSent(aeat.lastBody!)).toBe(`Nombre Nuevo SL|${nif}`);
  });

  it('a correction (A1) goes under the Titular of the invoice it modifies, not the location renamed since', async () => {
    const { key, nif, loc, config } = await siiLocation();
    const sale = await createTx(t, key, saleBody(loc, { timestamp: clock.now().toISOString(), metadata: { counterparty_nif: 'B64717838', counterparty_name: 'Cliente Mal Escrito' } }), AUTHORITY);
    expect(sale.statusCode, sale.body).toBe(201);
    await t.worker.drain();
    expect((await getTx(t, key, sale.json().id)).status).toBe('success');
    // Renamed after the invoice was accepted, before its correction.
    const patched = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...config, legal_name: 'Nombre Nuevo SL' } } });
    expect(patched.statusCode, patched.body).toBe(200);

    const res = await t.request({ method: 'POST', url: `/v1/transactions/${sale.json().id}/correct`, key, payload: { metadata: { counterparty_nif: 'B64717838', counterparty_name: 'Cliente Ejemplo SA' } } });
    expect(res.statusCode, res.body).toBe(202);
    const before = aeat.requests.length;
    await t.worker.drain();
    expect((await getTx(t, key, sale.json().id)).response_payload.correction).toMatchObject({ status: 'accepted' });
    const sent = aeat.requests.slice(before).map((r) => r.body.toString('utf8')).filter((b) => b.includes(nif));
    expect(sent.length).toBe(1);
    expect(sent[0]).toContain('<sii:TipoComunicacion>A1</sii:TipoComunicacion>');
    expect(titularOfSent(sent[0]!)).toBe(`Ejemplo Sevilla SL|${nif}`);
  });

  it('a cancellation\'s baja goes under the Titular of the invoice it cancels, not the location renamed before the cancel', async () => {
    const { key, nif, loc, config } = await siiLocation();
    const sale = await createTx(t, key, saleBody(loc, { timestamp: clock.now().toISOString(), metadata: { counterparty_nif: 'B64717838', counterparty_name: 'Cliente Ejemplo SA' } }), AUTHORITY);
    expect(sale.statusCode, sale.body).toBe(201);
    await t.worker.drain();
    expect((await getTx(t, key, sale.json().id)).status).toBe('success');
    // The shop and its holder renamed after the invoice was accepted, before it is cancelled:
    // the cancellation's own record keeps the new names.
    const patched = await t.request({
      method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { name: 'Tienda Renombrada', country_config: { ...config, legal_name: 'Nombre Nuevo SL' } },
    });
    expect(patched.statusCode, patched.body).toBe(200);

    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${sale.json().id}/cancel`, key, payload: { reason: 'error en el titular' } });
    expect(cancel.statusCode, cancel.body).toBe(201);
    const before = aeat.requests.length;
    await t.worker.drain();
    expect((await getTx(t, key, cancel.json().id)).status, JSON.stringify(cancel.json())).toBe('success');
    expect((await getTx(t, key, sale.json().id)).status).toBe('cancelled');
    const sent = aeat.requests.slice(before).map((r) => r.body.toString('utf8')).filter((b) => b.includes(nif));
    expect(sent.length).toBe(1);
    expect(sent[0]).toContain('<siiLR:BajaLRFacturasEmitidas');
    expect(titularOfSent(sent[0]!)).toBe(`Ejemplo Sevilla SL|${nif}`);
    expect(sent[0]).not.toContain('Nombre Nuevo SL');
  });
});
