/**
 * The Haciendas Forales' business validations checked at creation (./foral-rules.ts), and the
 * export key (xml.ts `regimeKeysOf`): each refusal a 400 with its message, each accepted case
 * built into an XSD-valid record.
 */
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, xsdValidate } from '../../../test/support/xml-tools.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft, fixedSigningKey, line, location, txCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { RECARGO_SALE } from '../es/test-fixtures.ts';
import { ticketBai } from './index.ts';
import { validateTicketBaiConfig } from './config.ts';
import { ARABA_RESERVED_SERIES, E5_NEEDS_EU_CUSTOMER, SURCHARGE_AT_RETAILER, SURCHARGE_NEEDS_NIF } from './foral-rules.ts';

const gipuzkoa = location('es-ticketbai');
const araba = location('es-ticketbai', { territory: 'araba', territory_code: '01', tbai_license: 'TBAIARbf8c0e3f7a8c' });
const validate = (tx = draft(), loc = gipuzkoa) => ticketBai.validateTransaction(tx, txCtx(loc));
const signed = { signingKey: fixedSigningKey() } as const;
const SPANISH = { nif: 'B95123451', name: 'Ultramarinos Ejemplo SL' };
const GERMAN = { tax_id: 'DE123456789', name: 'Maschinenbau Beispiel GmbH' };
const SWISS = { tax_id: 'CHE-123.456.789', name: 'Beispiel AG', country: 'CH' };

function expectAltaValid(xml: string): void {
  if (!HAVE_SCHEMAS) return;
  const v = xsdValidate(xml, 'es/ticketbai/ticketbaiv1-2-2.xsd');
  expect(v.output).toMatch(/validates$/);
}
const keys = (xml: string): string[] => [...xml.matchAll(/<ClaveRegimenIvaOpTrascendencia>(\d+)</g)].map((m) => m[1]!);

describe('recargo de equivalencia goes to a Spanish retailer (Araba 10-167, 10-209/210/285)', () => {
  it('a surcharge without a customer, or with a foreign one → 400; with a Spanish NIF it is taken', () => {
    expect400(() => validate(draft({ ...RECARGO_SALE })), SURCHARGE_NEEDS_NIF);
    expect400(() => validate(draft({ ...RECARGO_SALE, customer_context: GERMAN })), SURCHARGE_NEEDS_NIF);
    expect400(() => validate(draft({ ...RECARGO_SALE, customer_context: SWISS })), SURCHARGE_NEEDS_NIF);
    expect(validate(draft({ ...RECARGO_SALE, customer_context: { ...SPANISH, nif: 'ES B95123451' } }))).toMatchObject({ invoice_type: 'F1' });
    // A refund of a surcharged sale names the retailer too (R1, not R5).
    const original = { original_invoice_number: '7', original_issue_date: '14-01-2026' };
    expect400(() => validate(draft({ ...RECARGO_SALE, type: 'refund', metadata: original })), SURCHARGE_NEEDS_NIF);
    expect(validate(draft({ ...RECARGO_SALE, type: 'refund', metadata: original, customer_context: SPANISH }))).toMatchObject({ invoice_type: 'R1' });
  });
  it('an issuer itself in recargo de equivalencia (key 51) charges none → 400; the simplified regime (52) may', () => {
    const sale = draft({ ...RECARGO_SALE, customer_context: SPANISH });
    expect400(() => validate(sale, location('es-ticketbai', { vat_regime: 'recargo_equivalencia' })), SURCHARGE_AT_RETAILER);
    expect(() => validate(sale, location('es-ticketbai', { vat_regime: 'simplified' }))).not.toThrow();
    // Without a surcharge the retailer issues as before.
    expect(() => validate(draft(), location('es-ticketbai', { vat_regime: 'recargo_equivalencia' }))).not.toThrow();
  });
});

describe('exemptions: E5 needs an intra-EU customer (Araba 10-168); E2/E3 are keyed 02 (10-174)', () => {
  const exempt = line({ description: 'Maquinaria', unit_price: 150000, tax_rate: 0, tax_amount: 0, total_amount: 150000 });
  it('E5 without a customer, with a Spanish or a non-EU one → 400; with an EU VAT number it is taken', () => {
    const e5 = (customer_context?: Record<string, unknown>) => draft({ items: [exempt], metadata: { exemption_code: 'E5' }, ...(customer_context ? { customer_context } : {}) });
    expect400(() => validate(e5()), E5_NEEDS_EU_CUSTOMER);
    expect400(() => validate(e5(SPANISH)), E5_NEEDS_EU_CUSTOMER);
    expect400(() => validate(e5(SWISS)), E5_NEEDS_EU_CUSTOMER);
    expect(validate(e5(GERMAN))).toMatchObject({ invoice_type: 'F1', exemption_code: 'E5' });
    expect(validate(e5({ tax_id: '123456789', name: 'Société Exemple', country: 'FR' }))).toMatchObject({ exemption_code: 'E5' });
    // Other causes keep taking any customer, or none.
    expect(validate(draft({ items: [exempt], metadata: { exemption_code: 'E1' } }))).toMatchObject({ invoice_type: 'F2' });
  });
  it('an export (E2) with every line exempt is keyed 02 alone; an E3 beside a taxed line 01 and 02; other causes 01', () => {
    const only = validatedBuild(ticketBai, gipuzkoa, draft({ items: [exempt], metadata: { exemption_code: 'E2' }, customer_context: SWISS }), signed).record.body;
    expect(keys(only)).toEqual(['02']);
    expect(only).toContain('<Exenta><DetalleExenta><CausaExencion>E2</CausaExencion>');
    expect(only).not.toContain('DetalleIVA');
    expectAltaValid(only);
    const mixed = validatedBuild(ticketBai, gipuzkoa, draft({ items: [exempt, line()], metadata: { exemption_code: 'E3' } }), signed).record.body;
    expect(keys(mixed)).toEqual(['01', '02']);
    expectAltaValid(mixed);
    const e1 = validatedBuild(ticketBai, gipuzkoa, draft({ items: [exempt], metadata: { exemption_code: 'E1' } }), signed).record.body;
    expect(keys(e1)).toEqual(['01']);
  });
});

describe('Araba reserves the DFA_ series for FakturAraba (004)', () => {
  it('metadata.series or a stored config series DFA_… at an Araba location → 400; elsewhere, and other series, taken', () => {
    expect400(() => validate(draft({ metadata: { series: 'DFA_1' } }), araba), ARABA_RESERVED_SERIES);
    expect400(() => validate(draft({ metadata: { series: 'dfa_tienda' } }), araba), ARABA_RESERVED_SERIES);
    expect400(() => validate(draft(), { ...araba, config: { ...araba.config, series: 'DFA_X' } }), ARABA_RESERVED_SERIES);
    expect(validate(draft({ metadata: { series: 'DFA-1' } }), araba)).toMatchObject({ series: 'DFA-1' });
    expect(validate(draft({ metadata: { series: 'DFA_1' } }), gipuzkoa)).toMatchObject({ series: 'DFA_1' });
  });
  it('refused at registration too', () => {
    const config = { ...araba.config, series: 'DFA_TPV' };
    expect400(() => validateTicketBaiConfig({ config, taxId: 'B12345674' }), ARABA_RESERVED_SERIES);
    expect(validateTicketBaiConfig({ config: { ...config, territory: 'gipuzkoa', territory_code: '20' }, taxId: 'B12345674' })).toMatchObject({ series: 'DFA_TPV' });
  });
});
