import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { createLocation, createTx } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, firstTagText, xsdValidate } from '../support/xml-tools.ts';
import { IT_PIVA, configs } from '../support/fixtures.ts';

/** A second valid partita IVA (check digit), another issuer than IT_PIVA. */
const OTHER_PIVA = '12345678903';

/*
 * Black-box conformance of the Italian documents (docs-it-gr-pt-fr audit): what the API
 * makes of demanding but legal inputs, checked as an outside checker would, from the
 * fiscal record's bytes alone: the official XSD (xmllint), and SdI's arithmetic checks
 * recomputed here independently (00421: each DatiRiepilogo's Imposta is ImponibileImporto
 * × AliquotaIVA / 100 within ±0.01; the document total is the summary plus Arrotondamento).
 */

const FATTURAPA_XSD = 'it/fatturapa/Schema_del_file_xml_FatturaPA_v1.2.2.xsd';
const LOTTERIA_XSD = 'it/corrispettivi/DocCommercialiLotteriaTypes_v1.0.xsd';

let t: TestApp;
let key: string;
let sdi: string;
let dc: string;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-11-20T10:00:00.000Z'), limiter: unlimitedLimiter() });
  ({ key } = await t.signup());
  sdi = await createLocation(t, key, 'it-sdi');
  dc = await createLocation(t, key, 'it-dc');
});
afterAll(() => t?.close());

/** A line as the canonical request wants it: tax = round-half-up(q × price × rate / 100). */
function line(description: string, quantity: number, unit_price: number, tax_rate: number, extra: Record<string, unknown> = {}) {
  const net = Math.round(quantity * unit_price);
  const tax = Math.round((quantity * unit_price * tax_rate) / 100);
  return { description, quantity, unit_price, tax_rate, tax_amount: tax, total_amount: net + tax, ...extra };
}

function body(location: string, items: ReturnType<typeof line>[], over: Record<string, unknown> = {}) {
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  const total = items.reduce((s, l) => s + l.total_amount, 0);
  return { location_id: location, timestamp: '2026-11-20T09:30:00Z', currency: 'EUR', payment_method: 'card', items, pretax_amount: total - tax, tax_amount: tax, total_amount: total, ...over };
}

const cents = (text: string): number => Math.round(Number(text) * 100);
const all = (xml: string, name: string): string[] => [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((m) => m[1]!);

async function record(id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

function expectValid(xml: string, xsd: string): void {
  if (!HAVE_SCHEMAS) return console.warn(`conformance-italy: ${SCHEMAS_MISSING_MESSAGE}`);
  const r = xsdValidate(xml, xsd);
  expect(r.ok, r.output).toBe(true);
}

/** SdI's 00421 and the totals, recomputed from the document alone. */
function expectSdiArithmetic(xml: string): void {
  const rows = [...xml.matchAll(/<DatiRiepilogo>(.*?)<\/DatiRiepilogo>/g)].map((m) => m[1]!);
  let sum = 0;
  for (const row of rows) {
    const base = cents(firstTagText(row, 'ImponibileImporto'));
    const rate = Number(firstTagText(row, 'AliquotaIVA'));
    const tax = cents(firstTagText(row, 'Imposta'));
    // |Imposta − Imponibile × Aliquota / 100| ≤ 0.01, in cents × 100.
    expect(Math.abs(tax * 100 - base * rate), `DatiRiepilogo ${row}`).toBeLessThanOrEqual(100);
    sum += base + tax;
  }
  // ImponibileImporto = the sum of its lines' PrezzoTotale (00422), per rate.
  const lines = [...xml.matchAll(/<DettaglioLinee>(.*?)<\/DettaglioLinee>/g)].map((m) => m[1]!);
  for (const row of rows) {
    const key = `${firstTagText(row, 'AliquotaIVA')}|${firstTagText(row, 'Natura')}`;
    const net = lines.filter((l) => `${firstTagText(l, 'AliquotaIVA')}|${firstTagText(l, 'Natura')}` === key).reduce((s, l) => s + cents(firstTagText(l, 'PrezzoTotale')), 0);
    expect(cents(firstTagText(row, 'ImponibileImporto'))).toBe(net);
  }
  const rounding = firstTagText(xml, 'Arrotondamento');
  expect(cents(firstTagText(xml, 'ImportoTotaleDocumento'))).toBe(sum + (rounding === '' ? 0 : cents(rounding)));
}

describe('Italy SDI: the FatturaPA VAT summary passes SdI check 00421', () => {
  it('five lines of 1.02 at 22 %: the summary VAT is 5.10 × 22 % = 1.12 (not the lines\' 1.10), the 0.02 are Arrotondamento, the total is the transaction\'s', async () => {
    const items = Array.from({ length: 5 }, (_, i) => line(`Articolo ${i + 1}`, 1, 102, 22));
    expect(items.reduce((s, l) => s + l.tax_amount, 0)).toBe(110);
    const res = await createTx(t, key, body(sdi, items, { metadata: { invoice_number: 'FT/2026/0421' } }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await record(res.json().id);
    expectValid(xml, FATTURAPA_XSD);
    expect(xml).toContain('<DatiRiepilogo><AliquotaIVA>22.00</AliquotaIVA><ImponibileImporto>5.10</ImponibileImporto><Imposta>1.12</Imposta><EsigibilitaIVA>I</EsigibilitaIVA></DatiRiepilogo>');
    expect(xml).toContain('<ImportoTotaleDocumento>6.20</ImportoTotaleDocumento><Arrotondamento>-0.02</Arrotondamento>');
    expect(firstTagText(xml, 'ImportoPagamento')).toBe('6.20');
    expectSdiArithmetic(xml);
  });

  it('many rates, 0 % with Natura, fractional quantities, tiny lines, non-Latin-1 text: valid, and every summary row passes', async () => {
    const items = [
      line('Caffè «espresso» – 3× €0,333 “tazzina” <b>&amp;', 3, 33, 22),
      line('Pane ąčę 中文 Ελληνικά 😀', 0.333, 100, 4),
      line('Libro', 1, 1999, 0, { natura: 'N4' }),
      line('Servizio estero', 1, 5000, 0, { natura: 'N2.1' }),
      line('Vino', 7, 333, 10),
      ...Array.from({ length: 12 }, (_, i) => line(`riga ${i}`, 1, 2, 22)),
    ];
    const res = await createTx(t, key, body(sdi, items, {
      metadata: { invoice_number: 'FT/2026/0422' },
      customer_context: { tax_id: 'DE123456789', legal_name: 'Müller GmbH & Co. KG <Ost>', address: { street: 'Hauptstraße 1', postal_code: '10115', city: 'Berlin', country: 'DE' } },
    }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await record(res.json().id);
    expectValid(xml, FATTURAPA_XSD);
    expectSdiArithmetic(xml);
    // The lines' 0.22 at 22 % would be 00421 (1.23 × 22 % = 0.27).
    expect(all(xml, 'Imposta')).toEqual(['0.27', '0.01', '0.00', '0.00', '2.33']);
    expect(cents(firstTagText(xml, 'ImportoTotaleDocumento'))).toBe(res.json().amount);

  });

  it('within the tolerance the summary keeps the lines\' VAT: no Arrotondamento', async () => {
    const items = [line('A', 1, 1200, 10), line('B', 2, 300, 22)];
    const res = await createTx(t, key, body(sdi, items, { metadata: { invoice_number: 'FT/2026/0423' } }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await record(res.json().id);
    expect(xml).not.toContain('Arrotondamento');
    expect(all(xml, 'Imposta')).toEqual(['1.20', '1.32']);
    expectSdiArithmetic(xml);
  });
});

describe('Italy: amounts beyond the documents\' 11 integer digits are refused, not written invalid', () => {
  const MAX = 9_999_999_999_999; // 99,999,999,999.99 EUR

  it('SDI: a total above 99,999,999,999.99 → 400 naming the field; the largest that fits gives a valid FatturaPA', async () => {
    const over = await createTx(t, key, body(sdi, [line('Grande', 1, 10 ** 13, 0, { natura: 'N4' })], { metadata: { invoice_number: 'FT/2026/9001' } }));
    expect(over.statusCode, over.body).toBe(400);
    expect(over.json().error).toBe('items[0].unit_price must be at most 99999999999.99 EUR (9999999999999 minor units): the Italian fiscal documents have at most 11 integer digits');
    const total = await createTx(t, key, body(sdi, [line('Grande', 1, 9_000_000_000_000, 22)], { metadata: { invoice_number: 'FT/2026/9002' } }));
    expect(total.statusCode, total.body).toBe(400);
    expect(total.json().error).toMatch(/^items\[0\]\.total_amount must be at most 99999999999\.99 EUR/);
    // A large unit price with a small quantity: PrezzoUnitario would overflow.
    const price = await createTx(t, key, body(sdi, [line('Frazione', 0.001, 10 ** 14, 0, { natura: 'N4' })], { metadata: { invoice_number: 'FT/2026/9003' } }));
    expect(price.statusCode, price.body).toBe(400);
    expect(price.json().error).toMatch(/^items\[0\]\.unit_price must be at most/);

    const max = await createTx(t, key, body(sdi, [line('Massimo', 1, MAX, 0, { natura: 'N4' })], { metadata: { invoice_number: 'FT/2026/9004' } }));
    expect(max.statusCode, max.body).toBe(201);
    const xml = await record(max.json().id);
    expect(firstTagText(xml, 'ImportoTotaleDocumento')).toBe('99999999999.99');
    expectValid(xml, FATTURAPA_XSD);
  });

  it('Documento Commerciale: the same limit (Ammontare); the largest that fits is a valid DocCommercialiLotteria', async () => {
    const items = [line('Grande', 1, 10 ** 13, 22)];
    const over = await createTx(t, key, body(dc, items, { metadata: { electronic_amount: items[0]!.total_amount } }));
    expect(over.statusCode, over.body).toBe(400);
    expect(over.json().error).toMatch(/^items\[0\]\.unit_price must be at most 99999999999\.99 EUR/);

    const fits = [line('Massimo', 1, 8_000_000_000_000, 22)];
    const ok = await createTx(t, key, body(dc, fits, { metadata: { electronic_amount: fits[0]!.total_amount } }));
    expect(ok.statusCode, ok.body).toBe(201);
    const xml = await record(ok.json().id);
    expect(firstTagText(xml, 'Ammontare')).toBe('97600000000.00');
    expectValid(xml, LOTTERIA_XSD);
  });
});

describe('Italy SDI: a refund\'s credit note names the invoice it corrects (DPR 633/1972 art. 26)', () => {
  it('metadata.original_invoice_number / _date → DatiFattureCollegate on the TD04, XSD-valid; refused where they cannot apply', async () => {
    const items = [line('Reso', 1, 1000, 22)];
    const refund = await createTx(t, key, body(sdi, items, {
      type: 'refund', metadata: { invoice_number: 'NC/2026/0007', original_invoice_number: 'FT/2026/0421', original_invoice_date: '2026-11-02' },
    }));
    expect(refund.statusCode, refund.body).toBe(201);
    const xml = await record(refund.json().id);
    expect(firstTagText(xml, 'TipoDocumento')).toBe('TD04');
    expect(xml).toMatch(/<DatiFattureCollegate><IdDocumento>FT\/2026\/0421<\/IdDocumento><Data>2026-11-02<\/Data><\/DatiFattureCollegate>/);
    expectValid(xml, FATTURAPA_XSD);
    // Without them, as before: no link (the field is optional in the schema).
    const bare = await createTx(t, key, body(sdi, items, { type: 'refund', metadata: { invoice_number: 'NC/2026/0008' } }));
    expect(await record(bare.json().id)).not.toContain('DatiFattureCollegate');

    const refused = async (metadata: Record<string, unknown>, over: Record<string, unknown> = {}) => {
      const res = await createTx(t, key, body(sdi, items, { type: 'refund', ...over, metadata: { invoice_number: 'NC/2026/0009', ...metadata } }));
      expect(res.statusCode, res.body).toBe(400);
      return res.json().error;
    };
    expect(await refused({ original_invoice_number: 'FT/2026/0421' }, { type: 'sale' })).toBe('metadata.original_invoice_number applies to credit notes (TD04)');
    expect(await refused({ original_invoice_date: '2026-11-02' })).toBe('metadata.original_invoice_date needs metadata.original_invoice_number');
    expect(await refused({ original_invoice_number: 'FT', original_invoice_date: '2026-11-02' })).toBe('metadata.original_invoice_number must be 1-20 characters and contain at least one digit');
    expect(await refused({ original_invoice_number: 'FT/1', original_invoice_date: '02-11-2026' })).toBe('metadata.original_invoice_date must be a date in the form YYYY-MM-DD');
    expect(await refused({ original_invoice_number: 'FT/1', original_invoice_date: '2026-11-21', invoice_date: '2026-11-20' })).toBe('metadata.original_invoice_date must not be after metadata.invoice_date');
  });
});

describe('Italy SDI: a refund naming a fattura semplificata (TD07) by number and date is its nota di credito semplificata (TD08)', () => {
  const FSM10_XSD = 'it/fatturapa/Schema_VFSM10.xsd';
  const items = [line('Reso', 1, 1000, 22)];
  const consumer = { codice_fiscale: 'RSSMRA85T10A562S' };
  const sale = async (k: string, location: string, metadata: Record<string, unknown>) => {
    const res = await createTx(t, k, body(location, items, { customer_context: consumer, metadata: { invoice_date: '2026-11-02', ...metadata } }));
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const refund = async (k: string, location: string, metadata: Record<string, unknown>) => {
    const res = await createTx(t, k, body(location, items, { type: 'refund', customer_context: consumer, metadata }));
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const recordOf = async (k: string, id: string) => {
    const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key: k });
    expect(res.statusCode, res.body).toBe(200);
    return res.body;
  };
  /** An ordinary TD04 naming the invoice in DatiFattureCollegate, valid against the 1.2.2 XSD. */
  const expectTd04 = (xml: string, number: string) => {
    expect(firstTagText(xml, 'TipoDocumento')).toBe('TD04');
    expect(xml).toContain(`<DatiFattureCollegate><IdDocumento>${number}</IdDocumento><Data>2026-11-02</Data></DatiFattureCollegate>`);
    expectValid(xml, FATTURAPA_XSD);
  };

  it('without tipo_documento: TD08 in FSM10 naming the TD07, valid against Schema_VFSM10.xsd, delivered; the same from the preview; tipo_documento TD04 still wins', async () => {
    await sale(key, sdi, { invoice_number: 'FS/2026/0100', tipo_documento: 'TD07' });
    const named = { original_invoice_number: 'FS/2026/0100', original_invoice_date: '2026-11-02' };
    const id = await refund(key, sdi, { invoice_number: 'NC/2026/0100', ...named });
    const xml = await recordOf(key, id);
    expect(xml.startsWith('<p:FatturaElettronicaSemplificata xmlns:p="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.0" versione="FSM10">')).toBe(true);
    expect(firstTagText(xml, 'TipoDocumento')).toBe('TD08');
    expect(xml).toContain('<DatiFatturaRettificata><NumeroFR>FS/2026/0100</NumeroFR><DataFR>2026-11-02</DataFR><ElementiRettificati>Variazione in diminuzione (art. 26 DPR 633/1972): Reso</ElementiRettificati></DatiFatturaRettificata>');
    expectValid(xml, FSM10_XSD);
    // SdI (the stub validates FSM10 files against their schema) takes it.
    await t.worker.drain();
    await t.worker.drain();
    const got = await t.request({ method: 'GET', url: `/v1/transactions/${id}`, key });
    expect(got.json().status).toBe('delivered');
    const copy = await t.request({ method: 'GET', url: `/v1/transactions/${id}/receipt?format=text`, key });
    expect(copy.body).toContain('\nNota di credito semplificata n. NC/2026/0100\nRif. fattura semplificata n. FS/2026/0100 del\n02-11-2026\n');

    const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: body(sdi, items, { type: 'refund', customer_context: consumer, metadata: { invoice_number: 'NC/2026/0101', ...named } }) });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(firstTagText(preview.json().fiscal_record.body, 'TipoDocumento')).toBe('TD08');

    expectTd04(await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0102', tipo_documento: 'TD04', ...named })), 'FS/2026/0100');
  });

  it('stays TD04 when the sale named is not a TD07 of this issuer: a TD01, another date, another partita IVA, refused by SdI, unknown', async () => {
    await sale(key, sdi, { invoice_number: 'FT/2026/0110' });
    expectTd04(await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0110', original_invoice_number: 'FT/2026/0110', original_invoice_date: '2026-11-02' })), 'FT/2026/0110');

    await sale(key, sdi, { invoice_number: 'FS/2026/0111', tipo_documento: 'TD07', invoice_date: '2026-11-01' });
    expectTd04(await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0111', original_invoice_number: 'FS/2026/0111', original_invoice_date: '2026-11-02' })), 'FS/2026/0111');
    // Named with its own date, it is found.
    const td08 = async (k: string, location: string, metadata: Record<string, unknown>) =>
      firstTagText(await recordOf(k, await refund(k, location, metadata)), 'TipoDocumento');
    expect(await td08(key, sdi, { invoice_number: 'NC/2026/0115', original_invoice_number: 'FS/2026/0111', original_invoice_date: '2026-11-01' })).toBe('TD08');

    // A location of another partita IVA numbers its own invoices (SdI's 00404 key is the cedente's).
    const other = await createLocation(t, key, 'it-sdi', { tax_id: OTHER_PIVA });
    await sale(key, other, { invoice_number: 'FS/2026/0112', tipo_documento: 'TD07' });
    expectTd04(await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0112', original_invoice_number: 'FS/2026/0112', original_invoice_date: '2026-11-02' })), 'FS/2026/0112');
    // A refund of its own partita IVA finds it.
    expect(await td08(key, other, { invoice_number: 'NC/2026/0116', original_invoice_number: 'FS/2026/0112', original_invoice_date: '2026-11-02' })).toBe('TD08');

    const refusedId = await sale(key, sdi, { invoice_number: 'FS/2026/0113', tipo_documento: 'TD07', sandbox_outcome: 'reject:00200' });
    await t.worker.drain();
    await t.worker.drain();
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${refusedId}`, key })).json().status).toBe('rejected');
    expectTd04(await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0113', original_invoice_number: 'FS/2026/0113', original_invoice_date: '2026-11-02' })), 'FS/2026/0113');

    expectTd04(await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0114', original_invoice_number: 'FS/2026/0199', original_invoice_date: '2026-11-02' })), 'FS/2026/0199');
  });

  it('another account\'s TD07 under the same number, date and partita IVA is as if it did not exist: TD04 (named by number alone too)', async () => {
    const { key: otherKey } = await t.signup();
    const otherLoc = await createLocation(t, otherKey, 'it-sdi');
    await sale(otherKey, otherLoc, { invoice_number: 'FS/2026/0120', tipo_documento: 'TD07' });
    expectTd04(await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0120', original_invoice_number: 'FS/2026/0120', original_invoice_date: '2026-11-02' })), 'FS/2026/0120');
    const numberOnly = await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0121', original_invoice_number: 'FS/2026/0120' }));
    expect(firstTagText(numberOnly, 'TipoDocumento')).toBe('TD04');
    expect(numberOnly).toContain('<DatiFattureCollegate><IdDocumento>FS/2026/0120</IdDocumento></DatiFattureCollegate>');
    // Its own account's refund finds it.
    const own = await recordOf(otherKey, await refund(otherKey, otherLoc, { invoice_number: 'NC/2026/0120', original_invoice_number: 'FS/2026/0120', original_invoice_date: '2026-11-02' }));
    expect(firstTagText(own, 'TipoDocumento')).toBe('TD08');
  });

  it('a void (type void) naming a TD07 by number and date is its TD08 too, valid against Schema_VFSM10.xsd; tipo_documento TD04 still wins', async () => {
    await sale(key, sdi, { invoice_number: 'FS/2026/0130', tipo_documento: 'TD07' });
    const named = { original_invoice_number: 'FS/2026/0130', original_invoice_date: '2026-11-02' };
    const voidOf = async (metadata: Record<string, unknown>) => {
      const res = await createTx(t, key, body(sdi, items, { type: 'void', customer_context: consumer, metadata }));
      expect(res.statusCode, res.body).toBe(201);
      return recordOf(key, res.json().id as string);
    };
    const xml = await voidOf({ invoice_number: 'NC/2026/0130', ...named });
    expect(firstTagText(xml, 'TipoDocumento')).toBe('TD08');
    expect(xml).toContain('<DatiFatturaRettificata><NumeroFR>FS/2026/0130</NumeroFR><DataFR>2026-11-02</DataFR>');
    expectValid(xml, FSM10_XSD);
    expectTd04(await voidOf({ invoice_number: 'NC/2026/0131', tipo_documento: 'TD04', ...named }), 'FS/2026/0130');
  });

  it('at another location of the same partita IVA (one numbering across the issuer\'s shops): TD08 naming the TD07, FSM10-valid; also at a location whose partita IVA is in country_config only', async () => {
    const shopB = await createLocation(t, key, 'it-sdi', { name: 'Trattoria Roma 2' });
    await sale(key, sdi, { invoice_number: 'FS/2026/0140', tipo_documento: 'TD07' });
    const xml = await recordOf(key, await refund(key, shopB, { invoice_number: 'NC/2026/0140', original_invoice_number: 'FS/2026/0140', original_invoice_date: '2026-11-02' }));
    expect(firstTagText(xml, 'TipoDocumento')).toBe('TD08');
    expect(xml).toContain('<DatiFatturaRettificata><NumeroFR>FS/2026/0140</NumeroFR><DataFR>2026-11-02</DataFR>');
    expectValid(xml, FSM10_XSD);
    // No tax_id: the partita IVA given as country_config.partita_iva is the same issuer.
    const shopC = await createLocation(t, key, 'it-sdi', { name: 'Trattoria Roma 3', tax_id: undefined, country_config: { ...configs.sdi, partita_iva: IT_PIVA } });
    await sale(key, shopC, { invoice_number: 'FS/2026/0141', tipo_documento: 'TD07' });
    const fromA = await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0141', original_invoice_number: 'FS/2026/0141', original_invoice_date: '2026-11-02' }));
    expect(firstTagText(fromA, 'TipoDocumento')).toBe('TD08');
    expect(fromA).toContain('<DatiFatturaRettificata><NumeroFR>FS/2026/0141</NumeroFR><DataFR>2026-11-02</DataFR>');
    expectValid(fromA, FSM10_XSD);
    // And SdI's duplicate key is shared with it: its number is taken at the other shops.
    const dup = await createTx(t, key, body(sdi, items, { customer_context: consumer, metadata: { invoice_number: 'FS/2026/0141', tipo_documento: 'TD07', invoice_date: '2026-11-02' } }));
    expect(dup.statusCode, dup.body).toBe(409);
  });

  it('by number alone (no original_invoice_date): the one TD07 holding it is the TD08, DataFR its stored date, at any shop of the partita IVA, from the preview too', async () => {
    await sale(key, sdi, { invoice_number: 'FS/2026/0150', tipo_documento: 'TD07', invoice_date: '2025-03-14' });
    const shopB = await createLocation(t, key, 'it-sdi', { name: 'Trattoria Roma 4' });
    const xml = await recordOf(key, await refund(key, shopB, { invoice_number: 'NC/2026/0150', original_invoice_number: 'FS/2026/0150' }));
    expect(firstTagText(xml, 'TipoDocumento')).toBe('TD08');
    expect(xml).toContain('<DatiFatturaRettificata><NumeroFR>FS/2026/0150</NumeroFR><DataFR>2025-03-14</DataFR>');
    expectValid(xml, FSM10_XSD);
    const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: body(sdi, items, { type: 'refund', customer_context: consumer, metadata: { invoice_number: 'NC/2026/0151', original_invoice_number: 'FS/2026/0150' } }) });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json().fiscal_record.body).toContain('<NumeroFR>FS/2026/0150</NumeroFR><DataFR>2025-03-14</DataFR>');
  });

  it('by number alone, ambiguous: two TD07 under that number on different dates (SdI numbers restart each year), or a TD07 and a TD01: TD04 naming the number', async () => {
    await sale(key, sdi, { invoice_number: 'FS/0160', tipo_documento: 'TD07', invoice_date: '2025-12-30' });
    await sale(key, sdi, { invoice_number: 'FS/0160', tipo_documento: 'TD07', invoice_date: '2026-01-05' });
    const xml = await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0160', original_invoice_number: 'FS/0160' }));
    expect(firstTagText(xml, 'TipoDocumento')).toBe('TD04');
    expect(xml).toContain('<DatiFattureCollegate><IdDocumento>FS/0160</IdDocumento></DatiFattureCollegate>');
    expectValid(xml, FATTURAPA_XSD);
    // With its date, each is found.
    const dated = await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0161', original_invoice_number: 'FS/0160', original_invoice_date: '2025-12-30' }));
    expect(dated).toContain('<NumeroFR>FS/0160</NumeroFR><DataFR>2025-12-30</DataFR>');

    await sale(key, sdi, { invoice_number: 'FS/0162', tipo_documento: 'TD07', invoice_date: '2026-01-05' });
    await sale(key, sdi, { invoice_number: 'FS/0162', invoice_date: '2025-07-01' });
    expect(firstTagText(await recordOf(key, await refund(key, sdi, { invoice_number: 'NC/2026/0162', original_invoice_number: 'FS/0162' })), 'TipoDocumento')).toBe('TD04');
  });

  it('migration 0054: what a location without tax_id registered under its own id moves to its partita IVA\'s scope, and every SdI number gets its alias', async () => {
    const { accountId, key: k } = await t.signup();
    const shopA = await createLocation(t, k, 'it-sdi');
    const noTaxId = await createLocation(t, k, 'it-sdi', { name: 'Senza tax_id', tax_id: undefined, country_config: { ...configs.sdi, partita_iva: IT_PIVA } });
    const ids = [
      await sale(k, noTaxId, { invoice_number: 'FS/2026/0170', tipo_documento: 'TD07' }),
      await sale(k, shopA, { invoice_number: 'FS/2026/0171', tipo_documento: 'TD07' }),
    ];
    const rows = async () => (await t.db.query<{ chain_key: string; document: string; alias: string | null }>(
      'SELECT chain_key, document, alias FROM chain_documents WHERE transaction_id = ANY($1::uuid[]) ORDER BY document', [ids])).rows;
    const scope = `it-sdi:${accountId}:${IT_PIVA}`;
    expect(await rows()).toEqual([
      { chain_key: scope, document: 'TD07 2026 FS/2026/0170', alias: 'FS/2026/0170' },
      { chain_key: scope, document: 'TD07 2026 FS/2026/0171', alias: 'FS/2026/0171' },
    ]);
    // What a store had before 0054: no alias; the location without tax_id under its own id (a live key too).
    await t.db.query('UPDATE chain_documents SET alias = NULL WHERE transaction_id = ANY($1::uuid[])', [ids]);
    await t.db.query('UPDATE chain_documents SET chain_key = $1 WHERE transaction_id = $2', [`it-sdi:${accountId}:${noTaxId}`, ids[0]]);
    await t.db.query("INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at) VALUES ($1, 'issued', 'TD07 2025 FS/9', $2, now())", [`it-sdi:${accountId}:${noTaxId}:live`, ids[0]]);
    expect(firstTagText(await recordOf(k, await refund(k, shopA, { invoice_number: 'NC/2026/0170', original_invoice_number: 'FS/2026/0170' })), 'TipoDocumento')).toBe('TD04');
    const file = fs.readFileSync(new URL('../../src/store/migrations/0054_issued_aliases.sql', import.meta.url), 'utf8');
    await t.db.exec(file.slice(file.indexOf('-- The SdI issuer\'s scope')));
    expect(await rows()).toEqual([
      { chain_key: `${scope}:live`, document: 'TD07 2025 FS/9', alias: 'FS/9' },
      { chain_key: scope, document: 'TD07 2026 FS/2026/0170', alias: 'FS/2026/0170' },
      { chain_key: scope, document: 'TD07 2026 FS/2026/0171', alias: 'FS/2026/0171' },
    ]);
    // Found now, by number alone, from the other shop.
    const xml = await recordOf(k, await refund(k, shopA, { invoice_number: 'NC/2026/0171', original_invoice_number: 'FS/2026/0170' }));
    expect(xml).toContain('<NumeroFR>FS/2026/0170</NumeroFR><DataFR>2026-11-02</DataFR>');
  });
});
