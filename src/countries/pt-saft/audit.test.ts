import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { saft } from './index.ts';
import { buildInput, draft, line, location, validatedBuild, txCtx } from '../shared/test-fixtures.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { goldenProducerKey } from './golden-cases.ts';
import { CUSTOMER_COUNTRY_INVALID, CUSTOMER_NAME_REQUIRED, ORIGINAL_INVOICE_NO_IS_CREDIT_NOTE, customerNifInvalid, fsLimitMessage } from './metadata.ts';
import { buyerIsTaxablePerson, customerOf } from './document.ts';
import { SAFT_COUNTRIES } from './countries.ts';
import { SAFT_RECEIPT } from './receipt.ts';
import { buildSaftFile } from './saft-file.ts';
import { SAFT_XSD, saftXmllintValidate } from './test-tools.ts';
import { HAVE_SCHEMAS, schemaPath } from '../../../test/support/xml-tools.ts';
import type { LocationForFiscal, TransactionDraft } from '../types.ts';

/*
 * The audit of what AT or an inspector flags (docs: .scratch/decisions-audit-pt.md): the
 * customer a SAF-T (PT) document names (country from the schema's list, a valid NIF, the
 * final consumer's 999999990, a business buyer's name), the simplified invoice limit for a
 * business buyer (CIVA art. 40 n.º 1 b), and QR field C for a foreign buyer.
 */

const signingKey = goldenProducerKey();
const base = location('pt-saft');
const withConfig = (extra: Record<string, unknown>): LocationForFiscal => ({ ...base, config: { ...base.config, ...extra } });
const validate = (tx: TransactionDraft, loc: LocationForFiscal = base) => saft.validateTransaction(tx, txCtx(loc));
const build = (tx: TransactionDraft, loc: LocationForFiscal = base) => validatedBuild(saft, loc, tx, { signingKey, chain: { seq: 1, previous: null } });
const qrField = (qr: string | null, code: string) => qr?.split('*').find((f) => f.startsWith(`${code}:`))?.slice(code.length + 1);
/** A sale of `cents` gross at 23 %. */
const sale = (cents: number, over: Partial<TransactionDraft> = {}) => {
  const tax = Math.round((cents * 23) / 123);
  return draft({ items: [line({ tax_rate: 23, unit_price: cents - tax, tax_amount: tax, total_amount: cents })], ...over });
};
const company = { nif: '500000000', name: 'Empresa, S.A.' };

describe('pt-saft audit: the customer', () => {
  it("the country list is the schema's (Country and CustomerCountry)", () => {
    if (!HAVE_SCHEMAS) return;
    const xsd = fs.readFileSync(schemaPath(SAFT_XSD), 'utf8');
    const pattern = (type: string) => new RegExp(`<xs:(?:element|simpleType) name="${type}">[^]*?value="([^"]*)"`).exec(xsd)?.[1]?.split('|');
    expect([...SAFT_COUNTRIES].sort()).toEqual(pattern('Country')!.sort());
    expect(pattern('CustomerCountry')!.sort()).toEqual([...SAFT_COUNTRIES, 'Desconhecido'].sort());
  });

  it('a customer country outside the SAF-T list is a 400; any case of a listed one is taken', () => {
    for (const country of ['UK', 'XX', 'Portugal', 'EL']) {
      expect400(() => validate(draft({ customer_context: { tax_id: 'GB123456789', name: 'Ltd', country } })), CUSTOMER_COUNTRY_INVALID);
    }
    expect400(() => validate(draft({ customer_context: { tax_id: 'X1', name: 'A', address: { country: 'UK' } } })), CUSTOMER_COUNTRY_INVALID);
    expect(() => validate(draft({ customer_context: { tax_id: 'GB123456789', name: 'Ltd', country: 'gb' } }))).not.toThrow();
  });

  it('a stored customer with a country outside the list is written without it: the month file stays valid', () => {
    // Records stored before the check: the file is built from their transactions.
    const tx = { ...draft({ customer_context: { tax_id: '12345', name: 'Old Ltd', country: 'UK' } }), metadata: { document_type: 'FS' } };
    expect(customerOf(tx).country).toBe('Desconhecido');
    const record = saft.build(buildInput(base, tx, { signingKey, chain: { seq: 1, previous: null } }));
    const file = buildSaftFile({
      location: { ...base, tax_id: '500000000' }, period: '2026-01', createdAt: new Date('2026-02-01T10:00:00Z'),
      records: [{ kind: 'record', body: record.body, tx }], software: { name: 'x', version: '1', vendorTaxId: '500000000' },
    });
    expect(file.xml).not.toContain('<Country>UK</Country>');
    if (HAVE_SCHEMAS) {
      const v = saftXmllintValidate(file.bytes);
      expect(v.ok, v.output).toBe(true);
    }
  });

  it("a Portuguese customer NIF must pass the mod 11 check; a foreign one with its country is not checked", () => {
    expect400(() => validate(draft({ customer_context: { nif: '123456780' } })), customerNifInvalid('123456780'));
    expect400(() => validate(draft({ customer_context: { tax_id: 'PT503504565', name: 'X' } })), customerNifInvalid('PT503504565'));
    expect400(() => validate(draft({ customer_context: { nif: '12345', country: 'PT' } })), customerNifInvalid('12345'));
    expect(() => validate(draft({ customer_context: { tax_id: 'PT503504564' } }))).not.toThrow();
    expect(() => validate(draft({ customer_context: { nif: '999999990' } }))).not.toThrow();
    expect(() => validate(draft({ customer_context: { tax_id: '123456780', country: 'ES' } }))).not.toThrow();
  });

  it('999999990 given as the NIF is the final consumer: the generic customer, whatever name came with it', () => {
    const c = customerOf(draft({ customer_context: { nif: '999999990', name: 'João', address: 'Rua 1' } }));
    expect(c).toEqual(customerOf(draft()));
    expect(customerOf(draft({ customer_context: { tax_id: 'PT999999990' } })).name).toBe('Consumidor final');
  });

  it('a business buyer of an invoice (FT, FR, ND) is named; an FS or a natural person need only the NIF', () => {
    const ft = { metadata: { document_type: 'FT' } };
    expect400(() => validate(sale(5000, { ...ft, customer_context: { nif: '500000000' } })), CUSTOMER_NAME_REQUIRED);
    expect400(() => validate(sale(5000, { ...ft, customer_context: { tax_id: 'DE123456789', country: 'DE' } })), CUSTOMER_NAME_REQUIRED);
    expect(validate(sale(5000, { ...ft, customer_context: company })).document_type).toBe('FT');
    expect(validate(sale(5000, { ...ft, customer_context: { nif: '123456789' } })).document_type).toBe('FT');
    expect(validate(sale(5000, { customer_context: { nif: '500000000' } })).document_type).toBe('FS');
  });
});

describe('pt-saft audit: simplified invoice limit of a business buyer (CIVA art. 40 n.º 1 b)', () => {
  it('which tax ids are a taxable person', () => {
    const is = (ctx: Record<string, unknown> | null) => buyerIsTaxablePerson(draft({ customer_context: ctx }));
    expect([is(null), is({ nif: '999999990' }), is({ nif: '123456789' }), is({ nif: '234567899' }), is({ nif: '451234561' })]).toEqual([false, false, false, false, false]);
    expect([is({ nif: '500000000' }), is({ tax_id: 'PT503504564' }), is({ nif: '600000001' }), is({ tax_id: 'ESB12345674' }), is({ tax_id: 'DE 123456789' })]).toEqual([true, true, true, true, true]);
    // A foreign id without a VAT prefix says nothing: maybe a consumer.
    expect(is({ tax_id: '12345678Z', country: 'ES' })).toBe(false);
  });

  it('a retail sale to a company above 100.00 EUR is not an FS: an FR (or FT) by default, 400 when asked', () => {
    const withFr = withConfig({ series: { ...(base.config.series as object), FR: { prefix: 'R2026', atcud_code: 'RRJFJMVNTN' } } });
    expect(validate(sale(10_000, { customer_context: company })).document_type).toBe('FS');
    expect(validate(sale(10_001, { customer_context: company })).document_type).toBe('FT');
    expect(validate(sale(10_001, { customer_context: company }), withFr).document_type).toBe('FR');
    expect400(() => validate(sale(10_001, { customer_context: company, metadata: { document_type: 'FS' } })), fsLimitMessage(10_000, true));
    expect(fsLimitMessage(10_000, true)).toBe('metadata.document_type FS (simplified invoice) is limited to 100.00 EUR for a business customer (a taxable person\'s tax id) (CIVA art. 40): issue an FR or FT');
    // A final consumer or a natural person's NIF keeps the retail limit.
    expect(validate(sale(100_000, { customer_context: { nif: '123456789' } })).document_type).toBe('FS');
    expect(validate(sale(100_000)).document_type).toBe('FS');
  });
});

describe('pt-saft audit: QR field C (AT QR spec v1.0)', () => {
  it("the buyer's SAF-T country: PT for the final consumer, the foreign country, Desconhecido when not known", () => {
    expect(qrField(build(sale(500)).record.qrData, 'C')).toBe('PT');
    const es = build(sale(500, { customer_context: { tax_id: 'ESB12345674', name: 'Ejemplo SL' } })).record.qrData;
    expect([qrField(es, 'B'), qrField(es, 'C')]).toEqual(['B12345674', 'ES']);
    const unknown = build(sale(500, { customer_context: { tax_id: 'P-4711', name: 'Stranger' } })).record.qrData;
    expect([qrField(unknown, 'B'), qrField(unknown, 'C')]).toEqual(['P-4711', 'Desconhecido']);
  });
});

describe('pt-saft audit: the printed buyer (CIVA art. 36 n.º 5 a, art. 40 n.º 2 c)', () => {
  const printed = (customer_context: Record<string, unknown> | null) =>
    (SAFT_RECEIPT.lines?.({ software: { name: 'x', version: '1', vendorTaxId: '500000000' }, location: base, tx: draft({ customer_context }) }) ?? []).map((l) => [l.placement, l.text.pt]);

  it("an identified buyer's NIF (and name, address when given) under the number; never 999999990", () => {
    expect(printed({ nif: '123456789' })).toEqual([['header', 'NIF do adquirente: 123456789']]);
    expect(printed({ tax_id: 'PT503504564', name: 'Empresa Exemplo, Lda.', address: { street: 'Rua Augusta 1', city: 'Lisboa', postal_code: '1100-048' } })).toEqual([
      ['header', 'Cliente: Empresa Exemplo, Lda.'],
      ['header', 'NIF do adquirente: 503504564'],
      ['header', 'Morada: Rua Augusta 1, 1100-048 Lisboa'],
    ]);
    expect(printed({ tax_id: 'DE 123456789', name: 'Müller GmbH', city: 'Berlin' })).toEqual([
      ['header', 'Cliente: Müller GmbH'],
      ['header', 'NIF do adquirente: DE 123456789'],
      ['header', 'Morada: Berlin'],
    ]);
    expect(printed(null)).toEqual([]);
    expect(printed({ nif: '999999990', name: 'Consumidor' })).toEqual([]);
  });
});

describe('pt-saft audit: what a credit note corrects', () => {
  it('an NC or ND naming a credit note is a 400; an invoice or an earlier program\'s code is taken', () => {
    const refund = (original_invoice_no: string) => draft({ type: 'refund', metadata: { original_invoice_no } });
    expect400(() => validate(refund('NC C/1')), ORIGINAL_INVOICE_NO_IS_CREDIT_NOTE);
    expect400(() => validate(draft({ metadata: { document_type: 'ND', original_invoice_no: 'NC C/1' } }), withConfig({ series: { ...(base.config.series as object), ND: { prefix: 'D', atcud_code: 'DDJFJMVNTN' } } })), ORIGINAL_INVOICE_NO_IS_CREDIT_NOTE);
    expect(validate(refund('FS A2026/3')).document_type).toBe('NC');
    expect(validate(refund('FAC 001/14')).document_type).toBe('NC');
  });
});
