/**
 * The documento commerciale on paper against the document its record holds: built by the
 * real plug-in (golden-cases.ts), printed by the shared renderer from the stored record,
 * each printed amount compared with what the XML carries.
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import type { FiscalRecord, TransactionDraft } from '../types.ts';
import { buildReceipt, type ReceiptSource } from '../../receipts/model.ts';
import { renderText } from '../../receipts/text.ts';
import { NOW, SOFTWARE, TX_ID } from '../shared/test-fixtures.ts';
import { goldenDcCases } from './golden-cases.ts';
import { documentoCommerciale as dc } from './index.ts';

const [sale, split, reso, annullo] = goldenDcCases();
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false });
const documento = (body: string) => (parser.parse(body) as Record<string, any>).DocCommercialiLotteria.DocumentoCommerciale;

const sourceOf = (tx: TransactionDraft, record: FiscalRecord, over: Partial<ReceiptSource['transaction']> = {}): ReceiptSource => ({
  transaction: {
    id: TX_ID, type: tx.type, environment: 'test', country: 'IT', created_at: NOW, fiscal_id: record.fiscalId,
    document_number: record.documentNumber ?? null, normalized: tx, render_hints: record.renderHints, record: record.body, ...over,
  },
  location: { name: 'Bar Roma', address: null, tax_id: '01234567897', legal_name: null },
  system: dc,
  software: SOFTWARE,
});
const print = (src: ReceiptSource, lang: 'it' | 'en' = 'it') => renderText(buildReceipt(src, lang), 80);

describe('Documento Commerciale on paper: the amounts paid, as the document declares them', () => {
  it('a sale split in cash, card and meal vouchers prints each payment its DatiPagamento carries (the vouchers, filed under NR, as such)', () => {
    expect(documento(split!.record.body).Vendita.DatiPagamento).toEqual([
      { Tipo: 'PC', Importo: '2.00' }, { Tipo: 'PE', Importo: '1.62' }, { Tipo: 'NR', Importo: '2.00' },
    ]);
    expect(split!.tx.metadata.ticket_amount).toBe(200);
    const text = print(sourceOf(split!.tx, split!.record));
    expect(text).toMatch(/\nTOTALE EUR\s+5,62\nPagamento contante\s+2,00\nPagamento elettronico\s+1,62\nPagamento ticket\s+2,00\n/);
    expect(text).not.toContain('Pagamento: ');
    expect(text).not.toContain('Non riscosso');
    expect(print(sourceOf(split!.tx, split!.record), 'en')).toMatch(/\nTOTAL EUR\s+5\.62\nCash payment\s+2\.00\nElectronic payment\s+1\.62\nMeal voucher payment\s+2\.00\n/);
  });

  it('what was not collected (payment method other, no amounts given): "Non riscosso", as the record\'s NR', () => {
    const tx = { ...sale!.tx, payment_method: 'other' as const, metadata: { ...sale!.tx.metadata, electronic_amount: undefined } };
    const record = { ...sale!.record, body: sale!.record.body.replace('<Tipo>PE</Tipo>', '<Tipo>NR</Tipo>') };
    expect(print(sourceOf(tx, record))).toMatch(/\nTOTALE EUR\s+4,40\nNon riscosso\s+4,40\n/);
    // Vouchers covering part of it: the rest is still not collected.
    expect(print(sourceOf({ ...tx, metadata: { ...tx.metadata, ticket_amount: 100 } }, record))).toMatch(/\nPagamento ticket\s+1,00\nNon riscosso\s+3,40\n/);
  });

  it('a card sale: "Pagamento elettronico" for the whole; the record decides, not the payment method', () => {
    expect(print(sourceOf(sale!.tx, sale!.record))).toMatch(/\nTOTALE EUR\s+4,40\nPagamento elettronico\s+4,40\n/);
    const cashRecord = { ...sale!.record, body: sale!.record.body.replace('<Tipo>PE</Tipo>', '<Tipo>PC</Tipo>') };
    expect(print(sourceOf(sale!.tx, cashRecord))).toMatch(/\nPagamento contante\s+4,40\n/);
    // No record to read: the payments the build writes.
    expect(print(sourceOf(split!.tx, split!.record, { record: null }))).toMatch(/\nPagamento contante\s+2,00\nPagamento elettronico\s+1,62\nPagamento ticket\s+2,00\n/);
  });

  it('a reso or annullo declares no payment: the payment method, as before', () => {
    expect(print(sourceOf(reso!.tx, reso!.record))).toContain('\nPagamento: ');
    expect(print(sourceOf(reso!.tx, reso!.record))).not.toContain('Pagamento elettronico');
  });

  it('an annullo made by POST …/cancel names the register of the document it annuls, as its ResoAnnullo does', () => {
    expect(documento(annullo!.record.body).ResoAnnullo.Dispositivo.MatrTrasm).toBe('ABCD-123456');
    const text = print(sourceOf(annullo!.tx, annullo!.record, {
      type: 'cancellation',
      original: { documentNumber: sale!.record.documentNumber ?? null, fiscalId: sale!.record.fiscalId, hints: sale!.record.renderHints, tx: sale!.tx, createdAt: NOW },
    }));
    expect(text).toMatch(/\n\s+DOCUMENTO COMMERCIALE emesso per ANNULLAMENTO\n/);
    expect(text).toContain('\nDocumento di riferimento:\nN. 0001-0001 del 15-01-2026\nMatricola RT ABCD-123456\n');
  });
});

describe('Documento Commerciale on paper: the VAT rows name the Natura of a 0 % sale', () => {
  it('0 % lines print per Natura (N2.2 and N4 apart, each with its code); taxed lines per rate', async () => {
    const { draft, line, validatedBuild } = await import('../shared/test-fixtures.ts');
    const { goldenDcLocation } = await import('./golden-cases.ts');
    const items = [
      line({ description: 'Cappuccino', quantity: 2, unit_price: 200, tax_rate: 10, tax_amount: 40, total_amount: 440 }),
      line({ description: 'Francobollo', quantity: 1, unit_price: 120, tax_rate: 0, tax_amount: 0, total_amount: 120, natura: 'N2.2' }),
      line({ description: 'Visita medica', quantity: 1, unit_price: 5000, tax_rate: 0, tax_amount: 0, total_amount: 5000, natura: 'N4' }),
      line({ description: 'Marca', quantity: 1, unit_price: 80, tax_rate: 0, tax_amount: 0, total_amount: 80, natura: 'N2.2' }),
    ];
    const built = validatedBuild(dc, goldenDcLocation(), draft({ items, payment_method: 'card' }), { transactionId: TX_ID, now: NOW });
    const text = print(sourceOf(built.tx, built.record));
    expect(text).toMatch(/\nIVA 10 % \(4,00\)\s+0,40\n/);
    expect(text).toMatch(/\nIVA 0 % N2\.2 \(2,00\)\s+0,00\n/);
    expect(text).toMatch(/\nIVA 0 % N4 \(50,00\)\s+0,00\n/);
    expect(text).not.toMatch(/\nIVA 0 % \(/);
  });
});
