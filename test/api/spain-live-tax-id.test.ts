import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { freshNif, uploadSpainCertificate } from '../support/spain.ts';
import { createTx, saleBody } from '../support/transactions.ts';

/*
 * AEAT's records name the issuer by NIF. A location may be created without a tax_id to try
 * the sandbox, whose records carry the placeholder 000000000; on a live key that would be a
 * false declaration, so VERI*FACTU and SII transactions of such a location are refused with
 * a 400 before anything is stored (es/common.ts requireLiveTaxId; decisions.md).
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ liveEnabled: true });
});
afterAll(async () => {
  await t?.close();
});

const CASES = [
  { system: 'verifactu', config: { system: 'verifactu', legal_name: 'Ejemplo Madrid SL', software_nif: 'B12345674' }, metadata: {} },
  { system: 'sii', config: { system: 'sii', legal_name: 'Ejemplo Sevilla SL' }, metadata: { simplified: true } },
] as const;

describe.each(CASES)('$system: a live transaction needs the location tax_id', ({ system, config, metadata }) => {
  it('live key, location without tax_id: 400, nothing stored; a test key still gets the sandbox', async () => {
    const { key } = await t.signup();
    const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } })).json().key as string;
    // With a certificate: the tax_id is the only thing missing for a live record.
    const cert = await uploadSpainCertificate(t, key, freshNif());
    const loc = await t.request({
      method: 'POST', url: '/v1/locations', key,
      payload: { name: 'Sin NIF', country: 'ES', country_config: { ...config, certificate_id: cert.certificateId } },
    });
    expect(loc.statusCode, loc.body).toBe(201);
    const body = saleBody(loc.json().id, { metadata });

    const refused = await createTx(t, live, body);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ error: `location tax_id is required for live ${system} transactions: AEAT identifies the issuer by its NIF` });
    const list = await t.request({ method: 'GET', url: '/v1/transactions', key: live });
    expect(list.json().total).toBe(0);

    expect((await createTx(t, key, body)).statusCode).toBe(201);
  });

  it('live key, location with its tax_id (and certificate): created', async () => {
    const { key } = await t.signup();
    const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } })).json().key as string;
    const nif = freshNif();
    const cert = await uploadSpainCertificate(t, key, nif);
    const loc = await t.request({
      method: 'POST', url: '/v1/locations', key,
      payload: { name: 'Con NIF', country: 'ES', tax_id: nif, country_config: { ...config, certificate_id: cert.certificateId } },
    });
    expect(loc.statusCode, loc.body).toBe(201);
    const res = await createTx(t, live, saleBody(loc.json().id, { metadata }));
    expect(res.statusCode, res.body).toBe(201);
  });
});
