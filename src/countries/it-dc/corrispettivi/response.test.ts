import { describe, expect, it } from 'vitest';
import { interpretAnswer, readEsito, retryAfterSeconds } from './response.ts';

const NOW = new Date('2026-01-16T01:00:00Z');
const esito = (inner: string) =>
  `<?xml version="1.0"?><ns2:EsitoOperazione xmlns:ns2="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/corrispettivi/v1.0" versione="1.0">${inner}<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"></ds:Signature></ns2:EsitoOperazione>`;
const res = (status: number, body: string, headers: Record<string, string> = {}) => ({ status, headers, body: Buffer.from(body) });

describe('EsitoOperazione and the HTTP answer → DC codes', () => {
  it('no Errori: accepted with the IdOperazione (leading zeros kept)', () => {
    expect(interpretAnswer(res(200, esito('<IdOperazione>000123</IdOperazione>')), NOW)).toEqual({ kind: 'accepted', idOperazione: '000123', httpStatus: 200 });
  });

  it('Errore 00000 → 0100; any other code → 0200; AdE code and every description kept', () => {
    const schema = interpretAnswer(res(200, esito('<IdOperazione>1</IdOperazione><Errori><Errore><Codice>00000</Codice><Descrizione>Formato</Descrizione></Errore></Errori>')), NOW);
    expect(schema).toMatchObject({ kind: 'rejected', code: '0100', authorityCode: '00000', authorityMessage: '00000: Formato', idOperazione: '1' });
    const two = interpretAnswer(res(200, esito('<IdOperazione>2</IdOperazione><Errori><Errore><Codice>00200</Codice><Descrizione>Non attivo</Descrizione></Errore><Errore><Codice>99999</Codice><Descrizione>Firma</Descrizione></Errore></Errori>')), NOW);
    expect(two).toMatchObject({ kind: 'rejected', code: '0200', authorityCode: '00200', authorityMessage: '00200: Non attivo; 99999: Firma' });
    expect(two.kind === 'rejected' && two.message).toBe('Validation error. (AdE 00200: 00200: Non attivo; 99999: Firma)');
  });

  it('429 → 0429 retried after Retry-After; 403 → 0403 rejected; 5xx and unreadable 200 → 0500 retried; another 4xx → 0100', () => {
    expect(interpretAnswer(res(429, '', { 'retry-after': '90' }), NOW)).toMatchObject({ kind: 'retry', code: '0429', retryAfterSeconds: 90 });
    expect(interpretAnswer(res(403, 'no'), NOW)).toMatchObject({ kind: 'rejected', code: '0403', authorityCode: 'HTTP 403' });
    expect(interpretAnswer(res(502, '<html/>'), NOW)).toMatchObject({ kind: 'retry', code: '0500', authorityCode: 'HTTP 502' });
    expect(interpretAnswer(res(200, '<html>proxy</html>'), NOW)).toMatchObject({ kind: 'retry', code: '0500' });
    expect(interpretAnswer(res(400, 'bad'), NOW)).toMatchObject({ kind: 'rejected', code: '0100', authorityCode: 'HTTP 400' });
  });

  it('reads Retry-After as seconds or a date; EsitoOperazione only when it has an IdOperazione', () => {
    expect(retryAfterSeconds('120', NOW)).toBe(120);
    expect(retryAfterSeconds('Fri, 16 Jan 2026 01:02:00 GMT', NOW)).toBe(120);
    expect(retryAfterSeconds(undefined, NOW)).toBeUndefined();
    expect(readEsito(esito('<IdOperazione></IdOperazione>'))).toBeUndefined();
    expect(readEsito('not xml <')).toBeUndefined();
  });
});
