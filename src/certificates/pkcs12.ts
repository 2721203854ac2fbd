import crypto from 'node:crypto';
import forge from 'node-forge';

/**
 * PKCS#12 (.p12/.pfx) reading. node-forge opens the container: the modern files
 * OpenSSL 3 writes by default (PBES2: PBKDF2 + AES-256-CBC, HMAC-SHA256 MAC) as well as
 * legacy ones (pbeWithSHA1And40BitRC2-CBC, pbeWithSHA1And3-KeyTripleDES-CBC) that
 * OpenSSL 3 itself no longer opens without its legacy provider. Keys and certificates
 * are then handed to Node's crypto as DER, so RSA and EC keys both work (forge alone
 * decodes only RSA).
 */
export interface SigningMaterial {
  /** PKCS#8 PEM. */
  privateKeyPem: string;
  /** The certificate of the private key. */
  certificatePem: string;
  /** The leaf's issuers found in the file (intermediates, maybe the root), leaf's issuer first; other certificates of the file left out. */
  chainPem: string[];
}

export interface CertificateInfo {
  subjectCn: string | null;
  issuer: string | null;
  notBefore: Date;
  notAfter: Date;
  nif: string | null;
  /**
   * Whether the certificate may sign: false only when it carries a keyUsage extension
   * (RFC 5280 §4.2.1.3) that grants neither digitalSignature nor nonRepudiation (a CA or an
   * encryption-only certificate). No keyUsage extension means no restriction.
   */
  canSign: boolean;
}

const KEY_USAGE_OID = '2.5.29.15';

/**
 * The keyUsage bits of a DER certificate, or null when it has no keyUsage extension.
 * Read with forge's ASN.1 reader rather than `forge.pki.certificateFromAsn1`, which refuses
 * every key that is not RSA (EC certificates are uploaded too). Certificate ::= SEQUENCE
 * { tbsCertificate, … }; the extensions are the tbsCertificate's [3] EXPLICIT field.
 */
export function keyUsageOf(der: Buffer): { digitalSignature: boolean; nonRepudiation: boolean } | null {
  // forge's options form (its typings know only the boolean `strict`): BIT STRINGs left as
  // bytes, so the KeyUsage bits are never mistaken for nested ASN.1.
  const fromDer = forge.asn1.fromDer as unknown as (b: forge.util.ByteStringBuffer, o: { decodeBitStrings: boolean }) => forge.asn1.Asn1;
  const read = (bytes: string) => fromDer(forge.util.createBuffer(bytes), { decodeBitStrings: false });
  const cert = read(der.toString('binary'));
  const tbs = (cert.value as forge.asn1.Asn1[])[0]!;
  const explicit3 = (tbs.value as forge.asn1.Asn1[]).find((n) => n.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && n.type === 3);
  const extensions = explicit3 ? ((explicit3.value as forge.asn1.Asn1[])[0]?.value as forge.asn1.Asn1[] | undefined) ?? [] : [];
  for (const ext of extensions) {
    const parts = ext.value as forge.asn1.Asn1[];
    if (forge.asn1.derToOid(forge.util.createBuffer(parts[0]!.value as string)) !== KEY_USAGE_OID) continue;
    // extnValue (the last part; `critical` may sit between) is an OCTET STRING holding the
    // DER of KeyUsage ::= BIT STRING: first byte = unused bits, then bit 0 (digitalSignature)
    // is the high bit of the next byte, bit 1 (nonRepudiation) the one after.
    const bits = read(parts[parts.length - 1]!.value as string).value as string;
    const first = bits.length > 1 ? bits.charCodeAt(1) : 0;
    return { digitalSignature: (first & 0x80) !== 0, nonRepudiation: (first & 0x40) !== 0 };
  }
  return null;
}

export type Pkcs12Failure = 'unreadable' | 'bad_password' | 'no_private_key' | 'no_certificate' | 'several_identities';

export class Pkcs12Error extends Error {
  readonly reason: Pkcs12Failure;
  constructor(reason: Pkcs12Failure, message: string) {
    super(message);
    this.name = 'Pkcs12Error';
    this.reason = reason;
  }
}

/** The NIF in a subject serialNumber: `IDCES-12345678Z` / `VATES-B12345674` → the part after the prefix; else the value itself. */
export function nifFromSerialNumber(serial: string | null | undefined): string | null {
  if (!serial) return null;
  const s = serial.trim();
  const m = /^(?:IDC|VAT)[A-Z]{2}-(.+)$/i.exec(s);
  const nif = (m ? m[1]! : s).trim().toUpperCase();
  return nif === '' ? null : nif;
}

/** Node prints a name one `key=value` per line; the first value of `key`. */
function nameField(name: string, key: string): string | null {
  for (const line of name.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0 && line.slice(0, i) === key) return line.slice(i + 1);
  }
  return null;
}

/** Metadata of a PEM certificate: CN, issuer (`CN=…,O=…,C=…`), validity and the NIF of the subject. */
export function describeCertificate(certificatePem: string): CertificateInfo {
  const x = new crypto.X509Certificate(certificatePem);
  const issuer = x.issuer.split('\n').filter(Boolean).reverse().join(',');
  return {
    subjectCn: nameField(x.subject, 'CN'),
    issuer: issuer || null,
    notBefore: new Date(x.validFrom),
    notAfter: new Date(x.validTo),
    nif: nifFromSerialNumber(nameField(x.subject, 'serialNumber')),
    canSign: canSign(x.raw),
  };
}

function canSign(der: Buffer): boolean {
  let usage: ReturnType<typeof keyUsageOf>;
  try {
    usage = keyUsageOf(der);
  } catch {
    return true; // Node parsed the certificate already; an extension forge cannot read is no reason to refuse it
  }
  return usage === null || usage.digitalSignature || usage.nonRepudiation;
}

const derOf = (asn1: forge.asn1.Asn1): Buffer => Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
const pem = (label: string, der: Buffer) =>
  `-----BEGIN ${label}-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;

interface Bag {
  key?: forge.pki.PrivateKey | null;
  cert?: forge.pki.Certificate | null;
  asn1?: forge.asn1.Asn1;
}

function keyObject(bag: Bag): crypto.KeyObject | undefined {
  try {
    // forge decoded an RSA key; any other type stays as its PKCS#8 ASN.1.
    const info = bag.key ? forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key as forge.pki.rsa.PrivateKey)) : bag.asn1;
    return info ? crypto.createPrivateKey({ key: derOf(info), format: 'der', type: 'pkcs8' }) : undefined;
  } catch {
    return undefined;
  }
}

function x509(bag: Bag): crypto.X509Certificate | undefined {
  try {
    const asn1 = bag.cert ? forge.pki.certificateToAsn1(bag.cert) : bag.asn1;
    return asn1 ? new crypto.X509Certificate(derOf(asn1)) : undefined;
  } catch {
    return undefined;
  }
}

const MAC_FAILED = /MAC could not be verified/i;

/**
 * forge derives the integrity MAC key from the password as a BMPString (UTF-16, RFC 7292
 * Appendix B: right), but hands the same JS string to PBKDF2 for PBES2-encrypted bags as
 * a "binary string", one byte per UTF-16 unit, where OpenSSL (RFC 8018) uses the UTF-8
 * bytes: with a non-ASCII password (`contraseña`) the MAC verifies and the decryption of
 * an OpenSSL 3 default file (PBES2, AES-256) fails. So, when the MAC passed but the bags
 * did not open, the bags are opened again with the UTF-8 bytes, the already verified
 * macData left out of that second pass.
 */
function openPfxWith(asn1: forge.asn1.Asn1, password: string): forge.pkcs12.Pkcs12Pfx {
  try {
    return forge.pkcs12.pkcs12FromAsn1(asn1, false, password);
  } catch (err) {
    const utf8 = forge.util.encodeUtf8(password);
    if (utf8 === password || MAC_FAILED.test(String((err as Error)?.message ?? err))) throw err;
    const parts = asn1.value as forge.asn1.Asn1[];
    const withoutMac = { ...asn1, value: parts.slice(0, 2) } as forge.asn1.Asn1;
    return forge.pkcs12.pkcs12FromAsn1(withoutMac, false, utf8);
  }
}

/**
 * A file "without a password" is written two ways: OpenSSL (`-passout pass:`) derives the
 * MAC and PBE keys from the empty password as a BMPString with its two-byte terminator;
 * other tools (forge with a null password, among others) from no bytes at all. OpenSSL's
 * `pkcs12` reads both, so here too: when the password given is empty and the MAC does not
 * verify with it, the absent password is tried.
 */
function openPfx(asn1: forge.asn1.Asn1, password: string): forge.pkcs12.Pkcs12Pfx {
  try {
    return openPfxWith(asn1, password);
  } catch (err) {
    if (password !== '' || !MAC_FAILED.test(String((err as Error)?.message ?? err))) throw err;
    try {
      return forge.pkcs12.pkcs12FromAsn1(asn1, false, null as unknown as string);
    } catch {
      throw err; // neither: the first answer stands
    }
  }
}

/** Whether `issuer` signed `cert`: names and key identifiers (`checkIssued`), then the signature. */
function issued(cert: crypto.X509Certificate, issuer: crypto.X509Certificate): boolean {
  try {
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/**
 * The leaf's issuers found in the file, leaf's issuer first, up to a self-signed one or
 * the last the file holds. Certificates that are not on that path (another holder's
 * certificate, a CA of another branch) are left out: the chain travels in every
 * signature's KeyInfo and in the TLS handshake, where only the leaf's path belongs.
 */
function issuerPath(leaf: crypto.X509Certificate, others: crypto.X509Certificate[]): crypto.X509Certificate[] {
  const path: crypto.X509Certificate[] = [];
  const left = [...others];
  let current = leaf;
  while (!(current !== leaf && issued(current, current))) {
    const i = left.findIndex((c) => issued(current, c));
    if (i < 0) break;
    current = left.splice(i, 1)[0]!;
    path.push(current);
  }
  return path;
}

/** Opens a PKCS#12 file with its password; throws Pkcs12Error with the reason. */
export function readPkcs12(file: Buffer, password: string): SigningMaterial {
  let asn1: forge.asn1.Asn1;
  try {
    asn1 = forge.asn1.fromDer(forge.util.createBuffer(file.toString('binary')));
  } catch {
    throw new Pkcs12Error('unreadable', 'not DER');
  }
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    p12 = openPfx(asn1, password);
  } catch (err) {
    const msg = String((err as Error)?.message ?? err);
    // A DER file that is not a PFX at all fails on its structure; the rest is the password
    // (a MAC mismatch, or garbage after decrypting a file without a MAC) or a cipher forge lacks.
    if (/Cannot read PKCS#12 PFX|ASN\.1 object is not|PKCS#12 PFX/i.test(msg) && !/MAC/i.test(msg)) throw new Pkcs12Error('unreadable', msg);
    throw new Pkcs12Error('bad_password', msg);
  }

  const bagsOf = (type: string): Bag[] => (p12.getBags({ bagType: type })[type] ?? []) as Bag[];
  const keyBags = [...bagsOf(forge.pki.oids.pkcs8ShroudedKeyBag!), ...bagsOf(forge.pki.oids.keyBag!)];
  const keys = keyBags.map(keyObject).filter((k): k is crypto.KeyObject => !!k);
  if (keys.length === 0) throw new Pkcs12Error('no_private_key', 'no private key');
  const certs = bagsOf(forge.pki.oids.certBag!).map(x509).filter((c): c is crypto.X509Certificate => !!c);
  if (certs.length === 0) throw new Pkcs12Error('no_certificate', 'no certificate');

  // Each key with its certificate (the same pair may sit in two bags: one identity).
  const identities = new Map<string, { key: crypto.KeyObject; leaf: crypto.X509Certificate }>();
  for (const key of keys) {
    const leaf = certs.find((c) => c.checkPrivateKey(key));
    if (leaf && !identities.has(leaf.fingerprint256)) identities.set(leaf.fingerprint256, { key, leaf });
  }
  // Two holders' certificates with their keys: which one signs cannot be guessed.
  if (identities.size > 1) throw new Pkcs12Error('several_identities', 'several certificates with their private keys');
  for (const { key, leaf } of identities.values()) {
    return {
      privateKeyPem: key.export({ format: 'pem', type: 'pkcs8' }) as string,
      certificatePem: pem('CERTIFICATE', leaf.raw),
      chainPem: issuerPath(leaf, certs.filter((c) => c !== leaf)).map((c) => pem('CERTIFICATE', c.raw)),
    };
  }
  throw new Pkcs12Error('no_certificate', 'no certificate matches the private key');
}
