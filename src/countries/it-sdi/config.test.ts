import { describe, it, expect } from 'vitest';
import { validateSdiConfig } from './config.ts';
import { sdi } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';

const PIVA = '01234567897';
const base = { codice_fiscale: PIVA, formato_trasmissione: 'FPR12', regime_fiscale: 'RF01' };
const validate = (config: unknown, taxId: string | null = PIVA) => validateSdiConfig({ config, taxId });
const ROUTING =
  'Italian locations require country_config with formato_trasmissione (SDI) or system "dc" (Documento Commerciale)';

describe('it-sdi config', () => {
  it('plug-in', () => {
    expect(sdi).toMatchObject({ key: 'it-sdi', country: 'IT', secretConfigFields: [] });
    expect(sdi.validateConfig).toBe(validateSdiConfig);
  });

  it('normalizes a full config and stores the resolved partita_iva', () => {
    expect(
      validate({
        system: 'sdi',
        codice_fiscale: ' RSSMRA85T10A562S ',
        formato_trasmissione: ' FPA12 ',
        regime_fiscale: 'RF19',
        api_credential_id: ' cred_1 ',
        progressivo_invio: 'A0001',
        partita_iva: PIVA,
      }),
    ).toEqual({
      codice_fiscale: 'RSSMRA85T10A562S',
      formato_trasmissione: 'FPA12',
      regime_fiscale: 'RF19',
      api_credential_id: 'cred_1',
      progressivo_invio: 'A0001',
      partita_iva: PIVA,
    });
  });

  it('the seller\'s name and Sede (optional): legal_name, indirizzo, cap, comune, provincia', () => {
    const sede = { legal_name: 'Trattoria Roma Srl', indirizzo: 'Via Roma 1', cap: '00184', comune: 'Roma', provincia: 'RM' };
    expect(validate({ ...base, ...sede })).toEqual({ ...base, ...sede, partita_iva: PIVA });
    expect400(() => validate({ ...base, cap: '184' }), 'country_config.cap must be 5 digits');
    expect400(() => validate({ ...base, provincia: 'Roma' }), 'country_config.provincia must be 2 capital letters (e.g. RM)');
    expect400(() => validate({ ...base, legal_name: 'x'.repeat(81) }), 'country_config.legal_name must be 1-80 Latin characters');
  });

  it('accepts the minimal config', () => {
    expect(validate(base)).toEqual({ ...base, partita_iva: PIVA });
  });

  it.each(['RF01', 'RF02', 'RF04', 'RF09', 'RF10', 'RF19'])('accepts regime_fiscale %s', (regime_fiscale) => {
    expect(validate({ ...base, regime_fiscale }).regime_fiscale).toBe(regime_fiscale);
  });

  it.each([
    [undefined, ROUTING],
    [{ ...base, system: 'rt' }, ROUTING],
    [5, 'country_config must be an object'],
    [{ ...base, cau_code: 'AB12' }, 'country_config.cau_code is not a known field for SDI'],
    [{ ...base, codice_fiscale: undefined }, 'country_config.codice_fiscale must be 11-16 alphanumeric characters'],
    [{ ...base, codice_fiscale: 'abc' }, 'country_config.codice_fiscale must be 11-16 alphanumeric characters'],
    [{ ...base, formato_trasmissione: 'FPR13' }, 'formato_trasmissione must be FPA12 or FPR12'],
    [{ ...base, formato_trasmissione: 'fpr12' }, 'formato_trasmissione must be FPA12 or FPR12'],
    [{ system: 'sdi', codice_fiscale: PIVA, regime_fiscale: 'RF01' }, 'formato_trasmissione must be FPA12 or FPR12'],
    [{ ...base, regime_fiscale: undefined }, 'country_config.regime_fiscale must be RF01 to RF19'],
    [{ ...base, regime_fiscale: 'RF00' }, 'country_config.regime_fiscale must be RF01 to RF19'],
    [{ ...base, regime_fiscale: 'RF20' }, 'country_config.regime_fiscale must be RF01 to RF19'],
    [{ ...base, regime_fiscale: 'RF1' }, 'country_config.regime_fiscale must be RF01 to RF19'],
    [{ ...base, progressivo_invio: 'ABCDEF' }, 'country_config.progressivo_invio must be 1-5 alphanumeric characters'],
    [{ ...base, progressivo_invio: 'A_1' }, 'country_config.progressivo_invio must be 1-5 alphanumeric characters'],
    [{ ...base, api_credential_id: 1 }, 'country_config.api_credential_id must be a string'],
  ])('refuses %j', (config, message) => {
    expect400(() => validate(config), message);
  });

  it('applies the partita IVA rules', () => {
    expect400(() => validate(base, null), 'partita_iva is required');
    expect(validate({ ...base, partita_iva: PIVA }, null).partita_iva).toBe(PIVA);
    expect400(() => validate(base, '123'), 'partita_iva must be exactly 11 digits');
    expect400(() => validate({ ...base, partita_iva: '12345678903' }), 'country_config.partita_iva must equal tax_id');
    expect400(() => validate(base, '01234567890'), 'partita_iva check digit is invalid');
  });
});
