import { createHash, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import forge from 'node-forge';
import { describe, expect, it } from 'vitest';
import { xmlsecVerify } from '../../test/support/xml-tools.ts';
import { fixedSigningKey } from '../countries/shared/test-fixtures.ts';
import type { SigningKey } from '../core/signing-key.ts';
import { issuerSerialDer } from './certificate-material.ts';
import { NS_DS, NS_XADES, signableRootStartTag } from './namespaces.ts';
import { C14N_INCLUSIVE, signXadesEpes, type XadesEpesInput } from './xades-epes.ts';

const key = fixedSigningKey();
const POLICY = { identifier: 'https://www.gipuzkoa.eus/ticketbai/sinadura', sha256: 'vSe1CH7eAFVkGN0X2Y7Nl9XGUoBnziDA5BGUSsyt8mg=' };
const DOC = `${signableRootStartTag('T:TicketBai', { T: 'urn:ticketbai:emision' })}<Cabecera><IDVersionTBAI>1.2</IDVersionTBAI></Cabecera><Nota>a &amp; b &lt; c</Nota></T:TicketBai>`;

const input = (over: Partial<XadesEpesInput> = {}): XadesEpesInput => ({
  document: DOC,
  key,
  policy: POLICY,
  signingTime: '2026-01-15T11:00:00+01:00',
  idBase: '0b6f9c1e-3d2a-4c5b-9e8f-7a6b5c4d3e2f',
  ...over,
});

const verify = (xml: string) => xmlsecVerify(xml, { trustedCertPem: key.certificatePem });
const between = (xml: string, open: string, close: string): string => {
  const from = xml.indexOf(open) + open.length;
  return xml.slice(from, xml.indexOf(close, from));
};

describe('enveloped XAdES-EPES signer', () => {
  const signed = signXadesEpes(input());

  it('xmlsec1 verifies the signature and its three references', () => {
    const r = verify(signed.xml);
    expect(r.output).toContain('SignedInfo References (ok/all): 3/3');
    expect(r.ok).toBe(true);
  });

  it('appends ds:Signature as the last child of the root and leaves the document untouched', () => {
    const at = signed.xml.indexOf('<ds:Signature ');
    expect(signed.xml.slice(0, at) + signed.xml.slice(signed.xml.lastIndexOf('</ds:Signature>') + 15)).toBe(DOC);
    expect(signed.xml.endsWith('</ds:Signature></T:TicketBai>')).toBe(true);
  });

  it('the document reference digests the unsigned canonical bytes (enveloped transform)', () => {
    const reference = between(signed.xml, 'URI="">', '</ds:Reference>');
    expect(between(reference, '<ds:DigestValue>', '</ds:DigestValue>')).toBe(createHash('sha256').update(DOC).digest('base64'));
  });

  it('subsets are digested with the root namespaces on their apex (inclusive C14N), not as written', () => {
    const ns = ` xmlns:T="urn:ticketbai:emision" xmlns:ds="${NS_DS}" xmlns:xades="${NS_XADES}"`;
    const sp = between(signed.xml, '<xades:SignedProperties Id="', '</xades:QualifyingProperties>');
    const asWritten = `<xades:SignedProperties Id="${sp}`;
    const canonical = asWritten.replace('<xades:SignedProperties', `<xades:SignedProperties${ns}`);
    const digest = between(between(signed.xml, 'Type="http://uri.etsi.org/01903#SignedProperties"', '</ds:Reference>'), '<ds:DigestValue>', '<');
    expect(digest).toBe(createHash('sha256').update(canonical).digest('base64'));
    expect(digest).not.toBe(createHash('sha256').update(asWritten).digest('base64'));
  });

  it('carries the official samples’ structure with the policy’s SigningCertificateV2', () => {
    const x = signed.xml;
    expect(x).toContain(`<ds:CanonicalizationMethod Algorithm="${C14N_INCLUSIVE}"></ds:CanonicalizationMethod>`);
    expect(x).toContain('<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256">');
    expect(x).toContain('<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"></ds:Transform>');
    expect(x.match(/<ds:DigestMethod Algorithm="http:\/\/www.w3.org\/2001\/04\/xmlenc#sha256">/g)).toHaveLength(5);
    expect(x).toContain('<xades:SigningTime>2026-01-15T11:00:00+01:00</xades:SigningTime>');
    expect(between(x, '<xades:CertDigest>', '</xades:CertDigest>')).toContain(createHash('sha256').update(key.certificate.raw).digest('base64'));
    expect(x).toContain(`<xades:Identifier>${POLICY.identifier}</xades:Identifier>`);
    expect(x).toContain(`<xades:SigPolicyHash><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"></ds:DigestMethod><ds:DigestValue>${POLICY.sha256}</ds:DigestValue></xades:SigPolicyHash>`);
    expect(x).toContain(`<xades:SPURI>${POLICY.identifier}</xades:SPURI>`);
    expect(x).toContain('<xades:DataObjectFormat ObjectReference="#Reference-0b6f9c1e-3d2a-4c5b-9e8f-7a6b5c4d3e2f">');
    expect(x).toContain(`<ds:X509Certificate>${key.certificate.raw.toString('base64')}</ds:X509Certificate>`);
    expect(x).toContain('<ds:Exponent>AQAB</ds:Exponent>');
    expect(between(x, '<ds:SignatureValue Id="Signature-0b6f9c1e-3d2a-4c5b-9e8f-7a6b5c4d3e2f-SignatureValue">', '<')).toBe(signed.signatureValue);
    expect(x).not.toMatch(/\/>/);
  });

  it('IssuerSerialV2 is the DER IssuerSerial of RFC 5035 (read back by openssl)', () => {
    const der = issuerSerialDer(key.certificate.raw);
    const r = spawnSync('openssl', ['asn1parse', '-inform', 'DER'], { input: der, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/cont \[ 4 \]/);
    expect(r.stdout).toContain('TEST MERCHANT SL - SELLO DE PRUEBA');
    expect(r.stdout).toMatch(/INTEGER\s+:5A17C0DE/);
  });

  it('is deterministic: the same input gives the same bytes', () => {
    expect(signXadesEpes(input()).xml).toBe(signed.xml);
  });

  it('works for any namespaces on the root (default namespace, extra prefixes)', () => {
    const doc = `${signableRootStartTag('Doc', { '': 'urn:default', a: 'urn:a', z: 'urn:z' })}<a:x>1</a:x><y>2</y></Doc>`;
    const r = verify(signXadesEpes(input({ document: doc })).xml);
    expect(r.output).toContain('3/3');
    expect(r.ok).toBe(true);
  });

  describe('tampering: xmlsec1 refuses a document changed by one byte', () => {
    const flip = (xml: string, find: string, replace: string) => {
      expect(xml).toContain(find);
      return xml.replace(find, replace);
    };
    it.each([
      ['the signed document', '<IDVersionTBAI>1.2<', '<IDVersionTBAI>1.3<'],
      ['a signed property', 'T11:00:00+01:00<', 'T11:00:01+01:00<'],
      ['the signature value', `>${signed.signatureValue.slice(0, 4)}`, `>${signed.signatureValue.slice(0, 3)}${signed.signatureValue[3] === 'A' ? 'B' : 'A'}`],
    ])('%s', (_what, find, replace) => {
      const r = verify(flip(signed.xml, find, replace));
      expect(r.ok).toBe(false);
    });
  });

  describe('refuses', () => {
    it('a document without the signature namespaces on its root', () => {
      expect(() => signXadesEpes(input({ document: '<T:TicketBai xmlns:T="urn:ticketbai:emision"></T:TicketBai>' }))).toThrow(/must declare/);
    });
    it('a signing time without a time zone, and unsafe Ids', () => {
      expect(() => signXadesEpes(input({ signingTime: '2026-01-15T11:00:00' }))).toThrow(/signingTime/);
      expect(() => signXadesEpes(input({ idBase: 'a"b' }))).toThrow(/idBase/);
    });
    it('a private key that is not the certificate’s', () => {
      const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
      expect(() => signXadesEpes(input({ key: { ...key, privateKey: other } }))).toThrow(/does not match/);
    });
    it('an RSA key of 1024 bits (the policy wants more)', () => {
      expect(() => signXadesEpes(input({ key: selfSigned(1024) }))).toThrow(/longer than 1024 bits/);
    });
  });
});

/** A throwaway self-signed certificate (node generates the key; node-forge writes the certificate). */
function selfSigned(bits: number): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date('2026-01-01T00:00:00Z');
  cert.validity.notAfter = new Date('2036-01-01T00:00:00Z');
  cert.setSubject([{ name: 'commonName', value: 'short key' }]);
  cert.setIssuer([{ name: 'commonName', value: 'short key' }]);
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  cert.sign(forge.pki.privateKeyFromPem(pem), forge.md.sha256.create());
  const certificatePem = forge.pki.certificateToPem(cert);
  return { privateKey, certificate: new X509Certificate(certificatePem), chain: [], privateKeyPem: pem, certificatePem, source: 'uploaded' };
}
