/**
 * Signs an XML document XAdES-BES enveloped with xmlsec1 (XML Security Library), the way
 * SdI signs its notifications: a `ds:Signature` appended as the root's last child,
 * RSA-SHA256, two references (the whole document with the enveloped-signature transform,
 * and `xades:SignedProperties` with SigningTime and SigningCertificate), KeyInfo with the
 * X509 certificate. The canonicalization is xmlsec1's, not ours: the receiver's verifier
 * (src/signing/xmldsig-verify.ts) is checked against an independent implementation.
 * Pretty-printed on purpose (white space between elements, as real messages carry).
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'xades-sign-'));
let n = 0;
const file = (name: string, content: string) => {
  const f = path.join(tmp, `${++n}-${name}`);
  fs.writeFileSync(f, content);
  return f;
};

export interface XadesSignOptions {
  keyPem: string;
  certPem: string;
  /** Extra certificates written in X509Data after the signing one (an intermediate). */
  chainPem?: string[];
  /** `c14n` (inclusive Canonical XML 1.0, default) or `exc-c14n`. */
  canonicalization?: 'c14n' | 'exc-c14n';
  signingTime?: Date;
}

const C14N = {
  c14n: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
  'exc-c14n': 'http://www.w3.org/2001/10/xml-exc-c14n#',
};

export function xadesSign(xml: string, opts: XadesSignOptions): string {
  const cert = new crypto.X509Certificate(opts.certPem);
  const der = cert.raw;
  const alg = C14N[opts.canonicalization ?? 'c14n'];
  const id = `sig-${crypto.randomUUID().slice(0, 8)}`;
  const certs = [opts.certPem, ...(opts.chainPem ?? [])]
    .map((p) => `\n        <ds:X509Certificate>${new crypto.X509Certificate(p).raw.toString('base64')}</ds:X509Certificate>`).join('');
  const serial = BigInt(`0x${cert.serialNumber}`).toString(10);
  const signature = `<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="${id}">
    <ds:SignedInfo>
      <ds:CanonicalizationMethod Algorithm="${alg}"/>
      <ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>
      <ds:Reference Id="${id}-ref0" URI="">
        <ds:Transforms>
          <ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>
          <ds:Transform Algorithm="${alg}"/>
        </ds:Transforms>
        <ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>
        <ds:DigestValue></ds:DigestValue>
      </ds:Reference>
      <ds:Reference Type="http://uri.etsi.org/01903#SignedProperties" URI="#${id}-sp">
        <ds:Transforms>
          <ds:Transform Algorithm="${alg}"/>
        </ds:Transforms>
        <ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>
        <ds:DigestValue></ds:DigestValue>
      </ds:Reference>
    </ds:SignedInfo>
    <ds:SignatureValue></ds:SignatureValue>
    <ds:KeyInfo>
      <ds:X509Data>${certs}
      </ds:X509Data>
    </ds:KeyInfo>
    <ds:Object>
      <xades:QualifyingProperties xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" Target="#${id}">
        <xades:SignedProperties Id="${id}-sp">
          <xades:SignedSignatureProperties>
            <xades:SigningTime>${(opts.signingTime ?? new Date()).toISOString()}</xades:SigningTime>
            <xades:SigningCertificate>
              <xades:Cert>
                <xades:CertDigest>
                  <ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>
                  <ds:DigestValue>${crypto.createHash('sha256').update(der).digest('base64')}</ds:DigestValue>
                </xades:CertDigest>
                <xades:IssuerSerial>
                  <ds:X509IssuerName>${cert.issuer.split('\n').reverse().join(',').replace(/&/g, '&amp;').replace(/</g, '&lt;')}</ds:X509IssuerName>
                  <ds:X509SerialNumber>${serial}</ds:X509SerialNumber>
                </xades:IssuerSerial>
              </xades:Cert>
            </xades:SigningCertificate>
          </xades:SignedSignatureProperties>
        </xades:SignedProperties>
      </xades:QualifyingProperties>
    </ds:Object>
  </ds:Signature>`;
  const close = xml.lastIndexOf('</');
  if (close === -1) throw new Error('xadesSign: no root end tag');
  const template = `${xml.slice(0, close).replace(/\s*$/, '\n  ')}${signature}\n${xml.slice(close)}`;
  const args = ['--sign', '--privkey-pem', file('key.pem', opts.keyPem), '--id-attr:Id', 'http://uri.etsi.org/01903/v1.3.2#:SignedProperties',
    '--output', path.join(tmp, `${++n}-out.xml`), file('template.xml', template)];
  const out = args[args.length - 2]!;
  const r = spawnSync('xmlsec1', args, { encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`xmlsec1 --sign failed: ${r.stdout}${r.stderr}`);
  return fs.readFileSync(out, 'utf8');
}
