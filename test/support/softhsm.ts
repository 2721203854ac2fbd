/**
 * SoftHSM2 tokens for the HardwareDevice tests (src/signing/pkcs11/): a temporary
 * SOFTHSM2_CONF and token directory, tokens initialised with `softhsm2-util`, key pairs
 * generated INSIDE the token (C_GenerateKeyPair, private half sensitive and
 * non-extractable, as a real device makes them) and certificates stored beside them.
 *
 * SoftHSM2 reads SOFTHSM2_CONF when the library is initialised: create the tokens and
 * keys of a test file before opening a device, in the same process (vitest runs each
 * test file in its own process).
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import forge from 'node-forge';
import pkcs11js from 'pkcs11js';
import { acquireModule, findTokenSlot, releaseModule } from '../../src/signing/pkcs11/module.ts';
import { DEFAULT_PKCS11_MODULE, openSigningDevice, type SigningDeviceKeys } from '../../src/signing/pkcs11/device.ts';
import type { Signer } from '../../src/signing/signer.ts';

export const SOFTHSM_MODULE = process.env.PKCS11_MODULE || DEFAULT_PKCS11_MODULE;
export const HAVE_SOFTHSM = fs.existsSync(SOFTHSM_MODULE) && (() => {
  try {
    execFileSync('softhsm2-util', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export interface SoftHsm {
  dir: string;
  conf: string;
  module: string;
  /** A new token with this label, user PIN and SO PIN. */
  initToken(label: string, pin: string): void;
  cleanup(): void;
}

/** A fresh SoftHSM2 configuration (its own token directory), set as SOFTHSM2_CONF for this process. */
export function createSoftHsm(): SoftHsm {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'softhsm-'));
  fs.mkdirSync(path.join(dir, 'tokens'));
  const conf = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(conf, `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`);
  process.env.SOFTHSM2_CONF = conf;
  return {
    dir,
    conf,
    module: SOFTHSM_MODULE,
    initToken(label, pin) {
      execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', `so-${pin}`], { env: { ...process.env, SOFTHSM2_CONF: conf }, stdio: 'pipe' });
    },
    cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn` in a read-write session of the token, logged in as the user. */
function withSession<T>(hsm: SoftHsm, tokenLabel: string, pin: string, fn: (lib: pkcs11js.PKCS11, session: Buffer) => T): T {
  const lib = acquireModule(hsm.module);
  try {
    const { slot } = findTokenSlot(lib, tokenLabel);
    if (slot === undefined) throw new Error(`softhsm: no token ${tokenLabel}`);
    const session = lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    try {
      try {
        lib.C_Login(session, pkcs11js.CKU_USER, pin);
      } catch (err) {
        if (!(err instanceof pkcs11js.Pkcs11Error && err.code === pkcs11js.CKR_USER_ALREADY_LOGGED_IN)) throw err;
      }
      return fn(lib, session);
    } finally {
      lib.C_CloseSession(session);
    }
  } finally {
    releaseModule(hsm.module);
  }
}

export interface GenerateKeyOptions {
  label: string;
  /** CKA_ID (hex); default: a random one. */
  id?: string;
  type: 'ec-p256' | 'rsa';
  /** RSA modulus bits (default 2048). */
  bits?: number;
  /** Tests of the refusal only: a key the token would let out. */
  extractable?: boolean;
}

/** Generates a key pair inside the token (the private key never exists outside it); returns its CKA_ID. */
export function generateTokenKey(hsm: SoftHsm, tokenLabel: string, pin: string, o: GenerateKeyOptions): Buffer {
  const id = Buffer.from(o.id ?? crypto.randomBytes(8).toString('hex'), 'hex');
  withSession(hsm, tokenLabel, pin, (lib, session) => {
    const common = [
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_LABEL, value: o.label },
      { type: pkcs11js.CKA_ID, value: id },
    ];
    const publicTemplate =
      o.type === 'ec-p256'
        ? [...common, { type: pkcs11js.CKA_VERIFY, value: true }, { type: pkcs11js.CKA_EC_PARAMS, value: Buffer.from('06082a8648ce3d030107', 'hex') }]
        : [...common, { type: pkcs11js.CKA_VERIFY, value: true }, { type: pkcs11js.CKA_MODULUS_BITS, value: o.bits ?? 2048 }, { type: pkcs11js.CKA_PUBLIC_EXPONENT, value: Buffer.from([1, 0, 1]) }];
    const privateTemplate = [
      ...common,
      { type: pkcs11js.CKA_PRIVATE, value: true },
      { type: pkcs11js.CKA_SIGN, value: true },
      { type: pkcs11js.CKA_SENSITIVE, value: !o.extractable },
      { type: pkcs11js.CKA_EXTRACTABLE, value: o.extractable === true },
    ];
    lib.C_GenerateKeyPair(session, { mechanism: o.type === 'ec-p256' ? pkcs11js.CKM_EC_KEY_PAIR_GEN : pkcs11js.CKM_RSA_PKCS_KEY_PAIR_GEN }, publicTemplate, privateTemplate);
  });
  return id;
}

/** Stores an X.509 certificate (DER) in the token under `label` and `id` (the key's CKA_ID). */
export function storeTokenCertificate(hsm: SoftHsm, tokenLabel: string, pin: string, o: { label: string; id: Buffer; der: Buffer }): void {
  const cert = new crypto.X509Certificate(o.der);
  withSession(hsm, tokenLabel, pin, (lib, session) => {
    lib.C_CreateObject(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_CERTIFICATE },
      { type: pkcs11js.CKA_CERTIFICATE_TYPE, value: pkcs11js.CKC_X_509 },
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_LABEL, value: o.label },
      { type: pkcs11js.CKA_ID, value: o.id },
      { type: pkcs11js.CKA_SUBJECT, value: Buffer.from(forge.asn1.toDer(forge.pki.distinguishedNameToAsn1(forge.pki.certificateFromPem(cert.toString()).subject)).getBytes(), 'binary') },
      { type: pkcs11js.CKA_VALUE, value: o.der },
    ]);
  });
}

/** What the token answers to reading the private key's flags and its secret value. */
export function attemptExport(hsm: SoftHsm, tokenLabel: string, pin: string, label: string, secret: 'ec' | 'rsa' = 'ec'): { extractable: boolean; sensitive: boolean; valueError: string | undefined } {
  return withSession(hsm, tokenLabel, pin, (lib, session) => {
    lib.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY }, { type: pkcs11js.CKA_LABEL, value: label }]);
    const key = lib.C_FindObjects(session, 1)[0];
    lib.C_FindObjectsFinal(session);
    if (!key) throw new Error(`softhsm: no private key ${label}`);
    const a = lib.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_EXTRACTABLE }, { type: pkcs11js.CKA_SENSITIVE }]);
    let valueError: string | undefined;
    try {
      // EC keys keep their secret in CKA_VALUE, RSA keys in CKA_PRIVATE_EXPONENT.
      lib.C_GetAttributeValue(session, key, [{ type: secret === 'ec' ? pkcs11js.CKA_VALUE : pkcs11js.CKA_PRIVATE_EXPONENT }]);
    } catch (err) {
      valueError = (err as Error).message;
    }
    return { extractable: a[0]!.value[0] === 1, sensitive: a[1]!.value[0] === 1, valueError };
  });
}

/**
 * A self-signed certificate over the token key, signed BY the token (the key never
 * leaves it): node-forge writes the TBSCertificate, the signer signs it.
 */
export function selfSignedCertificateWith(signer: Signer, commonName: string, validity?: { notBefore: Date; notAfter: Date }): Buffer {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(signer.publicKey.export({ format: 'pem', type: 'spki' }) as string);
  cert.serialNumber = `01${crypto.randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = validity?.notBefore ?? new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = validity?.notAfter ?? new Date(Date.now() + 5 * 365 * 86_400_000);
  const name = [{ shortName: 'C', value: 'ES' }, { shortName: 'O', value: 'HardwareDevice test' }, { shortName: 'CN', value: commonName }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, critical: true },
  ]);
  const viaToken = {
    sign: (): string => signer.sign('sha256', Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), 'binary')).toString('binary'),
  };
  cert.sign(viaToken as unknown as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
  return Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes(), 'binary');
}

export interface TestDevice {
  hsm: SoftHsm;
  module: string;
  tokenLabel: string;
  pin: string;
  keys: Required<Pick<SigningDeviceKeys, 'records' | 'certificate'>> & { producer: Record<string, string> };
}

/**
 * One token holding every purpose's key, generated inside it: `records` (EC P-256),
 * `certificate` (RSA-2048, with a self-signed certificate made by the token), `producer-pt`
 * (RSA-1024, the SAF-T PT size).
 */
export function createTestDevice(tokenLabel = 'fiscal-device', pin = '123456'): TestDevice {
  const hsm = createSoftHsm();
  hsm.initToken(tokenLabel, pin);
  generateTokenKey(hsm, tokenLabel, pin, { label: 'records', type: 'ec-p256' });
  const certId = generateTokenKey(hsm, tokenLabel, pin, { label: 'tbai', type: 'rsa', bits: 2048 });
  generateTokenKey(hsm, tokenLabel, pin, { label: 'producer-pt', type: 'rsa', bits: 1024 });
  // The certificate is made with the key it certifies: open the device for that key alone first.
  const bare = openSigningDevice({ module: hsm.module, tokenLabel, pin, keys: { producer: { XX: 'tbai' } } });
  try {
    storeTokenCertificate(hsm, tokenLabel, pin, { label: 'tbai', id: certId, der: selfSignedCertificateWith(bare.producer.XX!, 'HARDWARE DEVICE TEST SIGNER') });
  } finally {
    bare.close();
  }
  return { hsm, module: hsm.module, tokenLabel, pin, keys: { records: 'records', certificate: 'tbai', producer: { PT: 'producer-pt' } } };
}

/**
 * Imports a known private key into the token as a sensitive, non-extractable signing key
 * (and its public key, same CKA_ID): the one way to compare the token's signatures with
 * node:crypto's over the same key (the golden keys). A real device's keys are generated
 * inside it (generateTokenKey).
 */
export function importTokenKey(hsm: SoftHsm, tokenLabel: string, pin: string, o: { label: string; privateKey: crypto.KeyObject }): void {
  const jwk = o.privateKey.export({ format: 'jwk' });
  const b = (v: string | undefined) => Buffer.from(v!, 'base64url');
  const id = crypto.randomBytes(8);
  const common = [
    { type: pkcs11js.CKA_TOKEN, value: true },
    { type: pkcs11js.CKA_LABEL, value: o.label },
    { type: pkcs11js.CKA_ID, value: id },
  ];
  const secret = [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
    { type: pkcs11js.CKA_PRIVATE, value: true },
    { type: pkcs11js.CKA_SIGN, value: true },
    { type: pkcs11js.CKA_SENSITIVE, value: true },
    { type: pkcs11js.CKA_EXTRACTABLE, value: false },
  ];
  const pub = [{ type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY }, { type: pkcs11js.CKA_VERIFY, value: true }];
  withSession(hsm, tokenLabel, pin, (lib, session) => {
    if (jwk.kty === 'RSA') {
      const rsa = [{ type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_RSA }, { type: pkcs11js.CKA_MODULUS, value: b(jwk.n) }, { type: pkcs11js.CKA_PUBLIC_EXPONENT, value: b(jwk.e) }];
      lib.C_CreateObject(session, [...common, ...secret, ...rsa,
        { type: pkcs11js.CKA_PRIVATE_EXPONENT, value: b(jwk.d) }, { type: pkcs11js.CKA_PRIME_1, value: b(jwk.p) }, { type: pkcs11js.CKA_PRIME_2, value: b(jwk.q) },
        { type: pkcs11js.CKA_EXPONENT_1, value: b(jwk.dp) }, { type: pkcs11js.CKA_EXPONENT_2, value: b(jwk.dq) }, { type: pkcs11js.CKA_COEFFICIENT, value: b(jwk.qi) }]);
      lib.C_CreateObject(session, [...common, ...pub, ...rsa]);
      return;
    }
    const params = { type: pkcs11js.CKA_EC_PARAMS, value: Buffer.from('06082a8648ce3d030107', 'hex') };
    const ec = { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_EC };
    lib.C_CreateObject(session, [...common, ...secret, ec, params, { type: pkcs11js.CKA_VALUE, value: b(jwk.d) }]);
    lib.C_CreateObject(session, [...common, ...pub, ec, params, { type: pkcs11js.CKA_EC_POINT, value: Buffer.concat([Buffer.from([0x04, 0x41, 0x04]), b(jwk.x), b(jwk.y)]) }]);
  });
}

/**
 * What unplugging a token does to the library: every session on its slot closed. The slot
 * is the one labelled `tokenLabel`, or one that no longer answers C_GetTokenInfo (its
 * files moved away or the token deleted).
 */
export function closeTokenSessions(module: string, tokenLabel: string): void {
  const lib = acquireModule(module);
  try {
    for (const slot of lib.C_GetSlotList(false)) {
      let label: string | undefined;
      try {
        label = lib.C_GetTokenInfo(slot).label.trim();
      } catch {
        label = undefined;
      }
      if (label === undefined || label === tokenLabel) lib.C_CloseAllSessions(slot);
    }
  } finally {
    releaseModule(module);
  }
}
