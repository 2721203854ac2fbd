/**
 * Stamp duty (imposta di bollo, bollo.ts): DatiBollo where the lines outside VAT exceed
 * 77.47 EUR (DPR 642/1972 Tariffa art. 13), not for the Natura codes exempt from it, the
 * `metadata.bollo_virtuale` override, credit notes, the simplified format; every file
 * valid against the official schema.
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { sdi } from './index.ts';
import { BOLLO_THRESHOLD, bolloBase } from './bollo.ts';
import { NOW, draft, line, location, txCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { HAVE_SCHEMAS, xsdValidate } from '../../../test/support/xml-tools.ts';
import type { TransactionDraft } from '../types.ts';

const XSD = 'it/fatturapa/Schema_del_file_xml_FatturaPA_v1.2.2.xsd';
const XSD_FSM10 = 'it/fatturapa/Schema_VFSM10.xsd';
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: false, parseTagValue: false });
const loc = location('it-sdi');

/** One line at 0 % with the given Natura and net amount (cents), and optionally a taxed line. */
const exempt = (natura: string, cents: number) =>
  line({ description: `Servizio ${natura}`, quantity: 1, unit_price: cents, tax_rate: 0, tax_amount: 0, total_amount: cents, natura });
const taxed = (cents: number) => line({ description: 'Servizio', quantity: 1, unit_price: cents, tax_rate: 22, tax_amount: Math.round(cents * 0.22), total_amount: cents + Math.round(cents * 0.22) });
const sale = (items: TransactionDraft['items'], metadata: Record<string, unknown> = {}, over: Partial<TransactionDraft> = {}) =>
  draft({ items, metadata: { invoice_number: 'FT-2026/77', ...metadata }, ...over });

function generali(tx: TransactionDraft, root = 'FatturaElettronica') {
  const { record } = validatedBuild(sdi, loc, tx);
  const body = (parser.parse(record.body) as Record<string, any>)[root].FatturaElettronicaBody;
  return { record, d: body.DatiGenerali.DatiGeneraliDocumento as Record<string, any> };
}

const BOLLO = { BolloVirtuale: 'SI', ImportoBollo: '2.00' };

describe('it-sdi stamp duty (DatiBollo)', () => {
  it('the threshold: due strictly above 77.47 EUR of lines outside VAT', () => {
    expect(BOLLO_THRESHOLD).toBe(7747);
    expect(generali(sale([exempt('N4', 7748)])).d.DatiBollo).toEqual(BOLLO);
    expect(generali(sale([exempt('N4', 7747)])).d.DatiBollo).toBeUndefined();
    expect(generali(sale([exempt('N2.2', 5000)])).d.DatiBollo).toBeUndefined();
  });

  it('counts only the lines outside VAT: a large taxed amount beside 77.47 exempt pays nothing', () => {
    expect(generali(sale([taxed(100_000), exempt('N4', 7747)])).d.DatiBollo).toBeUndefined();
    // 40.00 N1 + 40.00 N4: 80.00 together, over the threshold.
    expect(generali(sale([taxed(100_000), exempt('N1', 4000), exempt('N4', 4000)])).d.DatiBollo).toEqual(BOLLO);
  });

  it('every Natura that bears it (N1, N2.1, N2.2, N3.4, N3.5, N3.6, N4)', () => {
    for (const natura of ['N1', 'N2.1', 'N2.2', 'N3.4', 'N3.5', 'N3.6', 'N4']) {
      expect(bolloBase([exempt(natura, 10_000)]), natura).toBe(10_000);
    }
  });

  it('exempt from it: exports (N3.1), intra-EU (N3.2), San Marino (N3.3), margin scheme (N5), reverse charge (N6.x)', () => {
    for (const natura of ['N3.1', 'N3.2', 'N3.3', 'N5', 'N6.1', 'N6.2', 'N6.3', 'N6.4', 'N6.5', 'N6.6', 'N6.7', 'N6.8', 'N6.9']) {
      expect(bolloBase([exempt(natura, 100_000)]), natura).toBe(0);
    }
    expect(generali(sale([exempt('N3.2', 100_000)], { buyer_country: 'DE', codice_destinatario: 'XXXXXXX' }, { customer_context: { tax_id: 'DE123456789', legal_name: 'Kunde GmbH' } })).d.DatiBollo).toBeUndefined();
    expect(generali(sale([exempt('N6.7', 100_000)], {}, { customer_context: { tax_id: '12345678903', legal_name: 'Edile Srl' } })).d.DatiBollo).toBeUndefined();
  });

  it('the 2.00 is not added to ImportoTotaleDocumento nor to the payment', () => {
    const { record, d } = generali(sale([exempt('N4', 10_000)]));
    expect(d).toMatchObject({ DatiBollo: BOLLO, ImportoTotaleDocumento: '100.00' });
    expect(record.body).toContain('<ImportoPagamento>100.00</ImportoPagamento>');
  });

  it('metadata.bollo_virtuale: true forces it, false suppresses it, anything else is a 400', () => {
    expect(generali(sale([exempt('N4', 5000)], { bollo_virtuale: true })).d.DatiBollo).toEqual(BOLLO);
    expect(generali(sale([exempt('N4', 50_000)], { bollo_virtuale: false })).d.DatiBollo).toBeUndefined();
    for (const bad of ['SI', 'true', 1]) {
      expect(() => sdi.validateTransaction(sale([exempt('N4', 5000)], { bollo_virtuale: bad }), txCtx(loc))).toThrow('metadata.bollo_virtuale must be a boolean');
    }
    // Kept in the stored metadata, so the credit note cancelling the invoice decides alike.
    expect(sdi.validateTransaction(sale([exempt('N4', 5000)], { bollo_virtuale: false }), txCtx(loc)).bollo_virtuale).toBe(false);
  });

  it('credit notes: a refund (TD04) and the note cancelling an invoice carry it by the same rule', () => {
    expect(generali(sale([exempt('N4', 10_000)], {}, { type: 'refund' })).d).toMatchObject({ TipoDocumento: 'TD04', DatiBollo: BOLLO });
    const invoice = validatedBuild(sdi, loc, sale([exempt('N4', 10_000)]));
    const note = sdi.build({
      transactionId: '00000000-0000-4000-8000-0000000000c1',
      kind: 'cancellation',
      tx: invoice.tx,
      original: { transactionId: '00000000-0000-4000-8000-0000000000a1', fiscalId: invoice.record.fiscalId, tx: invoice.tx, issuedAt: NOW.toISOString(), documentNumber: invoice.record.documentNumber },
      location: loc,
      environment: 'test',
      now: NOW,
      chain: { seq: 1, previous: null },
      software: { name: 'fiscal-api', version: '0.1.0', vendorTaxId: 'A99800005' },
    });
    const d = (parser.parse(note.body) as Record<string, any>).FatturaElettronica.FatturaElettronicaBody.DatiGenerali.DatiGeneraliDocumento;
    expect(d).toMatchObject({ TipoDocumento: 'TD04', DatiBollo: BOLLO });
  });

  it.skipIf(!HAVE_SCHEMAS)('a file with DatiBollo validates against the FatturaPA 1.2.2 XSD (DatiBollo after Numero)', () => {
    const { record } = generali(sale([taxed(10_000), exempt('N4', 10_000)]));
    expect(record.body).toContain('<Numero>FT-2026/77</Numero><DatiBollo><BolloVirtuale>SI</BolloVirtuale><ImportoBollo>2.00</ImportoBollo></DatiBollo><ImportoTotaleDocumento>');
    const result = xsdValidate(record.body, XSD);
    expect(result.ok, result.output).toBe(true);
  });

  it('the simplified format (TD07, FSM10) carries BolloVirtuale alone, and validates', () => {
    const { record, d } = generali(sale([exempt('N4', 10_000)], { tipo_documento: 'TD07' }), 'FatturaElettronicaSemplificata');
    expect(d).toMatchObject({ TipoDocumento: 'TD07', BolloVirtuale: 'SI' });
    expect(generali(sale([exempt('N4', 5000)], { tipo_documento: 'TD07' }), 'FatturaElettronicaSemplificata').d.BolloVirtuale).toBeUndefined();
    if (HAVE_SCHEMAS) {
      const result = xsdValidate(record.body, XSD_FSM10);
      expect(result.ok, result.output).toBe(true);
    }
  });
});
