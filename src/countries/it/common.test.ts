import { describe, it, expect } from 'vitest';
import { ITALY_CONFIG_REQUIRED, readCodiceFiscale, resolvePartitaIva, routeItaly } from './common.ts';
import { expect400 } from '../shared/test-helpers.ts';

describe('routeItaly', () => {
  it('routes system dc to Documento Commerciale', () => {
    expect(routeItaly({ system: 'dc' })).toBe('it-dc');
    expect(routeItaly({ system: ' dc ', formato_trasmissione: 'FPR12' })).toBe('it-dc');
  });
  it('routes formato_trasmissione (or system sdi) to SDI', () => {
    expect(routeItaly({ formato_trasmissione: 'FPR12' })).toBe('it-sdi');
    expect(routeItaly({ formato_trasmissione: 'XXX' })).toBe('it-sdi');
    expect(routeItaly({ system: 'sdi' })).toBe('it-sdi');
  });
  it.each([[undefined], [{}], [{ system: 'rt' }], [{ system: 'rt', formato_trasmissione: 'FPR12' }], [{ formato_trasmissione: null }]])(
    'refuses %j',
    (config) => {
      expect400(() => routeItaly(config), ITALY_CONFIG_REQUIRED);
    },
  );
});

describe('readCodiceFiscale', () => {
  it.each(['01234567897', 'RSSMRA85T10A562S'])('accepts %s', (cf) => {
    expect(readCodiceFiscale({ codice_fiscale: ` ${cf} ` })).toBe(cf);
  });
  it.each([[undefined], [''], ['0123456789'], ['RSSMRA85T10A562SX'], ['rssmra85t10a562s'], ['RSSMRA85-10A562S'], [12345678901]])(
    'refuses %j',
    (cf) => {
      expect400(() => readCodiceFiscale({ codice_fiscale: cf }), 'country_config.codice_fiscale must be 11-16 alphanumeric characters');
    },
  );
});

describe('resolvePartitaIva', () => {
  it('takes the tax_id, the config value, or both when equal', () => {
    expect(resolvePartitaIva({}, '01234567897')).toBe('01234567897');
    expect(resolvePartitaIva({ partita_iva: ' 01234567897 ' }, null)).toBe('01234567897');
    expect(resolvePartitaIva({ partita_iva: '01234567897' }, '01234567897')).toBe('01234567897');
    expect(resolvePartitaIva({ partita_iva: '' }, '01234567897')).toBe('01234567897');
  });
  it('requires one of them', () => {
    expect400(() => resolvePartitaIva({}, null), 'partita_iva is required');
    expect400(() => resolvePartitaIva(undefined, '  '), 'partita_iva is required');
  });
  it.each([
    [{}, '0123456789'],
    [{}, 'IT01234567897'],
    [{ partita_iva: '123' }, null],
    [{ partita_iva: 1234567890 }, null],
    [{ partita_iva: '123' }, '01234567897'],
  ])('refuses the shape of %j / %j', (config, taxId) => {
    expect400(() => resolvePartitaIva(config, taxId), 'partita_iva must be exactly 11 digits');
  });
  it('requires both to agree', () => {
    expect400(() => resolvePartitaIva({ partita_iva: '12345678903' }, '01234567897'), 'country_config.partita_iva must equal tax_id');
  });
  it('checks the check digit', () => {
    expect400(() => resolvePartitaIva({}, '01234567890'), 'partita_iva check digit is invalid');
    expect400(() => resolvePartitaIva({ partita_iva: '00000000000' }, null), 'partita_iva check digit is invalid');
  });
});
