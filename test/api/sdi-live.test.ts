import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';
import { createTx, locationBody, saleBody } from '../support/transactions.ts';

/*
 * Live SDI invoices SdI would certainly refuse are refused at creation, before anything
 * is stored (it-sdi/metadata.ts requireLiveParties; docs/decisions.md "Italy"): a seller
 * Sede without CAP/Comune (test keys write 00000 and the location name) and a buyer with
 * neither a partita IVA nor a codice fiscale (SdI 00417). Test keys keep the stand-ins.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ liveEnabled: true });
});
afterAll(async () => {
  await t?.close();
});

const SEDE = { indirizzo: 'Via del Corso 1', cap: '00186', comune: 'Roma', provincia: 'RM' };
// Another subject than the seller (the location's partita IVA is 01234567897: SdI 00471).
const BUYER = { tax_id: 'IT12345678903', legal_name: 'Cliente di prova S.r.l.' };

async function accountWithLocation(config: Record<string, unknown>) {
  const { key } = await t.signup();
  const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } })).json().key as string;
  const certificateId = `cert-it-${crypto.randomUUID().slice(0, 8)}`;
  const cert = generateCert({ subject: '/C=IT/serialNumber=TINIT-01234567897/CN=Trasmittente', days: 3650 });
  const up = uploadForm({ certificateId, password: 'pw-certificato', file: exportP12(cert, 'pw-certificato') });
  expect((await t.request({ method: 'POST', url: '/v1/certificates', key, payload: up.payload, headers: up.headers })).statusCode).toBe(201);
  // Without an address: nothing stands in for indirizzo.
  const { address: _address, ...body } = locationBody('it-sdi') as { address?: string; country_config: Record<string, unknown> };
  const loc = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { ...body, country_config: { ...body.country_config, certificate_id: certificateId, ...config } },
  });
  expect(loc.statusCode, loc.body).toBe(201);
  return { key, live, loc: loc.json().id as string };
}

const sale = (loc: string, customer_context?: Record<string, unknown>) =>
  saleBody(loc, { metadata: { invoice_number: 'FT-1' }, ...(customer_context ? { customer_context } : {}) });

describe('it-sdi on live keys', () => {
  it('a location without the seller Sede: 400 on the live key, nothing stored; the test key still gets the sandbox', async () => {
    const { key, live, loc } = await accountWithLocation({});
    const refused = await createTx(t, live, sale(loc, BUYER));
    expect([refused.statusCode, refused.json()]).toEqual([400, {
      error: 'country_config.indirizzo, country_config.cap and country_config.comune are required for live SDI invoices: the seller\'s address (Sede) in the FatturaPA',
    }]);
    expect((await t.request({ method: 'GET', url: '/v1/transactions', key: live })).json().total).toBe(0);
    expect((await createTx(t, key, sale(loc))).statusCode).toBe(201);
  });

  it('a buyer with neither a partita IVA nor a codice fiscale: 400 on the live key (00417); with one of them: created', async () => {
    const { live, loc } = await accountWithLocation(SEDE);
    const message = 'customer_context.tax_id (partita IVA) or customer_context.codice_fiscale is required for live SDI invoices: SdI refuses a buyer without either (00417)';
    for (const customer of [undefined, { first_name: 'Mario', last_name: 'Rossi' }]) {
      const refused = await createTx(t, live, sale(loc, customer));
      expect([refused.statusCode, refused.json()]).toEqual([400, { error: message }]);
    }
    expect((await t.request({ method: 'GET', url: '/v1/transactions', key: live })).json().total).toBe(0);
    const company = await createTx(t, live, sale(loc, BUYER));
    expect(company.statusCode, company.body).toBe(201);
    const consumer = await createTx(t, live, { ...sale(loc, { codice_fiscale: 'RSSMRA80A01H501U', first_name: 'Mario', last_name: 'Rossi' }), metadata: { invoice_number: 'FT-2' } });
    expect(consumer.statusCode, consumer.body).toBe(201);
  });
});
