import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSandboxCertificate } from './sandbox-certificate.ts';

describe('sandbox certificate', () => {
  it('is a self-signed RSA-2048 certificate whose key signs verifiably', async () => {
    const now = new Date('2026-11-21T10:00:00Z');
    const m = await generateSandboxCertificate('0b6f9c1e-3d2a-4c5b-9e8f-7a6b5c4d3e2f', now);
    const cert = new crypto.X509Certificate(m.certificatePem);
    expect(cert.subject).toContain('NOT VALID FOR LIVE');
    expect(cert.subject).toContain('0b6f9c1e-3d2a-4c5b-9e8f-7a6b5c4d3e2f');
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(new Date(cert.validFrom).getTime()).toBeLessThanOrEqual(now.getTime());
    expect(new Date(cert.validTo).getUTCFullYear()).toBe(2036);
    const key = crypto.createPrivateKey(m.privateKeyPem);
    const sig = crypto.sign('sha256', Buffer.from('record'), key);
    expect(crypto.verify('sha256', Buffer.from('record'), cert.publicKey, sig)).toBe(true);
    expect(cert.checkPrivateKey(key)).toBe(true);
  });
});
