import { describe, it, expect } from 'vitest';
import { validateMyDataConfig } from './config.ts';
import { isValidAfm } from './afm.ts';
import { myData } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';

const AFM = '094259216';
const base = {
  afm: AFM,
  branch: 0,
  legal_name: 'Παράδειγμα ΑΕ',
  aade_user_id: 'user1',
  subscription_key: 'sk_123',
  env: 'sandbox',
  document_class: 'TypeA',
  default_series: 'A',
};
const validate = (config: unknown, taxId: string | null = null) => validateMyDataConfig({ config, taxId });

describe('AFM', () => {
  // 12345678: 1·256+2·128+3·64+4·32+5·16+6·8+7·4+8·2 = 1004, mod 11 = 3 → check 3.
  it.each(['094259216', '123456783', '090000045'])('accepts %s', (n) => {
    expect(isValidAfm(n)).toBe(true);
  });
  it.each(['094259217', '123456789', '000000000', '12345678', 'EL094259216'])('refuses %s', (n) => {
    expect(isValidAfm(n)).toBe(false);
  });
});

describe('gr-mydata config', () => {
  it('plug-in: subscription_key is a secret', () => {
    expect(myData).toMatchObject({ key: 'gr-mydata', country: 'GR', secretConfigFields: ['subscription_key'] });
    expect(myData.validateConfig).toBe(validateMyDataConfig);
  });

  it('normalizes a full config', () => {
    expect(validate({ ...base, afm: ` ${AFM} `, legal_name: ' Παράδειγμα ΑΕ ', default_series: ' A ' }, AFM)).toEqual(base);
  });

  it.each(['sandbox', 'production', 'provider_sandbox', 'provider_production'])('accepts env %s', (env) => {
    expect(validate({ ...base, env }).env).toBe(env);
  });

  it('accepts the limits exactly: branch 2147483647, a 50-character (Greek) series', () => {
    expect(validate({ ...base, branch: 2_147_483_647, default_series: 'Α'.repeat(50) })).toMatchObject({ branch: 2_147_483_647, default_series: 'Α'.repeat(50) });
  });

  it('accepts TypeB and a non-zero branch', () => {
    expect(validate({ ...base, document_class: 'TypeB', branch: 3 })).toMatchObject({ document_class: 'TypeB', branch: 3 });
  });

  it.each([
    [undefined, 'country_config.afm must be a valid 9-digit AFM'],
    [[1], 'country_config must be an object'],
    [{ ...base, afm: undefined }, 'country_config.afm must be a valid 9-digit AFM'],
    [{ ...base, afm: '094259217' }, 'country_config.afm must be a valid 9-digit AFM'],
    [{ ...base, afm: 94259216 }, 'country_config.afm must be a valid 9-digit AFM'],
    [{ ...base, branch: undefined }, 'country_config.branch must be an integer >= 0'],
    [{ ...base, branch: -1 }, 'country_config.branch must be an integer >= 0'],
    [{ ...base, branch: 1.5 }, 'country_config.branch must be an integer >= 0'],
    [{ ...base, branch: '0' }, 'country_config.branch must be an integer >= 0'],
    [{ ...base, legal_name: '' }, 'country_config.legal_name is required for Greek locations'],
    [{ ...base, aade_user_id: undefined }, 'country_config.aade_user_id is required'],
    [{ ...base, subscription_key: ' ' }, 'country_config.subscription_key is required'],
    [{ ...base, env: undefined }, 'country_config.env must be one of sandbox, production, provider_sandbox, provider_production'],
    [{ ...base, env: 'test' }, 'country_config.env must be one of sandbox, production, provider_sandbox, provider_production'],
    [{ ...base, document_class: 'typea' }, 'country_config.document_class must be TypeA or TypeB'],
    [{ ...base, document_class: undefined }, 'country_config.document_class must be TypeA or TypeB'],
    [{ ...base, default_series: undefined }, 'country_config.default_series is required'],
    [{ ...base, default_series: '' }, 'country_config.default_series is required'],
    [{ ...base, series: 'A' }, 'country_config.series is not a known field for myDATA'],
    // InvoicesDoc limits (xsd): branch xs:int, series at most 50 characters; the stub authority
    // took these, AADE refuses every document carrying them.
    [{ ...base, branch: 2 ** 31 }, 'country_config.branch must be at most 2147483647 (myDATA\'s branch is a 32-bit integer)'],
    [{ ...base, default_series: 'A'.repeat(51) }, 'country_config.default_series must be 1-50 characters without spaces'],
    [{ ...base, default_series: 'A B' }, 'country_config.default_series must be 1-50 characters without spaces'],
    // Sent as HTTP headers: a character a header cannot carry failed every submission.
    [{ ...base, aade_user_id: 'user\n1' }, 'country_config.aade_user_id must be printable ASCII characters (it is sent as an HTTP header)'],
    [{ ...base, aade_user_id: 'χρήστης' }, 'country_config.aade_user_id must be printable ASCII characters (it is sent as an HTTP header)'],
    [{ ...base, subscription_key: 'key\u0007' }, 'country_config.subscription_key must be printable ASCII characters (it is sent as an HTTP header)'],
  ])('refuses %j', (config, message) => {
    expect400(() => validate(config), message);
  });

  it('requires tax_id, when given, to equal afm', () => {
    expect(() => validate(base, AFM)).not.toThrow();
    expect400(() => validate(base, '123456783'), 'country_config.afm must equal tax_id');
  });

  it('refuses ":" and "#" in a new default_series (chain key separators); the stored one stays', () => {
    const message = 'country_config.default_series must not contain ":" or "#" (they separate the parts of the series\' chain key)';
    for (const series of ['A:live', 'A#annulments']) {
      expect400(() => validate({ ...base, default_series: series }), message);
      expect400(() => validateMyDataConfig({ config: { ...base, default_series: series }, taxId: null, stored: { ...base, default_series: 'A' } }), message);
      expect(validateMyDataConfig({ config: { ...base, default_series: series }, taxId: null, stored: { ...base, default_series: series } }).default_series).toBe(series);
    }
  });
});
