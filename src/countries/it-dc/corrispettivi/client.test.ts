import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAuthority, type FakeAuthority, type FakeRequest } from '../../../../test/support/fake-authority.ts';
import { closeAuthorityConnections } from '../../shared/authority-http.ts';
import { fixedSigningKey } from '../../shared/test-fixtures.ts';
import { CORRISPETTIVI_PATH, corrispettiviUrl, sendCorrispettivi } from './client.ts';

let fake: FakeAuthority;
const seen: FakeRequest[] = [];
beforeAll(async () => {
  fake = await startFakeAuthority((req) => {
    seen.push(req);
    return { status: 200, headers: { 'content-type': 'application/xml' }, body: '<EsitoOperazione versione="1.0"><IdOperazione>42</IdOperazione></EsitoOperazione>' };
  });
});
afterAll(async () => {
  await fake?.close();
  await closeAuthorityConnections();
});

const ctx = (o: Partial<Parameters<typeof sendCorrispettivi>[1]> = {}) => ({
  environment: 'test' as const, baseUrl: fake.url, clientKey: fixedSigningKey(), authorityCa: fake.caPem, timeoutMs: 5000, now: new Date(), ...o,
});

describe('corrispettivi client', () => {
  it('POSTs the stored XML as is to <AdE>/v1/dispositivi/corrispettivi/ with the client certificate', async () => {
    const answer = await sendCorrispettivi('<c:DatiCorrispettivi/>', ctx());
    expect(answer).toEqual({ kind: 'accepted', idOperazione: '42', httpStatus: 200 });
    const req = seen.at(-1)!;
    expect([req.method, req.path, req.body.toString('utf8')]).toEqual(['POST', CORRISPETTIVI_PATH, '<c:DatiCorrispettivi/>']);
    expect(req.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(req.clientCert.raw.equals(fixedSigningKey().certificate.raw)).toBe(true);
  });

  it('a refused TLS handshake is 0403 (not retried); no connection is 0500 (retried)', async () => {
    const tls = await sendCorrispettivi('<x/>', ctx({ authorityCa: undefined }));
    expect(tls).toMatchObject({ kind: 'rejected', code: '0403', authorityCode: 'tls_error' });
    const down = await sendCorrispettivi('<x/>', ctx({ baseUrl: 'https://127.0.0.1:1' }));
    expect(down).toMatchObject({ kind: 'retry', code: '0500', authorityCode: 'connection_error' });
  });

  it('URLs: the configured base (trailing slash tolerated), else the placeholder per environment', () => {
    expect(corrispettiviUrl('test', 'https://ade.example/')).toBe('https://ade.example/v1/dispositivi/corrispettivi/');
    expect(corrispettiviUrl('live')).toBe('https://apid-ivaservizi.agenziaentrate.gov.it/v1/dispositivi/corrispettivi/');
  });
});
