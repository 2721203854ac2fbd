import { describe, it, expect } from 'vitest';
import { validateSaftConfig } from './config.ts';
import { isValidPortugueseNif } from './nif.ts';
import { saft } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';

const FT = { prefix: 'A', atcud_code: 'AAJFJMVNTN' };
const base = { series: { FT } };
const validate = (config: unknown, taxId: string | null = null) => validateSaftConfig({ config, taxId });

describe('Portuguese NIF', () => {
  // 12345678: 1·9+2·8+3·7+4·6+5·5+6·4+7·3+8·2 = 156, 156 mod 11 = 2 → check 9.
  it.each(['123456789', '501442600', '500000000', '999999990'])('accepts %s', (n) => {
    expect(isValidPortugueseNif(n)).toBe(true);
  });
  it.each(['123456780', '000000000', '12345678', '1234567890', 'PT123456789'])('refuses %s', (n) => {
    expect(isValidPortugueseNif(n)).toBe(false);
  });
});

describe('pt-saft config', () => {
  it('plug-in', () => {
    expect(saft).toMatchObject({ key: 'pt-saft', country: 'PT', secretConfigFields: [] });
    expect(saft.validateConfig).toBe(validateSaftConfig);
  });

  it('normalizes a full config', () => {
    expect(
      validate(
        {
          software_certificate_number: ' 1234 ',
          at_certificate_id: ' cert_1 ',
          series: {
            FT: { prefix: ' 2025A ', atcud_code: ' AAJFJMVNTN ' },
            FS: { prefix: 'B', atcud_code: 'ABCD1234' },
            FR: { prefix: 'C', atcud_code: 'ABCD1235' },
            NC: { prefix: 'D', atcud_code: 'ABCD1236' },
            ND: { prefix: 'E', atcud_code: 'ABCD1237' },
          },
        },
        '123456789',
      ),
    ).toEqual({
      software_certificate_number: '1234',
      at_certificate_id: 'cert_1',
      series: {
        FT: { prefix: '2025A', atcud_code: 'AAJFJMVNTN' },
        FS: { prefix: 'B', atcud_code: 'ABCD1234' },
        FR: { prefix: 'C', atcud_code: 'ABCD1235' },
        NC: { prefix: 'D', atcud_code: 'ABCD1236' },
        ND: { prefix: 'E', atcud_code: 'ABCD1237' },
      },
    });
  });

  it('accepts a series at the limits exactly: a 46-character prefix (InvoiceNo of 60 with a 10-digit number), a 59-character code', () => {
    const entry = { prefix: 'Ç'.repeat(46), atcud_code: 'A'.repeat(59) };
    expect(validate({ series: { FT: entry } }).series).toEqual({ FT: entry });
    expect(`FT ${entry.prefix}/${'9'.repeat(10)}`).toHaveLength(60);
  });

  it('accepts series without FT, and a numeric certificate number', () => {
    expect(validate({ series: { FS: { prefix: 'B', atcud_code: 'ABCD1234' } } })).toEqual({
      series: { FS: { prefix: 'B', atcud_code: 'ABCD1234' } },
    });
    expect(validate({ ...base, software_certificate_number: 9999 }).software_certificate_number).toBe('9999');
  });

  it.each([
    [undefined, 'country_config.series is required'],
    [{}, 'country_config.series is required'],
    [{ series: null }, 'country_config.series is required'],
    [{ series: {} }, 'country_config.series is required'],
    [{ series: [] }, 'country_config.series must be an object'],
    [{ series: 'FT' }, 'country_config.series must be an object'],
    [{ series: { FT: 'A' } }, 'country_config.series[FT] must be an object'],
    [{ series: { FT: { prefix: 'A' } } }, 'country_config.series[FT].atcud_code is required'],
    [{ series: { FT: { prefix: 'A', atcud_code: ' ' } } }, 'country_config.series[FT].atcud_code is required'],
    [{ series: { NC: { prefix: 'A' } } }, 'country_config.series[NC].atcud_code is required'],
    [{ series: { FT: { atcud_code: 'AAJFJMVNTN' } } }, 'country_config.series[FT].prefix is required'],
    [{ series: { FT: { prefix: 'A B', atcud_code: 'AAJFJMVNTN' } } }, 'country_config.series[FT].prefix must not contain spaces, "/" or "^"'],
    [{ series: { FT: { prefix: 'A/B', atcud_code: 'AAJFJMVNTN' } } }, 'country_config.series[FT].prefix must not contain spaces, "/" or "^"'],
    // SAFTPT1.04_01.xsd InvoiceNo: `[^ ]+ [^/^ ]+/[0-9]+`, at most 60 characters; the printed
    // ATCUD at most 70 (QR field H). The sandbox took these; every document was invalid.
    [{ series: { FT: { prefix: 'A^B', atcud_code: 'AAJFJMVNTN' } } }, 'country_config.series[FT].prefix must not contain spaces, "/" or "^"'],
    [{ series: { FT: { prefix: 'A'.repeat(47), atcud_code: 'AAJFJMVNTN' } } }, 'country_config.series[FT].prefix must be at most 46 characters (the SAF-T InvoiceNo "<type> <prefix>/<number>" holds 60)'],
    [{ series: { FT: { prefix: 'A', atcud_code: 'A'.repeat(60) } } }, 'country_config.series[FT].atcud_code must be at most 59 characters (the printed ATCUD "<code>-<number>" holds 70)'],
    [{ series: { FT: { prefix: 'A', atcud_code: 'ABC1234' } } }, 'country_config.series[FT].atcud_code must be at least 8 alphanumeric characters'],
    [{ series: { FT: { prefix: 'A', atcud_code: 'ABCD-1234' } } }, 'country_config.series[FT].atcud_code must be at least 8 alphanumeric characters'],
    [{ series: { FT: { ...FT, number: 1 } } }, 'country_config.series[FT].number is not a known field for SAF-T PT'],
    [{ series: { GT: FT } }, 'country_config.series key GT is not a supported document type (FT, FS, FR, NC, ND)'],
    [{ series: { ft: FT } }, 'country_config.series key ft is not a supported document type (FT, FS, FR, NC, ND)'],
    [{ ...base, software_certificate_number: '12a' }, 'country_config.software_certificate_number must contain only digits'],
    [{ ...base, software_certificate_number: -1 }, 'country_config.software_certificate_number must contain only digits'],
    [{ ...base, at_certificate_id: 3 }, 'country_config.at_certificate_id must be a string'],
    [{ ...base, nif: '123456789' }, 'country_config.nif is not a known field for SAF-T PT'],
  ])('refuses %j', (config, message) => {
    expect400(() => validate(config), message);
  });

  it('refuses ":", "#" and "*" in a new prefix (chain key and QR separators); a stored prefix of the same type stays', () => {
    const message = 'country_config.series[FT].prefix must not contain ":", "#" or "*" (they separate the parts of its chain key and the fields of the QR code)';
    for (const prefix of ['A:live', 'A#annulments', 'A*B', ':', '#']) {
      expect400(() => validate({ series: { FT: { ...FT, prefix } } }), message);
      expect(validateSaftConfig({ config: { series: { FT: { ...FT, prefix } } }, taxId: null, stored: { series: { FT: { ...FT, prefix } } } }).series)
        .toEqual({ FT: { ...FT, prefix } });
    }
    // Stored under another type, or another prefix stored: a new chain, refused.
    expect400(() => validateSaftConfig({ config: { series: { FS: { ...FT, prefix: 'A:1' } } }, taxId: null, stored: { series: { FT: { ...FT, prefix: 'A:1' } } } }),
      message.replace('[FT]', '[FS]'));
    expect400(() => validateSaftConfig({ config: { series: { FT: { ...FT, prefix: 'A:2' } } }, taxId: null, stored: { series: { FT: { ...FT, prefix: 'A:1' } } } }), message);
    // What InvoiceNo allows otherwise stays allowed.
    expect(validate({ series: { FT: { ...FT, prefix: 'A-2026.x_1%' } } }).series).toEqual({ FT: { ...FT, prefix: 'A-2026.x_1%' } });
  });

  it('checks the location tax_id as a Portuguese NIF', () => {
    expect(() => validate(base, '501442600')).not.toThrow();
    expect400(() => validate(base, '123456780'), 'tax_id must be a valid Portuguese NIF');
  });
});
