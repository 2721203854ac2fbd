/**
 * The per-account sandbox certificate: a self-signed RSA-2048 certificate the service
 * makes for an account the first time a test-key record must be signed without an
 * uploaded certificate (issue "Spain": "every record is verifiable"). It is plainly a
 * test certificate: its subject says so and no authority trusts it.
 *
 * Node generates the key (OpenSSL, fast); node-forge, already used to read PKCS#12,
 * writes the X.509 certificate.
 */
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import forge from 'node-forge';
import type { SigningMaterial } from './pkcs12.ts';

const generateKeyPair = promisify(crypto.generateKeyPair);
const VALID_YEARS = 10;

export async function generateSandboxCertificate(accountId: string, now: Date): Promise<SigningMaterial> {
  const { privateKey, publicKey } = await generateKeyPair('rsa', { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ format: 'pem', type: 'spki' }) as string);
  // A positive serial (first byte below 0x80): 16 random bytes.
  cert.serialNumber = `01${crypto.randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + VALID_YEARS);
  cert.validity.notAfter = notAfter;
  const name = [
    { shortName: 'C', value: 'ES' },
    { shortName: 'O', value: `Sandbox account ${accountId}` },
    { shortName: 'CN', value: 'SANDBOX SIGNING CERTIFICATE - NOT VALID FOR LIVE' },
  ];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, critical: true },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(privateKey.export({ format: 'pem', type: 'pkcs1' }) as string), forge.md.sha256.create());
  return { privateKeyPem, certificatePem: forge.pki.certificateToPem(cert), chainPem: [] };
}
