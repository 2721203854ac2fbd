/**
 * The Spanish tax of a location (country_config.tax), the rates each tax takes, and the
 * recargo de equivalencia pairs (./tax.ts, ./surcharge.ts), through the three plug-ins'
 * own validation (config and transaction), as the location and transaction services call it.
 */
import { describe, expect, it } from 'vitest';
import { inGuideForm } from '../../core/transaction-request.ts';
import { ValidationError } from '../../core/errors.ts';
import type { FiscalSystem, SystemKey, TxLine } from '../types.ts';
import { CONFIGS, draft, line, location, txCtx } from '../shared/test-fixtures.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { verifactu } from '../es-verifactu/index.ts';
import { ticketBai } from '../es-ticketbai/index.ts';
import { sii } from '../es-sii/index.ts';
import { TAX_INVALID, taxNotCarried } from './tax.ts';
import { SURCHARGE_RATES } from './surcharge.ts';
import { EXEMPTION_CODE_INVALID, EXEMPTION_WITHOUT_EXEMPT_LINE, exemptionCodeInvalid } from './exemption.ts';
import { exemptionNotReported, otherTaxRegimeKeyInvalid } from '../es-sii/metadata.ts';
import { DATED_IVA_RATES } from '../es-verifactu/dated-rates.ts';

// VERI*FACTU dates the temporary rates of 2022-2024 by the issue date (es-verifactu/dated-rates.ts,
// tested there): at NOW (2026) it refuses 5, 2 and 7.5, and a surcharge on a 0 % line.
const datedOut = (key: SystemKey, rate: number, surcharged = false): boolean =>
  key === 'es-verifactu' && (DATED_IVA_RATES.has(rate) || (surcharged && rate === 0));

const SYSTEMS: [SystemKey, FiscalSystem, Record<string, unknown>][] = [
  ['es-verifactu', verifactu, {}],
  ['es-ticketbai', ticketBai, {}],
  ['es-sii', sii, { simplified: true }],
];

const validateConfig = (key: SystemKey, system: FiscalSystem, over: Record<string, unknown>) =>
  system.validateConfig({ config: { ...CONFIGS[key].config, ...over }, taxId: CONFIGS[key].taxId });

// TicketBAI records a surcharge only with a Spanish customer (es-ticketbai/foral-rules.ts, Araba 10-167).
const CUSTOMERS: Partial<Record<SystemKey, Record<string, unknown>>> = { 'es-ticketbai': { nif: 'B95123451', name: 'Ultramarinos Ejemplo SL' } };
// A TicketBAI corrective invoice names the invoice it corrects (es-ticketbai/foral-rules.ts).
const ORIGINALS: Partial<Record<SystemKey, Record<string, unknown>>> = { 'es-ticketbai': { original_invoice_number: '7', original_issue_date: '14-01-2026' } };

const validateTx = (system: FiscalSystem, key: SystemKey, items: TxLine[], metadata: Record<string, unknown>, config: Record<string, unknown> = {}) => {
  const total = items.reduce((s, l) => s + l.total_amount + (typeof l.surcharge_amount === 'number' ? l.surcharge_amount : 0), 0);
  const customer = items.some((l) => l.surcharge_rate !== undefined) ? CUSTOMERS[key] : undefined;
  return system.validateTransaction(draft({ items, metadata, total_amount: total, ...(customer ? { customer_context: customer } : {}) }), txCtx(location(key, config)));
};

/** A line of 10.00 at `rate`, with a surcharge when `surcharge` is given (amount as the core computes it). */
const at = (rate: number, surcharge?: number): TxLine => {
  const tax = Math.round(1000 * rate / 100);
  return line({ tax_rate: rate, tax_amount: tax, total_amount: 1000 + tax, ...(surcharge === undefined ? {} : { surcharge_rate: surcharge, surcharge_amount: Math.round(1000 * surcharge / 100) }) });
};

describe('country_config.tax', () => {
  it.each(SYSTEMS)('%s: absent is IVA and stores nothing (a config as before the field); iva is taken and stored', (key, system) => {
    expect(validateConfig(key, system, {})).not.toHaveProperty('tax');
    expect(validateConfig(key, system, { tax: 'iva' })).toMatchObject({ tax: 'iva' });
  });

  it.each(SYSTEMS)('%s: an unknown tax is a 400 naming the field and its values', (key, system) => {
    for (const bad of ['IGIC', 'vat', '', 3, true]) expect400(() => validateConfig(key, system, { tax: bad }), TAX_INVALID);
  });

  it('verifactu takes igic and ipsi (Impuesto 03 and 02)', () => {
    expect(validateConfig('es-verifactu', verifactu, { tax: 'igic' })).toMatchObject({ tax: 'igic' });
    expect(validateConfig('es-verifactu', verifactu, { tax: ' ipsi ' })).toMatchObject({ tax: 'ipsi' });
  });

  it('ticketbai (Basque, IVA only) refuses igic and ipsi with a 400 that says why; sii takes them (key 08, not subject to IVA)', () => {
    for (const tax of ['igic', 'ipsi'] as const) {
      expect400(() => validateConfig('es-ticketbai', ticketBai, { tax }), taxNotCarried('ticketbai', tax));
      expect(validateConfig('es-sii', sii, { tax })).toMatchObject({ tax });
    }
    expect(taxNotCarried('ticketbai', 'igic')).toBe(
      'country_config.tax igic is not available for ticketbai: TicketBAI records are Basque and carry IVA only; a Canary Islands (IGIC) or Ceuta and Melilla (IPSI) location uses verifactu',
    );
  });

  it('a hand-edited stored config of another tax is refused at the transaction too (ticketbai)', () => {
    expect400(() => validateTx(ticketBai, 'es-ticketbai', [at(21)], {}, { tax: 'igic' }), taxNotCarried('ticketbai', 'igic'));
  });
});

describe('the rates of the location\'s tax (AEAT 1124 refuses the others)', () => {
  const IVA_MESSAGE = 'items[1].tax_rate must be one of the IVA rates 0, 2, 4, 5, 7.5, 10 or 21';

  it.each(SYSTEMS)('%s: every IVA rate AEAT accepts is taken', (key, system, meta) => {
    for (const rate of [0, 2, 4, 5, 7.5, 10, 21].filter((r) => !datedOut(key, r))) expect(() => validateTx(system, key, [at(rate)], meta)).not.toThrow();
  });

  it.each(SYSTEMS)('%s: any other rate is a 400 naming the line and listing the rates', (key, system, meta) => {
    for (const rate of [5.5, 20, 16, 18, 12, 1, 100]) expect400(() => validateTx(system, key, [at(21), at(rate)], meta), IVA_MESSAGE);
    // Refunds and voids (corrective invoices) too.
    expect400(() => system.validateTransaction(draft({ type: 'refund', items: [at(21), at(20)], metadata: { ...meta, ...ORIGINALS[key] } }), txCtx(location(key))), IVA_MESSAGE);
  });

  it('the guide form reads the list in its own unit (hundredths of a percent, vat_rate)', () => {
    let thrown: unknown;
    try {
      validateTx(verifactu, 'es-verifactu', [at(21), at(20)], {});
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect(inGuideForm(thrown as ValidationError).message).toBe('line_items[1].vat_rate must be one of the IVA rates 0, 200, 400, 500, 750, 1000 or 2100');
  });

  it('an exempt line (metadata.exemption_code) keeps its rule: it is at 0, an IVA rate', () => {
    expect(() => validateTx(verifactu, 'es-verifactu', [at(0), at(21)], { exemption_code: 'E1' })).not.toThrow();
  });

  it('verifactu IGIC: 0, 3, 7, 9.5, 15, 20; an IVA-only rate (21, 10, 4) is refused', () => {
    for (const rate of [0, 3, 7, 9.5, 15, 20]) expect(() => validateTx(verifactu, 'es-verifactu', [at(rate)], {}, { tax: 'igic' })).not.toThrow();
    for (const rate of [21, 10, 4, 5, 13.5]) {
      expect400(() => validateTx(verifactu, 'es-verifactu', [at(rate)], {}, { tax: 'igic' }), 'items[0].tax_rate must be one of the IGIC rates 0, 3, 7, 9.5, 15 or 20 (country_config.tax is igic)');
    }
  });

  it('verifactu IPSI: 0.5, 1, 2, 3, 4, 8, 10; 0 and IVA rates are refused', () => {
    for (const rate of [0.5, 1, 2, 3, 4, 8, 10]) expect(() => validateTx(verifactu, 'es-verifactu', [at(rate)], {}, { tax: 'ipsi' })).not.toThrow();
    for (const rate of [0, 21, 5]) {
      expect400(() => validateTx(verifactu, 'es-verifactu', [at(rate)], {}, { tax: 'ipsi' }), 'items[0].tax_rate must be one of the IPSI rates 0.5, 1, 2, 3, 4, 8 or 10 (country_config.tax is ipsi)');
    }
  });

  it('verifactu IGIC: the causes of AEAT list L10B, E1-E8, are taken; another is a 400 listing them', () => {
    for (const code of ['E1', 'E2', 'E3', 'E4', 'E5', 'E6', 'E7', 'E8']) {
      expect(validateTx(verifactu, 'es-verifactu', [at(0), at(7)], { exemption_code: code }, { tax: 'igic' })).toMatchObject({ exemption_code: code });
    }
    expect400(() => validateTx(verifactu, 'es-verifactu', [at(0), at(7)], { exemption_code: 'E9' }, { tax: 'igic' }), exemptionCodeInvalid('igic'));
    expect(exemptionCodeInvalid('igic')).toBe('metadata.exemption_code must be one of E1, E2, E3, E4, E5, E6, E7, E8 (IGIC exemption causes, AEAT list L10B)');
    expect400(() => validateTx(verifactu, 'es-verifactu', [at(7)], { exemption_code: 'E7' }, { tax: 'igic' }), EXEMPTION_WITHOUT_EXEMPT_LINE);
  });

  it('verifactu IVA and IPSI: E1-E6 only (list L10); E7 and E8 are IGIC\'s', () => {
    expect400(() => validateTx(verifactu, 'es-verifactu', [at(0), at(21)], { exemption_code: 'E7' }), EXEMPTION_CODE_INVALID);
    expect400(() => validateTx(verifactu, 'es-verifactu', [at(0), at(3)], { exemption_code: 'E8' }, { tax: 'ipsi' }), EXEMPTION_CODE_INVALID);
  });

  it('verifactu IPSI: with a cause, the 0 % lines are the exempt ones (IPSI has no tipo cero otherwise)', () => {
    expect(validateTx(verifactu, 'es-verifactu', [at(0), at(3)], { exemption_code: 'E1' }, { tax: 'ipsi' })).toMatchObject({ exemption_code: 'E1' });
    expect400(() => validateTx(verifactu, 'es-verifactu', [at(0), at(3)], {}, { tax: 'ipsi' }), 'items[0].tax_rate must be one of the IPSI rates 0.5, 1, 2, 3, 4, 8 or 10 (country_config.tax is ipsi)');
  });

  it('sii IGIC/IPSI: the tax\'s rates; key 08 (given or not), another key is a 400; no exemption cause', () => {
    expect(validateTx(sii, 'es-sii', [at(7), at(0)], { simplified: true }, { tax: 'igic' })).toMatchObject({ regime_key: '08' });
    expect(validateTx(sii, 'es-sii', [at(3)], { simplified: true, regime_key: '08' }, { tax: 'ipsi' })).toMatchObject({ regime_key: '08' });
    expect400(() => validateTx(sii, 'es-sii', [at(21)], { simplified: true }, { tax: 'igic' }), 'items[0].tax_rate must be one of the IGIC rates 0, 3, 7, 9.5, 15 or 20 (country_config.tax is igic)');
    expect400(() => validateTx(sii, 'es-sii', [at(7)], { simplified: true, regime_key: '01' }, { tax: 'igic' }), otherTaxRegimeKeyInvalid('igic'));
    expect400(() => validateTx(sii, 'es-sii', [at(0), at(7)], { simplified: true, exemption_code: 'E1' }, { tax: 'igic' }), exemptionNotReported('igic'));
    // An IVA location keeps its keys: 08 is not one of them.
    expect400(() => validateTx(sii, 'es-sii', [at(21)], { simplified: true, regime_key: '08' }), 'metadata.regime_key must be one of 01, 02, 03, 05, 07, 09');
  });
});

describe('recargo de equivalencia (surcharge_rate per line)', () => {
  it.each(SYSTEMS)('%s: every pair AEAT accepts is taken (LIVA art. 161 and the temporary rates)', (key, system, meta) => {
    for (const [rate, surcharges] of SURCHARGE_RATES) {
      if (datedOut(key, rate, true)) continue;
      for (const s of surcharges) expect(() => validateTx(system, key, [at(rate, s), at(10)], meta)).not.toThrow();
    }
  });

  it.each(SYSTEMS)('%s: a rate not paired with the line\'s IVA rate is a 400 listing the right ones', (key, system, meta) => {
    expect400(() => validateTx(system, key, [at(21, 1.4)], meta), 'items[0].surcharge_rate must be 5.2 or 1.75 with tax_rate 21 (recargo de equivalencia, Ley 37/1992 art. 161)');
    expect400(() => validateTx(system, key, [at(10), at(10, 5.2)], meta), 'items[1].surcharge_rate must be 1.4 with tax_rate 10 (recargo de equivalencia, Ley 37/1992 art. 161)');
    expect400(() => validateTx(system, key, [at(4, 0)], meta), 'items[0].surcharge_rate must be 0.5 with tax_rate 4 (recargo de equivalencia, Ley 37/1992 art. 161)');
  });

  it.each(SYSTEMS)('%s: never on an exempt line', (key, system, meta) => {
    expect400(
      () => validateTx(system, key, [at(0, 0), at(21)], { ...meta, exemption_code: 'E1' }),
      'items[0].surcharge_rate is not allowed on an exempt line (metadata.exemption_code): an exempt operation carries no IVA and no recargo de equivalencia',
    );
  });

  it('never with IGIC or IPSI (the regime is IVA\'s)', () => {
    expect400(
      () => validateTx(verifactu, 'es-verifactu', [at(7, 1.4)], {}, { tax: 'igic' }),
      'items[0].surcharge_rate is not allowed: recargo de equivalencia is charged with IVA only (Ley 37/1992 arts. 154-163), and this location charges IGIC (country_config.tax)',
    );
  });

  it('the guide form reads the pair in hundredths', () => {
    let thrown: unknown;
    try {
      validateTx(ticketBai, 'es-ticketbai', [at(21, 1.4)], {});
    } catch (e) {
      thrown = e;
    }
    expect(inGuideForm(thrown as ValidationError).message).toBe('line_items[0].surcharge_rate must be 520 or 175 with vat_rate 2100 (recargo de equivalencia, Ley 37/1992 art. 161)');
  });

  it('SII: a rate with and without surcharge are two DetalleIVA, counted against the 6', () => {
    const six = [at(21), at(21, 5.2), at(10), at(10, 1.4), at(4), at(4, 0.5)];
    expect(() => validateTx(sii, 'es-sii', six, { simplified: true })).not.toThrow();
    expect400(() => validateTx(sii, 'es-sii', [...six, at(21, 1.75)], { simplified: true }), 'SII records take at most 6 different tax rates per invoice');
  });
});
