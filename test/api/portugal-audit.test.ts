import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';

/*
 * The Portugal audit through the API, on both stores (.scratch/decisions-audit-pt.md): a
 * customer the SAF-T (PT) cannot carry is a 400 before anything is numbered (a country
 * outside the schema's list, an invalid Portuguese NIF, an unnamed business buyer of an
 * invoice), a retail sale to a company above 100 EUR is not a simplified invoice (CIVA
 * art. 40 n.º 1 b), and the month file of what was accepted is valid.
 */

const tag = (xml: string, name: string): string[] => [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((m) => m[1]!);
const qrField = (qr: string, code: string) => qr.split('*').find((f) => f.startsWith(`${code}:`))?.slice(code.length + 1);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T10:00:00.000Z') });
});
afterAll(() => t?.close());

/** A sale of `cents` net at 23 %. */
const sale = (loc: string, cents: number, over: Record<string, unknown> = {}) => {
  const tax = Math.round(cents * 0.23);
  return saleBody(loc, {
    items: [{ description: 'Cadeira', quantity: 1, unit_price: cents, tax_rate: 23, tax_amount: tax, total_amount: cents + tax }],
    pretax_amount: cents, tax_amount: tax, total_amount: cents + tax,
    ...over,
  });
};

async function fiscalRecord(key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

describe('Portugal audit: customers and the simplified invoice limit through the API', () => {
  it('refuses a customer the SAF-T cannot carry, with nothing numbered', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const refused = async (customer_context: Record<string, unknown>, error: string, metadata: Record<string, unknown> = {}) => {
      const res = await createTx(t, key, sale(loc, 1000, { customer_context, metadata }));
      expect([res.statusCode, res.json()]).toEqual([400, { error }]);
    };
    await refused({ tax_id: 'GB123456789', name: 'Shop Ltd', country: 'UK' }, 'customer_context.country must be an ISO 3166-1 alpha-2 country code (e.g. PT, ES, GB): the SAF-T (PT) Customer table accepts no other');
    await refused({ nif: '123456780' }, 'customer_context tax id 123456780 is not a valid Portuguese NIF (9 digits, mod 11 check digit); for a foreign customer give customer_context.country');
    await refused({ nif: '500000000' }, "customer_context.name is required on an invoice (FT, FR, ND) to a business customer: CIVA art. 36 n.º 5 a) asks for the buyer's name", { document_type: 'FT' });

    const credit = await createTx(t, key, sale(loc, 1000, { type: 'refund', metadata: { original_invoice_no: 'NC C/1' } }));
    expect([credit.statusCode, credit.json()]).toEqual([400, { error: 'metadata.original_invoice_no names a credit note (NC): a credit or debit note corrects an invoice (FT, FS, FR) or a debit note (ND), not a credit note' }]);

    // Nothing was numbered: the first accepted document of the series is number 1.
    const ok = await createTx(t, key, sale(loc, 1000, { customer_context: { tax_id: 'GB123456789', name: 'Shop Ltd', country: 'gb' } }));
    expect(ok.statusCode, ok.body).toBe(201);
    const xml = await fiscalRecord(key, ok.json().id);
    expect(tag(xml, 'InvoiceNo')).toEqual(['FS B/1']);
    const qr = ok.json().render_hints.find((h: { key: string }) => h.key === 'qr').value as string;
    expect([qrField(qr, 'B'), qrField(qr, 'C')]).toEqual(['123456789', 'GB']);

    // A foreign buyer whose country is not known: QR field C says so, not PT.
    const stranger = await createTx(t, key, sale(loc, 1000, { customer_context: { tax_id: 'P-4711', name: 'Stranger' } }));
    expect(stranger.statusCode, stranger.body).toBe(201);
    expect(qrField(stranger.json().render_hints.find((h: { key: string }) => h.key === 'qr').value, 'C')).toBe('Desconhecido');

    const file = await t.request({ method: 'GET', url: `/v1/locations/${loc}/saft?period=2026-03`, key });
    expect(file.statusCode, file.body).toBe(200);
    const text = new TextDecoder('windows-1252').decode(file.rawPayload);
    expect(tag(text, 'Country')).toContain('GB');
    expect(tag(text, 'NumberOfEntries')).toEqual(['2']);
  });

  it('a retail sale to a company above 100.00 EUR is an invoice, not an FS; asking for an FS is a 400', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const company = { nif: '500000000', name: 'Empresa, S.A.' };
    const small = await createTx(t, key, sale(loc, 8130, { customer_context: company })); // 100.00 gross
    expect(small.statusCode, small.body).toBe(201);
    expect(tag(await fiscalRecord(key, small.json().id), 'InvoiceType')).toEqual(['FS']);

    const above = await createTx(t, key, sale(loc, 8131, { customer_context: company })); // 100.01 gross
    expect(above.statusCode, above.body).toBe(201);
    const xml = await fiscalRecord(key, above.json().id);
    expect([tag(xml, 'InvoiceNo'), tag(xml, 'CustomerID')]).toEqual([['FT A/1'], ['500000000']]);
    // The printed invoice names its buyer (CIVA art. 36 n.º 5 a), under its number.
    const printed = await t.request({ method: 'GET', url: `/v1/transactions/${above.json().id}/receipt?format=text`, key });
    expect(printed.statusCode, printed.body).toBe(200);
    expect(printed.body).toMatch(/\nDocumento FT A\/1\nCliente: Empresa, S\.A\.\nNIF do adquirente: 500000000\n/);

    const fs = await createTx(t, key, sale(loc, 8131, { customer_context: company, metadata: { document_type: 'FS' } }));
    expect([fs.statusCode, fs.json()]).toEqual([400, { error: "metadata.document_type FS (simplified invoice) is limited to 100.00 EUR for a business customer (a taxable person's tax id) (CIVA art. 40): issue an FR or FT" }]);

    // A final consumer keeps the retail limit of 1,000 EUR.
    const consumer = await createTx(t, key, sale(loc, 8131));
    expect(consumer.statusCode, consumer.body).toBe(201);
    expect(tag(await fiscalRecord(key, consumer.json().id), 'InvoiceType')).toEqual(['FS']);
  });
});
