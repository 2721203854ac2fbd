import { describe, it, expect } from 'vitest';
import { INSTALLATION_NUMBER_INVALID, SOFTWARE_NIF_INVALID, validateVerifactuConfig } from './config.ts';
import { verifactu } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { LEGAL_NAME_TOO_LONG } from '../es/common.ts';

const base = { system: 'verifactu', legal_name: 'Ejemplo SL', certificate_id: 'cert_1', software_nif: 'B12345674' };
const validate = (config: unknown, taxId: string | null = null) => validateVerifactuConfig({ config, taxId });

describe('es-verifactu config', () => {
  it('plug-in', () => {
    expect(verifactu).toMatchObject({ key: 'es-verifactu', country: 'ES', secretConfigFields: [] });
    expect(verifactu.validateConfig).toBe(validateVerifactuConfig);
  });

  it('normalizes a full config', () => {
    expect(validate({ ...base, legal_name: ' Ejemplo SL ', installation_number: ' 001 ' }, 'X1234567L')).toEqual({
      system: 'verifactu',
      legal_name: 'Ejemplo SL',
      certificate_id: 'cert_1',
      software_nif: 'B12345674',
      installation_number: '001',
    });
  });

  it('accepts a config without certificate_id or installation_number', () => {
    expect(validate({ system: 'verifactu', legal_name: 'E', software_nif: 'FR12345678901' })).toEqual({
      system: 'verifactu',
      legal_name: 'E',
      software_nif: 'FR12345678901',
    });
  });

  it('software_nif: a Spanish NIF (ES prefix allowed) or an EU VAT number; anything else went out in every record as an unidentifiable NIF-IVA', () => {
    for (const ok of ['B12345674', 'ESB12345674', 'DE123456789', 'EL094259216']) expect(validate({ ...base, software_nif: ok })).toMatchObject({ software_nif: ok });
    for (const bad of ['N', 'nope', 'B12345675', '12-3456789', 'US123456789', 'X'.repeat(30)]) expect400(() => validate({ ...base, software_nif: bad }), SOFTWARE_NIF_INVALID);
  });

  it.each([
    [null, 'Spain locations require country_config with system field (ticketbai, verifactu or sii)'],
    [{ legal_name: 'E' }, 'Spain locations require country_config with system field (ticketbai, verifactu or sii)'],
    [{ ...base, system: 'VERIFACTU' }, 'Spain country_config.system must be "ticketbai", "verifactu" or "sii"'],
    [{ ...base, system: 3 }, 'Spain country_config.system must be "ticketbai", "verifactu" or "sii"'],
    [{ ...base, tsa_url: 'https://tsa.example.com' }, 'country_config.tsa_url is not a known field for verifactu'],
    [{ ...base, territory: 'araba' }, 'country_config.territory is not a known field for verifactu'],
    [{ ...base, legal_name: undefined }, 'country_config.legal_name is required for Spain locations'],
    [{ ...base, software_nif: undefined }, 'country_config.software_nif is required for verifactu'],
    [{ ...base, software_nif: '' }, 'country_config.software_nif is required for verifactu'],
    [{ ...base, installation_number: 7 }, 'country_config.installation_number must be a string'],
    // The issuer's name is TextMax120Type in every Spanish record: it was cut silently.
    [{ ...base, legal_name: 'Ñ'.repeat(121) }, LEGAL_NAME_TOO_LONG],
    // NumeroInstalacion is TextMax100Type: it was cut silently.
    [{ ...base, installation_number: 'I'.repeat(101) }, INSTALLATION_NUMBER_INVALID],
  ])('refuses %j', (config, message) => {
    expect400(() => validate(config), message);
  });

  it('a legal name of 120 characters (code points) is accepted', () => {
    expect(validate({ ...base, legal_name: 'Ñ'.repeat(120) })).toMatchObject({ legal_name: 'Ñ'.repeat(120) });
  });

  it('refuses an invalid tax_id', () => {
    expect400(() => validate(base, 'B12345675'), 'tax_id must be a valid Spanish NIF');
  });
});
