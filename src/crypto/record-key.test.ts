import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateRecordKeyPem, recordKeyId, toRecordKey } from './record-key.ts';

describe('record keys', () => {
  it('generates a P-256 key; the key id is the SHA-256 of its DER SPKI', async () => {
    const pem = await generateRecordKeyPem('ec-p256');
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const key = toRecordKey('ec-p256', pem);
    expect(key.privateKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const spki = crypto.createPublicKey(key.publicKeyPem).export({ format: 'der', type: 'spki' });
    expect(key.keyId).toBe(crypto.createHash('sha256').update(spki).digest('hex'));
    expect(recordKeyId(key.publicKey)).toBe(key.keyId);
    // Two keys are two keys.
    expect(toRecordKey('ec-p256', await generateRecordKeyPem('ec-p256')).keyId).not.toBe(key.keyId);
  });

  it('refuses a key of another kind (RSA, another curve)', () => {
    const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const p384 = crypto.generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    expect(() => toRecordKey('ec-p256', rsa)).toThrow('record key is not of kind ec-p256');
    expect(() => toRecordKey('ec-p256', p384)).toThrow('record key is not of kind ec-p256');
  });
});
