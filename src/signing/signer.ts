/**
 * A signing key as the fiscal formats use it, wherever the private key lives: in this
 * process (a KeyObject, today's keys: record keys, sandbox and uploaded certificates,
 * the configured producer key) or in a PKCS#11 token (HardwareDevice mode,
 * ./pkcs11/device.ts, where the key never leaves the token). The plug-ins sign through
 * this interface only: they never see where the key is.
 *
 * Synchronous on purpose: the record build path is synchronous (validate → build →
 * chain → sign inside one DB transaction), and PKCS#11 `C_Sign` is too.
 *
 * Output formats are the ones the verifiers expect, identical for both implementations:
 * - EC (P-256): ECDSA over SHA-256, IEEE P1363 `r || s` (64 bytes), what NF525 records,
 *   closures, JET and archives carry (base64url) and what PKCS#11 `CKM_ECDSA` returns;
 * - RSA: RSASSA-PKCS1-v1_5 over SHA-1 (SAF-T PT Hash) or SHA-256 (XAdES RSA-SHA256).
 */
import crypto, { type KeyObject } from 'node:crypto';

export type SignerKeyType = 'ec-p256' | 'rsa';
export type SignerDigest = 'sha1' | 'sha256';

export interface Signer {
  /** The key's algorithm (what `sign` produces). */
  readonly algorithm: SignerKeyType;
  /** The public half, what verifiers are given (from the token: CKA_EC_POINT / CKA_MODULUS + CKA_PUBLIC_EXPONENT). */
  readonly publicKey: KeyObject;
  /** Where the private key lives, for logs and the key's description. */
  readonly device: 'in-process' | 'pkcs11';
  /** Signs `data` (the message, not a digest) with `digest`: P1363 for EC, PKCS#1 v1.5 for RSA. */
  sign(digest: SignerDigest, data: Buffer): Buffer;
}

function keyTypeOf(key: KeyObject): SignerKeyType {
  if (key.asymmetricKeyType === 'rsa') return 'rsa';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ec-p256';
  throw new Error(`signer: unsupported key type ${key.asymmetricKeyType ?? 'unknown'}${key.asymmetricKeyDetails?.namedCurve ? ` (${key.asymmetricKeyDetails.namedCurve})` : ''}`);
}

const inProcess = new WeakMap<KeyObject, Signer>();
/** The private key of each in-process signer: what chain-signer.ts hands its signing thread. */
const keyOfSigner = new WeakMap<Signer, KeyObject>();

/** The private key an in-process signer signs with; undefined for any other signer (a PKCS#11 token's). */
export const inProcessKeyOf = (signer: Signer): KeyObject | undefined => keyOfSigner.get(signer);

/** Today's behaviour: node:crypto with a private KeyObject held in this process (one signer per key, cached). */
export function inProcessSigner(privateKey: KeyObject): Signer {
  let s = inProcess.get(privateKey);
  if (s === undefined) {
    const algorithm = keyTypeOf(privateKey);
    const publicKey = crypto.createPublicKey(privateKey);
    s = {
      algorithm,
      publicKey,
      device: 'in-process',
      sign: (digest, data) =>
        algorithm === 'rsa'
          ? crypto.sign(digest, data, { key: privateKey, padding: crypto.constants.RSA_PKCS1_PADDING })
          : crypto.sign(digest, data, { key: privateKey, dsaEncoding: 'ieee-p1363' }),
    };
    inProcess.set(privateKey, s);
    keyOfSigner.set(s, privateKey);
  }
  return s;
}

/** A key held in process or through a signer: the signer to use (`signer` wins). */
export function signerOf(key: { signer?: Signer | undefined; privateKey?: KeyObject | undefined }): Signer {
  if (key.signer !== undefined) return key.signer;
  if (key.privateKey !== undefined) return inProcessSigner(key.privateKey);
  throw new Error('signer: the key has neither a signer nor a private key');
}

/** Checks a signature made by a `Signer` (same formats). */
export function verifyWith(publicKey: KeyObject, digest: SignerDigest, data: Buffer, signature: Buffer): boolean {
  return publicKey.asymmetricKeyType === 'rsa'
    ? crypto.verify(digest, data, { key: publicKey, padding: crypto.constants.RSA_PKCS1_PADDING }, signature)
    : crypto.verify(digest, data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature);
}
