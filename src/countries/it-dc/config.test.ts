import { describe, it, expect } from 'vitest';
import { validateDcConfig } from './config.ts';
import { documentoCommerciale } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';

const PIVA = '12345678903';
const base = {
  system: 'dc',
  codice_fiscale: PIVA,
  legal_name: 'Esempio Srl',
  cau_code: 'A1B2',
  pem_matricola: '99AB-123456',
  seal_certificate_id: 'seal_1',
  partita_iva: PIVA,
};
const validate = (config: unknown, taxId: string | null = null) => validateDcConfig({ config, taxId });
const ROUTING =
  'Italian locations require country_config with formato_trasmissione (SDI) or system "dc" (Documento Commerciale)';

describe('it-dc config', () => {
  it('plug-in', () => {
    expect(documentoCommerciale).toMatchObject({ key: 'it-dc', country: 'IT', secretConfigFields: [] });
    expect(documentoCommerciale.validateConfig).toBe(validateDcConfig);
  });

  it('accepts the guide sample (partita_iva in the config) and trims', () => {
    expect(validate({ ...base, system: ' dc ', legal_name: ' Esempio Srl ' })).toEqual(base);
  });

  it('takes partita_iva from tax_id when the config has none', () => {
    const { partita_iva: _omit, ...noPiva } = base;
    expect(validate(noPiva, PIVA)).toEqual(base);
  });

  it.each([
    [undefined, ROUTING],
    [{ ...base, system: 'sdi' }, ROUTING],
    [{ ...base, formato_trasmissione: 'FPR12' }, 'country_config.formato_trasmissione is not a known field for Documento Commerciale'],
    [{ ...base, codice_fiscale: '' }, 'country_config.codice_fiscale must be 11-16 alphanumeric characters'],
    [{ ...base, legal_name: undefined }, 'country_config.legal_name is required for Documento Commerciale'],
    [{ ...base, legal_name: ' ' }, 'country_config.legal_name is required for Documento Commerciale'],
    [{ ...base, cau_code: undefined }, 'country_config.cau_code must be 4 alphanumeric characters'],
    [{ ...base, cau_code: 'ABC' }, 'country_config.cau_code must be 4 alphanumeric characters'],
    [{ ...base, cau_code: 'AB-C' }, 'country_config.cau_code must be 4 alphanumeric characters'],
    [{ ...base, pem_matricola: undefined }, 'country_config.pem_matricola must have the form XXXX-XXXXXX'],
    [{ ...base, pem_matricola: '99AB123456' }, 'country_config.pem_matricola must have the form XXXX-XXXXXX'],
    [{ ...base, pem_matricola: '99A-1234567' }, 'country_config.pem_matricola must have the form XXXX-XXXXXX'],
    [{ ...base, pem_matricola: '99AB-12345!' }, 'country_config.pem_matricola must have the form XXXX-XXXXXX'],
    [{ ...base, seal_certificate_id: undefined }, 'country_config.seal_certificate_id is required for Documento Commerciale'],
    [{ ...base, partita_iva: undefined }, 'partita_iva is required'],
    [{ ...base, partita_iva: '1234567890' }, 'partita_iva must be exactly 11 digits'],
    [{ ...base, partita_iva: '12345678901' }, 'partita_iva check digit is invalid'],
  ])('refuses %j', (config, message) => {
    expect400(() => validate(config), message);
  });

  it('requires config partita_iva to equal tax_id', () => {
    expect400(() => validate(base, '01234567897'), 'country_config.partita_iva must equal tax_id');
  });
});
