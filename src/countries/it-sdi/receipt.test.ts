import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import type { ReceiptCorrectionInput, RenderHint, TransactionDraft } from '../types.ts';
import { buildReceipt, type ReceiptSource } from '../../receipts/model.ts';
import { renderText } from '../../receipts/text.ts';
import { NOW, SOFTWARE, TX_ID, buildInput, draft as fixtureDraft, line, location, validatedBuild } from '../shared/test-fixtures.ts';
import { sdi } from './index.ts';
import { TIPI_DOCUMENTO } from './metadata.ts';
import { SDI_RECEIPT } from './receipt.ts';

/** A validated draft of the given type and TipoDocumento (the metadata rules store it). */
const draft = (type: TransactionDraft['type'], tipo: string): TransactionDraft => ({
  location_id: 'loc', timestamp: '2026-03-02T09:30:00Z', currency: 'EUR', payment_method: 'card', type,
  items: [], pretax_amount: 0, tax_amount: 0, total_amount: 0, metadata: { invoice_number: 'X-1', tipo_documento: tipo },
} as unknown as TransactionDraft);
const input = (kind: ReceiptCorrectionInput['kind'], tx: TransactionDraft): ReceiptCorrectionInput => ({ kind, tx, original: null, hints: [] });
const label = (kind: ReceiptCorrectionInput['kind'], tx: TransactionDraft) => SDI_RECEIPT.labelFor!('invoice_number', input(kind, tx))!.it;

describe('SDI courtesy copy: every TipoDocumento we issue has its own name', () => {
  it('each code the metadata rules accept, and TD05, is titled and numbered as itself; only TD01 is "Fattura n."', () => {
    const labels = TIPI_DOCUMENTO.map((tipo) => label('sale', draft('sale', tipo)));
    expect(new Set(labels).size).toBe(TIPI_DOCUMENTO.length);
    expect(labels.filter((l) => l === 'Fattura n.')).toHaveLength(1);
    expect(label('sale', draft('sale', 'TD01'))).toBe('Fattura n.');
    expect(label('refund', draft('refund', 'TD04'))).toBe('Nota di credito n.');
    const titles = TIPI_DOCUMENTO.map((tipo) => SDI_RECEIPT.title([], draft('sale', tipo)).it);
    expect(new Set(titles).size).toBe(TIPI_DOCUMENTO.length);
  });

  it('a cancellation is named by the document that reverses its original: TD04 for an invoice, TD05 for a credit note', () => {
    expect(label('cancellation', draft('sale', 'TD01'))).toBe('Nota di credito n.');
    expect(label('cancellation', draft('sale', 'TD06'))).toBe('Nota di credito n.');
    expect(label('cancellation', draft('refund', 'TD04'))).toBe('Nota di debito n.');
    // The original's TipoDocumento decides, not its type: a sale declared TD04 is reversed by a TD05.
    expect(label('cancellation', draft('sale', 'TD04'))).toBe('Nota di debito n.');
    expect(SDI_RECEIPT.correction!.title!(input('cancellation', draft('sale', 'TD04')))!.it).toBe('Copia di cortesia della nota di debito');
    expect(SDI_RECEIPT.labelFor!('other_key', input('sale', draft('sale', 'TD01')))).toBeUndefined();
  });

  it('the simplified notes: a TD07 cancelled by a "Nota di credito semplificata", a TD08 (a refund asked as TD07) by a "Nota di debito semplificata"', () => {
    expect(label('cancellation', draft('sale', 'TD07'))).toBe('Nota di credito semplificata n.');
    expect(SDI_RECEIPT.correction!.title!(input('cancellation', draft('sale', 'TD07')))!.it).toBe('Copia di cortesia della nota di credito semplificata');
    expect(label('refund', draft('refund', 'TD08'))).toBe('Nota di credito semplificata n.');
    expect(SDI_RECEIPT.title([], draft('refund', 'TD08')).it).toBe('Copia di cortesia della nota di credito semplificata');
    expect(label('cancellation', draft('refund', 'TD08'))).toBe('Nota di debito semplificata n.');
    expect(SDI_RECEIPT.correction!.title!(input('cancellation', draft('refund', 'TD08')))!.en).toBe('Courtesy copy of the simplified debit note');
    // The refund names the invoice it credits as what it is: a simplified one.
    const refund = { ...draft('refund', 'TD08'), metadata: { invoice_number: 'NCS-1', tipo_documento: 'TD08', original_invoice_number: 'FS-1', original_invoice_date: '2026-03-01' } } as TransactionDraft;
    expect(SDI_RECEIPT.correction!.references!(input('refund', refund)).map((r) => r.it)).toEqual(['Rif. fattura semplificata n. FS-1 del 01-03-2026']);
  });
});

/*
 * The courtesy copy against the FatturaPA it is a copy of: built by the real plug-in,
 * printed by the shared renderer from the stored record, each printed value compared with
 * what the XML carries.
 */
describe('SDI courtesy copy: what it prints is what the FatturaPA says', () => {
  const loc = location('it-sdi');
  const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false });
  const list = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
  const fattura = (body: string) => (parser.parse(body) as Record<string, any>).FatturaElettronica;

  /** The receipt source of a transaction as the receipt service hands it: its record's body included. */
  const sourceOf = (tx: TransactionDraft, record: { body: string; fiscalId: string | null; documentNumber?: string | null; renderHints: RenderHint[] },
    over: Partial<ReceiptSource['transaction']> = {}): ReceiptSource => ({
    transaction: {
      id: TX_ID, type: tx.type, environment: 'test', country: 'IT', created_at: NOW, fiscal_id: record.fiscalId,
      document_number: record.documentNumber ?? null, normalized: tx, render_hints: record.renderHints, record: record.body, ...over,
    },
    location: { name: 'Shop', address: null, tax_id: loc.tax_id, legal_name: null },
    system: sdi,
    software: SOFTWARE,
  });
  const print = (src: ReceiptSource, lang: 'it' | 'en' = 'it') => renderText(buildReceipt(src, lang), 80);
  const build = (tx: TransactionDraft) => validatedBuild(sdi, loc, tx);

  it('"Data:" is the FatturaPA\'s Data (the request\'s invoice_date), not the creation time', () => {
    const { tx, record } = build(fixtureDraft({ metadata: { invoice_number: 'FT-9', invoice_date: '2026-01-10' } }));
    expect(fattura(record.body).FatturaElettronicaBody.DatiGenerali.DatiGeneraliDocumento.Data).toBe('2026-01-10');
    const text = print(sourceOf(tx, record));
    expect(text).toContain('\nData: 10/01/2026\n');
    expect(text).not.toContain('15/01/2026');
    // The record decides: a record dated otherwise prints its own date.
    expect(print(sourceOf(tx, { ...record, body: record.body.replace('<Data>2026-01-10</Data>', '<Data>2026-01-09</Data>') }))).toContain('\nData: 09/01/2026\n');
  });

  it('the VAT rows are the DatiRiepilogo rows: one per Natura at 0 %, the recomputed VAT and the Arrotondamento', () => {
    // Five lines of 1.02 at 22 %: 0.22 of VAT each (1.10), but 5.10 × 22 % = 1.12 is what SdI
    // checks (00421): the summary says 1.12 and the document an Arrotondamento of -0.02.
    const items = [
      ...Array.from({ length: 5 }, () => line({ description: 'Penna', unit_price: 102, tax_rate: 22, tax_amount: 22, total_amount: 124 })),
      line({ description: 'Corso', unit_price: 5000, tax_rate: 0, tax_amount: 0, total_amount: 5000, natura: 'N4' }),
      line({ description: 'Servizio estero', unit_price: 2000, tax_rate: 0, tax_amount: 0, total_amount: 2000, natura: 'N2.1' }),
    ];
    const { tx, record } = build(fixtureDraft({ items, metadata: { invoice_number: 'FT-10' } }));
    const body = fattura(record.body).FatturaElettronicaBody;
    const rows = list(body.DatiBeniServizi.DatiRiepilogo) as Record<string, string>[];
    expect(rows.map((r) => `${r.AliquotaIVA}/${r.Natura ?? ''}/${r.ImponibileImporto}/${r.Imposta}`)).toEqual(['22.00//5.10/1.12', '0.00/N4/50.00/0.00', '0.00/N2.1/20.00/0.00']);
    expect(body.DatiGenerali.DatiGeneraliDocumento.Arrotondamento).toBe('-0.02');
    const text = print(sourceOf(tx, record));
    expect(text).toMatch(/\nIVA 22 % \(5,10\)\s+1,12\nIVA 0 % N4 \(50,00\)\s+0,00\nIVA 0 % N2\.1 \(20,00\)\s+0,00\nArrotondamento\s+-0,02\nTOTALE EUR\s+76,20\n/);
    // Not the lines' sums per rate (1,10 of VAT; the two exempt rows merged).
    expect(text).not.toMatch(/IVA 22 % \(5,10\)\s+1,10/);
    expect(text).not.toMatch(/IVA 0 % \(70,00\)/);
    // Without a record to read (a source that has none), the same rows as the build writes.
    expect(print(sourceOf(tx, record, { record: null }))).toMatch(/\nIVA 22 % \(5,10\)\s+1,12\nIVA 0 % N4 \(50,00\)\s+0,00\nIVA 0 % N2\.1 \(20,00\)\s+0,00\nArrotondamento\s+-0,02\n/);
  });

  it('a fattura semplificata (TD07): its own title and number, its goods grouped by rate and Natura as its DatiBeniServizi', () => {
    const { tx, record } = build(fixtureDraft({
      items: [
        line({ description: 'Pranzo', quantity: 2, unit_price: 1500, tax_rate: 10, tax_amount: 300, total_amount: 3300 }),
        line({ description: 'Visita', unit_price: 2500, tax_rate: 0, tax_amount: 0, total_amount: 2500, natura: 'N4' }),
      ],
      customer_context: { codice_fiscale: 'RSSMRA85T10A562S' },
      metadata: { invoice_number: 'FS-1', tipo_documento: 'TD07', invoice_date: '2026-01-14' },
    }));
    expect(record.body.startsWith('<p:FatturaElettronicaSemplificata ')).toBe(true);
    const text = print(sourceOf(tx, record));
    expect(text).toMatch(/\n\s+Copia di cortesia della fattura semplificata\n/);
    expect(text).toContain('\nData: 14/01/2026\nFattura semplificata n. FS-1\n');
    expect(text).toMatch(/\nIVA 10 % \(30,00\)\s+3,00\nIVA 0 % N4 \(25,00\)\s+0,00\nTOTALE EUR\s+58,00\n/);
    expect(print(sourceOf(tx, record), 'en')).toContain('\nSimplified invoice no. FS-1\n');
  });

  it('an invoice offset by a credit note says so, never ANNULLATO; a credit note offset by a debit note likewise', () => {
    const invoice = build(fixtureDraft({ metadata: { invoice_number: 'FT-7', invoice_date: '2026-01-12' } }));
    const nc = sdi.build({
      ...buildInput(loc, invoice.tx, {}), transactionId: '00000000-0000-4000-8000-0000000000c1', kind: 'cancellation', now: new Date('2026-03-02T10:00:00Z'),
      original: { transactionId: TX_ID, fiscalId: invoice.record.fiscalId, tx: invoice.tx, issuedAt: NOW.toISOString(), documentNumber: invoice.record.documentNumber },
      chain: { seq: 1, previous: null },
    });
    const cancelledBy = { documentNumber: nc.documentNumber ?? null, fiscalId: nc.fiscalId, hints: nc.renderHints, createdAt: new Date('2026-03-02T10:00:00Z'), record: nc.body };
    const text = print(sourceOf(invoice.tx, invoice.record, { status: 'cancelled', cancelledBy }));
    expect(text).toMatch(/\n\s+Stornata con nota di credito n\. NC-FT-7 del\s+02-03-2026\n/);
    expect(text).not.toContain('ANNULLATO');
    expect(print(sourceOf(invoice.tx, invoice.record, { status: 'cancelled', cancelledBy }), 'en')).toMatch(/\n\s+Reversed by credit note no\. NC-FT-7 of\s+02-03-2026\n/);
    // Still the invoice's own date and number: the credit note is another document.
    expect(text).toContain('\nData: 12/01/2026\nFattura n. FT-7\n');
    // Not cancelled: nothing of the sort.
    expect(print(sourceOf(invoice.tx, invoice.record))).not.toMatch(/Stornata|ANNULLATO/);

    const creditNote = build(fixtureDraft({ type: 'refund', metadata: { invoice_number: 'NC-8' } }));
    const nd = { documentNumber: 'ND-NC-8', fiscalId: 'IT01234567897_N0002.xml', hints: [], createdAt: new Date('2026-03-02T10:00:00Z'), record: null };
    expect(print(sourceOf(creditNote.tx, creditNote.record, { status: 'cancelled', cancelledBy: nd }))).toMatch(/\n\s+Stornata con nota di debito n\. ND-NC-8 del\s+02-03-2026\n/);
  });

  it('references name the day as the Italian prints do (DD-MM-YYYY)', () => {
    const refund = fixtureDraft({ type: 'refund', metadata: { invoice_number: 'NC-1', tipo_documento: 'TD04', original_invoice_number: 'FT-1', original_invoice_date: '2026-01-05' } });
    const [ref] = SDI_RECEIPT.correction!.references!(input('refund', refund));
    expect(ref).toEqual({ it: 'Rif. fattura n. FT-1 del 05-01-2026', en: 'Ref. invoice no. FT-1 of 05-01-2026' });
  });
});
