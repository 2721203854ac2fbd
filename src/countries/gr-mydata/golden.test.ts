/**
 * Golden files: the myDATA documents of goldenMyDataCases() on the fixed clock, compared
 * byte for byte with golden/* (shared/golden.ts: `UPDATE_GOLDEN=1` rewrites them and the
 * .pretty.xml copies; the CancelInvoice JSON likewise), every XML one valid against the
 * official InvoicesDoc XSD, v1.0.12 (the version we send) and v2.0.1 (xmllint, offline
 * through the schemas' catalog). Each document is then read back the way AADE would:
 * the totals add up to the cent, and the UID recomputed from the parsed header is the
 * record's fingerprint.
 */
import fs from 'node:fs';
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import { goldenFiles } from '../shared/golden.ts';
import { CORRELATED_MARK, goldenMyDataCases } from './golden-cases.ts';
import { myDataUid } from './uid.ts';

const dir = new URL('./golden/', import.meta.url);
const expectGolden = goldenFiles(dir);
const cases = goldenMyDataCases();
const xmlCases = cases.filter((c) => c.record.contentType === 'application/xml');
const XSDS = ['gr/mydata/v1.0.12/InvoicesDoc-v1.0.12.xsd', 'gr/mydata/v2.0.1/InvoicesDoc-v2.0.1.xsd'];
const xsdTitle = (title: string) => (HAVE_SCHEMAS ? title : `${title}: ${SCHEMAS_MISSING_MESSAGE}`);
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, isArray: (name) => ['invoiceDetails', 'incomeClassification', 'paymentMethodDetails', 'correlatedInvoices'].includes(name) });

/** A JSON golden file: exact bytes, rewritten with UPDATE_GOLDEN=1. */
function expectJsonGolden(name: string, built: string): void {
  const file = new URL(name, dir);
  if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(file, built);
  expect(fs.existsSync(file), `golden/${name} is missing: run the tests with UPDATE_GOLDEN=1`).toBe(true);
  expect(built, `golden/${name} differs from the built bytes (UPDATE_GOLDEN=1 rewrites it)`).toBe(fs.readFileSync(file, 'utf8'));
}

type Invoice = {
  issuer: { vatNumber: string; branch: string };
  counterpart?: { vatNumber: string; country: string; name?: string };
  invoiceHeader: { series: string; aa: string; issueDate: string; invoiceType: string; correlatedInvoices?: string[]; specialInvoiceCategory?: string };
  paymentMethods: { paymentMethodDetails: { type: string; amount: string }[] };
  invoiceDetails: { netValue: string; vatAmount: string; vatCategory: string; vatExemptionCategory?: string; incomeClassification?: { amount: string }[] }[];
  invoiceSummary: { totalNetValue: string; totalVatAmount: string; totalGrossValue: string; incomeClassification?: { amount: string }[] };
};
const invoiceOf = (xml: string): Invoice => parser.parse(xml).InvoicesDoc.invoice;
const cents = (s: string) => Math.round(Number(s) * 100);
const sum = (xs: string[]) => xs.reduce((a, x) => a + cents(x), 0);

describe('myDATA golden documents', () => {
  it.each(cases.map((c) => [c.file, c] as const))('%s matches its golden file', (file, c) => {
    if (c.record.contentType === 'application/json') expectJsonGolden(file, c.record.body);
    else expectGolden(file, c.record.body);
  });

  for (const xsd of XSDS) {
    it.skipIf(!HAVE_SCHEMAS).each(xmlCases.map((c) => [c.file, c] as const))(xsdTitle(`%s validates against ${xsd.split('/').pop()}`), (_file, c) => {
      const result = xsdValidate(c.record.body, xsd);
      expect(result.ok, result.output).toBe(true);
    });
  }

  it.skipIf(!HAVE_SCHEMAS)(xsdTitle('the XSD check can fail: a document without its summary is refused'), () => {
    const broken = xmlCases[0]!.record.body.replace(/<invoiceSummary>.*<\/invoiceSummary>/, '');
    expect(xsdValidate(broken, XSDS[0]!).ok).toBe(false);
  });

  it.each(xmlCases.map((c) => [c.file, c] as const))('%s: totals add up to the cent, the payment is the gross, the UID is the fingerprint', (_file, c) => {
    const inv = invoiceOf(c.record.body);
    const s = inv.invoiceSummary;
    expect(cents(s.totalNetValue)).toBe(sum(inv.invoiceDetails.map((d) => d.netValue)));
    expect(cents(s.totalVatAmount)).toBe(sum(inv.invoiceDetails.map((d) => d.vatAmount)));
    expect(cents(s.totalGrossValue)).toBe(cents(s.totalNetValue) + cents(s.totalVatAmount));
    expect(cents(s.totalGrossValue)).toBe(c.tx.total_amount);
    expect(sum(inv.paymentMethods.paymentMethodDetails.map((p) => p.amount))).toBe(cents(s.totalGrossValue));
    if (s.incomeClassification) {
      expect(sum(s.incomeClassification.map((i) => i.amount))).toBe(cents(s.totalNetValue));
      for (const d of inv.invoiceDetails) expect(cents(d.incomeClassification![0]!.amount)).toBe(cents(d.netValue));
    }
    const h = inv.invoiceHeader;
    expect(c.record.fingerprint).toBe(myDataUid({ afm: inv.issuer.vatNumber, issueDate: h.issueDate, branch: Number(inv.issuer.branch), invoiceType: h.invoiceType, series: h.series, aa: h.aa }));
    expect(c.record.fiscalId).toBe(`${h.series}-${h.aa}`);
    expect(c.record.documentNumber).toBe(h.aa);
    expect(c.record).toMatchObject({ placeholder: false, renderHints: [], qrData: null });
  });

  it('one series numbered 1..7; the types chosen from the sale and metadata', () => {
    const docs = cases.slice(0, 7).map((c) => invoiceOf(c.record.body).invoiceHeader);
    expect(docs.map((h) => `${h.series}-${h.aa} ${h.invoiceType}`)).toEqual(['A-1 11.1', 'A-2 11.2', 'A-3 1.1', 'A-4 11.1', 'A-5 5.1', 'A-6 11.4', 'A-7 11.1']);
    expect(docs[4]!.correlatedInvoices).toEqual([CORRELATED_MARK]);
    expect(docs.every((h) => h.issueDate === '2026-01-15')).toBe(true);
  });

  it('counterpart only on business documents, by AFM without a name (AADE refuses it for GR)', () => {
    const parties = cases.slice(0, 7).map((c) => invoiceOf(c.record.body).counterpart);
    expect(parties.map((p) => p?.vatNumber ?? null)).toEqual([null, null, '123456783', null, '123456783', null, null]);
    expect(parties[2]!.name).toBeUndefined();
  });

  it('VAT categories, the exemption cause of the 0 % line, payment types', () => {
    const multi = invoiceOf(cases[6]!.record.body);
    expect(multi.invoiceDetails.map((d) => [d.vatCategory, d.vatExemptionCategory ?? null])).toEqual([['1', null], ['2', null], ['3', null], ['7', '27']]);
    expect(cases.slice(0, 7).map((c) => invoiceOf(c.record.body).paymentMethods.paymentMethodDetails[0]!.type)).toEqual(['3', '7', '1', '7', '7', '3', '5']);
  });

  it('income classification on TypeB documents only: retail E3_561_003, wholesale E3_561_001', () => {
    const icls = (i: number) => cases[i]!.record.body.match(/<icls:classificationType>[^<]+<\/icls:classificationType><icls:classificationCategory>[^<]+/g)?.[0] ?? null;
    expect(icls(0)).toBeNull();
    expect(icls(3)).toBe('<icls:classificationType>E3_561_003</icls:classificationType><icls:classificationCategory>category1_1');
    expect(icls(4)).toBe('<icls:classificationType>E3_561_001</icls:classificationType><icls:classificationCategory>category1_1');
  });

  it('credit notes: a 5.1 names the MARK it corrects; a 5.2 and a lone retail 11.4 name none, the 11.4 marked "correlation difficulty" (13); an 11.4 naming its receipt is not', () => {
    const header = (file: string) => invoiceOf(cases.find((c) => c.file === file)!.record.body).invoiceHeader;
    const summary = (file: string) => {
      const h = header(file);
      return `${h.series}-${h.aa} ${h.invoiceType} [${(h.correlatedInvoices ?? []).join(',')}] ${h.specialInvoiceCategory ?? '-'}`;
    };
    expect(summary('credit-note.xml')).toBe(`A-5 5.1 [${CORRELATED_MARK}] -`);
    expect(summary('retail-credit.xml')).toBe('A-6 11.4 [] 13');
    expect(summary('credit-note-uncorrelated.xml')).toBe('A-8 5.2 [] -');
    expect(summary('retail-credit-correlated.xml')).toBe(`A-9 11.4 [${CORRELATED_MARK}] -`);
    // Reversals of documents without a MARK: nothing to name.
    expect(summary('cancellation-credit-note.xml')).toBe('A-CN-1 11.4 [] 13');
    expect(summary('cancellation-of-invoice.xml')).toBe('A-CN-2 5.2 [] -');
    // No element is ever written empty (an empty correlatedInvoices is no xs:long).
    for (const c of xmlCases) expect(c.record.body).not.toMatch(/<(correlatedInvoices|specialInvoiceCategory)>\s*</);
    const uncorrelated = invoiceOf(cases.find((c) => c.file === 'credit-note-uncorrelated.xml')!.record.body);
    expect(uncorrelated.counterpart?.vatNumber).toBe('123456783');
  });

  it('cancellation: CancelInvoice by MARK for a transmitted document; a reversing credit note 11.4 in its own series otherwise', () => {
    const [call, credit] = cases.slice(7);
    expect(JSON.parse(call!.record.body)).toEqual({ operation: 'CancelInvoice', mark: CORRELATED_MARK, entityVatNumber: null });
    expect(call!.record).toMatchObject({ contentType: 'application/json', placeholder: false, fiscalId: null, fingerprint: null });
    const h = invoiceOf(credit!.record.body).invoiceHeader;
    // The call issued no document: the credit note is the first of the cancellations' series.
    expect(`${h.series}-${h.aa} ${h.invoiceType}`).toBe('A-CN-1 11.4');
  });
});
