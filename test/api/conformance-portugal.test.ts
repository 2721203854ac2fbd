import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { SANDBOX_PRODUCER_PUBLIC_KEY_PEM } from '../../src/countries/pt-saft/sandbox-key.ts';
import { HAVE_XSD11, XSD11_MISSING_MESSAGE, opensslVerifyHash, saftXsdValidate } from '../../src/countries/pt-saft/test-tools.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { createLocation, createTx } from '../support/transactions.ts';
import { firstTagText } from '../support/xml-tools.ts';

/*
 * Black-box conformance of Portugal's documents (docs-it-gr-pt-fr audit): B2B customers
 * given with their VAT prefix (domestic and foreign), the month's SAF-T (PT) file checked
 * by the official XSD 1.1 (Python xmlschema), every Hash recomputed with OpenSSL and the
 * sandbox producer's public key, the control totals recomputed, and the QR fields B and C.
 * SAF-T (PT) CustomerTaxID "deve ser indicado sem o prefixo do país" (Portaria 302/2016).
 */

let t: TestApp;
let key: string;
let loc: string;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-11-20T10:00:00.000Z'), limiter: unlimitedLimiter() });
  ({ key } = await t.signup());
  loc = await createLocation(t, key, 'pt-saft');
});
afterAll(() => t?.close());

function line(description: string, quantity: number, unit_price: number, tax_rate: number, extra: Record<string, unknown> = {}) {
  const net = Math.round(quantity * unit_price);
  const tax = Math.round((quantity * unit_price * tax_rate) / 100);
  return { description, quantity, unit_price, tax_rate, tax_amount: tax, total_amount: net + tax, ...extra };
}
function body(items: ReturnType<typeof line>[], over: Record<string, unknown> = {}) {
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  const total = items.reduce((s, l) => s + l.total_amount, 0);
  return { location_id: loc, timestamp: '2026-11-20T09:30:00Z', currency: 'EUR', payment_method: 'card', items, pretax_amount: total - tax, tax_amount: tax, total_amount: total, ...over };
}
async function sale(over: Record<string, unknown>, items = [line('Serviço', 10, 12345, 23), line('Livro isento', 1, 100, 0, { tax_exemption_code: 'M07' })]) {
  const res = await createTx(t, key, body(items, over));
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
const hint = (tx: { render_hints: Array<{ key: string; value: string }> }, k: string) => tx.render_hints.find((h) => h.key === k)?.value ?? '';
const qrField = (qr: string, code: string) => qr.split('*').find((f) => f.startsWith(`${code}:`))?.slice(code.length + 1);
const cents = (text: string) => Math.round(Number(text) * 100);

describe('Portugal: customers with a VAT prefix, the SAF-T month file and its hashes', () => {
  it('PT503504564 and DE123456789: CustomerTaxID without the prefix, the country from it; QR B and C agree; the file is valid, signed and adds up', async () => {
    const domestic = await sale({
      metadata: { document_type: 'FT' },
      customer_context: { tax_id: 'PT503504564', name: 'Empresa Exemplo, Lda. & Filhos <teste>', address: { street: 'Rua Augusta 1', city: 'Lisboa', postal_code: '1100-048', country: 'PT' } },
    });
    const foreign = await sale({ metadata: { document_type: 'FT' }, customer_context: { tax_id: 'DE 123456789', name: 'Müller GmbH', city: 'Berlin' } }, [line('Foreign B2B', 1, 500000, 23)]);
    const refund = await sale({
      type: 'refund', metadata: { original_invoice_no: hint(domestic, 'invoice_no'), reason: 'Devolução parcial' },
      customer_context: { tax_id: 'PT503504564', name: 'Empresa Exemplo, Lda.' },
    }, [line('Devolução parcial', 1, 12345, 23)]);
    // A lone surrogate in the name (JSON allows "\ud83d") is refused at the edge (a 400: XML
    // cannot carry it); the month file's encoder would write U+FFFD (pt-saft/document.test.ts).
    const lone = await createTx(t, key, body([line('Bica', 1, 70, 23)], { metadata: { document_type: 'FT' }, customer_context: { tax_id: '500000000', name: 'Cliente \ud83d' } }));
    expect(lone.statusCode, lone.body).toBe(400);
    await sale({ metadata: { document_type: 'FT' }, customer_context: { tax_id: '500000000', name: 'Cliente \u00e7' } }, [line('Bica', 1, 70, 23)]);
    const consumer = await sale({}, [line('Café «bica» – “x” € Ελληνικά', 3, 33, 23), line('Pão', 0.333, 100, 6), line('Vinho', 7, 333, 13), ...Array.from({ length: 6 }, (_, i) => line(`l${i}`, 1, 2, 23))]);

    expect(qrField(hint(domestic, 'qr'), 'B')).toBe('503504564');
    expect(qrField(hint(domestic, 'qr'), 'C')).toBe('PT');
    expect(qrField(hint(foreign, 'qr'), 'B')).toBe('123456789');
    expect(qrField(hint(foreign, 'qr'), 'C')).toBe('DE');
    expect(qrField(hint(refund, 'qr'), 'B')).toBe('503504564');
    expect(qrField(hint(consumer, 'qr'), 'B')).toBe('999999990');

    const res = await t.request({ method: 'GET', url: `/v1/locations/${loc}/saft?period=2026-11`, key });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/xml; charset=windows-1252');
    const bytes = res.rawPayload;
    const xml = new TextDecoder('windows-1252').decode(bytes);
    if (HAVE_XSD11) {
      const valid = saftXsdValidate(bytes);
      expect(valid.ok, valid.output).toBe(true);
    } else console.warn(`conformance-portugal: ${XSD11_MISSING_MESSAGE}`);

    // The customers, as an inspector reads them.
    const customers = [...xml.matchAll(/<Customer>(.*?)<\/Customer>/gs)].map((m) => m[1]!);
    const byId = (id: string) => customers.find((c) => firstTagText(c, 'CustomerID') === id) ?? '';
    const pt = byId('503504564');
    expect(firstTagText(pt, 'CustomerTaxID')).toBe('503504564');
    expect(pt).toContain('<BillingAddress><AddressDetail>Rua Augusta 1</AddressDetail><City>Lisboa</City><PostalCode>1100-048</PostalCode><Country>PT</Country></BillingAddress>');
    const de = byId('DE 123456789');
    expect(firstTagText(de, 'CustomerTaxID')).toBe('123456789');
    expect(firstTagText(de, 'City')).toBe('Berlin');
    expect(firstTagText(de, 'Country')).toBe('DE');
    for (const c of customers) expect(firstTagText(c, 'CustomerTaxID')).not.toMatch(/^[A-Z]{2}/);

    // Every Hash, recomputed from the document (Portaria 363/2010 art. 6) and verified with OpenSSL.
    const invoices = [...xml.matchAll(/<Invoice[^>]*>(.*?)<\/Invoice>/gs)].map((m) => m[1]!);
    expect(invoices).toHaveLength(5);
    const previous = new Map<string, string>();
    let debit = 0;
    let credit = 0;
    for (const inv of invoices) {
      const no = firstTagText(inv, 'InvoiceNo');
      const series = no.split('/')[0]!;
      const message = `${firstTagText(inv, 'InvoiceDate')};${firstTagText(inv, 'SystemEntryDate')};${no};${firstTagText(inv, 'GrossTotal')};${previous.get(series) ?? ''}`;
      const verified = opensslVerifyHash(message, firstTagText(inv, 'Hash'), SANDBOX_PRODUCER_PUBLIC_KEY_PEM);
      expect(verified.ok, `${no}: ${verified.output}`).toBe(true);
      previous.set(series, firstTagText(inv, 'Hash'));
      const lines = [...inv.matchAll(/<Line>(.*?)<\/Line>/gs)].map((m) => m[1]!);
      const d = lines.reduce((s, l) => s + cents(firstTagText(l, 'DebitAmount') || '0'), 0);
      const c = lines.reduce((s, l) => s + cents(firstTagText(l, 'CreditAmount') || '0'), 0);
      expect(d + c, no).toBe(cents(firstTagText(inv, 'NetTotal')));
      expect(cents(firstTagText(inv, 'NetTotal')) + cents(firstTagText(inv, 'TaxPayable')), no).toBe(cents(firstTagText(inv, 'GrossTotal')));
      debit += d;
      credit += c;
    }
    expect(firstTagText(xml, 'NumberOfEntries')).toBe('5');
    expect(firstTagText(byId('500000000'), 'CompanyName')).toBe('Cliente \u00e7');
    expect(cents(firstTagText(xml, 'TotalDebit'))).toBe(debit);
    expect(cents(firstTagText(xml, 'TotalCredit'))).toBe(credit);
  });
});

describe('Portugal: amounts beyond the QR code\'s 16 characters are refused', () => {
  it('a total of 10,000,000,000,000.01 → 400; 9,999,999,999,999.99 fits field O', async () => {
    const exempt = (cents: number) => ({ ...line('Grande', 1, cents, 0, { tax_exemption_code: 'M07' }), tax_amount: 0, total_amount: cents });
    const over = await createTx(t, key, body([exempt(1_000_000_000_000_001)], { metadata: { document_type: 'FT' } }));
    expect(over.statusCode, over.body).toBe(400);
    expect(over.json().error).toBe("total_amount must be at most 9999999999999.99 EUR (999999999999999 minor units): the document's QR code holds amounts of at most 16 characters");
    const max = await sale({ metadata: { document_type: 'FT' } }, [exempt(999_999_999_999_999)]);
    expect(qrField(hint(max, 'qr'), 'O')).toBe('9999999999999.99');
    for (const f of hint(max, 'qr').split('*')) expect(f.slice(f.indexOf(':') + 1).length, f).toBeLessThanOrEqual(f.startsWith('G:') || f.startsWith('H:') ? 70 : 30);
  });
});
