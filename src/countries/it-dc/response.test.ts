import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, xsdValidate } from '../../../test/support/xml-tools.ts';
import { esitoDocumentoXml, esitoOperazioneXml } from './answers.ts';
import { resultOutcome, sendOutcome, specCodeOf, DC_POLL_AFTER_SECONDS, DC_POLL_ATTEMPTS, DC_POLL_HORIZON_SECONDS, dcPollAfterSeconds } from './response.ts';

const ok = (body: string) => ({ status: 200, body });
const AT = '2026-01-15T10:00:05+01:00';

describe('AdE answers (the stub and the fake write them, response.ts reads them)', () => {
  it.skipIf(!HAVE_SCHEMAS)('the answer documents validate against their official XSDs', () => {
    for (const xml of [
      esitoOperazioneXml({ idOperazione: '42' }),
      esitoOperazioneXml({ idOperazione: '42', errors: [{ codice: '00000', descrizione: 'schema' }] }),
    ]) {
      const r = xsdValidate(xml, 'it/corrispettivi/CorrispettiviMessaggiTypes_v1.0.xsd');
      expect(r.ok, r.output).toBe(true);
    }
    for (const xml of [
      esitoDocumentoXml({ idOperazione: '42', at: AT, esito: 'AC', documents: 1 }),
      esitoDocumentoXml({ idOperazione: '42', at: AT, esito: 'SC', documents: 1, errors: [{ codice: '00308', descrizione: 'pagamenti' }] }),
      esitoDocumentoXml({ idOperazione: '42', at: AT, esito: 'SE', documents: 1, remarks: { numeroProgressivo: '0001-0001', dataOra: AT, errors: [{ codice: '00307', descrizione: 'data' }] } }),
    ]) {
      const r = xsdValidate(xml, 'it/corrispettivi/DocCommercialiLotteriaEsitoTypes_v1.0.xsd');
      expect(r.ok, r.output).toBe(true);
    }
  });

  it('AdE codes map to the spec\'s: 00000/99999 non-compliant, 00302 server error, the rest validation; spec codes stay', () => {
    expect(['00000', '99999', '00302', '00308', '00200', '0403'].map(specCodeOf)).toEqual(['0100', '0100', '0500', '0200', '0200', '0403']);
  });

  it('send: taken → sent with the operation id, polled later', () => {
    expect(sendOutcome(ok(esitoOperazioneXml({ idOperazione: '900001' })))).toEqual({
      kind: 'sent', reference: '900001', upstreamId: '900001', pollAfterSeconds: DC_POLL_AFTER_SECONDS,
      response: { http_status: 200, IdOperazione: '900001' },
    });
  });

  it('send: refused at once with AdE errors (kept), duplicate file = success', () => {
    const refused = sendOutcome(ok(esitoOperazioneXml({ idOperazione: '9', errors: [{ codice: '00000', descrizione: 'Il file non rispetta lo schema' }] })));
    expect(refused).toMatchObject({ kind: 'rejected', code: '0100', message: expect.stringContaining('00000 Il file non rispetta lo schema') });
    expect(refused).toMatchObject({ response: { ade_errors: [{ codice: '00000', descrizione: 'Il file non rispetta lo schema' }] } });
    expect(sendOutcome(ok(esitoOperazioneXml({ idOperazione: '9', errors: [{ codice: '00306', descrizione: 'duplicato' }] })))).toMatchObject({ kind: 'duplicate' });
    expect(sendOutcome(ok(esitoOperazioneXml({ idOperazione: '9', errors: [{ codice: '00302', descrizione: 'non disponibile' }] })))).toMatchObject({ kind: 'retry_later', code: '0500' });
  });

  it('send: HTTP 403 → 0403 failed, 429 → 0429 retried, 5xx → 0500 retried, unreadable 4xx → 0100', () => {
    expect(sendOutcome({ status: 403, body: '' })).toMatchObject({ kind: 'rejected', code: '0403' });
    expect(sendOutcome({ status: 429, body: '' })).toMatchObject({ kind: 'retry_later', code: '0429' });
    expect(sendOutcome({ status: 503, body: '<html/>' })).toMatchObject({ kind: 'retry_later', code: '0500' });
    expect(sendOutcome({ status: 400, body: 'nope' })).toMatchObject({ kind: 'rejected', code: '0100' });
    expect(sendOutcome({ status: 200, body: 'not xml <' })).toMatchObject({ kind: 'retry_later', code: '0500' });
  });

  it('result: AC success, SE success with warnings, SC failed with the errors; 404/202 not ready yet', () => {
    expect(resultOutcome(ok(esitoDocumentoXml({ idOperazione: '7', at: AT, esito: 'AC', documents: 1 })), '7')).toMatchObject({
      kind: 'accepted', upstreamId: '7', response: { Esito: 'AC', IdOperazione: '7' },
    });
    const se = resultOutcome(ok(esitoDocumentoXml({ idOperazione: '7', at: AT, esito: 'SE', documents: 1, remarks: { numeroProgressivo: '0001-0001', dataOra: AT, errors: [{ codice: '00307', descrizione: 'data futura' }] } })), '7');
    expect(se).toMatchObject({ kind: 'accepted', warnings: ['00307 data futura'] });
    expect(resultOutcome(ok(esitoDocumentoXml({ idOperazione: '7', at: AT, esito: 'SC', documents: 1, errors: [{ codice: '00308', descrizione: 'pagamenti incoerenti' }] })), '7')).toMatchObject({
      kind: 'rejected', code: '0200', response: { Esito: 'SC', ade_errors: [{ codice: '00308', descrizione: 'pagamenti incoerenti' }] },
    });
    expect(resultOutcome({ status: 404, body: '' }, '7')).toMatchObject({ kind: 'sent', reference: '7', pollAfterSeconds: DC_POLL_AFTER_SECONDS });
    expect(resultOutcome({ status: 202, body: '' }, '7')).toMatchObject({ kind: 'sent' });
    expect(resultOutcome({ status: 500, body: '' }, '7')).toMatchObject({ kind: 'retry_later', code: '0500' });
    expect(resultOutcome({ status: 403, body: '' }, '7')).toMatchObject({ kind: 'rejected', code: '0403' });
  });
});

describe('the result poll horizon', () => {
  it('60 s for 10 polls, then doubling to an hour; DC_POLL_ATTEMPTS polls reach 48 h and no fewer would', () => {
    expect([1, 10, 11, 12, 15, 16, 17, 60].map(dcPollAfterSeconds)).toEqual([60, 60, 120, 240, 1920, 3600, 3600, 3600]);
    const lastPollAt = (polls: number) => {
      let at = DC_POLL_AFTER_SECONDS;
      for (let k = 1; k < polls; k++) at += dcPollAfterSeconds(k);
      return at;
    };
    expect(DC_POLL_ATTEMPTS).toBe(63);
    expect(lastPollAt(DC_POLL_ATTEMPTS)).toBeGreaterThanOrEqual(DC_POLL_HORIZON_SECONDS);
    expect(lastPollAt(DC_POLL_ATTEMPTS - 1)).toBeLessThan(DC_POLL_HORIZON_SECONDS);
  });
});
