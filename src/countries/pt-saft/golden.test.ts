/**
 * Golden files: one location's January (golden-cases.ts) on the fixed clock and producer
 * key, compared byte for byte with golden/*.xml (UPDATE_GOLDEN=1 rewrites them). Each
 * document's Hash is verified by OpenSSL over the message rebuilt from the document
 * (Portaria 363/2010 art. 6) and the previous document of its series and type; the month's
 * SAF-T (PT) file is valid against the official XSD 1.1 (Python xmlschema).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { goldenFiles, prettyName } from '../shared/golden.ts';
import { prettyXml } from '../shared/pretty-xml.ts';
import { goldenProducerKey, goldenPtCases, goldenSaftFile } from './golden-cases.ts';
import { documentHashMessage } from './signature.ts';
import { hashExtract } from './qr.ts';
import { saftQrPng } from './qr-image.ts';
import { decodeWindows1252, encodeWindows1252Xml } from './windows-1252.ts';
import { HAVE_XSD11, XSD11_MISSING_MESSAGE, opensslVerifyHash, saftXmllintValidate, saftXsdValidate, strippedSaftXsd } from './test-tools.ts';
import { HAVE_SCHEMAS } from '../../../test/support/xml-tools.ts';
import { saftAssertionViolations } from './saft-assertions.ts';

const GOLDEN = new URL('./golden/', import.meta.url);
const expectGolden = goldenFiles(GOLDEN);
const cases = goldenPtCases();
const documents = cases.filter((c) => c.kind === 'record');
const file = goldenSaftFile(cases);
const publicKeyPem = crypto.createPublicKey(goldenProducerKey().privateKey).export({ type: 'spki', format: 'pem' }).toString();

const tag = (xml: string, name: string): string => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)![1]!;

/** The Portaria 363/2010 message of a stored document, its previous Hash given. */
const messageOf = documentHashMessage;

/** Windows-1252 golden bytes, with a pretty copy in the same encoding. */
function expectGoldenBytes(name: string, bytes: Buffer, xml: string): void {
  const exact = new URL(name, GOLDEN);
  const pretty = new URL(prettyName(name), GOLDEN);
  const prettyBytes = encodeWindows1252Xml(prettyXml(xml));
  if (process.env.UPDATE_GOLDEN === '1') {
    if (!fs.existsSync(exact) || !fs.readFileSync(exact).equals(bytes)) fs.writeFileSync(exact, bytes);
    fs.writeFileSync(pretty, prettyBytes);
  }
  expect(fs.existsSync(exact), `golden/${name} is missing: run the tests with UPDATE_GOLDEN=1`).toBe(true);
  const golden = fs.readFileSync(exact);
  if (!golden.equals(bytes)) expect(prettyXml(xml)).toBe(prettyXml(decodeWindows1252(golden)));
  expect(golden.equals(bytes), `golden/${name} differs from the built bytes (UPDATE_GOLDEN=1 rewrites it)`).toBe(true);
  expect(fs.readFileSync(pretty).equals(prettyBytes), `golden/${prettyName(name)} is stale (UPDATE_GOLDEN=1 rewrites it)`).toBe(true);
}

describe('SAF-T (PT) golden documents', () => {
  it.each(cases.map((c) => [c.file, c] as const))('%s matches its golden file', (name, c) => {
    expectGolden(name, c.record.body);
  });

  it('the documents: numbers, ATCUD, types, customer, references', () => {
    expect(documents.map((c) => [c.record.documentNumber, c.record.fiscalId])).toEqual([
      ['FS A2026/1', 'CSDF7T5H-1'],
      ['FS A2026/2', 'CSDF7T5H-2'],
      ['FT B2026/1', 'AAJFJMVNTN-1'],
      ['NC C2026/1', 'JFJMVNTX-1'],
    ]);
    const [fs1, fs2, ft, nc] = documents.map((c) => c.record.body);
    expect(fs1).toContain('<InvoiceType>FS</InvoiceType>');
    expect(fs1).toContain('<CustomerID>999999990</CustomerID>');
    expect(fs1).toContain('<Payment><PaymentMechanism>NU</PaymentMechanism><PaymentAmount>6.00</PaymentAmount><PaymentDate>2026-01-15</PaymentDate></Payment>');
    expect(fs2).toContain('<SystemEntryDate>2026-01-15T10:02:00</SystemEntryDate>');
    expect(ft).toContain('<InvoiceType>FT</InvoiceType>');
    expect(ft).toContain('<CustomerID>123456789</CustomerID>');
    expect(ft).toContain('<TaxCode>ISE</TaxCode><TaxPercentage>0</TaxPercentage></Tax><TaxExemptionReason>Não sujeito ou não tributado</TaxExemptionReason><TaxExemptionCode>M99</TaxExemptionCode>');
    expect(ft).not.toContain('<Payment>');
    expect(nc).toContain('<InvoiceType>NC</InvoiceType>');
    expect(nc).toContain('<References><Reference>FS A2026/1</Reference><Reason>Devolução de artigo</Reason></References>');
    expect(nc).toContain('<DebitAmount>1.00</DebitAmount>');
    expect(cases[4]!.record.body).toBe(
      '<Invoice xmlns="urn:OECD:StandardAuditFile-Tax:PT_1.04_01"><InvoiceNo>FS A2026/2</InvoiceNo><ATCUD>CSDF7T5H-2</ATCUD><DocumentStatus><InvoiceStatus>A</InvoiceStatus><InvoiceStatusDate>2026-01-15T10:05:00</InvoiceStatusDate><Reason>Erro na emissão</Reason><SourceID>fiscal-api</SourceID><SourceBilling>P</SourceBilling></DocumentStatus></Invoice>',
    );
  });

  it('every Hash is RSA-SHA1 by the producer key over InvoiceDate;SystemEntryDate;InvoiceNo;GrossTotal;<previous Hash of the series and type> (openssl verifies)', () => {
    const previous = new Map<string, string>();
    for (const c of documents) {
      const xml = c.record.body;
      const series = tag(xml, 'InvoiceNo').split('/')[0]!;
      const hash = tag(xml, 'Hash');
      expect(hash).toHaveLength(172); // a 1024-bit signature in base64
      expect(tag(xml, 'HashControl')).toBe('1');
      expect(c.record.fingerprint).toBe(hash);
      const message = messageOf(xml, previous.get(series) ?? null);
      const v = opensslVerifyHash(message, hash, publicKeyPem);
      expect(v.ok, `${c.file}: ${v.output}`).toBe(true);
      previous.set(series, hash);
    }
    // The second FS signs the first one's Hash; the first of each series an empty one.
    expect(messageOf(documents[0]!.record.body, null)).toBe('2026-01-15;2026-01-15T10:01:00;FS A2026/1;6.00;');
    expect(messageOf(documents[1]!.record.body, documents[0]!.record.fingerprint)).toBe(`2026-01-15;2026-01-15T10:02:00;FS A2026/2;1.85;${documents[0]!.record.fingerprint}`);
  });

  it('a broken chain fails verification: the second FS does not verify without the first one\'s Hash', () => {
    const xml = documents[1]!.record.body;
    expect(opensslVerifyHash(messageOf(xml, null), tag(xml, 'Hash'), publicKeyPem).ok).toBe(false);
    expect(opensslVerifyHash(messageOf(xml, documents[2]!.record.fingerprint), tag(xml, 'Hash'), publicKeyPem).ok).toBe(false);
  });

  it('render hints: document number, ATCUD, QR and the 4 Hash characters with the certified-program line', () => {
    const c = documents[2]!;
    const extract = hashExtract(c.record.fingerprint!);
    const hash = c.record.fingerprint!;
    expect(extract).toBe(hash[0]! + hash[10]! + hash[20]! + hash[30]!);
    expect(c.record.renderHints.map((h) => [h.key, h.placement, h.kind, h.value, h.mandatory])).toEqual([
      ['invoice_no', 'header', 'text', 'FT B2026/1', true],
      ['atcud', 'footer_bottom', 'text', 'AAJFJMVNTN-1', true],
      ['qr', 'footer_bottom', 'qr_data', c.record.qrData, true],
      ['qr_image', 'footer_bottom', 'image_url', expect.stringMatching(/^\/v1\/transactions\/.+\/qr\.png$/), false],
      ['hash_extract', 'footer_bottom', 'text', extract, false],
      ['software_certificate', 'footer_bottom', 'text', `${extract}-Processado por programa certificado n.º 9999/AT`, true],
    ]);
    expect(c.record.qrData).toBe(
      `A:500000000*B:123456789*C:PT*D:FT*E:N*F:20260115*G:FT B2026/1*H:AAJFJMVNTN-1*I1:PT*I2:50.00*I3:25.00*I4:1.50*I5:24.00*I6:3.12*I7:100.00*I8:23.00*N:27.62*O:226.62*Q:${extract}*R:9999`,
    );
    // The QR image, byte for byte (UPDATE_GOLDEN=1 rewrites it; look at it before committing).
    const png = saftQrPng(c.record.qrData!);
    const golden = new URL('ft-customer.qr.png', GOLDEN);
    if (process.env.UPDATE_GOLDEN === '1' && (!fs.existsSync(golden) || !fs.readFileSync(golden).equals(png))) fs.writeFileSync(golden, png);
    expect(fs.existsSync(golden) && fs.readFileSync(golden).equals(png), 'golden/ft-customer.qr.png differs (UPDATE_GOLDEN=1 rewrites it)').toBe(true);
  });
});

describe('SAF-T (PT) monthly file', () => {
  it('matches its golden file (Windows-1252 bytes)', () => {
    expect(file.bytes.subarray(0, 45).toString('latin1')).toBe('<?xml version="1.0" encoding="Windows-1252"?>');
    expectGoldenBytes('saft-2026-01.xml', file.bytes, file.xml);
  });

  it('is Windows-1252: decoding gives back the document; a character outside the code page is a character reference', () => {
    expect(decodeWindows1252(file.bytes)).toBe(file.xml.replaceAll('緑茶', '&#32209;&#33590;'));
    // An independent decoder agrees (iconv, when installed).
    const iconv = spawnSync('iconv', ['-f', 'WINDOWS-1252', '-t', 'UTF-8'], { input: file.bytes, encoding: 'utf8' });
    if (!iconv.error) expect(iconv.stdout).toBe(decodeWindows1252(file.bytes));
    expect(file.bytes.includes(Buffer.from([0x97]))).toBe(true); // the em dash of "Café — chávena"
    expect(file.xml).toContain('Chá verde 緑茶');
  });

  it('totals, statuses, master files', () => {
    expect(file.fileName).toBe('SAFT_500000000_2026-01.xml');
    expect(file.numberOfEntries).toBe(4);
    // Credit: FS 1 (5.20) + FT (199.00); FS 2 is cancelled (A) and counts in no total. Debit: the NC (1.00).
    expect(file.totalCredit).toBe('204.20');
    expect(file.totalDebit).toBe('1.00');
    expect(file.xml).toContain('<InvoiceNo>FS A2026/2</InvoiceNo><ATCUD>CSDF7T5H-2</ATCUD><DocumentStatus><InvoiceStatus>A</InvoiceStatus><InvoiceStatusDate>2026-01-15T10:05:00</InvoiceStatusDate><Reason>Erro na emissão</Reason>');
    // The cancelled document keeps its Hash: the status is outside the signature.
    expect(file.xml).toContain(`<Hash>${documents[1]!.record.fingerprint}</Hash>`);
    expect(file.xml).toContain('<Customer><CustomerID>999999990</CustomerID><AccountID>Desconhecido</AccountID><CustomerTaxID>999999990</CustomerTaxID><CompanyName>Consumidor final</CompanyName>');
    expect(file.xml).toContain('<Customer><CustomerID>123456789</CustomerID><AccountID>Desconhecido</AccountID><CustomerTaxID>123456789</CustomerTaxID><CompanyName>Cliente Exemplo, Lda.</CompanyName><BillingAddress><AddressDetail>Rua Augusta 10</AddressDetail><City>Lisboa</City><PostalCode>1100-053</PostalCode><Country>PT</Country></BillingAddress>');
    expect(file.xml.match(/<Product>/g)).toHaveLength(7);
    expect(file.xml.match(/<TaxTableEntry>/g)).toHaveLength(4);
    // Documents in the file are the stored bodies, unchanged (but for a cancelled one's status).
    for (const c of [documents[0]!, documents[2]!, documents[3]!]) expect(file.xml).toContain(c.record.body);
  });

  it('leaves out documents of other months', () => {
    const cases2 = goldenPtCases();
    const other = goldenSaftFile(cases2.map((c, i) => (i === 0 ? { ...c, record: { ...c.record, body: c.record.body.replaceAll('2026-01-15', '2026-02-03') } } : c)));
    expect(other.numberOfEntries).toBe(3);
    expect(other.xml).not.toContain('<InvoiceNo>FS A2026/1</InvoiceNo>');
  });

  it.skipIf(!HAVE_SCHEMAS)('validates with libxml2 (xmllint) against the XSD with its assertions stripped by the repo script; the assertions hold in code', () => {
    const { log } = strippedSaftXsd();
    expect(log).toContain('19 assertion(s) removed');
    const v = saftXmllintValidate(file.bytes);
    expect(v.ok, v.output).toBe(true);
    expect(saftAssertionViolations(file.bytes)).toEqual([]);
    // The stripped schema still catches structure: a document without its Hash is refused.
    const broken = saftXmllintValidate(encodeWindows1252Xml(file.xml.replace(/<Hash>[^<]*<\/Hash>/, '')));
    expect(broken.ok).toBe(false);
    expect(broken.output).toMatch(/Hash/);
  });

  it.skipIf(!HAVE_XSD11)(HAVE_XSD11 ? 'validates against the SAF-T (PT) 1.04_01 XSD (XSD 1.1)' : `validates against the XSD: ${XSD11_MISSING_MESSAGE}`, () => {
    const v = saftXsdValidate(file.bytes);
    expect(v.output).toMatch(/valid$/);
    expect(v.ok, v.output).toBe(true);
  });

  it.skipIf(!HAVE_XSD11)('the XSD check is real: a file without its Hash is refused', () => {
    const broken = encodeWindows1252Xml(file.xml.replace(/<Hash>[^<]*<\/Hash>/, ''));
    expect(saftXsdValidate(broken).ok).toBe(false);
  });
});
