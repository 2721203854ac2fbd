import { describe, expect, it } from 'vitest';
import { localDateTimeWithOffset } from '../shared/dates.ts';
import { huellaAlta, huellaAnulacion } from './huella.ts';

// The three examples of AEAT's hash specification v0.1.2 §6 (FORMATS.md §9).
const case1 = {
  IDEmisorFactura: '89890001K', NumSerieFactura: '12345678/G33', FechaExpedicionFactura: '01-01-2024', TipoFactura: 'F1',
  CuotaTotal: '12.35', ImporteTotal: '123.45', Huella: '', FechaHoraHusoGenRegistro: '2024-01-01T19:20:30+01:00',
};
const H1 = '3C464DAF61ACB827C65FDA19F352A4E3BDC2C640E9E9FC4CC058073F38F12F60';
const H2 = 'F7B94CFD8924EDFF273501B01EE5153E4CE8F259766F88CF6ACB8935802A2B97';
const H3 = '177547C0D57AC74748561D054A9CEC14B4C4EA23D1BEFD6F2E69E3A388F90C68';

describe('VERI*FACTU huella (official vectors)', () => {
  it('case 1: first alta', () => expect(huellaAlta(case1)).toBe(H1));
  it('case 2: chained alta', () =>
    expect(huellaAlta({ ...case1, NumSerieFactura: '12345679/G34', Huella: H1, FechaHoraHusoGenRegistro: '2024-01-01T19:20:35+01:00' })).toBe(H2));
  it('case 3: anulación', () =>
    expect(huellaAnulacion({
      IDEmisorFacturaAnulada: '89890001K', NumSerieFacturaAnulada: '12345679/G34', FechaExpedicionFacturaAnulada: '01-01-2024',
      Huella: H2, FechaHoraHusoGenRegistro: '2024-01-01T19:20:40+01:00',
    })).toBe(H3));
  it('trims values as the specification says', () => expect(huellaAlta({ ...case1, IDEmisorFactura: ' 89890001K ' })).toBe(H1));
});

describe('local time with offset', () => {
  it('Madrid in winter and summer', () => {
    expect(localDateTimeWithOffset(new Date('2024-01-01T18:20:30Z'), 'ES')).toBe('2024-01-01T19:20:30+01:00');
    expect(localDateTimeWithOffset(new Date('2024-07-01T18:20:30.999Z'), 'ES')).toBe('2024-07-01T20:20:30+02:00');
    expect(localDateTimeWithOffset(new Date('2024-07-01T18:20:30Z'), 'PT')).toBe('2024-07-01T19:20:30+01:00');
  });
});
