import { describe, it, expect } from 'vitest';
import { validateSiiConfig } from './config.ts';
import { sii } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';

const base = { system: 'sii', legal_name: 'Ejemplo SA', certificate_id: 'cert_1' };
const validate = (config: unknown, taxId: string | null = null) => validateSiiConfig({ config, taxId });

describe('es-sii config', () => {
  it('plug-in', () => {
    expect(sii).toMatchObject({ key: 'es-sii', country: 'ES', secretConfigFields: [] });
    expect(sii.validateConfig).toBe(validateSiiConfig);
  });

  it('accepts system, legal_name and certificate_id', () => {
    expect(validate({ ...base, legal_name: ' Ejemplo SA ' }, 'A13585625')).toEqual(base);
  });

  it('accepts no certificate_id', () => {
    expect(validate({ system: 'sii', legal_name: 'E' })).toEqual({ system: 'sii', legal_name: 'E' });
  });

  it.each([
    [undefined, 'Spain locations require country_config with system field (ticketbai, verifactu or sii)'],
    [{ ...base, system: 'ticketbai' }, 'Spain country_config.system must be "ticketbai", "verifactu" or "sii"'],
    [{ ...base, tsa_url: 'https://tsa.example.com' }, 'country_config.tsa_url is not a known field for sii'],
    [{ ...base, software_nif: 'x' }, 'country_config.software_nif is not a known field for sii'],
    [{ ...base, legal_name: null }, 'country_config.legal_name is required for Spain locations'],
    ['sii', 'country_config must be an object'],
  ])('refuses %j', (config, message) => {
    expect400(() => validate(config), message);
  });

  it('refuses an invalid tax_id', () => {
    expect400(() => validate(base, 'not-a-nif'), 'tax_id must be a valid Spanish NIF');
  });
});
