/**
 * Helpers for the Spain end-to-end tests (test/api/spain-*.test.ts): valid NIFs, issuer
 * certificates uploaded through the API, reading signed TicketBAI records, and posting a
 * stored record to a fake authority as a TLS client (to play "the record already arrived").
 */
import crypto from 'node:crypto';
import https from 'node:https';
import type { TestApp } from './harness.ts';
import { exportP12, generateCert, uploadForm, type GeneratedCert } from './p12.ts';

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

/** A valid DNI-form NIF (8 digits + control letter). */
export const dniNif = (n: number): string => {
  const digits = String(n).padStart(8, '0').slice(-8);
  return `${digits}${DNI_LETTERS[Number(digits) % 23]}`;
};

/** A valid NIF no other test uses: each authority scenario gets its own issuer at the fakes. */
export const freshNif = (): string => dniNif(crypto.randomInt(10_000_000, 99_999_999));

/*
 * ASCII on purpose: a modern (PBES2/AES) PKCS#12 whose password has non-ASCII characters
 * does not open (see the it.fails in test/api/spain-authority.test.ts).
 */
export const CERT_PASSWORD = 'clave-del-certificado';

export interface UploadedCertificate {
  certificateId: string;
  nif: string;
  cert: GeneratedCert;
  /** SHA-256 fingerprint as node prints it (`AB:CD:…`), comparable with a TLS peer certificate's. */
  fingerprint256: string;
  /** The POST /v1/certificates answer. */
  view: Record<string, unknown>;
}

/**
 * A personal certificate for `nif` (subject serialNumber `IDCES-<nif>`, as FNMT writes
 * it), valid ten years (xmlsec1 verifies at 2030), uploaded as PKCS#12.
 */
export async function uploadSpainCertificate(t: TestApp, key: string, nif: string, certificateId = `cert-${nif}`): Promise<UploadedCertificate> {
  const cert = generateCert({ subject: `/C=ES/serialNumber=IDCES-${nif}/CN=Firmante ${nif}`, days: 3650 });
  const { payload, headers } = uploadForm({ certificateId, password: CERT_PASSWORD, file: exportP12(cert, CERT_PASSWORD) });
  const res = await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
  if (res.statusCode !== 201) throw new Error(`certificate upload: ${res.statusCode} ${res.body}`);
  return { certificateId, nif, cert, fingerprint256: new crypto.X509Certificate(cert.certPem).fingerprint256, view: res.json() };
}

/** The text of the first element with this (prefixed) name. */
export const tagText = (xml: string, name: string): string | undefined =>
  new RegExp(`<${name}(?:\\s[^>]*)?>([^<]*)</${name}>`).exec(xml)?.[1];

/** The base64 `ds:X509Certificate` a signed document carries in its KeyInfo, as PEM. */
export function embeddedCertificatePem(xml: string): string {
  const b64 = tagText(xml, 'ds:X509Certificate');
  if (!b64) throw new Error('no ds:X509Certificate in the document');
  const body = b64.replace(/\s+/g, '').match(/.{1,64}/g)!.join('\n');
  return `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
}

/** SHA-256 fingerprint of a PEM certificate (`AB:CD:…`). */
export const fingerprintOf = (pem: string): string => new crypto.X509Certificate(pem).fingerprint256;

/** POSTs a body to a fake authority as a TLS client with the given certificate. */
export function postAsClient(
  url: string,
  body: string,
  tls: { certPem: string; keyPem: string; caPem: string },
  contentType = 'application/xml; charset=utf-8',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, {
      method: 'POST',
      headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
      cert: tls.certPem,
      key: tls.keyPem,
      ca: tls.caPem,
      agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
