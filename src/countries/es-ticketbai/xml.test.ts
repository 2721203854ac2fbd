import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_DIR, SCHEMAS_MISSING_MESSAGE, xmlsecVerify, xsdValidate } from '../../../test/support/xml-tools.ts';
import type { BuildInput, TransactionDraft } from '../types.ts';
import { buildInput, draft, fixedSigningKey, line, location } from '../shared/test-fixtures.ts';
import { signXadesEpes } from '../../signing/xades-epes.ts';
import { SIGNATURE_POLICIES } from './build.ts';
import { tbaiId } from './tbai.ts';
import { customerOf, invoiceFields, quantityText, signatureExcerpt, ticketBaiXml } from './xml.ts';

const key = fixedSigningKey();
const loc = location('es-ticketbai');
const fieldsOf = (tx: TransactionDraft, over: Partial<BuildInput> = {}) => invoiceFields(buildInput(loc, tx, over), '1');
const withSchemas = (name: string, fn: () => void) => (HAVE_SCHEMAS ? it(name, fn) : it.skip(`${name} (${SCHEMAS_MISSING_MESSAGE})`, fn));

describe('official samples (Esquemas Alta y Anulación 1.2.2)', () => {
  const sample = (name: string) => fs.readFileSync(path.join(SCHEMAS_DIR, 'es/ticketbai/samples', name), 'utf8');
  const first = () => sample('TicketBAI_Alta_Faktura__Alta_Factura_01_lehena__primera.xml');
  const second = () => sample('TicketBAI_Alta_Faktura__Alta_Factura_02_hurrengoa__sucesiva.xml');
  const signatureValue = (xml: string) => /<ds:SignatureValue[^>]*>([^<]+)</.exec(xml)![1]!;

  withSchemas('chaining rule: sample 02 repeats the first 100 characters of sample 01’s SignatureValue', () => {
    const excerpt = /<SignatureValueFirmaFacturaAnterior>([^<]+)</.exec(second())![1];
    expect(excerpt).toBe(signatureExcerpt(signatureValue(first())));
    expect(excerpt).toHaveLength(100);
  });

  withSchemas('TBAI identifiers of the samples, from their real SignatureValue (FORMATS.md §9)', () => {
    expect(tbaiId('99999974E', '290224', signatureValue(first()))).toBe('TBAI-99999974E-290224-Yl3mXsALUBz6H-135');
    expect(tbaiId('99999974E', '290224', signatureValue(second()))).toBe('TBAI-99999974E-290224-fJvTaW+c1iXrl-209');
  });
});

describe('invoice fields from the build input', () => {
  it('date and time are Madrid local: winter +01:00, summer +02:00, past midnight', () => {
    expect(fieldsOf(draft())).toMatchObject({ invoice: { date: '15-01-2026' }, time: '11:00:00' });
    expect(fieldsOf(draft(), { now: new Date('2026-07-01T10:00:00Z') })).toMatchObject({ invoice: { date: '01-07-2026' }, time: '12:00:00' });
    expect(fieldsOf(draft(), { now: new Date('2026-01-15T23:30:05Z') })).toMatchObject({ invoice: { date: '16-01-2026' }, time: '00:30:05' });
  });

  it('groups VAT by rate, highest first, with 2-decimal amounts', () => {
    const tx = draft({
      items: [
        line({ unit_price: 1000, tax_rate: 10, tax_amount: 100, total_amount: 1100 }),
        line({ unit_price: 1000, tax_rate: 21, tax_amount: 210, total_amount: 1210 }),
        line({ quantity: 3, unit_price: 250, tax_rate: 21, tax_amount: 158, total_amount: 908 }),
        line({ unit_price: 500, tax_rate: 5.5, tax_amount: 28, total_amount: 528 }),
      ],
    });
    expect(fieldsOf(tx).vat).toEqual([
      { base: '17.50', rate: '21.00', quota: '3.68' },
      { base: '10.00', rate: '10.00', quota: '1.00' },
      { base: '5.00', rate: '5.50', quota: '0.28' },
    ]);
    expect(fieldsOf(tx).total).toBe('37.46');
  });

  it('refuses what the schema cannot carry: a rate with 3 decimals, more than 12 rates', () => {
    expect(() => fieldsOf(draft({ items: [line({ tax_rate: 21.125 })] }))).toThrow(/more than 2 decimals/);
    const many = Array.from({ length: 13 }, (_, i) => line({ tax_rate: i, tax_amount: 10 * i, total_amount: 1000 + 10 * i }));
    expect(() => fieldsOf(draft({ items: many }))).toThrow(/at most 12/);
  });

  it('quantities: at least 2 decimals, up to the 6 the request allows', () => {
    expect([1, 0.5, 1.125, 2.000001, 12].map(quantityText)).toEqual(['1.00', '0.50', '1.125', '2.000001', '12.00']);
  });

  it('description: metadata.description, else the lines; both cut to the 250 characters the XSD allows', () => {
    expect(fieldsOf(draft({ metadata: { description: 'Cena' } })).description).toBe('Cena');
    expect(fieldsOf(draft({ items: [line({ description: 'A' }), line({ description: 'B' })] })).description).toBe('A, B');
    const long = '€'.repeat(300);
    const f = fieldsOf(draft({ items: [line({ description: long })] }));
    expect(Array.from(f.description)).toHaveLength(250);
    expect(Array.from(f.lines[0]!.description)).toHaveLength(250);
  });

  it('corrective invoices: R5 without customer, the rectified invoice when metadata names it validly', () => {
    const refund = fieldsOf(draft({ type: 'refund', metadata: { original_invoice_number: '7', original_issue_date: '14-01-2026' } }));
    expect(refund.corrective).toEqual({ code: 'R5', type: 'I', rectified: [{ series: null, number: '7', date: '14-01-2026' }] });
    expect(refund.simplified).toBe(true);
    expect(fieldsOf(draft({ type: 'void', metadata: { original_invoice_number: '7', original_issue_date: '2026-01-14' } })).corrective?.rectified).toEqual([]);
    expect(fieldsOf(draft()).corrective).toBeNull();
  });

  it('issuer: the location tax_id and legal name (cut to 120 characters)', () => {
    expect(invoiceFields(buildInput(location('es-ticketbai', { legal_name: 'X'.repeat(130) }), draft()), '1').issuer).toEqual({ nif: 'B12345674', name: 'X'.repeat(120) });
    const { legal_name: _drop, ...noLegal } = loc.config;
    expect(invoiceFields(buildInput({ ...loc, config: noLegal }, draft()), '1').issuer.name).toBe('Shop');
  });
});

describe('customer (Destinatarios)', () => {
  const customer = (ctx: Record<string, unknown>) => customerOf(draft({ customer_context: ctx }));

  it('none without a tax id', () => {
    expect(customer({ name: 'Ana' })).toBeNull();
    expect(customerOf(draft())).toBeNull();
  });

  it('a Spanish NIF, with or without the ES VAT prefix', () => {
    expect(customer({ nif: 'B95123451', name: 'Cliente SA' })).toEqual({ id: { nif: 'B95123451' }, name: 'Cliente SA', postalCode: null, address: null });
    expect(customer({ tax_id: 'es-b95123451', name: 'Cliente SA' })?.id).toEqual({ nif: 'B95123451' });
  });

  it('a foreign id: IDOtro, NIF-IVA, country given or read from the VAT prefix', () => {
    expect(customer({ tax_id: 'FR12345678901', name: 'Client SARL' })?.id).toEqual({ idOtro: { country: 'FR', idType: '02', id: 'FR12345678901' } });
    expect(customer({ tax_id: '123456789', country: 'pt', name: 'Cliente Lda' })?.id).toEqual({ idOtro: { country: 'PT', idType: '02', id: '123456789' } });
  });

  it('a tax id of a country outside the EU: IDOtro 04 (documento oficial del país de residencia), not 02 (NIF-IVA)', () => {
    expect(customer({ tax_id: '12-3456789', country: 'US', name: 'US Inc' })?.id).toEqual({ idOtro: { country: 'US', idType: '04', id: '12-3456789' } });
    expect(customer({ tax_id: 'CHE123456789', country_code: 'ch', name: 'AG' })?.id).toEqual({ idOtro: { country: 'CH', idType: '04', id: 'CHE123456789' } });
    expect(customer({ tax_id: 'EL094259216', name: 'AE' })?.id).toEqual({ idOtro: { country: 'GR', idType: '02', id: 'EL094259216' } });
    // The address as an object with its country, as other countries' guides send it.
    expect(customer({ tax_id: '12-3456789', name: 'US Inc', address: { street: '1 Main St', country: 'us' } })?.id).toEqual({ idOtro: { country: 'US', idType: '04', id: '12-3456789' } });
  });

  it('the name is required with the tax id (metadata validation refuses its absence first); legal_name is read too', () => {
    expect(() => customer({ nif: 'B95123451' })).toThrow(/no name/);
    expect(customer({ nif: 'B95123451', legal_name: 'Cliente SA' })?.name).toBe('Cliente SA');
  });

  withSchemas('a foreign customer takes the breakdown by operation type (DesgloseTipoOperacion/Entrega); XSD-valid, signed', () => {
    const fields = fieldsOf(draft({ customer_context: { tax_id: 'FR12345678901', name: 'Client SARL' } }));
    const xml = signXadesEpes({ document: ticketBaiXml(fields), key, policy: SIGNATURE_POLICIES.gipuzkoa, signingTime: '2026-01-15T11:00:00+01:00', idBase: 'x1' }).xml;
    expect(xml).toContain('<IDOtro><CodigoPais>FR</CodigoPais><IDType>02</IDType><ID>FR12345678901</ID></IDOtro>');
    expect(xml).toContain('<TipoDesglose><DesgloseTipoOperacion><Entrega><Sujeta>');
    expect(xsdValidate(xml, 'es/ticketbai/ticketbaiv1-2-2.xsd').ok).toBe(true);
    expect(xmlsecVerify(xml, { trustedCertPem: key.certificatePem }).ok).toBe(true);
  });
});
