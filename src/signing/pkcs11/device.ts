/**
 * HardwareDevice mode (issue #17 part 8): the private keys live in a PKCS#11 token and
 * never leave it; every local signature is a `C_Sign` in the token.
 *
 * `openSigningDevice` opens the library, finds the token by label, logs in with the PIN,
 * finds every configured key by label and checks it is a token-resident signing key that
 * cannot be exported (CKA_SIGN true, CKA_SENSITIVE true, CKA_EXTRACTABLE false), reads its
 * public key from the token (CKA_EC_POINT, or CKA_MODULUS + CKA_PUBLIC_EXPONENT) and, for
 * a certificate key, the X.509 certificate stored beside it (CKO_CERTIFICATE with the same
 * CKA_ID). Any fault there is a `SigningDeviceError` naming the option at fault, so a
 * host stops at start-up with a clear message (config.ts turns it into a ConfigError
 * naming the setting; the engine names its `signing_device` field).
 *
 * Mechanisms (the output formats of ../signer.ts):
 * - EC P-256: `CKM_ECDSA` over the SHA-256 digest computed here (every token has raw
 *   ECDSA; the combined CKM_ECDSA_SHA256 is optional). PKCS#11 returns `r || s`, each the
 *   curve's size (v2.40 §2.3.1), which is IEEE P1363, the NF525 signature format.
 * - RSA: `CKM_SHA1_RSA_PKCS` (SAF-T PT Hash) and `CKM_SHA256_RSA_PKCS` (XAdES RSA-SHA256):
 *   PKCS#1 v1.5, byte-identical to node:crypto's for the same key (deterministic).
 *
 * Sessions: one logged-in session for the device, used by one call at a time: every call
 * here is synchronous on the one JavaScript thread, so a `C_SignInit`/`C_Sign` pair is
 * never interleaved with another. When the token answers that the session or the key
 * handle is gone (CKR_SESSION_HANDLE_INVALID, CKR_SESSION_CLOSED, CKR_USER_NOT_LOGGED_IN,
 * CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT, CKR_*_HANDLE_INVALID: the token was removed,
 * reset or the library restarted), the device re-opens (slot by label, session, login,
 * key handles by label) and signs once more; when that fails too, the caller gets a
 * `SigningDeviceError` saying the device is unavailable, and the record is not written.
 */
import crypto, { X509Certificate, type KeyObject } from 'node:crypto';
import pkcs11js from 'pkcs11js';
import type { Signer, SignerDigest, SignerKeyType } from '../signer.ts';
import { SigningDeviceError, type SigningDeviceField } from './errors.ts';
import { acquireModule, findObjects, findTokenSlot, loggedInWith, releaseModule, rememberLogin } from './module.ts';

export const DEFAULT_PKCS11_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

/** The keys the device holds, by purpose: each a CKA_LABEL in the token. */
export interface SigningDeviceKeys {
  /** France NF525: the EC P-256 key that signs records, closures, JET and archives (every location's). */
  records?: string | undefined;
  /** The RSA key whose certificate (CKO_CERTIFICATE with the same CKA_ID) signs TicketBAI (XAdES) records. */
  certificate?: string | undefined;
  /** Software producer keys by country (Portugal SAF-T: the certified program's RSA-1024 key). */
  producer?: Readonly<Record<string, string>> | undefined;
}

/** What opens the device: the engine's `signing_device` init param and SIGNING_DEVICE=pkcs11 (config.ts) both give this. */
export interface SigningDeviceOptions {
  /** Path of the PKCS#11 library (default: SoftHSM2's). */
  module?: string | undefined;
  tokenLabel: string;
  pin: string;
  keys: SigningDeviceKeys;
}

export { SigningDeviceError, type SigningDeviceField } from './errors.ts';

export interface SigningDevice {
  /** Description for logs: library, token label and serial. */
  readonly description: string;
  /** The NF525 record key's signer (EC P-256), when `keys.records` is configured. */
  readonly records: Signer | undefined;
  /** The certificate key (RSA) and its certificate, when `keys.certificate` is configured. */
  readonly certificate: { signer: Signer; certificate: X509Certificate; certificatePem: string } | undefined;
  /** Producer keys (RSA) by country code. */
  readonly producer: Readonly<Record<string, Signer>>;
  /** Ends the session and lets go of the library. */
  close(): void;
}

const RECONNECT_CODES = new Set<number>([
  pkcs11js.CKR_SESSION_HANDLE_INVALID,
  pkcs11js.CKR_SESSION_CLOSED,
  pkcs11js.CKR_USER_NOT_LOGGED_IN,
  pkcs11js.CKR_DEVICE_REMOVED,
  pkcs11js.CKR_TOKEN_NOT_PRESENT,
  pkcs11js.CKR_OBJECT_HANDLE_INVALID,
  pkcs11js.CKR_KEY_HANDLE_INVALID,
  pkcs11js.CKR_DEVICE_ERROR,
  pkcs11js.CKR_GENERAL_ERROR,
  pkcs11js.CKR_FUNCTION_FAILED,
]);

/** DER of the P-256 curve OID 1.2.840.10045.3.1.7, CKA_EC_PARAMS of a P-256 key. */
const P256_PARAMS = Buffer.from('06082a8648ce3d030107', 'hex');

const code = (err: unknown): number | undefined => (err instanceof pkcs11js.Pkcs11Error ? err.code : undefined);
const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err));
/** A CK_ULONG attribute (native size and byte order: 8 bytes little-endian on x86-64). */
const ulong = (b: Buffer | undefined): number | undefined => (b === undefined || b.length === 0 ? undefined : b.length >= 8 ? Number(b.readBigUInt64LE(0)) : b.readUIntLE(0, b.length));
const bool = (b: Buffer | undefined): boolean => b !== undefined && b.length > 0 && b[0] !== 0;

interface KeyHandle {
  handle: Buffer;
  algorithm: SignerKeyType;
  publicKey: KeyObject;
  id: Buffer;
}

/** Opens the token and checks every configured key (see the file comment). Throws SigningDeviceError. */
export function openSigningDevice(options: SigningDeviceOptions): SigningDevice {
  const modulePath = options.module || DEFAULT_PKCS11_MODULE;
  if (!options.tokenLabel) throw new SigningDeviceError('token_label', 'the token label is required');
  if (!options.pin) throw new SigningDeviceError('pin', 'the PIN is required');
  const wanted: Array<{ field: SigningDeviceField; label: string; algorithm: SignerKeyType }> = [];
  if (options.keys.records) wanted.push({ field: 'keys.records', label: options.keys.records, algorithm: 'ec-p256' });
  if (options.keys.certificate) wanted.push({ field: 'keys.certificate', label: options.keys.certificate, algorithm: 'rsa' });
  for (const [cc, label] of Object.entries(options.keys.producer ?? {})) if (label) wanted.push({ field: `keys.producer.${cc}`, label, algorithm: 'rsa' });
  if (wanted.length === 0) throw new SigningDeviceError('keys', 'no key label is configured: name at least one key of the token');

  let lib: pkcs11js.PKCS11;
  try {
    lib = acquireModule(modulePath);
  } catch (err) {
    throw new SigningDeviceError('module', `cannot load the PKCS#11 library ${modulePath}: ${reason(err)}`);
  }
  let session: Buffer | undefined;
  let closed = false;
  const handles = new Map<string, KeyHandle>();
  /** Each key's public key (SPKI DER) as read at open: what a re-open must find again. */
  const opened = new Map<string, Buffer>();
  let serial = '';

  /** Slot, session, login: the start-up checks, also the re-open after a lost session. */
  function connect(): Buffer {
    const found = findTokenSlot(lib, options.tokenLabel);
    if (found.slot === undefined) {
      throw new SigningDeviceError('token_label', `no token labelled "${options.tokenLabel}" in ${modulePath} (tokens present: ${found.labels.map((l) => `"${l}"`).join(', ') || 'none'})`);
    }
    serial = lib.C_GetTokenInfo(found.slot).serialNumber.trim();
    const s = lib.C_OpenSession(found.slot, pkcs11js.CKF_SERIAL_SESSION);
    const pinDigest = crypto.createHash('sha256').update(options.pin).digest('hex');
    try {
      lib.C_Login(s, pkcs11js.CKU_USER, options.pin);
      rememberLogin(modulePath, options.tokenLabel, pinDigest);
    } catch (err) {
      // Logged in already: login state is per application and token, shared by its sessions
      // (module.ts): the token cannot check this PIN again, the remembered one can.
      if (code(err) === pkcs11js.CKR_USER_ALREADY_LOGGED_IN) {
        const before = loggedInWith(modulePath, options.tokenLabel);
        if (before !== undefined && before !== pinDigest) {
          lib.C_CloseSession(s);
          throw new SigningDeviceError('pin', `the token "${options.tokenLabel}" refused the PIN (another PIN is logged in to it in this process)`);
        }
      } else {
        lib.C_CloseSession(s);
        const c = code(err);
        if (c === pkcs11js.CKR_PIN_INCORRECT || c === pkcs11js.CKR_PIN_INVALID || c === pkcs11js.CKR_PIN_LEN_RANGE || c === pkcs11js.CKR_PIN_LOCKED || c === pkcs11js.CKR_PIN_EXPIRED) {
          throw new SigningDeviceError('pin', `the token "${options.tokenLabel}" refused the PIN (${reason(err)})`);
        }
        throw new SigningDeviceError('pin', `cannot log in to the token "${options.tokenLabel}": ${reason(err)}`);
      }
    }
    return s;
  }

  function attrs(s: Buffer, object: Buffer, types: number[]): Map<number, Buffer> {
    const out = new Map<number, Buffer>();
    for (const a of lib.C_GetAttributeValue(s, object, types.map((type) => ({ type })))) out.set(a.type, a.value);
    return out;
  }

  function findKey(s: Buffer, want: (typeof wanted)[number]): KeyHandle {
    const keys = findObjects(lib, s, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_LABEL, value: want.label },
    ]);
    if (keys.length === 0) throw new SigningDeviceError(want.field, `no private key labelled "${want.label}" in the token "${options.tokenLabel}"`);
    if (keys.length > 1) throw new SigningDeviceError(want.field, `${keys.length} private keys are labelled "${want.label}" in the token "${options.tokenLabel}": the label must name one key`);
    const handle = keys[0]!;
    const a = attrs(s, handle, [pkcs11js.CKA_KEY_TYPE, pkcs11js.CKA_SIGN, pkcs11js.CKA_SENSITIVE, pkcs11js.CKA_EXTRACTABLE, pkcs11js.CKA_ID]);
    const keyType = ulong(a.get(pkcs11js.CKA_KEY_TYPE));
    const algorithm: SignerKeyType | undefined = keyType === pkcs11js.CKK_EC ? 'ec-p256' : keyType === pkcs11js.CKK_RSA ? 'rsa' : undefined;
    if (algorithm !== want.algorithm) throw new SigningDeviceError(want.field, `the key "${want.label}" must be ${want.algorithm === 'rsa' ? 'an RSA' : 'an EC P-256'} key`);
    if (!bool(a.get(pkcs11js.CKA_SIGN))) throw new SigningDeviceError(want.field, `the key "${want.label}" is not allowed to sign (CKA_SIGN is false)`);
    // The point of the mode: a key that can leave the token is refused.
    if (!bool(a.get(pkcs11js.CKA_SENSITIVE)) || bool(a.get(pkcs11js.CKA_EXTRACTABLE))) {
      throw new SigningDeviceError(want.field, `the key "${want.label}" can be exported (CKA_SENSITIVE must be true and CKA_EXTRACTABLE false): HardwareDevice mode keeps keys inside the token`);
    }
    const id = a.get(pkcs11js.CKA_ID) ?? Buffer.alloc(0);
    return { handle, algorithm, id, publicKey: publicKeyOf(s, want, handle, id, algorithm) };
  }

  /** The public half, read from the token: the public key object with the same CKA_ID (or label); RSA private keys also carry it. */
  function publicKeyOf(s: Buffer, want: (typeof wanted)[number], handle: Buffer, id: Buffer, algorithm: SignerKeyType): KeyObject {
    const match = id.length > 0 ? { type: pkcs11js.CKA_ID, value: id } : { type: pkcs11js.CKA_LABEL, value: want.label };
    const pub = findObjects(lib, s, [{ type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY }, match])[0];
    try {
      if (algorithm === 'rsa') {
        const a = attrs(s, pub ?? handle, [pkcs11js.CKA_MODULUS, pkcs11js.CKA_PUBLIC_EXPONENT]);
        return crypto.createPublicKey({
          key: { kty: 'RSA', n: a.get(pkcs11js.CKA_MODULUS)!.toString('base64url'), e: a.get(pkcs11js.CKA_PUBLIC_EXPONENT)!.toString('base64url') },
          format: 'jwk',
        });
      }
      if (pub === undefined) throw new Error('no public key object with the same CKA_ID');
      const a = attrs(s, pub, [pkcs11js.CKA_EC_PARAMS, pkcs11js.CKA_EC_POINT]);
      if (!a.get(pkcs11js.CKA_EC_PARAMS)!.equals(P256_PARAMS)) throw new Error('the curve is not P-256');
      const point = ecPoint(a.get(pkcs11js.CKA_EC_POINT)!);
      return crypto.createPublicKey({
        key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') },
        format: 'jwk',
      });
    } catch (err) {
      if (err instanceof SigningDeviceError) throw err;
      throw new SigningDeviceError(want.field, `cannot read the public key of "${want.label}" from the token: ${reason(err)}`);
    }
  }

  function findCertificate(s: Buffer, want: (typeof wanted)[number], key: KeyHandle): X509Certificate {
    const match = key.id.length > 0 ? { type: pkcs11js.CKA_ID, value: key.id } : { type: pkcs11js.CKA_LABEL, value: want.label };
    const found = findObjects(lib, s, [{ type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_CERTIFICATE }, match]);
    if (found.length === 0) throw new SigningDeviceError(want.field, `no certificate with the CKA_ID of the key "${want.label}" in the token: store the key's X.509 certificate beside it`);
    for (const h of found) {
      const cert = new X509Certificate(attrs(s, h, [pkcs11js.CKA_VALUE]).get(pkcs11js.CKA_VALUE)!);
      if (!cert.publicKey.export({ type: 'spki', format: 'der' }).equals(key.publicKey.export({ type: 'spki', format: 'der' }))) continue;
      // As for an uploaded certificate (services/certificates.ts): an expired one signs nothing
      // an authority accepts, so it stops start-up rather than every record being rejected.
      const notAfter = new Date(cert.validTo);
      if (notAfter.getTime() <= Date.now()) throw new SigningDeviceError(want.field, `the certificate stored beside the key "${want.label}" has expired (not_after ${notAfter.toISOString()})`);
      return cert;
    }
    throw new SigningDeviceError(want.field, `the certificate stored beside the key "${want.label}" is not the key's (another public key)`);
  }

  function loadKeys(s: Buffer): void {
    for (const w of wanted) handles.set(w.field, findKey(s, w));
  }

  /** Re-open after a lost session (see the file comment). */
  function reconnect(): Buffer {
    if (session !== undefined) {
      try {
        lib.C_CloseSession(session);
      } catch {
        // gone already
      }
      session = undefined;
    }
    const s = connect();
    session = s;
    // Another token (or key) under the same label is not the device we started with: each key
    // is checked against the public key read at open (`opened`, never updated), and the handles
    // are replaced only when every key matches, so a refused key stays refused on every later
    // attempt instead of becoming the one compared against (it would then sign silently).
    const found = new Map<string, KeyHandle>();
    try {
      for (const w of wanted) found.set(w.field, findKey(s, w));
      for (const [f, k] of found) {
        if (!opened.get(f)?.equals(k.publicKey.export({ type: 'spki', format: 'der' }))) throw new SigningDeviceError(f as SigningDeviceField, 'the token now holds another key under this label');
      }
    } catch (err) {
      // Refused: this session is not kept (each attempt opens its own).
      session = undefined;
      try {
        lib.C_CloseSession(s);
      } catch {
        // gone already
      }
      throw err;
    }
    for (const [f, k] of found) handles.set(f, k);
    return s;
  }

  function signOnce(field: SigningDeviceField, digest: SignerDigest, data: Buffer): Buffer {
    if (session === undefined) session = reconnect();
    const key = handles.get(field)!;
    if (key.algorithm === 'ec-p256') {
      if (digest !== 'sha256') throw new Error('the EC P-256 key signs with SHA-256 only');
      lib.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, key.handle);
      return Buffer.from(lib.C_Sign(session, crypto.createHash('sha256').update(data).digest(), Buffer.alloc(132)));
    }
    lib.C_SignInit(session, { mechanism: digest === 'sha1' ? pkcs11js.CKM_SHA1_RSA_PKCS : pkcs11js.CKM_SHA256_RSA_PKCS }, key.handle);
    return Buffer.from(lib.C_Sign(session, data, Buffer.alloc(1024)));
  }

  function sign(field: SigningDeviceField, digest: SignerDigest, data: Buffer): Buffer {
    if (closed) throw new SigningDeviceError('device', 'the signing device is closed');
    const unavailable = (err: unknown, first?: unknown) =>
      new SigningDeviceError('device', `the signing device (token "${options.tokenLabel}") is unavailable: ${reason(err)}${first === undefined ? '' : ` (first: ${reason(first)})`}`);
    try {
      return signOnce(field, digest, data);
    } catch (err) {
      // A re-open left over from an earlier failure (no session) failed again: the token is
      // still absent, locked, refuses the PIN or holds other keys. Still the device's fault at
      // signing time (503), not a start-up setting.
      if (err instanceof SigningDeviceError && err.field !== 'device') {
        session = undefined;
        throw unavailable(err);
      }
      const c = code(err);
      if (c === undefined) throw err;
      if (!RECONNECT_CODES.has(c)) throw new SigningDeviceError('device', `the signing device (token "${options.tokenLabel}") refused to sign: ${reason(err)}`);
      try {
        session = reconnect();
        return signOnce(field, digest, data);
      } catch (again) {
        session = undefined;
        throw unavailable(again, err);
      }
    }
  }

  const signer = (field: SigningDeviceField): Signer => {
    const k = handles.get(field)!;
    return { algorithm: k.algorithm, publicKey: k.publicKey, device: 'pkcs11', sign: (digest, data) => sign(field, digest, data) };
  };

  try {
    session = connect();
    loadKeys(session);
    for (const [f, k] of handles) opened.set(f, k.publicKey.export({ type: 'spki', format: 'der' }));
    let certificate: SigningDevice['certificate'];
    const cw = wanted.find((w) => w.field === 'keys.certificate');
    if (cw) {
      const cert = findCertificate(session, cw, handles.get(cw.field)!);
      certificate = { signer: signer('keys.certificate'), certificate: cert, certificatePem: cert.toString() };
    }
    const producer: Record<string, Signer> = {};
    for (const cc of Object.keys(options.keys.producer ?? {})) if (handles.has(`keys.producer.${cc}`)) producer[cc] = signer(`keys.producer.${cc}`);
    return {
      description: `PKCS#11 ${modulePath}, token "${options.tokenLabel}" (serial ${serial})`,
      records: handles.has('keys.records') ? signer('keys.records') : undefined,
      certificate,
      producer,
      close() {
        if (closed) return;
        closed = true;
        try {
          if (session !== undefined) lib.C_CloseSession(session);
        } catch {
          // the token went away: nothing to close
        }
        releaseModule(modulePath);
      },
    };
  } catch (err) {
    try {
      if (session !== undefined) lib.C_CloseSession(session);
    } catch {
      // ignore
    }
    releaseModule(modulePath);
    if (err instanceof SigningDeviceError) throw err;
    throw new SigningDeviceError('device', `cannot open the token "${options.tokenLabel}": ${reason(err)}`);
  }
}

/** CKA_EC_POINT is a DER OCTET STRING around the uncompressed point (some tokens give the bare point). */
function ecPoint(value: Buffer): Buffer {
  if (value.length === 67 && value[0] === 0x04 && value[1] === 0x41 && value[2] === 0x04) return value.subarray(2);
  if (value.length === 65 && value[0] === 0x04) return value;
  throw new Error('CKA_EC_POINT is not an uncompressed P-256 point');
}
