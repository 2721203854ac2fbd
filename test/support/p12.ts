import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import forge from 'node-forge';

/*
 * Real PKCS#12 files, made with the openssl CLI (OpenSSL 3):
 * - modern: the default of `openssl pkcs12 -export` (PBES2: PBKDF2 + AES-256-CBC, SHA-256 MAC);
 * - legacy: `-legacy` (certificates under pbeWithSHA1And40BitRC2-CBC, key under 3DES, SHA-1 MAC);
 * - 3des: `-keypbe PBE-SHA1-3DES -certpbe PBE-SHA1-3DES` (default provider).
 */
export type P12Kind = 'modern' | 'legacy' | '3des';

export interface GeneratedCert {
  /** Leaf certificate (PEM) and its PKCS#8 key. */
  certPem: string;
  keyPem: string;
  /** The issuing CA when the leaf is CA-signed (it is then shipped in the file too). */
  caPem?: string;
  notBefore: Date;
  notAfter: Date;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'p12-'));
let n = 0;
const file = (name: string) => path.join(dir, `${++n}-${name}`);
const openssl = (args: string[]) => execFileSync('/usr/bin/openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });

export interface CertOptions {
  /** Subject, openssl form; default `/C=ES/serialNumber=IDCES-12345678Z/CN=Test Signer`. */
  subject?: string;
  /** Sign with a generated CA (chain of two) instead of self-signing. */
  withCa?: boolean;
  /** `rsa` (default) or `ec` (P-256). */
  keyType?: 'rsa' | 'ec';
  days?: number;
  /** Extensions for a self-signed certificate, openssl `-addext` form (e.g. `keyUsage=critical,keyCertSign`). */
  addext?: readonly string[];
}

export function generateCert(opts: CertOptions = {}): GeneratedCert {
  const subject = opts.subject ?? '/C=ES/serialNumber=IDCES-12345678Z/CN=Test Signer';
  const days = String(opts.days ?? 365);
  const keyArgs = opts.keyType === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'] : ['-newkey', 'rsa:2048'];
  const key = file('key.pem');
  const cert = file('cert.pem');
  let caPem: string | undefined;
  if (opts.withCa) {
    const caKey = file('ca-key.pem');
    const ca = file('ca.pem');
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', ca, '-days', '3650', '-subj', '/C=ES/O=Test CA Org/CN=Test Issuing CA']);
    const csr = file('leaf.csr');
    openssl(['req', '-new', ...keyArgs, '-nodes', '-keyout', key, '-out', csr, '-subj', subject]);
    openssl(['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', days]);
    caPem = fs.readFileSync(ca, 'utf8');
  } else {
    openssl(['req', '-x509', ...keyArgs, '-nodes', '-keyout', key, '-out', cert, '-days', days, '-subj', subject, ...(opts.addext ?? []).flatMap((e) => ['-addext', e])]);
  }
  const certPem = fs.readFileSync(cert, 'utf8');
  const x = new crypto.X509Certificate(certPem);
  return {
    certPem,
    keyPem: fs.readFileSync(key, 'utf8'),
    ...(caPem ? { caPem } : {}),
    notBefore: new Date(x.validFrom),
    notAfter: new Date(x.validTo),
  };
}

const PBE: Record<P12Kind, string[]> = {
  modern: [],
  legacy: ['-legacy'],
  '3des': ['-keypbe', 'PBE-SHA1-3DES', '-certpbe', 'PBE-SHA1-3DES'],
};

/** Exports a generated certificate as PKCS#12; `noKey` leaves the private key out. */
export function exportP12(c: GeneratedCert, password: string, kind: P12Kind = 'modern', opts: { noKey?: boolean } = {}): Buffer {
  const certFile = file('c.pem');
  fs.writeFileSync(certFile, c.certPem);
  const out = file('out.p12');
  const args = ['pkcs12', '-export', '-in', certFile, '-out', out, '-passout', `pass:${password}`, ...PBE[kind]];
  if (opts.noKey) args.push('-nokeys');
  else {
    const keyFile = file('k.pem');
    fs.writeFileSync(keyFile, c.keyPem);
    args.push('-inkey', keyFile);
  }
  if (c.caPem) {
    const caFile = file('ca-chain.pem');
    fs.writeFileSync(caFile, c.caPem);
    args.push('-certfile', caFile);
  }
  openssl(args);
  return fs.readFileSync(out);
}

/** What `openssl pkcs12 -info` says of a file's encryption (to show the test made what it claims). */
export function p12Info(p12: Buffer, password: string): string {
  const f = file('info.p12');
  fs.writeFileSync(f, p12);
  // -info writes to stderr; OpenSSL 3 without its legacy provider fails on RC2 files but still names the cipher.
  const r = spawnSync('/usr/bin/openssl', ['pkcs12', '-in', f, '-info', '-noout', '-passin', `pass:${password}`]);
  return `${r.stdout?.toString() ?? ''}${r.stderr?.toString() ?? ''}`;
}

/** A multipart/form-data body (fields in order; the file part last unless placed). */
export function multipartBody(parts: Array<{ name: string; value: string } | { name: string; filename: string; data: Buffer }>): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----test${crypto.randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    if ('data' in p) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: application/x-pkcs12\r\n\r\n`));
      chunks.push(p.data, Buffer.from('\r\n'));
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** The usual upload form. */
export function uploadForm(p: { certificateId?: string; password?: string; file?: Buffer; filename?: string }) {
  const parts: Parameters<typeof multipartBody>[0] = [];
  if (p.certificateId !== undefined) parts.push({ name: 'certificate_id', value: p.certificateId });
  if (p.password !== undefined) parts.push({ name: 'password', value: p.password });
  if (p.file !== undefined) parts.push({ name: 'certificate', filename: p.filename ?? 'cert.p12', data: p.file });
  return multipartBody(parts);
}

/**
 * A leaf issued by an intermediate CA issued by a root: `caPem` is the intermediate,
 * `rootPem` the root (a file may ship either, both, in any order).
 */
export function generateChainCert(subject = '/C=ES/serialNumber=IDCES-12345678Z/CN=Chained Signer'): GeneratedCert & { rootPem: string } {
  const rootKey = file('root-key.pem');
  const root = file('root.pem');
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', rootKey, '-out', root, '-days', '3650', '-subj', '/C=ES/O=Test Root Org/CN=Test Root CA']);
  const extFile = file('ca.ext');
  fs.writeFileSync(extFile, 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n');
  const interKey = file('inter-key.pem');
  const interCsr = file('inter.csr');
  const inter = file('inter.pem');
  openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', interKey, '-out', interCsr, '-subj', '/C=ES/O=Test Root Org/CN=Test Intermediate CA']);
  openssl(['x509', '-req', '-in', interCsr, '-CA', root, '-CAkey', rootKey, '-CAcreateserial', '-out', inter, '-days', '3650', '-extfile', extFile]);
  const key = file('leaf-key.pem');
  const csr = file('leaf.csr');
  const cert = file('leaf.pem');
  openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', subject]);
  openssl(['x509', '-req', '-in', csr, '-CA', inter, '-CAkey', interKey, '-CAcreateserial', '-out', cert, '-days', '365']);
  const certPem = fs.readFileSync(cert, 'utf8');
  const x = new crypto.X509Certificate(certPem);
  return {
    certPem, keyPem: fs.readFileSync(key, 'utf8'), caPem: fs.readFileSync(inter, 'utf8'), rootPem: fs.readFileSync(root, 'utf8'),
    notBefore: new Date(x.validFrom), notAfter: new Date(x.validTo),
  };
}

/** PKCS#12 (openssl, modern) of a key and certificate with the other certificates given, in that order. */
export function exportP12With(c: Pick<GeneratedCert, 'certPem' | 'keyPem'>, password: string, others: readonly string[]): Buffer {
  const certFile = file('c.pem');
  fs.writeFileSync(certFile, c.certPem);
  const keyFile = file('k.pem');
  fs.writeFileSync(keyFile, c.keyPem);
  const out = file('out.p12');
  const args = ['pkcs12', '-export', '-in', certFile, '-inkey', keyFile, '-out', out, '-passout', `pass:${password}`];
  if (others.length) {
    const othersFile = file('others.pem');
    fs.writeFileSync(othersFile, others.join(''));
    args.push('-certfile', othersFile);
  }
  openssl(args);
  return fs.readFileSync(out);
}

/**
 * PKCS#12 written by node-forge (RSA keys only), for what openssl's CLI does not write:
 * `password: null` is a file "without a password" as forge, Java and others make it (MAC
 * keyed with no password bytes, bags unencrypted); several identities (each key with its
 * certificates) in one file (then without a MAC).
 */
export function forgeP12(identities: ReadonlyArray<{ keyPem: string; certPems: readonly string[] }>, password: string | null): Buffer {
  const der = (a: forge.asn1.Asn1) => Buffer.from(forge.asn1.toDer(a).getBytes(), 'binary');
  const pfxOf = (i: (typeof identities)[number], useMac: boolean) =>
    forge.pkcs12.toPkcs12Asn1(
      forge.pki.privateKeyFromPem(i.keyPem),
      i.certPems.map((p) => forge.pki.certificateFromPem(p)),
      password as string,
      { algorithm: '3des', useMac },
    );
  if (identities.length === 1) return der(pfxOf(identities[0]!, true));
  // PFX ::= SEQUENCE { version, authSafe ContentInfo (data: OCTET STRING of AuthenticatedSafe), macData? }
  const authSafeOf = (pfx: forge.asn1.Asn1) => {
    const content = (((pfx.value as forge.asn1.Asn1[])[1]!.value as forge.asn1.Asn1[])[1]!.value as forge.asn1.Asn1[])[0]!;
    return forge.asn1.fromDer(content.value as string);
  };
  const pfxs = identities.map((i) => pfxOf(i, false));
  const merged = forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.SEQUENCE, true, pfxs.flatMap((p) => authSafeOf(p).value as forge.asn1.Asn1[]));
  const first = pfxs[0]!;
  const ci = (first.value as forge.asn1.Asn1[])[1]!;
  ((ci.value as forge.asn1.Asn1[])[1]!.value as forge.asn1.Asn1[])[0]!.value = forge.asn1.toDer(merged).getBytes();
  return der(first);
}
