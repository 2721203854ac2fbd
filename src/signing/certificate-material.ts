/**
 * What a signature repeats about the signer's certificate, computed once per signing key
 * (a key signs thousands of records; none of this depends on the record):
 * - the `ds:KeyInfo` content: `X509Data` (the certificate, then its chain) and
 *   `KeyValue/RSAKeyValue` (modulus and exponent), as the official TicketBAI samples carry;
 * - the `xades:SigningCertificateV2` values: the certificate's SHA-256 digest and
 *   `IssuerSerialV2`.
 */
import { createHash } from 'node:crypto';
import forge from 'node-forge';
import type { SigningKey } from '../core/signing-key.ts';
import { el } from '../xml/escape.ts';
import { signerOf } from './signer.ts';

export interface CertificateMaterial {
  /** `<ds:X509Data>…</ds:X509Data><ds:KeyValue>…</ds:KeyValue>`: the inside of `ds:KeyInfo`. */
  keyInfoContent: string;
  /** SHA-256 of the certificate's DER, base64 (`xades:CertDigest`). */
  certDigest: string;
  /** DER of the RFC 5035 `IssuerSerial` of the certificate, base64 (`xades:IssuerSerialV2`). */
  issuerSerialV2: string;
}

const cache = new WeakMap<SigningKey, CertificateMaterial>();

export function certificateMaterial(key: SigningKey): CertificateMaterial {
  let m = cache.get(key);
  if (m === undefined) {
    m = compute(key);
    cache.set(key, m);
  }
  return m;
}

/** base64url (JWK) → base64 with padding (XMLDSig `ds:CryptoBinary`, §4.0.1). */
function base64(base64url: string): string {
  return Buffer.from(base64url, 'base64url').toString('base64');
}

function compute(key: SigningKey): CertificateMaterial {
  const cert = key.certificate;
  const publicKey = cert.publicKey;
  // TicketBAI signature policy (FORMATS.md §1.4): RSA keys of more than 1024 bits.
  if (publicKey.asymmetricKeyType !== 'rsa') throw new Error('xades: the signing certificate must hold an RSA key');
  const bits = publicKey.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits <= 1024) throw new Error(`xades: the RSA key must be longer than 1024 bits (it has ${bits})`);
  // The key that signs (in process or in the PKCS#11 token) is the certificate's.
  const signer = signerOf(key);
  if (!signer.publicKey.export({ type: 'spki', format: 'der' }).equals(publicKey.export({ type: 'spki', format: 'der' }))) {
    throw new Error('xades: the private key does not match the signing certificate');
  }

  const jwk = publicKey.export({ format: 'jwk' });
  const certificates = [cert, ...key.chain].map((c) => el('ds:X509Certificate', c.raw.toString('base64'))).join('');
  const keyInfoContent =
    `<ds:X509Data>${certificates}</ds:X509Data>` +
    `<ds:KeyValue><ds:RSAKeyValue>${el('ds:Modulus', base64(jwk.n!))}${el('ds:Exponent', base64(jwk.e!))}</ds:RSAKeyValue></ds:KeyValue>`;
  return {
    keyInfoContent,
    certDigest: createHash('sha256').update(cert.raw).digest('base64'),
    issuerSerialV2: issuerSerialDer(cert.raw).toString('base64'),
  };
}

/**
 * `IssuerSerial ::= SEQUENCE { issuer GeneralNames, serialNumber CertificateSerialNumber }`
 * (RFC 5035 §4, the value of XAdES `IssuerSerialV2`, ETSI EN 319 132-1 §5.2.2): the
 * issuer as one `directoryName` GeneralName, `[4]` explicitly tagged because `Name` is a
 * CHOICE (RFC 5280 §4.2.1.6), and the serial, both taken as encoded in the certificate's
 * own `tbsCertificate` so they match it bit for bit. node-forge reads and writes the DER.
 */
export function issuerSerialDer(certificateDer: Buffer): Buffer {
  const { asn1 } = forge;
  const certificate = asn1.fromDer(forge.util.createBuffer(certificateDer.toString('binary')));
  const tbs = (certificate.value as forge.asn1.Asn1[])[0]!;
  const fields = tbs.value as forge.asn1.Asn1[];
  // tbsCertificate: [0] version (absent in v1 certificates), serialNumber, signature, issuer, …
  const first = fields[0]!;
  const at = first.tagClass === asn1.Class.CONTEXT_SPECIFIC && first.type === 0 ? 1 : 0;
  const serial = fields[at]!;
  const issuer = fields[at + 2]!;
  if (serial.type !== asn1.Type.INTEGER || issuer.type !== asn1.Type.SEQUENCE) throw new Error('xades: unexpected certificate structure');
  const value = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [asn1.create(asn1.Class.CONTEXT_SPECIFIC, 4, true, [issuer])]),
    serial,
  ]);
  return Buffer.from(asn1.toDer(value).getBytes(), 'binary');
}
