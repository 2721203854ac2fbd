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
import {
  ARABA_RESERVED_SERIES,
  CUSTOMER_IS_ISSUER,
  CUSTOMER_NIF_INVALID,
  E5_NEEDS_EU_CUSTOMER,
  SURCHARGE_AT_RETAILER,
  SURCHARGE_NEEDS_NIF,
  specialRegimeNotForEntity,
} from './foral-rules.ts';

const gipuzkoa = location('es-ticketbai');
const araba = location('es-ticketbai', { territory: 'araba', territory_code: '01', tbai_license: 'TBAIARbf8c0e3f7a8c' });
const validate = (tx = draft(), loc = gipuzkoa) => ticketBai.validateTransaction(tx, txCtx(loc));
const signed = { signingKey: fixedSigningKey() } as const;
const SPANISH = { nif: 'B95123451', name: 'Ultramarinos Ejemplo SL' };
const GERMAN = { tax_id: 'DE123456789', name: 'Maschinenbau Beispiel GmbH' };
const SWISS = { tax_id: 'CHE-123.456.789', name: 'Beispiel AG', country: 'CH' };
/** A natural person's NIF (DNI 12345678, letter Z). */
const SOLE_TRADER = '12345678Z';

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
    // A natural person's shop: keys 51/52 are for them (Araba 10-132, below).
    expect400(() => validate(sale, { ...location('es-ticketbai', { vat_regime: 'recargo_equivalencia' }), tax_id: SOLE_TRADER }), SURCHARGE_AT_RETAILER);
    expect(() => validate(sale, { ...location('es-ticketbai', { vat_regime: 'simplified' }), tax_id: SOLE_TRADER })).not.toThrow();
    // Without a surcharge the retailer issues as before.
    expect(() => validate(draft(), { ...location('es-ticketbai', { vat_regime: 'recargo_equivalencia' }), tax_id: SOLE_TRADER })).not.toThrow();
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

describe('the customer named by NIF: a correct one (Araba 10-68, Gipuzkoa 1153, Bizkaia B4_2000011), not the issuer', () => {
  it('a NIF whose control character is wrong → 400, in any spelling; a correct one is taken', () => {
    for (const nif of ['B95123452', 'ES B95123452', 'b-95123452', '12345678A', 'X1234567A']) {
      expect400(() => validate(draft({ customer_context: { nif, name: 'Cliente' } })), CUSTOMER_NIF_INVALID);
    }
    expect400(() => validate(draft({ customer_context: { tax_id: 'B95123452', name: 'Cliente', country: 'ES' } })), CUSTOMER_NIF_INVALID);
    // A refund (R1) names its customer the same way.
    const original = { original_invoice_number: '7', original_issue_date: '14-01-2026' };
    expect400(() => validate(draft({ type: 'refund', metadata: original, customer_context: { nif: 'B95123452', name: 'Cliente' } })), CUSTOMER_NIF_INVALID);
    for (const nif of ['B95123451', 'ESB95123451', '12345678Z', 'X1234567L']) {
      expect(validate(draft({ customer_context: { nif, name: 'Cliente' } }))).toMatchObject({ invoice_type: 'F1' });
    }
    // A foreign id of the same shape, its country given, is not a Spanish NIF: IDOtro, taken.
    expect(validate(draft({ customer_context: { tax_id: 'B95123452', name: 'Client', country: 'FR' } }))).toMatchObject({ invoice_type: 'F1' });
  });
  it('the issuer’s own NIF as the customer → 400 (with or without ES and separators)', () => {
    for (const nif of ['B12345674', 'ESB12345674', 'b-12345674']) {
      expect400(() => validate(draft({ customer_context: { nif, name: 'Ejemplo SL' } })), CUSTOMER_IS_ISSUER);
    }
    expect400(() => validate(draft({ customer_context: { nif: SOLE_TRADER, name: 'Yo' } }), { ...gipuzkoa, tax_id: SOLE_TRADER }), CUSTOMER_IS_ISSUER);
    expect(validate(draft({ customer_context: SPANISH }))).toMatchObject({ invoice_type: 'F1' });
  });
});

describe('keys 51/52 only from a natural person or an E/J entity (Araba 10-132; Ley 37/1992 arts. 122, 154)', () => {
  const config = (vat_regime: string) => ({ ...gipuzkoa.config, vat_regime });
  it('a company in recargo de equivalencia or the simplified regime → 400 at registration; a person, E or J taken', () => {
    for (const regime of ['recargo_equivalencia', 'simplified'] as const) {
      for (const taxId of ['B12345674', 'A13585625', 'W1234567D']) {
        expect400(() => validateTicketBaiConfig({ config: config(regime), taxId }), specialRegimeNotForEntity(regime));
      }
      for (const taxId of [SOLE_TRADER, 'X1234567L', 'K1234567L', 'E12345674', 'J99216582']) {
        expect(validateTicketBaiConfig({ config: config(regime), taxId })).toMatchObject({ vat_regime: regime });
      }
    }
    // The general regime takes any issuer.
    expect(validateTicketBaiConfig({ config: config('general'), taxId: 'B12345674' })).toMatchObject({ vat_regime: 'general' });
    expect(specialRegimeNotForEntity('simplified')).toBe(
      'country_config.vat_regime simplified is only for a natural person or an entity in attribution of income (a tax_id starting with a digit, K, L, M, X, Y, Z, E or J): the régimen simplificado (Ley 37/1992 art. 122) is not open to a company, and the Haciendas Forales refuse its key 52 from one',
    );
  });
  it('a location stored before the rule issues nothing until PATCHed (400 at create)', () => {
    expect400(() => validate(draft(), location('es-ticketbai', { vat_regime: 'simplified' })), specialRegimeNotForEntity('simplified'));
    expect400(() => validate(draft(), location('es-ticketbai', { vat_regime: 'recargo_equivalencia' })), specialRegimeNotForEntity('recargo_equivalencia'));
    expect(() => validate(draft(), { ...location('es-ticketbai', { vat_regime: 'simplified' }), tax_id: 'J99216582' })).not.toThrow();
  });
});
