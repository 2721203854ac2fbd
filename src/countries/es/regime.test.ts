/**
 * The issuer's own VAT regime (country_config.vat_regime, ./regime.ts) through the three
 * plug-ins' own validation (config and transaction), as the location and transaction
 * services call it.
 */
import { describe, expect, it } from 'vitest';
import type { FiscalSystem, SystemKey, TxLine } from '../types.ts';
import { CONFIGS, draft, line, location, txCtx } from '../shared/test-fixtures.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { verifactu } from '../es-verifactu/index.ts';
import { ticketBai } from '../es-ticketbai/index.ts';
import { sii } from '../es-sii/index.ts';
import { VAT_REGIME_INVALID, regimeNotInSii, regimeNotWithTax } from './regime.ts';

const SYSTEMS: [SystemKey, FiscalSystem][] = [
  ['es-verifactu', verifactu],
  ['es-ticketbai', ticketBai],
  ['es-sii', sii],
];
const WITH_REGIMES = SYSTEMS.filter(([key]) => key !== 'es-sii');

const validateConfig = (key: SystemKey, system: FiscalSystem, over: Record<string, unknown>, taxId = CONFIGS[key].taxId) =>
  system.validateConfig({ config: { ...CONFIGS[key].config, ...over }, taxId });
/**
 * A natural person's NIF: the special regimes are theirs (Ley 37/1992 arts. 122, 154), and
 * TicketBAI refuses keys 51/52 from a company (Araba 10-132, es-ticketbai/foral-rules.ts).
 */
const SOLE_TRADER = '12345678Z';
const soleTrader = (loc: ReturnType<typeof location>) => ({ ...loc, tax_id: SOLE_TRADER });

const exemptLine: TxLine = line({ description: 'Consulta', unit_price: 5000, tax_rate: 0, tax_amount: 0, total_amount: 5000 });

describe('country_config.vat_regime', () => {
  it.each(SYSTEMS)('%s: absent stores nothing (a config as before the field); general is taken and stored', (key, system) => {
    const before = validateConfig(key, system, {});
    expect(before).not.toHaveProperty('vat_regime');
    expect(validateConfig(key, system, { vat_regime: 'general' })).toEqual({ ...before, vat_regime: 'general' });
  });

  it.each(WITH_REGIMES)('%s: recargo_equivalencia and simplified are taken (trimmed) and stored', (key, system) => {
    expect(validateConfig(key, system, { vat_regime: 'recargo_equivalencia' }, SOLE_TRADER)).toMatchObject({ vat_regime: 'recargo_equivalencia' });
    expect(validateConfig(key, system, { vat_regime: ' simplified ' }, SOLE_TRADER)).toMatchObject({ vat_regime: 'simplified' });
  });

  it.each(SYSTEMS)('%s: an unknown value is a 400 naming the field and its values', (key, system) => {
    for (const bad of ['RE', 'Simplified', 'recargo', '', 1, true, {}]) expect400(() => validateConfig(key, system, { vat_regime: bad }), VAT_REGIME_INVALID);
  });

  it('sii refuses both special regimes with a 400 that says why (no SII regime key for them)', () => {
    for (const regime of ['recargo_equivalencia', 'simplified'] as const) {
      expect400(() => validateConfig('es-sii', sii, { vat_regime: regime }), regimeNotInSii(regime));
    }
    expect(regimeNotInSii('simplified')).toBe(
      'country_config.vat_regime simplified is not available for sii: the SII issued-invoice regime keys (ClaveRegimenEspecialOTrascendencia 01-17) have none for the régimen simplificado (Ley 37/1992 arts. 122-123)',
    );
  });

  it('both are IVA regimes: an IGIC or IPSI location is refused them (verifactu)', () => {
    expect400(() => validateConfig('es-verifactu', verifactu, { tax: 'igic', vat_regime: 'recargo_equivalencia' }), regimeNotWithTax('recargo_equivalencia', 'igic'));
    expect400(() => validateConfig('es-verifactu', verifactu, { tax: 'ipsi', vat_regime: 'simplified' }), regimeNotWithTax('simplified', 'ipsi'));
    expect(validateConfig('es-verifactu', verifactu, { tax: 'iva', vat_regime: 'simplified' })).toMatchObject({ tax: 'iva', vat_regime: 'simplified' });
    expect(validateConfig('es-verifactu', verifactu, { tax: 'igic', vat_regime: 'general' })).toMatchObject({ tax: 'igic', vat_regime: 'general' });
  });

  it('a hand-edited stored sii config in a special regime is refused at the transaction too', () => {
    expect400(() => sii.validateTransaction(draft({ metadata: { simplified: true } }), txCtx(location('es-sii', { vat_regime: 'simplified' }))), regimeNotInSii('simplified'));
  });

  it.each(WITH_REGIMES)('%s: a sale of such an issuer naming an exemption cause is a 400; a general-regime one is not', (key, system) => {
    const tx = draft({ metadata: { exemption_code: 'E1' }, items: [exemptLine, line()] });
    expect(() => system.validateTransaction(tx, txCtx(location(key)))).not.toThrow();
    expect400(
      () => system.validateTransaction(tx, txCtx(soleTrader(location(key, { vat_regime: 'recargo_equivalencia' })))),
      'metadata.exemption_code is not taken at a location in recargo de equivalencia (Ley 37/1992 arts. 154-163) (country_config.vat_regime recargo_equivalencia): its records key every line to that regime, and an exempt operation is not one of its sales',
    );
    expect(() => system.validateTransaction(draft(), txCtx(soleTrader(location(key, { vat_regime: 'simplified' }))))).not.toThrow();
  });
});
