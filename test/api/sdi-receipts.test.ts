import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';

/*
 * Italy SDI: the courtesy copy (GET /v1/transactions/{id}/receipt) says what the FatturaPA
 * it is a copy of says (GET …/fiscal-record), on both stores: the document's date, its VAT
 * summary row by row, a fattura semplificata as one, and an invoice offset by a credit note
 * as offset, not annulled.
 */
let t: TestApp;
const clock = new ManualClock('2026-03-02T10:00:00.000Z');
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t?.close());

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false });
const get = async (key: string, url: string) => t.request({ method: 'GET', url, key });
const receipt = async (key: string, id: string, query = '?format=text') => {
  const res = await get(key, `/v1/transactions/${id}/receipt${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
};
const recordOf = async (key: string, id: string) => {
  const res = await get(key, `/v1/transactions/${id}/fiscal-record`);
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
};
const sdiLocation = async () => {
  const { key } = await t.signup();
  return { key, loc: await createLocation(t, key, 'it-sdi') };
};
const created = async (key: string, body: object) => {
  const res = await createTx(t, key, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; status: string };
};
/** Lines and their totals as a request carries them. */
const body = (loc: string, items: Record<string, unknown>[], over: Record<string, unknown> = {}) => {
  const sum = (f: string) => items.reduce((s, l) => s + (l[f] as number), 0);
  const total = sum('total_amount');
  const tax = sum('tax_amount');
  return saleBody(loc, { items, pretax_amount: total - tax, tax_amount: tax, total_amount: total, ...over });
};

describe('SDI courtesy copy through the API: what the FatturaPA says', () => {
  it('"Data:" is the FatturaPA\'s Data (an invoice_date before the creation), not the creation time', async () => {
    const { key, loc } = await sdiLocation();
    const tx = await created(key, saleBody(loc, { metadata: { invoice_number: 'FT-D-1', invoice_date: '2026-02-26' } }));
    expect(await recordOf(key, tx.id)).toContain('<Data>2026-02-26</Data>');
    const text = await receipt(key, tx.id);
    expect(text).toContain('\nData: 26/02/2026\nFattura n. FT-D-1\n');
    expect(text).not.toContain('02/03/2026');
    expect(await receipt(key, tx.id, '?format=text&lang=en')).toContain('\nDate: 26/02/2026\n');
  });

  it('the VAT rows are the DatiRiepilogo rows: one per Natura at 0 %, the VAT SdI checks, the Arrotondamento', async () => {
    const { key, loc } = await sdiLocation();
    const items = [
      ...Array.from({ length: 5 }, () => ({ description: 'Penna', quantity: 1, unit_price: 102, tax_rate: 22, tax_amount: 22, total_amount: 124 })),
      { description: 'Corso', quantity: 1, unit_price: 5000, tax_rate: 0, tax_amount: 0, total_amount: 5000, natura: 'N4' },
      { description: 'Servizio estero', quantity: 1, unit_price: 2000, tax_rate: 0, tax_amount: 0, total_amount: 2000, natura: 'N2.1' },
    ];
    const tx = await created(key, body(loc, items, { metadata: { invoice_number: 'FT-R-1' } }));
    const fattura = (parser.parse(await recordOf(key, tx.id)) as Record<string, any>).FatturaElettronica.FatturaElettronicaBody;
    const rows = [fattura.DatiBeniServizi.DatiRiepilogo].flat() as Record<string, string>[];
    expect(rows.map((r) => `${r.AliquotaIVA}|${r.Natura ?? ''}|${r.ImponibileImporto}|${r.Imposta}`)).toEqual(['22.00||5.10|1.12', '0.00|N4|50.00|0.00', '0.00|N2.1|20.00|0.00']);
    expect(fattura.DatiGenerali.DatiGeneraliDocumento.Arrotondamento).toBe('-0.02');
    const text = await receipt(key, tx.id);
    expect(text).toMatch(/\nIVA 22 % \(5,10\)\s+1,12\nIVA 0 % N4 \(50,00\)\s+0,00\nIVA 0 % N2\.1 \(20,00\)\s+0,00\nArrotondamento\s+-0,02\nTOTALE EUR\s+76,20\n/);
    expect(text).not.toMatch(/IVA 0 % \(70,00\)/);
    expect(await receipt(key, tx.id, '?format=text&lang=en')).toMatch(/\nVAT 0 % N4 \(50\.00\)\s+0\.00\nVAT 0 % N2\.1 \(20\.00\)\s+0\.00\nRounding\s+-0\.02\n/);
  });

  it('a fattura semplificata (TD07) is a FatturaElettronicaSemplificata FSM10, printed "Fattura semplificata n."', async () => {
    const { key, loc } = await sdiLocation();
    const tx = await created(key, saleBody(loc, {
      customer_context: { codice_fiscale: 'RSSMRA85T10A562S' }, metadata: { invoice_number: 'FS-1', tipo_documento: 'TD07' },
    }));
    const xml = await recordOf(key, tx.id);
    expect(xml.startsWith('<p:FatturaElettronicaSemplificata xmlns:p="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.0" versione="FSM10">')).toBe(true);
    expect(xml).toContain('<FormatoTrasmissione>FSM10</FormatoTrasmissione>');
    expect(xml).toContain('<TipoDocumento>TD07</TipoDocumento>');
    // Delivered by the sandbox as any SdI file.
    await t.worker.drain();
    await t.worker.drain();
    expect((await get(key, `/v1/transactions/${tx.id}`)).json().status).toBe('delivered');
    const text = await receipt(key, tx.id);
    expect(text).toMatch(/\n\s+Copia di cortesia della fattura semplificata\n/);
    expect(text).toContain('\nFattura semplificata n. FS-1\n');
  });

  it('a TD07 cancelled: a nota di credito semplificata (TD08, FSM10) naming it, delivered, printed as one; the TD07 reprinted "Stornata con nota di credito semplificata"', async () => {
    const { key, loc } = await sdiLocation();
    const invoice = await created(key, saleBody(loc, {
      customer_context: { codice_fiscale: 'RSSMRA85T10A562S' }, metadata: { invoice_number: 'FS-C-1', tipo_documento: 'TD07', invoice_date: '2026-02-27' },
    }));
    await t.worker.drain(); // sent, then the stub's RC
    await t.worker.drain();
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${invoice.id}/cancel`, key, payload: {} });
    expect(cancel.statusCode, cancel.body).toBe(201);
    await t.worker.drain();
    await t.worker.drain();
    expect((await get(key, `/v1/transactions/${cancel.json().id}`)).json().status).toBe('delivered');
    expect((await get(key, `/v1/transactions/${invoice.id}`)).json().status).toBe('cancelled');
    const note = (parser.parse(await recordOf(key, cancel.json().id)) as Record<string, any>).FatturaElettronicaSemplificata;
    expect(note.FatturaElettronicaHeader.DatiTrasmissione.FormatoTrasmissione).toBe('FSM10');
    expect(note.FatturaElettronicaBody.DatiGenerali).toEqual({
      DatiGeneraliDocumento: { TipoDocumento: 'TD08', Divisa: 'EUR', Data: '2026-03-02', Numero: 'NC-FS-C-1' },
      DatiFatturaRettificata: { NumeroFR: 'FS-C-1', DataFR: '2026-02-27', ElementiRettificati: 'Storno totale della fattura semplificata' },
    });
    const ncText = await receipt(key, cancel.json().id);
    // 48 columns: the title and the reference wrap.
    expect(ncText).toMatch(/\n\s+Copia di cortesia della nota di credito\n\s+semplificata\n/);
    expect(ncText).toContain('\nData: 02/03/2026\nNota di credito semplificata n. NC-FS-C-1\nRif. fattura semplificata n. FS-C-1 del\n27-02-2026\n');
    expect(await receipt(key, invoice.id)).toMatch(/\n\s+Stornata con nota di credito semplificata n\.\s+NC-FS-C-1 del 02-03-2026\n/);
  });

  it('a refund asked as TD07 is a TD08 naming the invoice it credits (both required), printed as one', async () => {
    const { key, loc } = await sdiLocation();
    const refund = (metadata: Record<string, unknown>) => createTx(t, key, saleBody(loc, {
      type: 'refund', customer_context: { codice_fiscale: 'RSSMRA85T10A562S' }, metadata: { invoice_number: 'NCS-1', tipo_documento: 'TD07', ...metadata },
    }));
    const missing = await refund({ original_invoice_number: 'FS-R-1' });
    expect([missing.statusCode, missing.json().error]).toEqual([400, expect.stringMatching(/^metadata\.original_invoice_number and metadata\.original_invoice_date are required for a simplified credit note/)]);
    const res = await refund({ original_invoice_number: 'FS-R-1', original_invoice_date: '2026-02-20' });
    expect(res.statusCode, res.body).toBe(201);
    await t.worker.drain();
    await t.worker.drain();
    expect((await get(key, `/v1/transactions/${res.json().id}`)).json().status).toBe('delivered');
    const xml = await recordOf(key, res.json().id);
    expect(xml).toContain('<TipoDocumento>TD08</TipoDocumento>');
    expect(xml).toContain('<DatiFatturaRettificata><NumeroFR>FS-R-1</NumeroFR><DataFR>2026-02-20</DataFR>');
    const text = await receipt(key, res.json().id);
    expect(text).toMatch(/\n\s+Copia di cortesia della nota di credito\n\s+semplificata\n/);
    expect(text).toContain('\nNota di credito semplificata n. NCS-1\nRif. fattura semplificata n. FS-R-1 del\n20-02-2026\n');
  });

  it('a TD07 above 400 euro: 400 naming the rule, nothing stored', async () => {
    const { key, loc } = await sdiLocation();
    const items = [{ description: 'Tavolo', quantity: 1, unit_price: 32800, tax_rate: 22, tax_amount: 7216, total_amount: 40016 }];
    const res = await createTx(t, key, body(loc, items, { metadata: { invoice_number: 'FS-2', tipo_documento: 'TD07' } }));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({
      error: 'metadata.tipo_documento TD07 (fattura semplificata) is allowed up to 400.00 EUR in total (DPR 633/1972 art. 21-bis, limit of DM 10 maggio 2019): total_amount is 400.16 EUR; issue an ordinary invoice (TD01)',
    });
    expect((await get(key, '/v1/transactions')).json().data).toEqual([]);
  });

  it('an invoice offset by a credit note prints "Stornata con nota di credito n. … del …", never ANNULLATO', async () => {
    const { key, loc } = await sdiLocation();
    const invoice = await created(key, saleBody(loc, { metadata: { invoice_number: 'FT-S-1', invoice_date: '2026-02-27' } }));
    await t.worker.drain(); // sent, then the stub's RC
    await t.worker.drain();
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${invoice.id}/cancel`, key, payload: {} });
    expect(cancel.statusCode, cancel.body).toBe(201);
    await t.worker.drain();
    await t.worker.drain();
    expect((await get(key, `/v1/transactions/${invoice.id}`)).json().status).toBe('cancelled');
    const nc = await recordOf(key, cancel.json().id);
    expect(nc).toContain('<Numero>NC-FT-S-1</Numero>');
    expect(nc).toContain('<Data>2026-03-02</Data>');
    const text = await receipt(key, invoice.id);
    expect(text).toMatch(/\n\s+Stornata con nota di credito n\. NC-FT-S-1 del\s+02-03-2026\n/);
    expect(text).not.toContain('ANNULLATO');
    expect(text).toContain('\nData: 27/02/2026\nFattura n. FT-S-1\n');
    expect(await receipt(key, invoice.id, '?format=text&lang=en')).toMatch(/\n\s+Reversed by credit note no\. NC-FT-S-1 of\s+02-03-2026\n/);
    // The credit note's own copy: its date, and the invoice it corrects named with an Italian day.
    const ncText = await receipt(key, cancel.json().id);
    expect(ncText).toContain('\nData: 02/03/2026\nNota di credito n. NC-FT-S-1\nRif. fattura n. FT-S-1 del 27-02-2026\n');
  });
});
