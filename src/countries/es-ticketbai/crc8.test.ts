import { describe, it, expect } from 'vitest';
import { crc8, crc8Text } from './crc8.ts';
import { qrBaseUrl, tbaiId, tbaiQrUrl } from './tbai.ts';

// Vectors: FORMATS.md §9 (TicketBAI spec v1.1 §4.3.2 / §4.3.3, and the official Gipuzkoa samples).
describe('TicketBAI CRC-8 (CRC-8/SMBUS)', () => {
  it('standard check value: "123456789" → 0xF4 (244)', () => {
    expect(crc8('123456789')).toBe(0xf4);
    expect(crc8Text('123456789')).toBe('244');
  });

  it('spec §4.3.2: the identifier example → 237', () => {
    expect(crc8Text('TBAI-00000006Y-251019-btFpwP8dcLGAF-')).toBe('237');
    expect(tbaiId('00000006Y', '251019', 'btFpwP8dcLGAFxxxxxxxx')).toBe('TBAI-00000006Y-251019-btFpwP8dcLGAF-237');
  });

  it('spec §4.3.3: the QR URL example → cr=007 (3 digits, zero-padded)', () => {
    expect(crc8Text('https://batuz.eus/QRTBAI/?id=TBAI-00000006Y-251019-btFpwP8dcLGAF-237&s=T&nf=27174&i=4.70')).toBe('007');
    const url = tbaiQrUrl(qrBaseUrl('bizkaia', 'live'), {
      id: 'TBAI-00000006Y-251019-btFpwP8dcLGAF-237',
      series: 'T',
      number: '27174',
      total: '4.70',
    });
    expect(url).toBe('https://batuz.eus/QRTBAI/?id=TBAI-00000006Y-251019-btFpwP8dcLGAF-237&s=T&nf=27174&i=4.70&cr=007');
  });

  it('Gipuzkoa sample 01: identifier and QR', () => {
    expect(tbaiId('99999974E', '290224', 'Yl3mXsALUBz6H')).toBe('TBAI-99999974E-290224-Yl3mXsALUBz6H-135');
    expect(
      tbaiQrUrl(qrBaseUrl('gipuzkoa', 'live'), {
        id: 'TBAI-99999974E-290224-Yl3mXsALUBz6H-135',
        series: 'TB-2024-S',
        number: '1',
        total: '1064.8',
      }),
    ).toBe('https://tbai.egoitza.gipuzkoa.eus/qr/?id=TBAI-99999974E-290224-Yl3mXsALUBz6H-135&s=TB-2024-S&nf=1&i=1064.8&cr=161');
  });

  it('Gipuzkoa sample 02: a "+" in the signature part; URL-encoded as %2B in the QR', () => {
    const id = tbaiId('99999974E', '290224', 'fJvTaW+c1iXrl');
    expect(id).toBe('TBAI-99999974E-290224-fJvTaW+c1iXrl-209');
    const url = tbaiQrUrl(qrBaseUrl('gipuzkoa', 'test'), { id, series: null, number: '2', total: '1.00' });
    expect(url).toContain('id=TBAI-99999974E-290224-fJvTaW%2Bc1iXrl-209&nf=2');
    expect(url).not.toContain('&s=');
  });
});
