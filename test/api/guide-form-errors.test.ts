/**
 * A guide-form request (`amount`, `line_items[]` with `vat_rate` in hundredths of a percent)
 * is told about its mistakes in its own terms: each system's line and rate rules run on the
 * canonical draft, and their 400s come back naming `line_items[i]`, `vat_rate` and `amount`,
 * rates listed in hundredths of a percent; the same mistake in the canonical form keeps its
 * canonical message (docs/decisions.md "Guide-form errors"). Runs on the store TEST_STORE names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { SystemKey } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody, saleMetadata } from '../support/transactions.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T10:00:00.000Z'), random: () => 0.5 });
});
afterAll(() => t.close());

type Line = { description?: string; quantity?: number; unit_price: number; vat_rate: number } & Record<string, unknown>;

/** A guide-form body whose `amount` is the sum of its lines (tax rounded half up). */
function guide(loc: string, system: SystemKey, lines: Line[], metadata: Record<string, unknown> = {}) {
  const line_items = lines.map((l, i) => ({ description: `Line ${i}`, quantity: 1, ...l }));
  const amount = line_items.reduce((s, l) => s + l.quantity * l.unit_price + Math.round((l.quantity * l.unit_price * l.vat_rate) / 10000), 0);
  return { location_id: loc, type: 'sale', amount, payment_method: 'card', line_items, metadata: { ...(saleMetadata[system] ?? {}), ...metadata } };
}

/** The same request in the canonical form. */
function canonical(loc: string, system: SystemKey, lines: Line[], metadata: Record<string, unknown> = {}) {
  const items = lines.map(({ vat_rate, ...l }, i) => {
    const net = (l.quantity ?? 1) * l.unit_price;
    const tax = Math.round((net * vat_rate) / 10000);
    return { description: `Line ${i}`, quantity: 1, ...l, tax_rate: vat_rate / 100, tax_amount: tax, total_amount: net + tax };
  });
  const pretax = items.reduce((s, l) => s + l.total_amount - l.tax_amount, 0);
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  return saleBody(loc, { items, pretax_amount: pretax, tax_amount: tax, total_amount: pretax + tax, metadata: { ...(saleMetadata[system] ?? {}), ...metadata } });
}

async function location(system: SystemKey) {
  const { key } = await t.signup();
  return { key, loc: await createLocation(t, key, system) };
}

/** Sends the request in both forms; each answers 400 with its own message. */
async function expectBoth(system: SystemKey, lines: Line[], metadata: Record<string, unknown>, guideMessage: string | RegExp, canonicalMessage: string | RegExp) {
  const says = (error: unknown, message: string | RegExp) => (typeof message === 'string' ? expect(error).toBe(message) : expect(error).toMatch(message));
  const { key, loc } = await location(system);
  const g = await createTx(t, key, guide(loc, system, lines, metadata));
  expect(g.statusCode, g.body).toBe(400);
  says(g.json().error, guideMessage);
  const c = await createTx(t, key, canonical(loc, system, lines, metadata));
  expect(c.statusCode, c.body).toBe(400);
  says(c.json().error, canonicalMessage);
  // A preview refuses with the same message as create.
  const p = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: guide(loc, system, lines, metadata) });
  expect(p.statusCode, p.body).toBe(400);
  says(p.json().error, guideMessage);
}

const distinctRates = (n: number): Line[] => Array.from({ length: n }, (_, i) => ({ unit_price: 100, vat_rate: (i + 1) * 100 }));
const ITALY_TOO_LARGE = 'must be at most 99999999999.99 EUR (9999999999999 minor units): the Italian fiscal documents have at most 11 integer digits';

describe('guide-form requests get errors in their own terms', () => {
  it('Greece: an unknown rate names line_items[i].vat_rate and lists the rates in hundredths', async () => {
    await expectBoth('gr-mydata', [{ unit_price: 1000, vat_rate: 2400 }, { unit_price: 1000, vat_rate: 2100 }], {},
      'line_items[1].vat_rate must be a Greek VAT rate (2400, 1300, 600, 1700, 900, 400, 300 or 0)',
      'items[1].tax_rate must be a Greek VAT rate (24, 13, 6, 17, 9, 4, 3 or 0)');
  });

  it('Greece: a total above myDATA\'s 15 digits names amount', async () => {
    await expectBoth('gr-mydata', [{ unit_price: 1_000_000_000_000_000, vat_rate: 0 }], { vat_exemption_category: 1 },
      'amount must be at most 9999999999999.99 EUR (999999999999999 minor units): myDATA amounts have at most 15 digits',
      'total_amount must be at most 9999999999999.99 EUR (999999999999999 minor units): myDATA amounts have at most 15 digits');
  });

  it('Spain VERI*FACTU: the exemption rule names vat_rate; too many rates names no field', async () => {
    await expectBoth('es-verifactu', [{ unit_price: 1000, vat_rate: 2100 }], { exemption_code: 'E1' },
      'metadata.exemption_code applies to the lines with vat_rate 0, and this transaction has none',
      'metadata.exemption_code applies to the lines with tax_rate 0, and this transaction has none');
    await expectBoth('es-verifactu', distinctRates(13), {},
      'a VERI*FACTU invoice carries at most 12 different tax rates', 'a VERI*FACTU invoice carries at most 12 different tax rates');
  });

  it('Spain TicketBAI: the exemption rule names vat_rate; too many rates names no field', async () => {
    await expectBoth('es-ticketbai', [{ unit_price: 1000, vat_rate: 2100 }], { exemption_code: 'E1' },
      'metadata.exemption_code applies to the lines with vat_rate 0, and this transaction has none',
      'metadata.exemption_code applies to the lines with tax_rate 0, and this transaction has none');
    await expectBoth('es-ticketbai', distinctRates(13), {},
      'a TicketBAI invoice carries at most 12 different tax rates', 'a TicketBAI invoice carries at most 12 different tax rates');
  });

  it('Spain SII: too many rates names no field', async () => {
    await expectBoth('es-sii', distinctRates(7), {},
      'SII records take at most 6 different tax rates per invoice', 'SII records take at most 6 different tax rates per invoice');
  });

  for (const system of ['it-sdi', 'it-dc'] as const) {
    it(`Italy ${system}: the Natura rules and the amount limits name the caller's fields`, async () => {
      await expectBoth(system, [{ unit_price: 1000, vat_rate: 2200 }, { unit_price: 1000, vat_rate: 0 }], {},
        'line_items[1].natura is required when vat_rate is 0 (N1-N6)', 'items[1].natura is required when tax_rate is 0 (N1-N6)');
      await expectBoth(system, [{ unit_price: 1000, vat_rate: 2200, natura: 'N4' }], {},
        'line_items[0].natura is only allowed when vat_rate is 0', 'items[0].natura is only allowed when tax_rate is 0');
      await expectBoth(system, [{ unit_price: 1000, vat_rate: 0, natura: 'X9' }], {},
        'line_items[0].natura must be a valid Natura code (N1-N6 and subcodes)', 'items[0].natura must be a valid Natura code (N1-N6 and subcodes)');
      await expectBoth(system, [{ unit_price: 10_000_000_000_000, vat_rate: 2200 }], {},
        `line_items[0].unit_price ${ITALY_TOO_LARGE}`, `items[0].unit_price ${ITALY_TOO_LARGE}`);
      // Each line within the limit, their sum above it.
      const half: Line = { unit_price: 6_000_000_000_000, vat_rate: 0, natura: 'N4' };
      await expectBoth(system, [half, half], {},
        `amount ${ITALY_TOO_LARGE}`, `total_amount ${ITALY_TOO_LARGE}`);
    });
  }

  it('Italy it-sdi: a Natura code without its sub-code names line_items[i]', async () => {
    await expectBoth('it-sdi', [{ unit_price: 1000, vat_rate: 0, natura: 'N2' }], {},
      /^line_items\[0\]\.natura N2 is no longer accepted by SdI: give its sub-code/, /^items\[0\]\.natura N2 is no longer accepted by SdI: give its sub-code/);
  });

  it('Italy it-dc: the payment split names amount', async () => {
    await expectBoth('it-dc', [{ unit_price: 1000, vat_rate: 2200 }], { cash_amount: 1 },
      'cash_amount + electronic_amount + ticket_amount must equal amount', 'cash_amount + electronic_amount + ticket_amount must equal total_amount');
  });

  it('Portugal: the exemption code rules and the QR limit name the caller\'s fields', async () => {
    await expectBoth('pt-saft', [{ unit_price: 1000, vat_rate: 2300, tax_exemption_code: 'M07' }], {},
      'line_items[0].tax_exemption_code is only allowed when vat_rate is 0', 'items[0].tax_exemption_code is only allowed when tax_rate is 0');
    await expectBoth('pt-saft', [{ unit_price: 1000, vat_rate: 0, tax_exemption_code: 'Z99' }], {},
      'line_items[0].tax_exemption_code must be an AT exemption code (M01-M99)', 'items[0].tax_exemption_code must be an AT exemption code (M01-M99)');
    await expectBoth('pt-saft', [{ unit_price: 1_000_000_000_000_000, vat_rate: 0, tax_exemption_code: 'M07' }], {},
      "amount must be at most 9999999999999.99 EUR (999999999999999 minor units): the document's QR code holds amounts of at most 16 characters",
      "total_amount must be at most 9999999999999.99 EUR (999999999999999 minor units): the document's QR code holds amounts of at most 16 characters");
  });

  it('France: a line\'s tax_amount is checked with the formula in vat_rate\'s unit', async () => {
    const { key, loc } = await location('fr-nf525');
    const body = guide(loc, 'fr-nf525', [{ unit_price: 1000, vat_rate: 2100, tax_amount: 200 }]);
    const res = await createTx(t, key, body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('line_items[0].tax_amount must be 210 (quantity × unit_price × vat_rate / 10000, rounded half up)');
  });

  it('a valid guide-form request still succeeds (Greece, 24 %)', async () => {
    const { key, loc } = await location('gr-mydata');
    const res = await createTx(t, key, guide(loc, 'gr-mydata', [{ unit_price: 1000, vat_rate: 2400 }]));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().amount).toBe(1240);
  });
});
