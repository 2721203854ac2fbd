import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm, type GeneratedCert } from '../support/p12.ts';

/*
 * Certificate upload against the clock and the certificate's purpose (platform audit):
 * a PKCS#12 that opens is not yet a certificate that can sign. An expired one, or one
 * whose keyUsage forbids signing (a CA's), was stored with a 201 and only found out at
 * the first record the authority refused (or never, with a test key's stub). The app's
 * clock decides "now", so the test moves it rather than forging validity dates.
 */
const PASSWORD = 'pw';
const DAY = 86_400_000;
let t: TestApp;
let clock: ManualClock;
let cert: GeneratedCert;
let key: string;

beforeAll(async () => {
  cert = generateCert({ days: 30 });
  clock = new ManualClock(new Date());
  t = await startTestApp({ clock });
  ({ key } = await t.signup());
});
afterAll(() => t.close());

const upload = (certificateId: string, file: Buffer) => {
  const { payload, headers } = uploadForm({ certificateId, password: PASSWORD, file });
  return t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
};
const listed = async () => ((await t.request({ method: 'GET', url: '/v1/certificates', key })).json().data as Array<{ certificate_id: string }>).map((c) => c.certificate_id);

describe('certificate validity and purpose at upload', () => {
  it('an expired certificate → 400 naming its not_after, nothing stored', async () => {
    clock.set(new Date(cert.notAfter.getTime() + 1000));
    try {
      const res = await upload('expired', exportP12(cert, PASSWORD));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ error: `certificate has expired (not_after ${cert.notAfter.toISOString()})` });
      expect(await listed()).not.toContain('expired');
    } finally {
      clock.set(new Date());
    }
  });

  it('a certificate not valid yet (a renewal uploaded early) → 201 with a warning', async () => {
    clock.set(new Date(cert.notBefore.getTime() - DAY));
    try {
      const res = await upload('renewal', exportP12(cert, PASSWORD));
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().warnings).toEqual([
        `certificate is not valid before ${cert.notBefore.toISOString()}: records signed with it until then will be refused`,
      ]);
    } finally {
      clock.set(new Date());
    }
  });

  it('within its validity → 201 without warnings', async () => {
    const res = await upload('current', exportP12(cert, PASSWORD));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().warnings).toBeUndefined();
  });

  it('keyUsage without digitalSignature and nonRepudiation (a CA certificate) → 400', async () => {
    const ca = generateCert({ subject: '/C=ES/CN=Some CA', addext: ['keyUsage=critical,keyCertSign,cRLSign'] });
    const res = await upload('ca-only', exportP12(ca, PASSWORD));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: 'certificate cannot sign: its key usage allows neither digitalSignature nor nonRepudiation' });
    expect(await listed()).not.toContain('ca-only');
  });

  it('keyUsage with digitalSignature or with nonRepudiation alone, RSA or EC → 201', async () => {
    for (const [id, opts] of [
      ['ds-rsa', { addext: ['keyUsage=critical,digitalSignature,keyEncipherment'] }],
      ['nr-rsa', { addext: ['keyUsage=critical,nonRepudiation'] }],
      ['ds-ec', { keyType: 'ec' as const, addext: ['keyUsage=critical,digitalSignature'] }],
    ] as const) {
      const res = await upload(id, exportP12(generateCert(opts), PASSWORD));
      expect(res.statusCode, `${id}: ${res.body}`).toBe(201);
    }
  });
});
