import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { aadeRequestedDoc, aadeUid, type AadeDocument } from '../../../test/support/fake-aade.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import { headerOfInvoicesDoc } from './client.ts';
import { cancellationMarkOf, documentQuery, findByUid, lookupQuery, parseRequestedDoc } from './transmitted.ts';

/*
 * AADE's RequestedDoc (RequestTransmittedDocs, requestedInvoicesDoc-v1.0.12.xsd) read back:
 * the documents are the builder's golden InvoicesDocs as AADE's book lists them, written by
 * the fake AADE independently of the parser and validated against the official XSD.
 */

const golden = (name: string) => fs.readFileSync(new URL(`golden/${name}`, import.meta.url), 'utf8');
const inner = (xml: string) => /<invoice>([\s\S]*?)<\/invoice>/.exec(xml)![1]!;
const REQUESTED_XSD = 'gr/mydata/v1.0.12/requestedInvoicesDoc-v1.0.12.xsd';

function booked(xml: string, mark: string, extra: Partial<AadeDocument> = {}): AadeDocument {
  const h = headerOfInvoicesDoc(xml);
  return {
    uid: h.uid!, mark, xml, issuerVat: '', series: '', aa: '', invoiceType: h.invoiceType!, schemaValid: true, schemaOutput: '',
    issueDate: h.issueDate!, authenticationCode: `AUTH${mark}`, qrUrl: `https://mydataapidev.aade.gr/TimologioQR/QRInfo?q=${mark}&x=1`, invoiceXml: inner(xml),
    ...extra,
  };
}

describe('parseRequestedDoc', () => {
  const retail = golden('multi-rate.xml');
  const b2b = golden('invoice-counterpart.xml');
  const docs = [booked(retail, '400001000000017'), booked(b2b, '400001000000018', { cancellationMark: '400001000000019' })];
  const xml = aadeRequestedDoc(docs, { nextPartitionKey: 'p1', nextRowKey: 'r2' });

  it.skipIf(!HAVE_SCHEMAS)(`the fake's RequestedDoc is valid against ${REQUESTED_XSD}${HAVE_SCHEMAS ? '' : `: ${SCHEMAS_MISSING_MESSAGE}`}`, () => {
    const v = xsdValidate(xml, REQUESTED_XSD);
    expect(v.ok, v.output).toBe(true);
    expect(xsdValidate(aadeRequestedDoc([]), REQUESTED_XSD).ok).toBe(true);
  });

  it('reads each invoice\'s uid, MARK (a string), cancelledByMark, authentication code and QR URL, and the continuation token', () => {
    const doc = parseRequestedDoc(xml)!;
    expect(doc.continuation).toEqual({ nextPartitionKey: 'p1', nextRowKey: 'r2' });
    expect(doc.invoices).toHaveLength(2);
    expect(doc.invoices[0]).toEqual({
      uid: docs[0]!.uid, mark: '400001000000017', cancelledByMark: undefined, authenticationCode: 'AUTH400001000000017',
      qrCodeUrl: 'https://mydataapidev.aade.gr/TimologioQR/QRInfo?q=400001000000017&x=1', computedUid: docs[0]!.uid,
    });
    expect(doc.invoices[1]).toMatchObject({ mark: '400001000000018', cancelledByMark: '400001000000019', uid: docs[1]!.uid });
    expect(findByUid(doc, docs[1]!.uid.toLowerCase())!.mark).toBe('400001000000018');
    expect(findByUid(doc, 'F'.repeat(40))).toBeUndefined();
  });

  it('the UID computed from the listed document equals the fake\'s independent computation', () => {
    const [first] = parseRequestedDoc(xml)!.invoices;
    const f = /<vatNumber>(\d+)<\/vatNumber>[\s\S]*?<branch>(\d+)<\/branch>[\s\S]*?<series>([^<]+)<\/series><aa>(\d+)<\/aa><issueDate>([^<]+)<\/issueDate><invoiceType>([^<]+)</.exec(retail)!;
    expect(first!.computedUid).toBe(aadeUid({ vat: f[1]!, branch: f[2]!, series: f[3]!, aa: f[4]!, issueDate: f[5]!, invoiceType: f[6]! }));
  });

  it('an invoice listed without <uid> is matched by the UID of its fields; one without a MARK is not a match', () => {
    const noUid = xml.replace(/<uid>[0-9A-F]{40}<\/uid>/g, '');
    expect(findByUid(parseRequestedDoc(noUid)!, docs[0]!.uid)!.mark).toBe('400001000000017');
    const noMark = xml.replace('<mark>400001000000017</mark>', '');
    expect(findByUid(parseRequestedDoc(noMark)!, docs[0]!.uid)).toBeUndefined();
  });

  it('prefixed namespaces, an empty answer, a last page; null for what is not a RequestedDoc', () => {
    const prefixed = '<?xml version="1.0"?><inv:RequestedDoc xmlns:inv="http://www.aade.gr/myDATA/invoice/v1.0"><inv:invoicesDoc><inv:invoice><inv:uid>ab12</inv:uid><inv:mark>5</inv:mark></inv:invoice></inv:invoicesDoc></inv:RequestedDoc>';
    expect(parseRequestedDoc(prefixed)).toEqual({ invoices: [{ uid: 'AB12', mark: '5', cancelledByMark: undefined, authenticationCode: undefined, qrCodeUrl: undefined, computedUid: undefined }] });
    expect(parseRequestedDoc('<RequestedDoc xmlns="http://www.aade.gr/myDATA/invoice/v1.0"/>')).toEqual({ invoices: [] });
    expect(parseRequestedDoc(aadeRequestedDoc([docs[0]!]))!.continuation).toBeUndefined();
    expect(parseRequestedDoc('<html>503</html>')).toBeNull();
    expect(parseRequestedDoc('<ResponseDoc><response/></ResponseDoc>')).toBeNull();
    expect(parseRequestedDoc('<RequestedDoc><invoicesDoc>')).toBeNull();
  });
});

describe('lookupQuery', () => {
  it('from MARK 0, the issue date as dd/MM/yyyy for dateFrom and dateTo, the invoice type; then the continuation token', () => {
    expect(lookupQuery({ issueDate: '2026-03-02', invoiceType: '11.1' }).toString()).toBe('mark=0&dateFrom=02%2F03%2F2026&dateTo=02%2F03%2F2026&invType=11.1');
    expect(Object.fromEntries(lookupQuery({ issueDate: '2026-03-02', invoiceType: '1.1' }, { nextPartitionKey: 'p', nextRowKey: 'r' })))
      .toEqual({ mark: '0', dateFrom: '02/03/2026', dateTo: '02/03/2026', invType: '1.1', nextPartitionKey: 'p', nextRowKey: 'r' });
    expect(lookupQuery({}).toString()).toBe('mark=0');
  });
});

describe('a cancelled document\'s cancellation MARK', () => {
  const doc = booked(golden('invoice-counterpart.xml'), '400001000000018', { cancellationMark: '400001000000019' });

  it('the query lists exactly that MARK: above MARK - 1, up to maxMark = MARK', () => {
    expect(documentQuery('400001000000018').toString()).toBe('mark=400001000000017&maxMark=400001000000018');
    expect(Object.fromEntries(documentQuery('1', { nextPartitionKey: 'p', nextRowKey: 'r' }))).toEqual({ mark: '0', maxMark: '1', nextPartitionKey: 'p', nextRowKey: 'r' });
  });

  it('read from the document\'s cancelledByMark, or from the cancellations AADE lists (CancelledInvoiceType); undefined when not cancelled or not listed', () => {
    expect(cancellationMarkOf(parseRequestedDoc(aadeRequestedDoc([doc]))!, '400001000000018')).toBe('400001000000019');
    expect(cancellationMarkOf(parseRequestedDoc(aadeRequestedDoc([{ ...doc, cancellationMark: undefined }]))!, '400001000000018')).toBeUndefined();
    expect(cancellationMarkOf(parseRequestedDoc(aadeRequestedDoc([doc]))!, '400001000000017')).toBeUndefined();
    const cancelledOnly = '<?xml version="1.0" encoding="utf-8"?><RequestedDoc xmlns="http://www.aade.gr/myDATA/invoice/v1.0"><cancelledInvoicesDoc>' +
      '<cancelledInvoice><invoiceMark>400001000000018</invoiceMark><cancellationMark>400001000000019</cancellationMark><cancellationDate>2026-03-02</cancellationDate></cancelledInvoice>' +
      '</cancelledInvoicesDoc></RequestedDoc>';
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(cancelledOnly, REQUESTED_XSD);
      expect(v.ok, v.output).toBe(true);
    }
    const parsed = parseRequestedDoc(cancelledOnly)!;
    expect(parsed).toEqual({ invoices: [], cancellations: [{ invoiceMark: '400001000000018', cancellationMark: '400001000000019' }] });
    expect(cancellationMarkOf(parsed, '400001000000018')).toBe('400001000000019');
  });
});
