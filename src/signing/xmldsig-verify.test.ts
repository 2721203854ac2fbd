import crypto from 'node:crypto';
import fs from 'node:fs';
import { SignedXml } from 'xml-crypto';
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

  it('reads a document nested deeper than the call stack (a loop, not recursion), then finds no signature', () => {
    const deep = '<a>'.repeat(50_000) + '</a>'.repeat(50_000);
    const doc = parseXml(deep);
    expect(doc.root.localName).toBe('a');
    expect(() => verifyEnvelopedSignature(doc, { now })).toThrow(SignatureError);
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
    expect(failure(signed.replace('<IdentificativoSdI>', '<x:IdentificativoSdI>').replace('</IdentificativoSdI>', '</x:IdentificativoSdI>'))).toBe('malformed XML: undeclared prefix x');
    const xpath = signed.replace(/(<ds:Reference Id="[^"]*" URI="">\s*<ds:Transforms>)/, '$1<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xpath-19991116"><ds:XPath>1</ds:XPath></ds:Transform>');
    expect(failure(xpath)).toBe('unsupported canonicalization http://www.w3.org/TR/1999/REC-xpath-19991116');
    expect(failure(signed.replace(/URI="#(sig-[^"]*-sp)"/, 'URI="https://example.org/other.xml#$1"'))).toMatch(/^Reference 2 \(URI="https:\/\/example.org\/other.xml#sig-.*-sp"\): only same-document references are supported$/);
    expect(failure(signed.replace(/<ds:KeyInfo>[\s\S]*<\/ds:KeyInfo>/, ''))).toBe('ds:Signature is missing its ds:KeyInfo');
    expect(failure(signed.replace(/<ds:X509Data>[\s\S]*<\/ds:X509Data>/, ''))).toBe('ds:KeyInfo carries no X509Certificate');
    expect(failure(signed.replace('xmlenc#sha256', 'xmldsig-more#md5'))).toMatch(/unsupported digest method/);
  });

  it('verifies a document with processing instructions outside the root (URI="" is the document, as xmlsec1 signs it)', () => {
    const stylesheet = RC.replace('?>', '?>\n<?xml-stylesheet type="text/xsl" href="RC_v1.1.xsl"?>');
    expect(verify(xadesSign(stylesheet, { keyPem: signer.keyPem, certPem: signer.certPem }), signer.caPem).trusted).toBe(true);
    expect(verify(xadesSign(`${RC}\n<?after the root?>`, { keyPem: signer.keyPem, certPem: signer.certPem, canonicalization: 'exc-c14n' })).trusted).toBe(false);
    const signed = xadesSign(stylesheet, { keyPem: signer.keyPem, certPem: signer.certPem });
    expect(failure(signed.replace('RC_v1.1.xsl', 'evil.xsl'))).toMatch(/URI="".*digest does not match/);
  });
});

describe('enveloped signature verification: what xml-crypto alone would accept', () => {
  const EXC = 'http://www.w3.org/2001/10/xml-exc-c14n#';
  const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
  const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
  /** Signs with xml-crypto: `refs` are XPaths (`/*` for the whole document, as `URI=""`). */
  const sign = (xml: string, keyPem: string, certPem: string, refs: string[], keyInfo?: (prefix: string) => string): string => {
    const sx = new SignedXml({
      privateKey: keyPem,
      publicCert: certPem,
      signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      canonicalizationAlgorithm: EXC,
      ...(keyInfo ? { getKeyInfoContent: ({ prefix }: { prefix?: string | null }) => keyInfo(prefix ? `${prefix}:` : '') } : {}),
    });
    for (const xpath of refs) {
      sx.addReference({ xpath, transforms: xpath === '/*' ? [ENVELOPED, EXC] : [EXC], digestAlgorithm: SHA256, ...(xpath === '/*' ? { isEmptyUri: true } : {}) });
    }
    sx.computeSignature(xml, { prefix: 'ds', location: { reference: '/*', action: 'append' } });
    return sx.getSignedXml();
  };
  const body = RC.replace(/^<\?xml[^>]*>\s*/, '').replace(/<!--[\s\S]*?-->\s*/, '');

  it('xml-crypto signs what we verify (URI="" with the enveloped-signature transform)', () => {
    expect(verify(sign(body, signer.keyPem, signer.certPem, ['/*']), signer.caPem).trusted).toBe(true);
  });

  it('refuses a signature wrapping: the signed message moved into ds:Object, a forged one as the root', () => {
    // The genuine message, signed by its Id only (xml-crypto's checkSignature accepts this).
    const genuine = sign(body.replace('versione="1.0"', 'versione="1.0" Id="msg"'), signer.keyPem, signer.certPem, ["//*[@Id='msg']"]);
    const sig = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(genuine)![0];
    const signedMessage = genuine.replace(sig, '');
    const forgedRoot = body.replace('<MessageId>7000101</MessageId>', '<MessageId>6666666</MessageId>');
    const wrapped = forgedRoot.replace('</types:RicevutaConsegna>', `${sig.replace('</ds:Signature>', `<ds:Object>${signedMessage}</ds:Object></ds:Signature>`)}</types:RicevutaConsegna>`);
    // xml-crypto alone: every reference and the signature value verify.
    const alone = new SignedXml({ publicCert: signer.certPem });
    alone.loadSignature(/<ds:Signature[\s\S]*<\/ds:Signature>/.exec(wrapped)![0]);
    expect(alone.checkSignature(wrapped)).toBe(true);
    expect(failure(wrapped, signer.caPem)).toBe('no reference covers the whole document (URI="" with the enveloped-signature transform)');
  });

  it('refuses a second element carrying a signed Id (the one verified may not be the one read)', () => {
    const signed = xadesSign(RC, { keyPem: signer.keyPem, certPem: signer.certPem });
    const props = /<xades:SignedProperties[\s\S]*<\/xades:SignedProperties>/.exec(signed)![0];
    const id = /Id="([^"]+)"/.exec(props)![1]!;
    const twice = signed.replace('</IdentificativoSdI>', `</IdentificativoSdI><x xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#">${props.replace(/<xades:SigningTime>[^<]+</, '<xades:SigningTime>2020-01-01T00:00:00Z<')}</x>`);
    expect(failure(twice, signer.caPem)).toBe(`more than one element with Id ${id}`);
  });

  it('takes the key from the certificate only: a KeyValue the document adds is never used', () => {
    const forged = body.replace('<MessageId>7000101</MessageId>', '<MessageId>6666666</MessageId>');
    const jwk = crypto.createPublicKey(other.keyPem).export({ format: 'jwk' });
    const b64 = (u: string) => Buffer.from(u, 'base64url').toString('base64');
    const cert = new crypto.X509Certificate(signer.certPem).raw.toString('base64');
    // Signed with someone else's key, carrying the genuine signer's certificate and the forger's key.
    const signed = sign(forged, other.keyPem, other.certPem, ['/*'], (p) =>
      `<${p}X509Data><${p}X509Certificate>${cert}</${p}X509Certificate></${p}X509Data><${p}KeyValue><${p}RSAKeyValue><${p}Modulus>${b64(jwk.n!)}</${p}Modulus><${p}Exponent>${b64(jwk.e!)}</${p}Exponent></${p}RSAKeyValue></${p}KeyValue>`);
    expect(failure(signed)).toBe('the signature value does not verify with the certificate of ds:KeyInfo');
    expect(failure(signed, signer.caPem)).toBe('the signature value does not verify with the certificate of ds:KeyInfo');
  });

  it('verifies ECDSA (r || s) with a SHA-384 digest, the algorithms xml-crypto has no table entry for', () => {
    const ec = generateCert({ subject: '/C=IT/CN=EC signer', keyType: 'ec', withCa: true });
    const ECDSA = 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256';
    const SHA384 = 'http://www.w3.org/2001/04/xmldsig-more#sha384';
    const sx = new SignedXml({ privateKey: ec.keyPem, publicCert: ec.certPem, signatureAlgorithm: ECDSA, canonicalizationAlgorithm: EXC });
    sx.SignatureAlgorithms[ECDSA] = class {
      getAlgorithmName = () => ECDSA;
      getSignature = (data: crypto.BinaryLike, key: crypto.KeyLike) =>
        crypto.sign('sha256', Buffer.from(data.toString()), { key: crypto.createPrivateKey(key as string), dsaEncoding: 'ieee-p1363' }).toString('base64');
      verifySignature = () => false;
    } as never;
    sx.HashAlgorithms[SHA384] = class {
      getAlgorithmName = () => SHA384;
      getHash = (xml: string) => crypto.createHash('sha384').update(xml, 'utf8').digest('base64');
    };
    sx.addReference({ xpath: '/*', transforms: [ENVELOPED, EXC], digestAlgorithm: SHA384, isEmptyUri: true });
    sx.computeSignature(body, { prefix: 'ds', location: { reference: '/*', action: 'append' } });
    const signed = sx.getSignedXml();
    expect(verifyEnvelopedSignature(parseXml(signed), { now: new Date(Date.now() + 60_000), trustedCa: ec.caPem }).certificate.subject).toContain('CN=EC signer');
    expect(failure(signed.replace('7000101', '7000102'))).toMatch(/URI="".*digest does not match/);
    // The method must fit the key: an RSA method with an EC certificate is refused.
    expect(failure(signed.replace(ECDSA, 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'))).toMatch(/does not fit the signature method/);
  });

  it('refuses a signature that is not a child of the root', () => {
    const signed = sign(body, signer.keyPem, signer.certPem, ['/*']);
    const sig = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(signed)![0];
    expect(failure(signed.replace(sig, '').replace('</IdentificativoSdI>', `</IdentificativoSdI><x>${sig}</x>`))).toBe('the document has no enveloped ds:Signature');
  });

  it('orders namespace declarations by code point, as C14N does: TicketBAI records (root T:TicketBai with xmlns:ds) verify', () => {
    // xml-crypto's own order put xmlns:ds before xmlns:T and every TicketBAI digest failed.
    for (const name of ['gipuzkoa-first.xml', 'gipuzkoa-chained.xml', 'cancellation.xml']) {
      const xml = fs.readFileSync(new URL(`../countries/es-ticketbai/golden/${name}`, import.meta.url), 'utf8');
      expect(verify(xml).certificate.subject, name).toContain('TEST MERCHANT SL');
      expect(failure(xml.replace('<NumFactura>', '<NumFactura>9'))).toBe('Reference 1 (URI=""): the digest does not match (the content was altered)');
    }
  });
});
