import { describe, expect, it } from 'vitest';
import { xmlsecVerify } from '../../test/support/xml-tools.ts';
import { fixedSigningKey } from '../countries/shared/test-fixtures.ts';
import { signableRootStartTag } from './namespaces.ts';
import { signXadesBes } from './xades-bes.ts';
import { signXadesEpes } from './xades-epes.ts';

const key = fixedSigningKey();
const DOC = `${signableRootStartTag('p:FatturaElettronica', { p: 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2' })}<Nota>a &amp; b</Nota></p:FatturaElettronica>`;
const common = { document: DOC, key, signingTime: '2026-01-15T11:00:00+01:00', idBase: 'bes-1' };

describe('enveloped XAdES-BES signer', () => {
  const bes = signXadesBes(common);

  it('xmlsec1 verifies the signature and its three references', () => {
    const r = xmlsecVerify(bes.xml, { trustedCertPem: key.certificatePem });
    expect(r.output).toContain('SignedInfo References (ok/all): 3/3');
    expect(r.ok).toBe(true);
  });

  it('is the EPES signature without the SignaturePolicyIdentifier (the shared signer)', () => {
    expect(bes.xml).not.toContain('SignaturePolicyIdentifier');
    expect(bes.xml).toContain('<xades:SigningCertificateV2>');
    expect(bes.xml).toContain('<xades:DataObjectFormat ObjectReference="#Reference-bes-1">');
    const epes = signXadesEpes({ ...common, policy: { identifier: 'https://example.test/policy', sha256: 'AAAA' } });
    const policy = epes.xml.slice(epes.xml.indexOf('<xades:SignaturePolicyIdentifier>'), epes.xml.indexOf('</xades:SignaturePolicyIdentifier>') + '</xades:SignaturePolicyIdentifier>'.length);
    const strip = (x: string) => x.replace(/<ds:DigestValue>[^<]*<\/ds:DigestValue>/g, '').replace(/<ds:SignatureValue[^>]*>[^<]*</, '<');
    expect(strip(epes.xml.replace(policy, ''))).toBe(strip(bes.xml));
    expect(bes.xml.endsWith('</ds:Signature></p:FatturaElettronica>')).toBe(true);
  });
});
