import { describe, it, expect } from 'vitest';
import { validateNf525Config } from './config.ts';
import { isValidSirenOrSiret } from './register-id.ts';
import { nf525 } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';

const validate = (config: unknown) => validateNf525Config({ config, taxId: null });
const base = { legal_name: 'Exemple SAS', register_id: '73282932000074' };

describe('SIREN / SIRET', () => {
  it.each(['732829320', '552100554', '73282932000074', '35600000000048'])('accepts %s', (n) => {
    expect(isValidSirenOrSiret(n)).toBe(true);
  });
  it('accepts a La Poste SIRET that only passes the digit-sum-mod-5 rule', () => {
    expect(isValidSirenOrSiret('35600000049837')).toBe(true);
  });
  it.each(['732829321', '73282932000075', '73282932100074', '7328293200', '35600000000012', 'A32829320'])('refuses %s', (n) => {
    expect(isValidSirenOrSiret(n)).toBe(false);
  });
});

describe('fr-nf525 config', () => {
  it('plug-in', () => {
    expect(nf525).toMatchObject({ key: 'fr-nf525', country: 'FR', secretConfigFields: [] });
    expect(nf525.validateConfig).toBe(validateNf525Config);
  });

  it('accepts a SIRET or a SIREN, trimmed, spaces removed from the number', () => {
    expect(validate(base)).toEqual(base);
    expect(validate({ legal_name: ' Exemple SAS ', register_id: ' 732 829 320 ' })).toEqual({
      legal_name: 'Exemple SAS',
      register_id: '732829320',
    });
    expect(validate({ ...base, register_id: '732 829 320 00074' }).register_id).toBe('73282932000074');
  });

  it.each([
    [undefined, 'country_config.legal_name is required for France locations'],
    [null, 'country_config.legal_name is required for France locations'],
    [{}, 'country_config.legal_name is required for France locations'],
    [{ register_id: '732829320' }, 'country_config.legal_name is required for France locations'],
    [{ legal_name: 'E' }, 'country_config.register_id is required for France locations'],
    [{ legal_name: 'E', register_id: ' ' }, 'country_config.register_id is required for France locations'],
    [{ legal_name: 'E', register_id: '732829321' }, 'country_config.register_id must be a 9-digit SIREN or 14-digit SIRET'],
    [{ legal_name: 'E', register_id: '7328293200007' }, 'country_config.register_id must be a 9-digit SIREN or 14-digit SIRET'],
    [{ legal_name: 'E', register_id: 'FR732829320' }, 'country_config.register_id must be a 9-digit SIREN or 14-digit SIRET'],
    [{ legal_name: 'E', register_id: 732829320 }, 'country_config.register_id must be a string'],
    [{ ...base, siret: 'x' }, 'country_config.siret is not a known field for NF525'],
    ['x', 'country_config must be an object'],
  ])('refuses %j', (config, message) => {
    expect400(() => validate(config), message);
  });
});
