/**
 * VERI*FACTU through the API, on the store TEST_STORE names (run with --project pglite and
 * --project postgres):
 * - records that waited out an AEAT outage go with `Cabecera/RemisionVoluntaria/Incidencia` S
 *   (src/countries/es-verifactu/incident.ts) and are accepted without AEAT's 2004; the fake
 *   AEAT checks FechaHoraHusoGenRegistro against the service's clock, as AEAT does against its own;
 * - an EU customer's VAT number given without its prefix is written with it (party-id.ts);
 *   a country that contradicts the prefix is a 400;
 * - a refund naming an original invoice dated after today is a 400 (es/corrected-invoice.ts).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startFakeAeatVerifactu, type FakeAeatVerifactu } from '../support/fake-aeat-verifactu.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { freshNif, uploadSpainCertificate } from '../support/spain.ts';
import { createLocation, createTx, fiscalRecordOf, getTx, saleBody } from '../support/transactions.ts';

let t: TestApp;
let clock: ManualClock;
let aeat: FakeAeatVerifactu;

beforeAll(async () => {
  aeat = await startFakeAeatVerifactu();
  clock = new ManualClock(new Date('2026-03-02T10:00:00Z'));
  // AEAT's clock is the service's: records are generated and sent on the test's clock.
  aeat.now = () => clock.now();
  t = await startTestApp({
    clock,
    random: () => 0.5,
    config: { authorityBaseUrls: { 'es-verifactu:test': aeat.url }, authorityCa: aeat.caPem },
  });
});
afterAll(async () => {
  await t?.close();
  await aeat?.close();
});
beforeEach(() => {
  aeat.waitSeconds = 0;
  aeat.behave({ kind: 'normal' });
});

const AUTHORITY = { 'x-svc-sandbox': 'authority' } as const;

async function authorityLocation(): Promise<{ key: string; loc: string }> {
  const { key } = await t.signup();
  const nif = freshNif();
  const cert = await uploadSpainCertificate(t, key, nif);
  const res = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: {
      name: `Tienda ${nif}`, country: 'ES', address: 'Calle Mayor 1', tax_id: nif,
      country_config: { system: 'verifactu', legal_name: 'Ejemplo Madrid SL', software_nif: 'B12345674', certificate_id: cert.certificateId },
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { key, loc: res.json().id };
}

async function sale(key: string, loc: string): Promise<string> {
  const res = await createTx(t, key, saleBody(loc, { timestamp: clock.now().toISOString() }), AUTHORITY);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

async function submitJob(transactionId: string) {
  const { rows } = await t.db.query<{ status: string; run_at: Date }>(`SELECT status, run_at FROM jobs WHERE kind = 'submit' AND transaction_id = $1`, [transactionId]);
  return rows[0]!;
}

describe('VERI*FACTU: records sent after an outage say so (Incidencia S), and AEAT takes them without 2004', () => {
  it('a sale sent at once goes unflagged; sales that waited out 10 minutes of outage go in one flagged request, success without warnings', async () => {
    const { key, loc } = await authorityLocation();
    const first = await sale(key, loc);
    const before = aeat.submissions.length;
    await t.worker.drain();
    expect(aeat.submissions.slice(before).map((s) => s.incidencia)).toEqual([undefined]);
    expect((await getTx(t, key, first)).status).toBe('success');

    // AEAT down: the next sales wait in the queue.
    aeat.behave({ kind: 'unavailable' });
    const late = [await sale(key, loc), await sale(key, loc)];
    await t.worker.drain();
    expect((await getTx(t, key, late[0]!)).status).toBe('failed');

    // Back 10 minutes later (past AEAT's 240 s margin, on the clock AEAT and the service share).
    aeat.behave({ kind: 'normal' });
    clock.advance(10 * 60_000);
    expect((await submitJob(late[0]!)).run_at.getTime()).toBeLessThanOrEqual(clock.now().getTime());
    const sent = aeat.submissions.length;
    await t.worker.drain();
    expect(aeat.submissions.slice(sent).map((s) => [s.incidencia, s.records.length])).toEqual([['S', 2]]);
    for (const id of late) {
      const tx = await getTx(t, key, id);
      expect(tx.status, JSON.stringify(tx.response_payload)).toBe('success');
      // Without the flag AEAT (and the fake) answers 2004: "accepted with errors", a warning here.
      expect(tx.response_payload.warnings).toBeUndefined();
    }
  });
});

describe('VERI*FACTU: an EU customer\'s VAT number without its prefix', () => {
  it('is written with the prefix of the customer\'s country (VIES form); a contradicting country is a 400, nothing stored', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const ok = await createTx(t, key, saleBody(loc, { customer_context: { tax_id: '12345678901', country: 'FR', name: 'Client SARL' } }));
    expect(ok.statusCode, ok.body).toBe(201);
    expect(await fiscalRecordOf(t, key, ok.json().id)).toContain('<sf:IDOtro><sf:IDType>02</sf:IDType><sf:ID>FR12345678901</sf:ID></sf:IDOtro>');
    const greek = await createTx(t, key, saleBody(loc, { customer_context: { tax_id: '094259216', country: 'GR', name: 'Pelatis AE' } }));
    expect(greek.statusCode, greek.body).toBe(201);
    expect(await fiscalRecordOf(t, key, greek.json().id)).toContain('<sf:ID>EL094259216</sf:ID>');

    const message = "customer_context.country FR does not match the VAT prefix DE of the customer's tax id: an EU VAT number starts with the prefix of the member state that issued it (FR for FR); give that country, or the number with its own prefix";
    for (const url of ['/v1/transactions', '/v1/transactions/preview']) {
      const res = await t.request({ method: 'POST', url, key, payload: saleBody(loc, { customer_context: { tax_id: 'DE123456789', country: 'FR', name: 'Kunde GmbH' } }) });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toBe(message);
    }
    const list = await t.request({ method: 'GET', url: '/v1/transactions', key });
    expect(list.json().total).toBe(2);
  });
});

describe('VERI*FACTU: a refund\'s original_issue_date after today', () => {
  it('is a 400 at create and preview; today is taken', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const refund = (date: string) => saleBody(loc, { type: 'refund', metadata: { original_invoice_number: 'A-1', original_issue_date: date } });
    for (const url of ['/v1/transactions', '/v1/transactions/preview']) {
      const res = await t.request({ method: 'POST', url, key, payload: refund('03-03-2026') });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toBe('metadata.original_issue_date must not be later than today: the corrected invoice was issued before its correction');
    }
    expect((await t.request({ method: 'GET', url: '/v1/transactions', key })).json().total).toBe(0);
    const ok = await createTx(t, key, refund('02-03-2026'));
    expect(ok.statusCode, ok.body).toBe(201);
    expect(await fiscalRecordOf(t, key, ok.json().id)).toContain('<sf:FacturasRectificadas><sf:IDFacturaRectificada><sf:IDEmisorFactura>');
  });
});
