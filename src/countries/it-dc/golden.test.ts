/**
 * Golden files: one register's commercial documents (golden-cases.ts) on the fixed clock
 * and key, compared byte for byte with golden/*.xml (UPDATE_GOLDEN=1 rewrites them), each
 * valid against the official DocCommercialiLotteria 1.0 XSD (xmllint, offline through the
 * schemas' catalog) and its seal verified by xmlsec1 with all four references (document,
 * SignedProperties, KeyInfo, the chain link). The chain is then checked the way an auditor
 * would: every document names the fingerprint of the one before it.
 */
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, XADES_ID_ATTRIBUTES, xmlsecVerify, xsdValidate } from '../../../test/support/xml-tools.ts';
import { goldenFiles } from '../shared/golden.ts';
import { fixedSigningKey } from '../shared/test-fixtures.ts';
import { dcFingerprint } from './build.ts';
import { goldenDcCases } from './golden-cases.ts';

const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));
const XSD = 'it/corrispettivi/DocCommercialiLotteriaTypes_v1.0.xsd';
const cases = goldenDcCases();
const xsdTitle = (title: string) => (HAVE_SCHEMAS ? title : `${title}: ${SCHEMAS_MISSING_MESSAGE}`);
const ID_ATTRIBUTES = [...XADES_ID_ATTRIBUTES, { attr: 'Id', node: 'Object', ns: 'http://www.w3.org/2000/09/xmldsig#' }];

describe('Documento Commerciale golden documents', () => {
  it.each(cases.map((c) => [c.file, c] as const))('%s matches its golden file', (file, c) => {
    expectGolden(file, c.record.body);
  });

  it.skipIf(!HAVE_SCHEMAS).each(cases.map((c) => [c.file, c] as const))(xsdTitle('%s validates against the DocCommercialiLotteria 1.0 XSD'), (_file, c) => {
    const result = xsdValidate(c.record.body, XSD);
    expect(result.ok, result.output).toBe(true);
  });

  it.each(cases.map((c) => [c.file, c] as const))('%s: xmlsec1 verifies the seal and its four references', (_file, c) => {
    const sig = xmlsecVerify(c.record.body, { trustedCertPem: fixedSigningKey().certificatePem, idAttributes: ID_ATTRIBUTES });
    expect(sig.output).toContain('SignedInfo References (ok/all): 4/4');
    expect(sig.ok, sig.output).toBe(true);
  });

  it('a changed chain link breaks the seal', () => {
    const tampered = cases[1]!.record.body.replace(/<fc:Previous>[0-9a-f]/, (m) => m.slice(0, -1) + (m.endsWith('0') ? '1' : '0'));
    expect(tampered).not.toBe(cases[1]!.record.body);
    expect(xmlsecVerify(tampered, { trustedCertPem: fixedSigningKey().certificatePem, idAttributes: ID_ATTRIBUTES }).ok).toBe(false);
  });

  it('the chain: each document names its predecessor\'s fingerprint, recomputed from the signature value', () => {
    let previous: string | null = null;
    cases.forEach((c, i) => {
      const link = /<fc:Link><fc:Register>([^<]+)<\/fc:Register><fc:Sequence>(\d+)<\/fc:Sequence>(?:<fc:Previous>([0-9a-f]{64})<\/fc:Previous>)?<\/fc:Link>/.exec(c.record.body);
      expect(link).not.toBeNull();
      expect(link![1]).toBe('ABCD-123456');
      expect(Number(link![2])).toBe(i + 1);
      expect(link![3] ?? null).toBe(previous);
      previous = dcFingerprint(/<ds:SignatureValue[^>]*>([^<]+)</.exec(c.record.body)![1]!);
      expect(c.record.fingerprint).toBe(previous);
    });
  });

  it('numbers and kinds: one closure, progressives 1-4; sale, sale, reso, annullo of the first', () => {
    expect(cases.map((c) => c.record.fiscalId)).toEqual(['0001-0001', '0001-0002', '0001-0003', '0001-0004']);
    expect(cases[1]!.record.body).toContain('<IdCliente>AB12CD34</IdCliente>');
    expect(cases[1]!.record.body).toContain('<Ammontare>5.62</Ammontare><Vendita><DatiPagamento><Tipo>PC</Tipo><Importo>2.00</Importo></DatiPagamento><DatiPagamento><Tipo>PE</Tipo><Importo>1.62</Importo></DatiPagamento><DatiPagamento><Tipo>NR</Tipo><Importo>2.00</Importo></DatiPagamento></Vendita>');
    expect(cases[2]!.record.body).toContain('<Tipologia>R</Tipologia><DataOra>2026-01-14T00:00:00</DataOra><Progressivo>0007-0012</Progressivo>');
    expect(cases[3]!.record.body).toContain('<Ammontare>4.40</Ammontare><ResoAnnullo><Tipologia>A</Tipologia><DataOra>2026-01-15T11:01:00+01:00</DataOra><Progressivo>0001-0001</Progressivo>');
  });
});
