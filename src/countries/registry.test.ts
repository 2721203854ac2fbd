import { describe, it, expect } from 'vitest';
import {
  CERTIFICATE_FIELDS, COUNTRIES, LINE_FIELDS, SYSTEMS, SYSTEM_KEYS, getSystem, isSupportedCountry, isSystemKey, resolveLocationSystem,
  routingTable, unionOfLineFields,
} from './registry.ts';
import type { CountryRouting, FiscalSystem, LineField } from './types.ts';
import { expect400 } from './shared/test-helpers.ts';

const SPAIN_REQUIRED = 'Spain locations require country_config with system field (ticketbai, verifactu or sii)';
const SPAIN_INVALID = 'Spain country_config.system must be "ticketbai", "verifactu" or "sii"';
const ITALY_REQUIRED =
  'Italian locations require country_config with formato_trasmissione (SDI) or system "dc" (Documento Commerciale)';

const configs = {
  ticketbai: { system: 'ticketbai', legal_name: 'E', territory: 'araba', tbai_license: 'L' },
  verifactu: { system: 'verifactu', legal_name: 'E', software_nif: 'B12345674' },
  sii: { system: 'sii', legal_name: 'E', certificate_id: 'c' },
  sdi: { codice_fiscale: '01234567897', formato_trasmissione: 'FPR12', regime_fiscale: 'RF01' },
  dc: {
    system: 'dc',
    codice_fiscale: '01234567897',
    legal_name: 'E',
    cau_code: 'AB12',
    pem_matricola: 'ABCD-123456',
    seal_certificate_id: 's',
    partita_iva: '01234567897',
  },
  fr: { legal_name: 'E', register_id: '732829320' },
  pt: { series: { FT: { prefix: 'A', atcud_code: 'AAJFJMVNTN' } } },
  gr: {
    afm: '094259216',
    branch: 0,
    legal_name: 'E',
    aade_user_id: 'u',
    subscription_key: 'k',
    env: 'sandbox',
    document_class: 'TypeA',
    default_series: 'A',
  },
};

describe('registry', () => {
  it('lists each system key exactly once', () => {
    expect(SYSTEMS.map((s) => s.key).sort()).toEqual([...SYSTEM_KEYS].sort());
  });

  it('getSystem returns the plug-in, and throws a plain Error (not a 400) for an unknown key', () => {
    for (const key of SYSTEM_KEYS) expect(getSystem(key).key).toBe(key);
    expect(() => getSystem('xx-nope')).toThrow('unknown fiscal system: xx-nope');
  });

  it('isSystemKey', () => {
    expect(isSystemKey('it-dc')).toBe(true);
    expect(isSystemKey('it-rt')).toBe(false);
  });

  it('derives the keys and the countries from the plug-ins, in registry order', () => {
    expect(SYSTEM_KEYS).toEqual(['es-ticketbai', 'es-verifactu', 'es-sii', 'it-sdi', 'it-dc', 'fr-nf525', 'pt-saft', 'gr-mydata']);
    expect(COUNTRIES).toEqual(['ES', 'IT', 'FR', 'PT', 'GR']);
  });

  it('collects the config fields naming a certificate and the line fields the plug-ins declare', () => {
    expect(CERTIFICATE_FIELDS).toEqual(['certificate_id', 'seal_certificate_id', 'at_certificate_id']);
    expect(LINE_FIELDS).toEqual([
      { name: 'surcharge_rate', type: 'surcharge', amount: 'surcharge_amount' },
      { name: 'natura', type: 'string', upperCase: true },
      { name: 'tax_exemption_code', type: 'string', upperCase: true },
    ]);
  });

  it('refuses two systems declaring one surcharge with different amount fields, or as a string', () => {
    const sys = (key: string, field: LineField) => ({ key, lineFields: [field] }) as unknown as FiscalSystem;
    const surcharge: LineField = { name: 'extra', type: 'surcharge', amount: 'extra_amount' };
    expect(unionOfLineFields([sys('xx-a', surcharge), sys('xx-b', surcharge)])).toEqual([surcharge]);
    expect(() => unionOfLineFields([sys('xx-a', surcharge), sys('xx-b', { ...surcharge, amount: 'other' })])).toThrow('line field extra is declared differently by xx-b');
    expect(() => unionOfLineFields([sys('xx-a', surcharge), sys('xx-b', { name: 'extra', type: 'string' })])).toThrow('line field extra is declared differently by xx-b');
  });

  it('refuses two systems declaring one line field differently', () => {
    const sys = (key: string, upperCase: boolean) => ({ key, lineFields: [{ name: 'code', type: 'string', upperCase }] }) as unknown as FiscalSystem;
    expect(unionOfLineFields([sys('xx-a', true), sys('xx-b', true)])).toEqual([{ name: 'code', type: 'string', upperCase: true }]);
    expect(() => unionOfLineFields([sys('xx-a', true), sys('xx-b', false)])).toThrow('line field code is declared differently by xx-b');
  });

  it('routes a country with one system to it, and needs a rule for a country with several', () => {
    const sys = (key: string, country: string) => ({ key, country }) as unknown as FiscalSystem;
    const rule = (country: string): CountryRouting => ({ country, route: () => 'xx' }) as unknown as CountryRouting;
    const table = routingTable([sys('aa-one', 'AA'), sys('bb-one', 'BB'), sys('bb-two', 'BB')], [rule('BB')]);
    expect([...table.keys()]).toEqual(['AA', 'BB']);
    expect(table.get('AA')).toEqual({ system: sys('aa-one', 'AA') });
    expect('rule' in table.get('BB')!).toBe(true);
    expect(() => routingTable([sys('bb-one', 'BB'), sys('bb-two', 'BB')], [])).toThrow('country BB has several systems and no routing rule');
    expect(() => routingTable([sys('aa-one', 'AA')], [rule('CC')])).toThrow('routing rule for CC, which no registered system serves');
    expect(() => routingTable([sys('aa-one', 'AA')], [rule('AA'), rule('AA')])).toThrow('country AA has 2 routing rules');
  });

  it('isSupportedCountry accepts the five countries only, in ISO uppercase', () => {
    for (const c of COUNTRIES) expect(isSupportedCountry(c)).toBe(true);
    for (const c of ['DE', 'es', '', 'ESP']) expect(isSupportedCountry(c)).toBe(false);
  });
});

describe('resolveLocationSystem', () => {
  it.each([
    ['ES', configs.ticketbai, null, 'es-ticketbai'],
    ['ES', configs.verifactu, '12345678Z', 'es-verifactu'],
    ['ES', configs.sii, null, 'es-sii'],
    ['IT', configs.sdi, '01234567897', 'it-sdi'],
    ['IT', configs.dc, null, 'it-dc'],
    ['FR', configs.fr, null, 'fr-nf525'],
    ['PT', configs.pt, '123456789', 'pt-saft'],
    ['GR', configs.gr, '094259216', 'gr-mydata'],
  ])('%s %j → %s', (country, config, taxId, key) => {
    const { system, config: stored } = resolveLocationSystem(country, config, taxId);
    expect(system.key).toBe(key);
    expect(system.country).toBe(country);
    expect(stored).toEqual(system.validateConfig({ config, taxId }));
  });

  it('returns the normalized config', () => {
    expect(resolveLocationSystem('ES', { ...configs.ticketbai, legal_name: ' E ' }, null).config).toEqual({
      system: 'ticketbai',
      legal_name: 'E',
      territory: 'araba',
      territory_code: '01',
      tbai_license: 'L',
    });
    expect(resolveLocationSystem('IT', configs.sdi, '01234567897').config.partita_iva).toBe('01234567897');
  });

  it.each(['DE', 'es', '', 'XX'])('refuses country %j', (country) => {
    expect400(() => resolveLocationSystem(country, {}, null), 'country must be one of ES, IT, FR, PT, GR');
  });

  it.each(['ES', 'IT', 'FR', 'PT', 'GR'])('%s: a config that is not an object is a 400', (country) => {
    expect400(() => resolveLocationSystem(country, 'x', null), 'country_config must be an object');
    expect400(() => resolveLocationSystem(country, [1], null), 'country_config must be an object');
  });

  it('Spain: routes on system, with the spec messages when it cannot', () => {
    expect400(() => resolveLocationSystem('ES', undefined, null), SPAIN_REQUIRED);
    expect400(() => resolveLocationSystem('ES', null, null), SPAIN_REQUIRED);
    expect400(() => resolveLocationSystem('ES', { legal_name: 'E' }, null), SPAIN_REQUIRED);
    expect400(() => resolveLocationSystem('ES', { system: '' }, null), SPAIN_REQUIRED);
    expect400(() => resolveLocationSystem('ES', { system: 'batuz' }, null), SPAIN_INVALID);
    expect400(() => resolveLocationSystem('ES', { system: 1 }, null), SPAIN_INVALID);
  });

  it('Spain: then validates the selected system and the tax_id', () => {
    expect400(() => resolveLocationSystem('ES', { system: 'ticketbai', legal_name: 'E', tbai_license: 'L' }, null), 'country_config.territory is required for ticketbai');
    expect400(() => resolveLocationSystem('ES', configs.sii, '12345678A'), 'tax_id must be a valid Spanish NIF');
  });

  it('Italy: routes on system dc / formato_trasmissione', () => {
    expect400(() => resolveLocationSystem('IT', undefined, '01234567897'), ITALY_REQUIRED);
    expect400(() => resolveLocationSystem('IT', {}, '01234567897'), ITALY_REQUIRED);
    expect400(() => resolveLocationSystem('IT', { system: 'rt', codice_fiscale: '01234567897' }, null), ITALY_REQUIRED);
    expect(resolveLocationSystem('IT', { ...configs.sdi, system: 'sdi' }, '01234567897').system.key).toBe('it-sdi');
    expect400(() => resolveLocationSystem('IT', { ...configs.sdi, formato_trasmissione: 'FPX' }, '01234567897'), 'formato_trasmissione must be FPA12 or FPR12');
    expect400(() => resolveLocationSystem('IT', configs.sdi, null), 'partita_iva is required');
  });

  it('France, Portugal and Greece without config give their first required-field message', () => {
    expect400(() => resolveLocationSystem('FR', undefined, null), 'country_config.legal_name is required for France locations');
    expect400(() => resolveLocationSystem('PT', undefined, null), 'country_config.series is required');
    expect400(() => resolveLocationSystem('GR', undefined, null), 'country_config.afm must be a valid 9-digit AFM');
  });

  it('exposes secret fields through the selected plug-in', () => {
    expect(resolveLocationSystem('GR', configs.gr, null).system.secretConfigFields).toEqual(['subscription_key']);
  });
});
