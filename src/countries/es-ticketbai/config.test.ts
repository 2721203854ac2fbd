import { describe, it, expect } from 'vitest';
import { EPIGRAFE_INVALID, EPIGRAFE_REQUIRED, LICENSE_INVALID, SERIES_INVALID, validateTicketBaiConfig } from './config.ts';
import { ticketBai } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';

const base = {
  system: 'ticketbai',
  legal_name: 'Ejemplo SL',
  certificate_id: 'cert_1',
  territory: 'gipuzkoa',
  tbai_license: 'TBAIGIPRE00000000123',
};
const validate = (config: unknown, taxId: string | null = null) => validateTicketBaiConfig({ config, taxId });

describe('es-ticketbai config', () => {
  it('plug-in', () => {
    expect(ticketBai.key).toBe('es-ticketbai');
    expect(ticketBai.country).toBe('ES');
    expect(ticketBai.secretConfigFields).toEqual([]);
    expect(ticketBai.validateConfig).toBe(validateTicketBaiConfig);
  });

  it('normalizes a full config: trimmed, territory name and code both stored', () => {
    const out = validate(
      {
        system: ' ticketbai ',
        legal_name: '  Ejemplo SL ',
        certificate_id: 'cert_1',
        tsa_url: 'https://tsa.example.com',
        territory: 'Bizkaia',
        territory_code: '48',
        tbai_license: ' LIC ',
        series: ' A ',
      },
      'B12345674',
    );
    expect(out).toEqual({
      system: 'ticketbai',
      legal_name: 'Ejemplo SL',
      certificate_id: 'cert_1',
      tsa_url: 'https://tsa.example.com',
      territory: 'bizkaia',
      territory_code: '48',
      tbai_license: 'LIC',
      series: 'A',
    });
  });

  it('omits optional fields that were not sent', () => {
    const { certificate_id: _omit, ...noCert } = base;
    expect(validate(noCert)).toEqual({
      system: 'ticketbai',
      legal_name: 'Ejemplo SL',
      territory: 'gipuzkoa',
      territory_code: '20',
      tbai_license: 'TBAIGIPRE00000000123',
    });
  });

  it('accepts certificate_id missing (the sandbox signs with a generated certificate)', () => {
    expect(validate({ ...base, certificate_id: undefined }).certificate_id).toBeUndefined();
    expect(validate({ ...base, certificate_id: null }).certificate_id).toBeUndefined();
  });

  it.each([
    ['gipuzkoa', 'gipuzkoa', '20'],
    ['GIPUZKOA', 'gipuzkoa', '20'],
    ['araba', 'araba', '01'],
    ['Araba', 'araba', '01'],
    ['bizkaia', 'bizkaia', '48'],
    ['20', 'gipuzkoa', '20'],
    ['01', 'araba', '01'],
    ['48', 'bizkaia', '48'],
  ])('territory %s → %s / %s', (territory, name, code) => {
    const out = validate({ ...base, territory });
    expect(out.territory).toBe(name);
    expect(out.territory_code).toBe(code);
  });

  it('accepts a territory_code that agrees with territory', () => {
    expect(validate({ ...base, territory: 'araba', territory_code: '01' }).territory_code).toBe('01');
    expect(validate({ ...base, territory: '48', territory_code: ' 48 ' }).territory).toBe('bizkaia');
  });

  it.each([
    [undefined, 'Spain locations require country_config with system field (ticketbai, verifactu or sii)'],
    [{ ...base, system: undefined }, 'Spain locations require country_config with system field (ticketbai, verifactu or sii)'],
    [{ ...base, system: 'verifactu' }, 'Spain country_config.system must be "ticketbai", "verifactu" or "sii"'],
    [[], 'country_config must be an object'],
    [{ ...base, tbai: 'x' }, 'country_config.tbai is not a known field for ticketbai'],
    [{ ...base, software_nif: 'x' }, 'country_config.software_nif is not a known field for ticketbai'],
    [{ ...base, legal_name: undefined }, 'country_config.legal_name is required for Spain locations'],
    [{ ...base, legal_name: '  ' }, 'country_config.legal_name is required for Spain locations'],
    [{ ...base, legal_name: 5 }, 'country_config.legal_name must be a string'],
    [{ ...base, certificate_id: 5 }, 'country_config.certificate_id must be a string'],
    [{ ...base, tsa_url: 'http://tsa.example.com' }, 'country_config.tsa_url must be an https URL'],
    [{ ...base, tsa_url: 'nope' }, 'country_config.tsa_url must be an https URL'],
    [{ ...base, territory: undefined }, 'country_config.territory is required for ticketbai'],
    [{ ...base, territory: '' }, 'country_config.territory is required for ticketbai'],
    [{ ...base, territory: 'navarra' }, 'country_config.territory must be one of gipuzkoa, araba, bizkaia (or 20, 01, 48)'],
    [{ ...base, territory: '1' }, 'country_config.territory must be one of gipuzkoa, araba, bizkaia (or 20, 01, 48)'],
    [{ ...base, territory: 20 }, 'country_config.territory must be one of gipuzkoa, araba, bizkaia (or 20, 01, 48)'],
    [{ ...base, territory: 'gipuzkoa', territory_code: '48' }, 'country_config.territory_code does not match territory'],
    [{ ...base, territory: 'gipuzkoa', territory_code: 20 }, 'country_config.territory_code does not match territory'],
    [{ ...base, tbai_license: undefined }, 'country_config.tbai_license is required for ticketbai'],
    [{ ...base, tbai_license: ' ' }, 'country_config.tbai_license is required for ticketbai'],
    [{ ...base, series: 1 }, 'country_config.series must be a string'],
    // LicenciaTBAI and SerieFactura are TextMax20Type: longer values made every record schema-invalid.
    [{ ...base, tbai_license: 'TBAIGIPRE000000001234' }, LICENSE_INVALID],
    [{ ...base, tbai_license: 'TBAI GIPRE' }, LICENSE_INVALID],
    [{ ...base, series: 'S'.repeat(21) }, SERIES_INVALID],
    [{ ...base, series: 'A B' }, SERIES_INVALID],
    [{ ...base, series: 'Ñ' }, SERIES_INVALID],
    [{ ...base, lroe_epigrafe: '659.4' }, EPIGRAFE_INVALID],
    [{ ...base, lroe_epigrafe: '12345678' }, EPIGRAFE_INVALID],
    [{ ...base, lroe_epigrafe: 6520 }, EPIGRAFE_INVALID],
  ])('refuses %j', (config, message) => {
    expect400(() => validate(config), message);
  });

  it('checks the location tax_id as a Spanish NIF', () => {
    expect(() => validate(base, '12345678Z')).not.toThrow();
    expect(() => validate(base, null)).not.toThrow();
    expect400(() => validate(base, '12345678A'), 'tax_id must be a valid Spanish NIF');
  });

  describe('lroe_epigrafe (Bizkaia natural persons: LROE Modelo 140)', () => {
    const bizkaia = { ...base, territory: 'bizkaia' };
    it('required in Bizkaia when the tax_id is a natural person\'s NIF (DNI, or K/L/M/X/Y/Z)', () => {
      for (const nif of ['12345678Z', 'X1234567L', 'K1234567L']) expect400(() => validate(bizkaia, nif), EPIGRAFE_REQUIRED);
      expect400(() => validate({ ...bizkaia, lroe_epigrafe: '  ' }, '12345678Z'), EPIGRAFE_REQUIRED);
    });
    it('stored trimmed when given: 1 to 7 digits', () => {
      expect(validate({ ...bizkaia, lroe_epigrafe: ' 6520 ' }, '12345678Z')).toMatchObject({ territory: 'bizkaia', lroe_epigrafe: '6520' });
      expect(validate({ ...bizkaia, lroe_epigrafe: '1234567' }, '12345678Z').lroe_epigrafe).toBe('1234567');
    });
    it('not required for a company NIF, without tax_id, or outside Bizkaia (accepted there, unused)', () => {
      expect(validate(bizkaia, 'B12345674')).not.toHaveProperty('lroe_epigrafe');
      expect(validate(bizkaia, null)).not.toHaveProperty('lroe_epigrafe');
      expect(validate(base, '12345678Z')).not.toHaveProperty('lroe_epigrafe');
      expect(validate({ ...base, lroe_epigrafe: '6520' }, '12345678Z').lroe_epigrafe).toBe('6520');
    });
  });
});
