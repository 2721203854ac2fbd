import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptExport, closeTokenSessions, createTestDevice, generateTokenKey, HAVE_SOFTHSM, selfSignedCertificateWith, storeTokenCertificate, type TestDevice } from '../../../test/support/softhsm.ts';
import { verifyWith } from '../signer.ts';
import { acquireModule, findTokenSlot, releaseModule } from './module.ts';
import { openSigningDevice, SigningDeviceError, type SigningDevice } from './device.ts';

/** SoftHSM2 (Debian softhsm2, installed by .ci/run): keys generated inside a temporary token. */
describe.skipIf(!HAVE_SOFTHSM)('PKCS#11 signing device (SoftHSM2)', () => {
  let t: TestDevice;
  let device: SigningDevice;
  let wrongPin: unknown;
  beforeAll(() => {
    t = createTestDevice();
    generateTokenKey(t.hsm, t.tokenLabel, t.pin, { label: 'leaky', type: 'ec-p256', extractable: true });
    t.hsm.initToken('removable', '222222');
    generateTokenKey(t.hsm, 'removable', '222222', { label: 'records', type: 'ec-p256' });
    // Before any login of this process: the token itself checks the PIN.
    try {
      openSigningDevice({ module: t.module, tokenLabel: t.tokenLabel, pin: '999999', keys: t.keys });
    } catch (err) {
      wrongPin = err;
    }
    device = openSigningDevice({ module: t.module, tokenLabel: t.tokenLabel, pin: t.pin, keys: t.keys });
  });
  afterAll(() => {
    device?.close();
    t?.hsm.cleanup();
  });

  it('the private keys cannot leave the token: CKA_EXTRACTABLE false, CKA_SENSITIVE true, reading the secret value fails', () => {
    const ec = attemptExport(t.hsm, t.tokenLabel, t.pin, 'records', 'ec');
    expect(ec).toMatchObject({ extractable: false, sensitive: true });
    expect(ec.valueError).toMatch(/CKR_ATTRIBUTE_SENSITIVE/);
    const rsa = attemptExport(t.hsm, t.tokenLabel, t.pin, 'producer-pt', 'rsa');
    expect(rsa.valueError).toMatch(/CKR_ATTRIBUTE_SENSITIVE/);
  });

  it('EC P-256: CKM_ECDSA over the SHA-256 digest gives r||s (IEEE P1363), verified with the public key read from the token', () => {
    const signer = device.records!;
    expect(signer).toMatchObject({ algorithm: 'ec-p256', device: 'pkcs11' });
    expect(signer.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const data = Buffer.from('nf525;record;1');
    const sig = signer.sign('sha256', data);
    expect(sig).toHaveLength(64);
    expect(crypto.verify('sha256', data, { key: signer.publicKey, dsaEncoding: 'ieee-p1363' }, sig)).toBe(true);
    expect(crypto.verify('sha256', Buffer.from('nf525;record;2'), { key: signer.publicKey, dsaEncoding: 'ieee-p1363' }, sig)).toBe(false);
  });

  it('RSA: CKM_SHA1_RSA_PKCS and CKM_SHA256_RSA_PKCS are PKCS#1 v1.5 signatures', () => {
    const pt = device.producer.PT!;
    expect(pt.publicKey.asymmetricKeyDetails?.modulusLength).toBe(1024);
    const data = Buffer.from('2026-01-15;2026-01-15T10:00:00;FT A/1;12.10;');
    const sha1 = pt.sign('sha1', data);
    expect(sha1).toHaveLength(128);
    expect(verifyWith(pt.publicKey, 'sha1', data, sha1)).toBe(true);
    expect(verifyWith(pt.publicKey, 'sha256', data, pt.sign('sha256', data))).toBe(true);
  });

  it('the certificate key comes with the certificate stored beside it (same CKA_ID)', () => {
    const c = device.certificate!;
    expect(c.certificate.subject).toContain('HARDWARE DEVICE TEST SIGNER');
    expect(c.certificate.publicKey.export({ type: 'spki', format: 'der' }).equals(c.signer.publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
    // Self-signed by the token key itself.
    expect(c.certificate.verify(c.signer.publicKey)).toBe(true);
  });

  const open = (over: Partial<Parameters<typeof openSigningDevice>[0]>) => () =>
    openSigningDevice({ module: t.module, tokenLabel: t.tokenLabel, pin: t.pin, keys: t.keys, ...over });
  const fieldOf = (fn: () => unknown): { field: string; message: string } => {
    try {
      fn();
    } catch (err) {
      if (err instanceof SigningDeviceError) return { field: err.field, message: err.message };
      throw err;
    }
    throw new Error('expected a SigningDeviceError');
  };

  it('a wrong PIN, a missing token, a missing or exportable key: an error naming the option', () => {
    expect(wrongPin).toBeInstanceOf(SigningDeviceError);
    expect(wrongPin).toMatchObject({ field: 'pin', message: expect.stringMatching(/refused the PIN \(CKR_PIN_INCORRECT\)/) });
    // Logged in already (login state is per process and token): still refused.
    expect(fieldOf(open({ pin: '999999' }))).toMatchObject({ field: 'pin', message: expect.stringContaining('refused the PIN') });
    expect(fieldOf(open({ tokenLabel: 'nope' }))).toMatchObject({ field: 'token_label', message: expect.stringContaining('no token labelled "nope"') });
    expect(fieldOf(open({ keys: { records: 'missing' } }))).toMatchObject({ field: 'keys.records', message: expect.stringContaining('no private key labelled "missing"') });
    expect(fieldOf(open({ keys: { records: 'leaky' } }))).toMatchObject({ field: 'keys.records', message: expect.stringContaining('can be exported') });
    expect(fieldOf(open({ keys: { records: 'producer-pt' } }))).toMatchObject({ field: 'keys.records', message: expect.stringContaining('must be an EC P-256 key') });
    expect(fieldOf(open({ keys: { certificate: 'records' } }))).toMatchObject({ field: 'keys.certificate' });
    expect(fieldOf(open({ module: '/nonexistent/libpkcs11.so' }))).toMatchObject({ field: 'module' });
    // The device opened first still signs after those failures.
    expect(device.records!.sign('sha256', Buffer.from('x'))).toHaveLength(64);
  });

  it('a lost session is re-opened: the next signature goes through', () => {
    // Every session of the token closed under the device (what a reset or re-plug does): its handle is invalid.
    const lib = acquireModule(t.module);
    try {
      lib.C_CloseAllSessions(findTokenSlot(lib, t.tokenLabel).slot!);
    } finally {
      releaseModule(t.module);
    }
    const first = Buffer.from('after the reset');
    expect(verifyWith(device.records!.publicKey, 'sha256', first, device.records!.sign('sha256', first))).toBe(true);

    const other = openSigningDevice({ module: t.module, tokenLabel: t.tokenLabel, pin: t.pin, keys: { records: 'records' } });
    try {
      const data = Buffer.from('after reset');
      expect(verifyWith(other.records!.publicKey, 'sha256', data, other.records!.sign('sha256', data))).toBe(true);
    } finally {
      other.close();
    }
    // Closing `other` closed only its session; `device` keeps signing (and re-opens if the token logged it out).
    const data = Buffer.from('still signing');
    expect(verifyWith(device.records!.publicKey, 'sha256', data, device.records!.sign('sha256', data))).toBe(true);
  });

  it('a token gone for good: the signature fails with a clear error naming the device', () => {
    const gone = openSigningDevice({ module: t.module, tokenLabel: 'removable', pin: '222222', keys: { records: 'records' } });
    try {
      expect(gone.records!.sign('sha256', Buffer.from('x'))).toHaveLength(64);
      execFileSync('softhsm2-util', ['--delete-token', '--token', 'removable'], { env: { ...process.env, SOFTHSM2_CONF: t.hsm.conf }, stdio: 'pipe' });
      closeTokenSessions(t.module, 'removable');
      let err: unknown;
      try {
        gone.records!.sign('sha256', Buffer.from('y'));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SigningDeviceError);
      expect(err).toMatchObject({ field: 'device', message: expect.stringMatching(/^the signing device \(token "removable"\) is unavailable: /) });
    } finally {
      gone.close();
    }
  });
});

describe.skipIf(!HAVE_SOFTHSM)('PKCS#11 signing device: another key under the same label', () => {
  let t: TestDevice;
  beforeAll(() => {
    t = createTestDevice();
    t.hsm.initToken('swap', '333333');
    generateTokenKey(t.hsm, 'swap', '333333', { label: 'records', type: 'ec-p256' });
  });
  afterAll(() => t?.hsm.cleanup());

  it('a key replaced in the token is refused on every later signature, never used silently', () => {
    const d = openSigningDevice({ module: t.module, tokenLabel: 'swap', pin: '333333', keys: { records: 'records' } });
    try {
      const original = d.records!.publicKey.export({ type: 'spki', format: 'der' });
      expect(d.records!.sign('sha256', Buffer.from('before'))).toHaveLength(64);
      // The key pair is deleted and another one generated under the same label: the device's handle is gone.
      for (const type of ['privkey', 'pubkey']) {
        execFileSync('pkcs11-tool', ['--module', t.module, '--token-label', 'swap', '--login', '--pin', '333333', '--delete-object', '--type', type, '--label', 'records'], { env: { ...process.env, SOFTHSM2_CONF: t.hsm.conf }, stdio: 'pipe' });
      }
      generateTokenKey(t.hsm, 'swap', '333333', { label: 'records', type: 'ec-p256' });
      for (let i = 0; i < 3; i++) {
        let err: unknown;
        let sig: Buffer | undefined;
        try {
          sig = d.records!.sign('sha256', Buffer.from(`after ${i}`));
        } catch (e) {
          err = e;
        }
        expect(sig, `attempt ${i} signed with the new key`).toBeUndefined();
        expect(err).toBeInstanceOf(SigningDeviceError);
        expect(err).toMatchObject({ field: 'device', message: expect.stringMatching(/unavailable: the token now holds another key under this label/) });
      }
      expect(d.records!.publicKey.export({ type: 'spki', format: 'der' }).equals(original)).toBe(true);
    } finally {
      d.close();
    }
  });
});

describe.skipIf(!HAVE_SOFTHSM)('PKCS#11 signing device: the certificate beside the key', () => {
  let t: TestDevice;
  beforeAll(() => {
    t = createTestDevice();
    const id = generateTokenKey(t.hsm, t.tokenLabel, t.pin, { label: 'old', type: 'rsa', bits: 2048 });
    const bare = openSigningDevice({ module: t.module, tokenLabel: t.tokenLabel, pin: t.pin, keys: { producer: { XX: 'old' } } });
    try {
      const der = selfSignedCertificateWith(bare.producer.XX!, 'EXPIRED SIGNER', { notBefore: new Date('2020-01-01T00:00:00Z'), notAfter: new Date('2021-01-01T00:00:00Z') });
      storeTokenCertificate(t.hsm, t.tokenLabel, t.pin, { label: 'old', id, der });
    } finally {
      bare.close();
    }
  });
  afterAll(() => t?.hsm.cleanup());

  it('an expired certificate is refused at open, naming the certificate key', () => {
    let err: unknown;
    try {
      openSigningDevice({ module: t.module, tokenLabel: t.tokenLabel, pin: t.pin, keys: { certificate: 'old' } }).close();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SigningDeviceError);
    expect(err).toMatchObject({ field: 'keys.certificate', message: 'the certificate stored beside the key "old" has expired (not_after 2021-01-01T00:00:00.000Z)' });
  });
});
