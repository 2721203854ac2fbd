import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { decodePngQr } from '../../src/receipts/test-tools.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { FR_SIRET } from '../support/fixtures.ts';
import { createLocation, createTx, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';

/*
 * Receipts checked black-box against DECISIONS ("Beyond the spec", "Keys, permissions")
 * and docs/decisions.md ("Rendered receipts", "Numbered receipt duplicates"), on both stores.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T10:00:00.000Z') });
});
afterAll(() => t?.close());

const receipt = (key: string, id: string, query = '') => t.request({ method: 'GET', url: `/v1/transactions/${id}/receipt${query}`, key });
const duplicate = (key: string, id: string, query = '') => t.request({ method: 'POST', url: `/v1/transactions/${id}/receipt/duplicate${query}`, key });

async function restrictedKey(root: string, permissions: string[]) {
  const res = await t.request({ method: 'POST', url: '/v1/api-keys', key: root, payload: { name: 'scoped', permissions } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().key as string;
}

describe('receipt duplicates and country scopes', () => {
  it('a key scoped to other countries may print a receipt but not take a numbered duplicate (403, no copy number, nothing journaled)', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const tx = (await createTx(t, key, saleBody(loc))).json() as { id: string };
    const spainOnly = await restrictedKey(key, ['transactions:read', 'transactions:write', 'country:ES']);

    // Reading stays allowed, as GET /v1/transactions/{id} is.
    expect((await receipt(spainOnly, tx.id, '?format=text')).statusCode).toBe(200);

    const refused = await duplicate(spainOnly, tx.id, '?format=text');
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json()).toEqual({ error: 'API key is not allowed to act in country FR' });

    // Nothing was counted nor written to the register's JET: the first real reprint is copy 1.
    const jet = async () => (await t.request({ method: 'GET', url: `/v1/locations/${loc}/jet?limit=100`, key })).json().data as { details?: Record<string, string> }[];
    expect((await jet()).filter((e) => e.details?.transaction_id === tx.id)).toHaveLength(0);
    const france = await restrictedKey(key, ['transactions:read', 'transactions:write', 'country:FR']);
    const ok = await duplicate(france, tx.id, '?format=text');
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.headers['x-receipt-copy']).toBe('1');
    expect(ok.body).toContain('DUPLICATA n° 1');
    expect((await jet()).filter((e) => e.details?.transaction_id === tx.id)).toHaveLength(1);
  });

  it('another account\'s transaction is a 404 for the duplicate, before its options are read', async () => {
    const a = await t.signup();
    const b = await t.signup();
    const loc = await createLocation(t, a.key, 'fr-nf525');
    const tx = (await createTx(t, a.key, saleBody(loc))).json() as { id: string };
    const res = await duplicate(b.key, tx.id, '?format=bogus');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'transaction not found' });
  });
});

describe('France: the location\'s tax id is named for what it is', () => {
  it('a SIRET is printed as "SIRET", not as a VAT number', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const tx = (await createTx(t, key, saleBody(loc))).json() as { id: string };
    for (const [query, label] of [['?format=text', 'SIRET'], ['?format=text&lang=en', 'SIRET'], ['', 'SIRET']] as const) {
      const res = await receipt(key, tx.id, query);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body).toContain(`${label}: ${FR_SIRET}`);
      expect(res.body).not.toContain(`TVA: ${FR_SIRET}`);
      expect(res.body).not.toContain(`Tax ID: ${FR_SIRET}`);
    }
  });

  it('an intra-EU VAT number is printed as one', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525', { tax_id: 'FR40303265045' });
    const tx = (await createTx(t, key, saleBody(loc))).json() as { id: string };
    const res = await receipt(key, tx.id, '?format=text');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toContain('N° TVA intracom.: FR40303265045');
  });
});

describe('the QR image', () => {
  it('Portugal: GET /qr.png encodes exactly the qr render hint, and the receipt PNG the same', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const tx = (await createTx(t, key, saleBody(loc))).json() as { id: string; render_hints: { key: string; value: string }[] };
    const qr = tx.render_hints.find((h) => h.key === 'qr')!.value;
    const image = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}/qr.png`, key });
    expect(image.statusCode).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(decodePngQr(image.rawPayload)?.data).toBe(qr);
    const png = await receipt(key, tx.id, '?format=png');
    expect(decodePngQr(png.rawPayload)?.data).toBe(qr);
  });

  it.each(['es-ticketbai', 'es-verifactu', 'gr-mydata'] as const)('%s: GET /qr.png encodes exactly the qr render hint (level M, the receipt\'s parameters)', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system);
    const created = await createTx(t, key, saleBody(loc, { ...saleLines[system], metadata: { ...(saleMetadata[system] ?? {}) } }));
    expect(created.statusCode, created.body).toBe(201);
    await t.worker.drain(); // Greece: the QR arrives with AADE's answer
    const tx = (await t.request({ method: 'GET', url: `/v1/transactions/${created.json().id}`, key })).json() as { id: string; render_hints: { key: string; value: string }[] };
    const qr = tx.render_hints.find((h) => h.key === 'qr')!.value;
    const image = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}/qr.png`, key });
    expect(image.statusCode, image.body).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(decodePngQr(image.rawPayload)?.data).toBe(qr);
  });

  it('no QR, no image: France and SII answer 404 QR image not found', async () => {
    const { key } = await t.signup();
    for (const system of ['fr-nf525', 'es-sii'] as const) {
      const loc = await createLocation(t, key, system);
      const tx = (await createTx(t, key, saleBody(loc, { metadata: { ...(saleMetadata[system] ?? {}) } }))).json();
      const image = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}/qr.png`, key });
      expect([image.statusCode, image.json()], system).toEqual([404, { error: 'QR image not found' }]);
    }
  });

  it('Portugal: once the document is annulled, its prints and its QR image say so in field E (A, not N); the hint stays as built', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const tx = (await createTx(t, key, saleBody(loc))).json() as { id: string; render_hints: { key: string; value: string }[] };
    const qr = tx.render_hints.find((h) => h.key === 'qr')!.value;
    expect(qr).toContain('*E:N*');
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${tx.id}/cancel`, key });
    expect(cancel.statusCode, cancel.body).toBe(201);
    const annulled = qr.replace('*E:N*', '*E:A*');
    const image = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}/qr.png`, key });
    expect(decodePngQr(image.rawPayload)?.data).toBe(annulled);
    const reprint = await t.request({ method: 'POST', url: `/v1/transactions/${tx.id}/receipt/duplicate?format=png`, key });
    expect(reprint.statusCode, reprint.body).toBe(200);
    expect(decodePngQr(reprint.rawPayload)?.data).toBe(annulled);
    const stored = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}`, key });
    expect(stored.json().render_hints.find((h: { key: string }) => h.key === 'qr').value).toBe(qr);
  });
});
