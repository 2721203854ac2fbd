import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { configs } from '../support/fixtures.ts';
import { createLocation, createTx } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, firstTagText, xsdValidate } from '../support/xml-tools.ts';

/*
 * Black-box conformance of the Greek documents (docs-it-gr-pt-fr audit): the InvoicesDoc
 * against the official XSDs, its summary recomputed from the lines, and the UID the
 * sandbox AADE answers (printed on the receipt, render hint `uid`) recomputed from the
 * document with the FAQ's algorithm (FORMATS.md §6: SHA-1 of
 * `<AFM>-<issueDate>-<branch>-<invoiceType>-<series>-<aa>`), as AADE computes it.
 */

const XSDS = ['gr/mydata/v1.0.12/InvoicesDoc-v1.0.12.xsd', 'gr/mydata/v2.0.1/InvoicesDoc-v2.0.1.xsd'];

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-11-20T10:00:00.000Z'), limiter: unlimitedLimiter() });
  ({ key } = await t.signup());
});
afterAll(() => t?.close());

function line(description: string, quantity: number, unit_price: number, tax_rate: number) {
  const net = Math.round(quantity * unit_price);
  const tax = Math.round((quantity * unit_price * tax_rate) / 100);
  return { description, quantity, unit_price, tax_rate, tax_amount: tax, total_amount: net + tax };
}
function body(location: string, items: ReturnType<typeof line>[], over: Record<string, unknown> = {}) {
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  const total = items.reduce((s, l) => s + l.total_amount, 0);
  return { location_id: location, timestamp: '2026-11-20T09:30:00Z', currency: 'EUR', payment_method: 'card', items, pretax_amount: total - tax, tax_amount: tax, total_amount: total, ...over };
}
const cents = (text: string) => Math.round(Number(text) * 100);
const hint = (tx: { render_hints: Array<{ key: string; value: string }> }, k: string) => tx.render_hints.find((h) => h.key === k)?.value;

describe('Greece: the sandbox AADE answers the UID of the document', () => {
  for (const [name, config] of [
    ['Latin series A, branch 0, TypeA', {}],
    ['Greek series ΑΛΠ, branch 3, TypeB', { default_series: 'ΑΛΠ', branch: 3, document_class: 'TypeB' }],
  ] as const) {
    it(`${name}: uid = SHA-1 of the document's fields; the document is valid and its summary adds up`, async () => {
      const loc = await createLocation(t, key, 'gr-mydata', { country_config: { ...configs.mydata, ...config } });
      const items = [line('Καφές «ελληνικός» & <τσάι>', 3, 33, 24), line('Ψωμί', 0.333, 100, 13), line('Βιβλίο', 7, 333, 6), ...Array.from({ length: 6 }, (_, i) => line(`γραμμή ${i}`, 1, 2, 24))];
      const res = await createTx(t, key, body(loc, items));
      expect(res.statusCode, res.body).toBe(201);
      const tx = res.json();
      expect(tx.status).toBe('success');

      const rec = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}/fiscal-record`, key });
      expect(rec.statusCode, rec.body).toBe(200);
      const xml = rec.body;
      if (HAVE_SCHEMAS) {
        for (const xsd of XSDS) {
          const v = xsdValidate(xml, xsd);
          expect(v.ok, `${xsd}: ${v.output}`).toBe(true);
        }
      } else console.warn(`conformance-greece: ${SCHEMAS_MISSING_MESSAGE}`);

      const fields = [
        firstTagText(xml, 'vatNumber'), firstTagText(xml, 'issueDate'), firstTagText(xml, 'branch'),
        firstTagText(xml, 'invoiceType'), firstTagText(xml, 'series'), firstTagText(xml, 'aa'),
      ];
      expect(fields.slice(2)).toEqual([String(config.branch ?? 0), '11.1', config.default_series ?? 'A', '1']);
      const uid = crypto.createHash('sha1').update(fields.join('-'), 'utf8').digest('hex').toUpperCase();
      expect(hint(tx, 'uid')).toBe(uid);
      expect(tx.fiscal_id_upstream).toMatch(/^\d{15}$/);

      const details = [...xml.matchAll(/<invoiceDetails>(.*?)<\/invoiceDetails>/g)].map((m) => m[1]!);
      const net = details.reduce((s, d) => s + cents(firstTagText(d, 'netValue')), 0);
      const vat = details.reduce((s, d) => s + cents(firstTagText(d, 'vatAmount')), 0);
      const summary = /<invoiceSummary>(.*?)<\/invoiceSummary>/.exec(xml)![1]!;
      expect(cents(firstTagText(summary, 'totalNetValue'))).toBe(net);
      expect(cents(firstTagText(summary, 'totalVatAmount'))).toBe(vat);
      expect(cents(firstTagText(summary, 'totalGrossValue'))).toBe(net + vat);
      expect(net + vat).toBe(tx.amount);
    });
  }
});

describe('Greece: amounts beyond myDATA\'s 15 digits are refused, not written invalid', () => {
  it('a total of 10,000,000,000,000.01 → 400; 9,999,999,999,999.99 gives a valid InvoicesDoc', async () => {
    const loc = await createLocation(t, key, 'gr-mydata');
    const exempt = (cents: number) => ({ ...line('Μεγάλο', 1, cents, 0), tax_amount: 0, total_amount: cents });
    const over = await createTx(t, key, body(loc, [exempt(1_000_000_000_000_001)], { metadata: { vat_exemption_category: 14 } }));
    expect(over.statusCode, over.body).toBe(400);
    expect(over.json().error).toBe('total_amount must be at most 9999999999999.99 EUR (999999999999999 minor units): myDATA amounts have at most 15 digits');
    const max = await createTx(t, key, body(loc, [exempt(999_999_999_999_999)], { metadata: { vat_exemption_category: 14 } }));
    expect(max.statusCode, max.body).toBe(201);
    const rec = await t.request({ method: 'GET', url: `/v1/transactions/${max.json().id}/fiscal-record`, key });
    expect(firstTagText(rec.body, 'totalGrossValue')).toBe('9999999999999.99');
    if (HAVE_SCHEMAS) for (const xsd of XSDS) expect(xsdValidate(rec.body, xsd).ok).toBe(true);
  });
});
