import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, locationBody, saleBody } from '../support/transactions.ts';

/*
 * Portugal's complete documents through the API (issue #14 part 7), on both stores: the
 * QR image hint decodes to the QR content, a 0 % line's exemption code travels as a line
 * field into the SAF-T line, an Azores location writes PT-AC, and a sale above the
 * simplified-invoice limit is issued as an invoice (FT) rather than an FS.
 */

const jsQR = ((jsQRModule as unknown as { default?: typeof jsQRModule.default }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;
const tag = (xml: string, name: string): string[] => [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((m) => m[1]!);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T10:00:00.000Z') });
});
afterAll(() => t?.close());

async function fiscalRecord(key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

const exemptSale = (loc: string, over: Record<string, unknown> = {}) =>
  saleBody(loc, {
    items: [
      { description: 'Livro', quantity: 1, unit_price: 1000, tax_rate: 0, tax_amount: 0, total_amount: 1000, tax_exemption_code: ' m07 ' },
      { description: 'Caneta', quantity: 1, unit_price: 100, tax_rate: 16, tax_amount: 16, total_amount: 116 },
    ],
    pretax_amount: 1100, tax_amount: 16, total_amount: 1116,
    ...over,
  });

describe('Portugal: complete documents through the API', () => {
  it('QR image hint, exemption code as a line field, Azores fiscal space', async () => {
    const { key } = await t.signup();
    const body = locationBody('pt-saft') as { country_config: Record<string, unknown> };
    const loc = await createLocation(t, key, 'pt-saft', { country_config: { ...body.country_config, tax_region: 'PT-AC' } });
    const res = await createTx(t, key, exemptSale(loc));
    expect(res.statusCode, res.body).toBe(201);
    const tx = res.json();
    const hints = Object.fromEntries(tx.render_hints.map((h: { key: string; kind: string; value: string }) => [h.key, h]));
    expect(hints.qr_image).toMatchObject({ kind: 'image_url', mandatory: false, placement: 'footer_bottom', value: `/v1/transactions/${tx.id}/qr.png` });
    const got = await t.request({ method: 'GET', url: hints.qr_image.value, key });
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toBe('image/png');
    const png = PNG.sync.read(got.rawPayload);
    const decoded = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
    expect(decoded?.data).toBe(hints.qr.value);
    expect(decoded?.version).toBeGreaterThanOrEqual(9);
    expect(hints.qr.value).toContain('*I1:PT-AC*I2:10.00*I7:1.00*I8:0.16*');

    const xml = await fiscalRecord(key, tx.id);
    expect(tag(xml, 'TaxCountryRegion')).toEqual(['PT-AC', 'PT-AC']);
    expect(tag(xml, 'TaxCode')).toEqual(['ISE', 'NOR']);
    expect(tag(xml, 'TaxExemptionCode')).toEqual(['M07']);
    expect(tag(xml, 'TaxExemptionReason')).toEqual(['Isento artigo 9.º do CIVA']);

    const bad = await createTx(t, key, exemptSale(loc, { items: [{ description: 'Livro', quantity: 1, unit_price: 1000, tax_rate: 0, tax_amount: 0, total_amount: 1000, tax_exemption_code: 'M03' }], pretax_amount: 1000, tax_amount: 0, total_amount: 1000 }));
    expect([bad.statusCode, bad.json()]).toEqual([400, { error: 'items[0].tax_exemption_code must be an AT exemption code (M01-M99)' }]);
  });

  it("the QR image is the caller's own: another account, an unknown id and a system without a QR image answer 404", async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const tx = (await createTx(t, key, saleBody(loc))).json();
    const other = await t.signup();
    const notFound = async (k: string, id: string, error: string) => {
      const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/qr.png`, key: k });
      expect([res.statusCode, res.json()]).toEqual([404, { error }]);
    };
    await notFound(other.key, tx.id, 'transaction not found');
    await notFound(key, '00000000-0000-4000-8000-000000000000', 'transaction not found');
    const fr = await createLocation(t, key, 'fr-nf525');
    const frTx = (await createTx(t, key, saleBody(fr))).json();
    expect(frTx.status).toBe('success');
    await notFound(key, frTx.id, 'QR image not found');
  });

  it('a sale above 1,000 EUR is an invoice (FT), not an FS; asking for an FS is a 400', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const items = [{ description: 'Bicicleta', quantity: 1, unit_price: 100000, tax_rate: 23, tax_amount: 23000, total_amount: 123000 }];
    const big = saleBody(loc, { items, pretax_amount: 100000, tax_amount: 23000, total_amount: 123000 });
    const res = await createTx(t, key, big);
    expect(res.statusCode, res.body).toBe(201);
    expect(tag(await fiscalRecord(key, res.json().id), 'InvoiceNo')).toEqual(['FT A/1']);
    const fs = await createTx(t, key, { ...big, metadata: { document_type: 'FS' } });
    expect([fs.statusCode, fs.json()]).toEqual([400, { error: 'metadata.document_type FS (simplified invoice) is limited to 1000.00 EUR (CIVA art. 40): issue an FR or FT' }]);
  });
});
