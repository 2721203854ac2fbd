import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { createLocation, createTx } from '../support/transactions.ts';
import { HAVE_SCHEMAS, xsdValidate } from '../support/xml-tools.ts';
import { FATTURAPA_XSD, sdiControls } from '../support/fake-sdi.ts';
import { IT_PIVA } from '../support/fixtures.ts';

/*
 * SdI's content controls (the "Elenco controlli" of the FatturaPA specifications) against what
 * the API answers 201 to (docs/decisions.md "Italy SDI: SdI controls"): what SdI would discard
 * with an NS days later is a 400 at creation, on every key; what passes gives a document the
 * fake SdI's controls (test/support/fake-sdi.ts `sdiControls`, its own parsing and arithmetic)
 * find nothing wrong with, and the fake finds the codes when the same document is broken.
 */

let t: TestApp;
let key: string;
let loc: string;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-11-20T10:00:00.000Z'), limiter: unlimitedLimiter() });
  ({ key } = await t.signup());
  loc = await createLocation(t, key, 'it-sdi');
});
afterAll(() => t?.close());

const BUYER = { tax_id: 'IT12345678903', legal_name: 'Cliente Srl' };
let n = 0;

/** A line as the canonical request wants it: tax = round-half-up(q × price × rate / 100). */
function line(description: string, quantity: number, unit_price: number, tax_rate: number, extra: Record<string, unknown> = {}) {
  const net = Math.round(quantity * unit_price);
  const tax = Math.round((quantity * unit_price * tax_rate) / 100);
  return { description, quantity, unit_price, tax_rate, tax_amount: tax, total_amount: net + tax, ...extra };
}

function sale(over: { items?: ReturnType<typeof line>[]; customer_context?: Record<string, unknown>; metadata?: Record<string, unknown>; type?: string } = {}) {
  const items = over.items ?? [line('Consulenza', 1, 10000, 22)];
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  const total = items.reduce((s, l) => s + l.total_amount, 0);
  return {
    location_id: loc, timestamp: '2026-11-20T09:30:00Z', currency: 'EUR', payment_method: 'card', type: over.type ?? 'sale',
    items, pretax_amount: total - tax, tax_amount: tax, total_amount: total,
    customer_context: over.customer_context ?? BUYER,
    metadata: { invoice_number: `FT-C-${++n}`, ...over.metadata },
  };
}

async function refused(body: object): Promise<string> {
  const res = await createTx(t, key, body);
  expect(res.statusCode, res.body).toBe(400);
  return res.json().error as string;
}

async function record(body: object): Promise<string> {
  const res = await createTx(t, key, body);
  expect(res.statusCode, res.body).toBe(201);
  const xml = await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}/fiscal-record`, key });
  expect(xml.statusCode).toBe(200);
  if (HAVE_SCHEMAS) expect(xsdValidate(xml.body, FATTURAPA_XSD).ok).toBe(true);
  return xml.body;
}

const codes = (xml: string) => sdiControls(xml, new Date('2026-11-20T10:00:00.000Z')).map((e) => e.codice);

describe('Italy SDI: what SdI discards with an NS is a 400 at creation', () => {
  it('00426: a PEC address beside a recipient code other than 0000000 → 400; with 0000000 the PEC is written and passes', async () => {
    expect(await refused(sale({ metadata: { codice_destinatario: 'ABC1234', pec_destinatario: 'fatture@pec.example.it' } }))).toBe(
      'metadata.pec_destinatario goes with codice_destinatario 0000000 only (here ABC1234): SdI refuses a PEC address beside another recipient code (00426); give one or the other',
    );
    const xml = await record(sale({ metadata: { pec_destinatario: 'fatture@pec.example.it' } }));
    expect(xml).toContain('<CodiceDestinatario>0000000</CodiceDestinatario><PECDestinatario>fatture@pec.example.it</PECDestinatario>');
    expect(codes(xml)).toEqual([]);
  });

  it('00424: a rate between 0 and 1 → 400 (0.001 % was AliquotaIVA 0.00 without Natura: 00400/00429); more than 2 decimals → 400', async () => {
    const message = 'items[0].tax_rate must be 0 or at least 1 %: SdI reads AliquotaIVA as a percentage (22.00 for 22 %) and refuses a rate between 0 and 1 (00424)';
    expect(await refused(sale({ items: [line('Servizio', 1, 100000, 0.5)] }))).toBe(message);
    expect(await refused(sale({ items: [line('Servizio', 1, 100000, 0.001)] }))).toBe(message);
    expect(await refused(sale({ items: [line('Servizio', 1, 100000, 22.005)] }))).toBe('items[0].tax_rate must have at most 2 decimals: FatturaPA writes AliquotaIVA as a percentage with two');
    // The guide form names its own field.
    const guide = await createTx(t, key, {
      location_id: loc, timestamp: '2026-11-20T09:30:00Z', currency: 'EUR', payment_method: 'card', amount: 1005,
      line_items: [{ description: 'Servizio', quantity: 1, unit_price: 1000, vat_rate: 50 }], customer_context: BUYER, metadata: { invoice_number: `FT-C-${++n}` },
    });
    expect([guide.statusCode, guide.json().error]).toEqual([400, message.replace('items[0].tax_rate', 'line_items[0].vat_rate')]);
  });

  it('00305 / 00306: an Italian buyer VAT number or codice fiscale that cannot be valid → 400; valid and foreign ones pass', async () => {
    expect(await refused(sale({ customer_context: { tax_id: 'IT12345678901', legal_name: 'Cliente Srl' } }))).toBe(
      'customer_context.tax_id is not a valid Italian partita IVA (11 digits with their check digit): SdI refuses it (00305); a foreign VAT number takes its country prefix (DE123456789) or metadata.buyer_country',
    );
    expect(await refused(sale({ customer_context: { codice_fiscale: 'RSSMRA85T10A562T', first_name: 'Mario', last_name: 'Rossi' } }))).toBe(
      'customer_context.codice_fiscale is not a valid codice fiscale (16 characters with their check character, or 11 digits with their check digit): SdI refuses it (00306)',
    );
    for (const customer_context of [{ codice_fiscale: 'RSSMRA85T10A562S', first_name: 'Mario', last_name: 'Rossi' }, { tax_id: 'DE123456789', legal_name: 'Kunde GmbH' }]) {
      expect(codes(await record(sale({ customer_context, metadata: customer_context.tax_id ? { codice_destinatario: 'XXXXXXX' } : {} })))).toEqual([]);
    }
  });

  it('00471: an invoice whose buyer is the seller itself → 400; a credit note to it is not concerned', async () => {
    expect(await refused(sale({ customer_context: { tax_id: `IT${IT_PIVA}`, legal_name: 'Noi stessi Srl' } }))).toBe(
      'customer_context names this location\'s own partita IVA: SdI refuses a TD01 whose buyer is the seller itself (00471); goods taken for own use or given away are a self-invoice (TD27), not issued here',
    );
    expect(await refused(sale({ customer_context: { codice_fiscale: IT_PIVA }, metadata: { tipo_documento: 'TD24' } }))).toBe(
      'customer_context names this location\'s own codice fiscale: SdI refuses a TD24 whose buyer is the seller itself (00471); goods taken for own use or given away are a self-invoice (TD27), not issued here',
    );
    expect(codes(await record(sale({ type: 'refund', customer_context: { tax_id: `IT${IT_PIVA}` } })))).toEqual([]);
  });
});

describe('the fake SdI plays the controls on what the service writes', () => {
  it('a demanding invoice passes every control; the same document broken fails with the code SdI gives', async () => {
    const xml = await record(sale({
      items: [
        ...Array.from({ length: 5 }, (_, i) => line(`Articolo ${i}`, 1, 102, 22)),
        line('Catering', 3.333, 1250, 10),
        line('Corso', 1, 5000, 0, { natura: 'N4' }),
        line('Servizio estero', 1, 2000, 0, { natura: 'N2.1' }),
      ],
      metadata: { invoice_date: '2026-11-19' },
    }));
    expect(codes(xml)).toEqual([]);
    const broken = (from: string | RegExp, to: string) => {
      const out = xml.replace(from, to);
      expect(out).not.toBe(xml);
      return codes(out);
    };
    expect(broken('<CodiceDestinatario>0000000</CodiceDestinatario>', '<CodiceDestinatario>0000000</CodiceDestinatario><PECDestinatario>a@b.it</PECDestinatario>')).toEqual([]);
    expect(broken('<CodiceDestinatario>0000000</CodiceDestinatario>', '<CodiceDestinatario>ABC1234</CodiceDestinatario><PECDestinatario>a@b.it</PECDestinatario>')).toEqual(['00426']);
    expect(broken('<IdCodice>12345678903</IdCodice>', '<IdCodice>12345678901</IdCodice>')).toEqual(['00305']);
    expect(broken('<IdCodice>12345678903</IdCodice>', `<IdCodice>${IT_PIVA}</IdCodice>`)).toEqual(['00471']);
    expect(broken('<Data>2026-11-19</Data>', '<Data>2026-11-21</Data>')).toEqual(['00403']);
    expect(broken(/<Numero>[^<]*<\/Numero>/, '<Numero>FT-C</Numero>')).toEqual(['00425']);
    // A line's rate, Natura and total.
    expect(broken('<AliquotaIVA>0.00</AliquotaIVA><Natura>N4</Natura>', '<AliquotaIVA>0.00</AliquotaIVA>')).toEqual(expect.arrayContaining(['00400', '00444']));
    expect(broken('<PrezzoTotale>50.00</PrezzoTotale>', '<PrezzoTotale>50.02</PrezzoTotale>')).toEqual(expect.arrayContaining(['00423']));
    // The summary: the VAT of the 22 % row (5 × 1.02: 1.12), its taxable amount, a row without lines.
    expect(broken('<Imposta>1.12</Imposta>', '<Imposta>1.10</Imposta>')).toEqual(['00421']);
    expect(broken('<ImponibileImporto>5.10</ImponibileImporto>', '<ImponibileImporto>7.10</ImponibileImporto>')).toEqual(expect.arrayContaining(['00422']));
    expect(broken('<DatiRiepilogo><AliquotaIVA>22.00</AliquotaIVA>', '<DatiRiepilogo><AliquotaIVA>0.50</AliquotaIVA>')).toEqual(expect.arrayContaining(['00419', '00424', '00443']));
  });
});
