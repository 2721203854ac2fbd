import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAuthority, type FakeAuthority } from '../../../test/support/fake-authority.ts';
import { TransportError } from '../types.ts';
import { authorityPost, closeAuthorityConnections } from './authority-http.ts';
import { fixedSigningKey } from './test-fixtures.ts';

describe('authority HTTP transport (mutual TLS)', () => {
  let fake: FakeAuthority;
  const key = fixedSigningKey();
  beforeAll(async () => {
    fake = await startFakeAuthority((req) => ({ status: 200, headers: { 'content-type': 'text/xml' }, body: `<ok cn="${String(req.clientCert.subject?.CN)}">${req.body.length}</ok>` }));
  });
  afterAll(async () => {
    await closeAuthorityConnections();
    await fake.close();
  });

  it('presents the client certificate and returns the answer', async () => {
    const res = await authorityPost({ url: `${fake.url}/alta`, headers: { 'content-type': 'text/xml' }, body: '<x/>', clientKey: key, ca: fake.caPem, timeoutMs: 5000 });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('<ok cn="TEST MERCHANT SL - SELLO DE PRUEBA">4</ok>');
    expect(fake.requests.at(-1)?.clientCert.fingerprint256).toBe(key.certificate.fingerprint256);
  });

  it('is refused without a client certificate', async () => {
    const res = await authorityPost({ url: `${fake.url}/alta`, headers: {}, body: '<x/>', clientKey: undefined, ca: fake.caPem, timeoutMs: 5000 });
    expect(res.status).toBe(403);
  });

  it('does not trust an unknown server certificate', async () => {
    const err = await authorityPost({ url: `${fake.url}/alta`, headers: {}, body: '<x/>', clientKey: key, timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('tls_error');
  });

  it('turns a silent server into a timeout', async () => {
    fake.setHandler(() => new Promise(() => undefined));
    const err = await authorityPost({ url: `${fake.url}/slow`, headers: {}, body: '<x/>', clientKey: key, ca: fake.caPem, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('timeout');
  });

  it('turns a refused connection into a connection error', async () => {
    const err = await authorityPost({ url: 'https://127.0.0.1:1/alta', headers: {}, body: '<x/>', clientKey: key, timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('connection_error');
  });
});
