import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateCert } from '../../test/support/p12.ts';
import { xadesSign } from '../../test/support/xades-sign.ts';
import { fixedSigningKey } from '../countries/shared/test-fixtures.ts';
import { signableRootStartTag } from './namespaces.ts';
import { signXadesBes } from './xades-bes.ts';
import { parseXml, SignatureError, verifyEnvelopedSignature } from './xmldsig-verify.ts';

/*
 * The verifier against independent signers: xmlsec1 (test/support/xades-sign.ts:
 * pretty-printed documents, inclusive and exclusive C14N, a CA-issued certificate) and our
 * own XAdES-BES signer (canonical bytes).
 */
const RC = fs.readFileSync(new URL('../countries/it-sdi/fixtures/notifications/RC.xml', import.meta.url), 'utf8')
  .replace(/\s*<ds:Signature[\s\S]*<\/ds:Signature>/, '');
const signer = generateCert({ subject: '/C=IT/O=Sistema di Interscambio/CN=Fake SdI', withCa: true, days: 3650 });
const other = generateCert({ subject: '/C=IT/CN=Someone else', withCa: true });
const now = new Date();
const verify = (xml: string, trustedCa?: string) => verifyEnvelopedSignature(parseXml(xml), { now, trustedCa });
const failure = (xml: string, trustedCa?: string): string => {
  try {
    verify(xml, trustedCa);
  } catch (e) {
    expect(e).toBeInstanceOf(SignatureError);
    return (e as Error).message;
  }
  throw new Error('verified');
};

describe.each(['c14n', 'exc-c14n'] as const)('enveloped signature verification (xmlsec1, %s)', (canonicalization) => {
  const signed = xadesSign(RC, { keyPem: signer.keyPem, certPem: signer.certPem, canonicalization });

  it('verifies the signature, without and with the issuing CA as trust anchor', () => {
    expect(verify(signed).trusted).toBe(false);
    expect(verify(signed, signer.caPem).certificate.subject).toContain('CN=Fake SdI');
    // The certificate itself as the anchor.
    expect(verify(signed, signer.certPem).trusted).toBe(true);
  });

  it('refuses a changed value, a changed signed property, a changed signature value, another CA', () => {
    expect(failure(signed.replace('ABC1234', 'ABC1235'))).toMatch(/URI="".*digest does not match/);
    expect(failure(signed.replace(/<xades:SigningTime>[^<]+</, '<xades:SigningTime>2020-01-01T00:00:00Z<'))).toMatch(/#sig-.*digest does not match/);
    expect(failure(signed.replace(/<ds:SignatureValue>(.)/, (_m, c: string) => `<ds:SignatureValue>${c === 'A' ? 'B' : 'A'}`))).toBe(
      'the signature value does not verify with the certificate of ds:KeyInfo');
    expect(failure(signed, other.caPem)).toBe('the signing certificate is not issued by a trusted certificate authority');
  });

  it('with trust anchors, the certificate must be valid at the time of reading', () => {
    expect(() => verifyEnvelopedSignature(parseXml(signed), { now: new Date('2099-01-01T00:00:00Z'), trustedCa: signer.caPem })).toThrow(
      new SignatureError('the signing certificate is expired or not yet valid'));
  });

  it('refuses a signature moved onto another message (the digests do not follow)', () => {
    const sig = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(signed)![0];
    const forged = RC.replace('<MessageId>7000101</MessageId>', '<MessageId>7000102</MessageId>').replace('</types:RicevutaConsegna>', `${sig}</types:RicevutaConsegna>`);
    expect(failure(forged)).toMatch(/digest does not match/);
  });

  it('white space and line ends outside the signed values do not matter: CRLF in transit still verifies', () => {
    expect(verify(signed.replace(/\n/g, '\r\n')).trusted).toBe(false);
  });
});

describe('enveloped signature verification: structure', () => {
  it('verifies our own canonical XAdES-BES signer', () => {
    const key = fixedSigningKey();
    const doc = `${signableRootStartTag('p:FatturaElettronica', { p: 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2' })}<Nota>a &amp; b</Nota></p:FatturaElettronica>`;
    const { xml } = signXadesBes({ document: doc, key, signingTime: '2026-01-15T11:00:00+01:00', idBase: 'v-1' });
    expect(verifyEnvelopedSignature(parseXml(xml), { now, trustedCa: key.certificatePem }).trusted).toBe(true);
  });

  it('names what is missing or unsupported', () => {
    expect(failure(RC)).toBe('the document has no enveloped ds:Signature');
    const signed = xadesSign(RC, { keyPem: signer.keyPem, certPem: signer.certPem });
    expect(failure(signed.replace(/<ds:Reference Id="[^"]*" URI="">[\s\S]*?<\/ds:Reference>/, ''))).toBe(
      'no reference covers the whole document (URI="" with the enveloped-signature transform)');
    expect(failure(signed.replace('xmldsig-more#rsa-sha256', 'xmldsig-more#rsa-md5'))).toMatch(/^unsupported signature method/);
    expect(failure(`<!DOCTYPE x [<!ENTITY a "b">]>${signed.replace(/^<\?xml[^>]*>\s*/, '')}`)).toBe('a signed document must not carry a DOCTYPE');
    expect(failure(signed.replace(/<ds:X509Certificate>[^<]+</, '<ds:X509Certificate>AAAA<'))).toBe('an X509Certificate of ds:KeyInfo cannot be read');
    expect(failure(signed.replace('<IdentificativoSdI>', '<IdentificativoSdI a="1" a="2">'))).toBe('malformed XML: duplicate attribute');
  });
});
