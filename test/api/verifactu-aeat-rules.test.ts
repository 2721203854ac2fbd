/**
 * What AEAT's VERI*FACTU validation refuses, refused at create and preview with a 400 before
 * anything is stored, numbered or chained (src/countries/es-verifactu/dated-rates.ts,
 * amount-limits.ts, party-id.ts), and the Macrodato flag a very large invoice carries; on the
 * store TEST_STORE names (run with --project pglite and --project postgres).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { regFactuRequest } from '../../src/countries/es-verifactu/soap.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, fiscalRecordOf, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock(new Date('2026-03-02T10:00:00Z')) });
});
afterAll(() => t?.close());

type Line = { description: string; quantity: number; unit_price: number; tax_rate: number; tax_amount: number; total_amount: number };
const lineAt = (rate: number, unitPrice = 1000): Line => {
  const tax = Math.round(unitPrice * rate / 100);
  return { description: 'Artículo', quantity: 1, unit_price: unitPrice, tax_rate: rate, tax_amount: tax, total_amount: unitPrice + tax };
};
function sale(loc: string, items: Line[], over: Record<string, unknown> = {}) {
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  const total = items.reduce((s, l) => s + l.total_amount, 0);
  return saleBody(loc, { items, pretax_amount: total - tax, tax_amount: tax, total_amount: total, ...over });
}

async function transactionsOf(key: string): Promise<number> {
  const res = await t.request({ method: 'GET', url: '/v1/transactions', key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().total;
}

/** Create and preview both answer 400 with `message` (a string, or a pattern). */
async function refusedEverywhere(key: string, body: object, message: string | RegExp): Promise<void> {
  for (const url of ['/v1/transactions', '/v1/transactions/preview']) {
    const res = await t.request({ method: 'POST', url, key, payload: body });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
    if (typeof message === 'string') expect(res.json().error).toBe(message);
    else expect(res.json().error).toMatch(message);
  }
}

describe('VERI*FACTU: what AEAT refuses is a 400 at create and preview; nothing stored', () => {
  it('the temporary IVA rates of 2022-2024 (AEAT 1194, 1235/1236); canonical and guide form', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    await refusedEverywhere(key, sale(loc, [lineAt(21), lineAt(5)]),
      'items[1].tax_rate 5 is refused by AEAT on an invoice issued on 02-03-2026: VERI*FACTU takes that IVA rate only for operations from 01-07-2022 to 30-09-2024 (AEAT error 1194)');
    await refusedEverywhere(key, sale(loc, [lineAt(7.5)], { type: 'refund' }), /^items\[0\]\.tax_rate 7\.5 is refused by AEAT .* from 01-10-2024 to 31-12-2024 \(AEAT error 1235\/1236\)$/);
    // The guide form names its own fields and unit.
    await refusedEverywhere(key, { location_id: loc, amount: 1020, line_items: [{ description: 'Pan', quantity: 1, unit_price: 1000, vat_rate: 200 }] },
      /^line_items\[0\]\.vat_rate 200 is refused by AEAT on an invoice issued on 02-03-2026: .*\(AEAT error 1235\/1236\)$/);
    expect(await transactionsOf(key)).toBe(0);
    // 4, 10 and 21 are taken as ever.
    const ok = await createTx(t, key, sale(loc, [lineAt(4), lineAt(10), lineAt(21)]));
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('the recipient: a mistyped Spanish NIF, the issuer itself (1193); R3/R2 foreign recipients (1191, 1192)', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    await refusedEverywhere(key, sale(loc, [lineAt(21)], { customer_context: { nif: 'A58818502', name: 'Cliente SA' } }),
      "the customer's tax id (customer_context nif or tax_id) is not a valid Spanish NIF: its control character does not match (AEAT refuses a recipient NIF it cannot identify, error 1193); give customer_context.country for a foreign tax id");
    await refusedEverywhere(key, sale(loc, [lineAt(21)], { customer_context: { nif: 'B12345674', name: 'Ejemplo SL' } }),
      "the customer's tax id is the issuer's own NIF (the location tax_id): AEAT refuses an invoice whose recipient is its issuer (error 1193)");
    await refusedEverywhere(key, sale(loc, [lineAt(21)], { type: 'refund', customer_context: { tax_id: 'DE123456789', name: 'Kunde GmbH' }, metadata: { invoice_type: 'R3' } }),
      'metadata.invoice_type R3 needs a customer identified by a Spanish NIF: AEAT takes no foreign identification on an R3 (error 1191)');
    await refusedEverywhere(key, sale(loc, [lineAt(21)], { type: 'refund', customer_context: { tax_id: '12-3456789', country: 'US', name: 'Acme Inc' }, metadata: { invoice_type: 'R2' } }),
      'metadata.invoice_type R2 needs a customer identified by a Spanish NIF or an EU VAT number: AEAT takes no other identification on an R2 (error 1192)');
    expect(await transactionsOf(key)).toBe(0);
    // A NIF written with separators is the customer's NIF in the record (NIFType), not IDOtro.
    const ok = await createTx(t, key, sale(loc, [lineAt(21)], { customer_context: { nif: 'A-58818501', name: 'Cliente SA' } }));
    expect(ok.statusCode, ok.body).toBe(201);
    expect(await fiscalRecordOf(t, key, ok.json().id)).toContain('<sf:IDDestinatario><sf:NombreRazon>Cliente SA</sf:NombreRazon><sf:NIF>A58818501</sf:NIF></sf:IDDestinatario>');
  });

  it('beyond 12 integer digits: 400; from 100,000,000.00 EUR the record says Macrodato S (AEAT 1139), XSD-valid', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const customer = { customer_context: { nif: 'A58818501', name: 'Cliente SA' } };
    await refusedEverywhere(key, sale(loc, [lineAt(21, 90_000_000_000_000)], customer),
      'total_amount must be at most 999,999,999,999.99 EUR: VERI*FACTU records carry amounts of at most 12 integer digits (SuministroInformacion.xsd ImporteSgn12.2Type)');
    expect(await transactionsOf(key)).toBe(0);
    // 82,644,628.10 + 21 % = 100,000,000.00.
    const res = await createTx(t, key, sale(loc, [lineAt(21, 8_264_462_810)], customer));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecordOf(t, key, res.json().id);
    expect(xml).toContain('<sf:Macrodato>S</sf:Macrodato>');
    expect(xml).toContain('<sf:ImporteTotal>100000000.00</sf:ImporteTotal>');
    if (!HAVE_SCHEMAS) return console.warn(`verifactu-aeat-rules: XSD validation skipped: ${SCHEMAS_MISSING_MESSAGE}`);
    const v = xsdValidate(regFactuRequest({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [xml]), 'es/verifactu/SuministroLR.xsd');
    expect(v.ok, v.output).toBe(true);
  });
});
