import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';

/*
 * France signs a record as final at creation: a line at a rate France does not have (21 %,
 * Spain's) is refused with a 400 before anything is stored, numbered or signed, for a sale,
 * a refund, a void and a preview alike (fr-nf525/rates.ts). The rates of metropolitan
 * France, Corsica and the overseas departments, and 0, are signed and printed as given.
 * Runs on the store TEST_STORE names.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T10:00:00.000Z') });
});
afterAll(() => t?.close());

const REFUSED = 'items[1].tax_rate must be a French VAT rate (20, 13, 10, 8.5, 5.5, 2.1, 1.75, 1.05, 0.9 or 0)';

/** One line a rate, 10.00 each (tax rounded half up). */
function linesAt(loc: string, rates: number[], over: Record<string, unknown> = {}) {
  const items = rates.map((tax_rate, i) => {
    const tax = Math.round(10 * tax_rate);
    return { description: `Article ${i}`, quantity: 1, unit_price: 1000, tax_rate, tax_amount: tax, total_amount: 1000 + tax };
  });
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  return saleBody(loc, { items, pretax_amount: 1000 * items.length, tax_amount: tax, total_amount: 1000 * items.length + tax, ...over });
}

const list = async (key: string) => {
  const res = await t.request({ method: 'GET', url: '/v1/transactions', key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as unknown[];
};

describe('France: French VAT rates only', () => {
  it('a sale, a refund, a void and a preview with a 21 % line: 400 naming the line and the French rates; nothing stored', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    for (const type of ['sale', 'refund', 'void']) {
      const res = await createTx(t, key, linesAt(loc, [20, 21], { type }));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ error: REFUSED });
    }
    const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: linesAt(loc, [20, 21]) });
    expect(preview.statusCode, preview.body).toBe(400);
    expect(preview.json()).toEqual({ error: REFUSED });
    expect(await list(key)).toEqual([]);

    // The chain starts at 1 with the first sale France takes: nothing was numbered before.
    const ok = await createTx(t, key, linesAt(loc, [20, 10]));
    expect(ok.statusCode, ok.body).toBe(201);
    const record = JSON.parse((await t.request({ method: 'GET', url: `/v1/transactions/${ok.json().id}/fiscal-record`, key })).body);
    expect(record.seq).toBe(1);
  });

  it('a guide-form request is told in hundredths of a percent', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const res = await createTx(t, key, {
      location_id: loc, type: 'sale', amount: 1210, payment_method: 'card',
      line_items: [{ description: 'Vino', quantity: 1, unit_price: 1000, vat_rate: 2100 }],
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: 'line_items[0].vat_rate must be a French VAT rate (2000, 1300, 1000, 850, 550, 210, 175, 105, 90 or 0)' });
  });

  it('the rates of the mainland, Corsica and the overseas departments, and 0, are signed and printed', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const res = await createTx(t, key, linesAt(loc, [20, 13, 10, 8.5, 5.5, 2.1, 1.75, 1.05, 0.9, 0]));
    expect(res.statusCode, res.body).toBe(201);
    const record = JSON.parse((await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}/fiscal-record`, key })).body);
    expect(record.vat.map((v: { rate: string }) => v.rate)).toEqual(['0.00', '0.90', '1.05', '1.75', '2.10', '5.50', '8.50', '10.00', '13.00', '20.00']);
    const receipt = (await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}/receipt?format=text`, key })).body;
    expect(receipt).toMatch(/TVA 0 % \(10,00\)\s+0,00\n/);
    expect(receipt).toMatch(/TVA 8,5 % \(10,00\)\s+0,85\n/);
  });

  it('another country keeps its own rates: a Spanish sale at 21 % is taken', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const res = await createTx(t, key, saleBody(loc));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().amount).toBe(2046);
  });
});
