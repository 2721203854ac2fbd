import crypto from 'node:crypto';
import type { InProcessSigningKey, SigningKey } from '../core/signing-key.ts';
import type { SigningMaterial } from './pkcs12.ts';

/** Parses unsealed signing material once into the key objects the plug-ins sign with. */
export function toSigningKey(m: SigningMaterial, source: SigningKey['source']): InProcessSigningKey {
  return {
    privateKey: crypto.createPrivateKey(m.privateKeyPem),
    certificate: new crypto.X509Certificate(m.certificatePem),
    chain: m.chainPem.map((pem) => new crypto.X509Certificate(pem)),
    privateKeyPem: m.privateKeyPem,
    certificatePem: m.certificatePem,
    source,
  };
}
