import { describe, it, expect } from 'vitest';
import { myData } from './index.ts';
import { NOW, TX_ID, draft, line, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';
import type { ChainLink, TransactionDraft } from '../types.ts';
import { cancelInvoiceBody, correlateReversal, nextAa } from './build.ts';
import { myDataUid, uidOfDocument } from './uid.ts';
import { HAVE_SCHEMAS, xsdValidate } from '../../../test/support/xml-tools.ts';

const loc = location('gr-mydata');
const greek = (over: Partial<TransactionDraft> = {}) =>
  draft({ items: [line({ tax_rate: 24, tax_amount: 240, total_amount: 1240 })], ...over });
const link = (seq: number, linkData: Record<string, string> | null): ChainLink => ({
  seq,
  previous: { fingerprint: null, fiscalId: null, issuedAt: NOW.toISOString(), linkData },
});

describe('gr-mydata build', () => {
  it('an InvoicesDoc, fiscal id series-aa, the UID as fingerprint; no render hints before AADE answers', () => {
    const { record } = validatedBuild(myData, loc, greek(), { chain: link(8, { year: '2026', aa: '7' }) });
    expect(record).toMatchObject({ contentType: 'application/xml', placeholder: false, fiscalId: 'A-8', documentNumber: '8', renderHints: [], qrData: null });
    expect(record.linkData).toEqual({ year: '2026', aa: '8' });
    expect(record.fingerprint).toMatch(/^[0-9A-F]{40}$/);
    expect(record.body).toContain('<invoiceHeader><series>A</series><aa>8</aa><issueDate>2026-01-15</issueDate><invoiceType>11.1</invoiceType><currency>EUR</currency></invoiceHeader>');
  });

  it('the issue date is the Greek calendar date (22:30 UTC on 31 Dec is 1 Jan in Athens), and the year restarts the numbering', () => {
    const at = new Date('2026-12-31T22:30:00Z');
    const { record } = validatedBuild(myData, loc, greek(), { now: at, chain: link(120, { year: '2026', aa: '119' }) });
    expect(record.body).toContain('<aa>1</aa><issueDate>2027-01-01</issueDate>');
    expect(record.linkData).toEqual({ year: '2027', aa: '1' });
  });

  it('nextAa: 1 first, +1 within the year, 1 in a new year, seq after a record that kept no numbering', () => {
    expect(nextAa({ seq: 1, previous: null }, '2026')).toBe(1);
    expect(nextAa(link(5, { year: '2026', aa: '4' }), '2026')).toBe(5);
    expect(nextAa(link(5, { year: '2025', aa: '4' }), '2026')).toBe(1);
    // Not seq: the year restarted the count, the chain goes on.
    expect(nextAa(link(9, { year: '2026', aa: '3' }), '2026')).toBe(4);
    expect(nextAa(link(9, null), '2026')).toBe(9);
  });

  it('branch, a Greek series and the UID of the FAQ form', () => {
    const { record } = validatedBuild(myData, location('gr-mydata', { branch: 3 }), greek({ metadata: { series: 'ΑΛΠ' } }));
    expect(record.body).toContain('<issuer><vatNumber>094259216</vatNumber><country>GR</country><branch>3</branch></issuer>');
    expect(record.fiscalId).toBe('ΑΛΠ-1');
    expect(record.fingerprint).toBe(myDataUid({ afm: '094259216', issueDate: '2026-01-15', branch: 3, invoiceType: '11.1', series: 'ΑΛΠ', aa: '1' }));
  });

  it('a services invoice 2.2 to a business in another EU state: named, with its address, classified E3_561_005 / category1_3 (TypeB); valid', () => {
    // Was a 2.1, which AADE refuses for a foreign counterpart (error 242): 2.2 is the intra-Community one.
    const meta = {
      invoice_type: '2.2', counterpart_vat_number: 'DE123456789', counterpart_country: 'DE', counterpart_name: 'Beispiel GmbH & Co',
      counterpart_street: 'Unter den Linden', counterpart_number: '5', counterpart_postal_code: '10117', counterpart_city: 'Berlin',
    };
    const { record } = validatedBuild(myData, location('gr-mydata', { document_class: 'TypeB' }), greek({ metadata: meta }));
    expect(record.body).toContain('<counterpart><vatNumber>DE123456789</vatNumber><country>DE</country><branch>0</branch><name>Beispiel GmbH &amp; Co</name><address><street>Unter den Linden</street><number>5</number><postalCode>10117</postalCode><city>Berlin</city></address></counterpart>');
    expect(record.body).toContain('<invoiceType>2.2</invoiceType>');
    expect(record.body).toContain('<icls:classificationType>E3_561_005</icls:classificationType><icls:classificationCategory>category1_3</icls:classificationCategory>');
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(record.body, 'gr/mydata/v1.0.12/InvoicesDoc-v1.0.12.xsd');
      expect(v.ok, v.output).toBe(true);
    }
  });

  it('cancellation of a transmitted document: the CancelInvoice call by MARK (JSON, not a placeholder)', async () => {
    const { tx, record } = validatedBuild(myData, loc, greek());
    const cancel = myData.build({
      transactionId: 'c1', kind: 'cancellation', tx,
      original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), upstreamId: '400001925600940' },
      location: loc, environment: 'test', now: NOW, chain: { seq: 1, previous: null },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(cancel).toMatchObject({ contentType: 'application/json', placeholder: false, fiscalId: null, fingerprint: null });
    expect(cancel.body).toBe('{"operation":"CancelInvoice","mark":"400001925600940","entityVatNumber":null}');
    expect(cancel.body).toBe(cancelInvoiceBody('400001925600940'));
    // The stub still answers it with a cancellation MARK.
    const out = await myData.submit(stored(cancel, tx, 'cancellation', 'c1'), submitCtx(loc));
    expect(out).toMatchObject({ kind: 'accepted', response: { cancellationMark: expect.any(String) } });
  });

  it('cancellation of a B2B invoice without a MARK: a credit note 5.2 to the same counterpart, in the cancellations\' series', () => {
    const { tx, record } = validatedBuild(myData, loc, greek({ metadata: { counterpart_vat_number: '123456783' } }));
    const cancel = myData.build({
      transactionId: 'c2', kind: 'cancellation', tx,
      original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), upstreamId: null },
      location: loc, environment: 'test', now: NOW, chain: { seq: 1, previous: null },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(cancel.fiscalId).toBe('A-CN-1');
    expect(cancel.body).toContain('<counterpart><vatNumber>123456783</vatNumber><country>GR</country><branch>0</branch></counterpart>');
    expect(cancel.body).toContain('<invoiceType>5.2</invoiceType>');
  });

  it('cancellation of a credit note to an EU business without a MARK: a 1.2 (not a 1.1, AADE 242), classified as a 1.2 (E3_561_005), valid', () => {
    const de = { counterpart_vat_number: 'DE123456789', counterpart_country: 'DE', counterpart_name: 'Beispiel GmbH', counterpart_postal_code: '10117', counterpart_city: 'Berlin' };
    const typeB = location('gr-mydata', { document_class: 'TypeB' });
    const { tx, record } = validatedBuild(myData, typeB, greek({ type: 'refund', metadata: de }));
    expect(record.body).toContain('<invoiceType>5.2</invoiceType>');
    const cancel = myData.build({
      transactionId: 'c3', kind: 'cancellation', tx,
      original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), upstreamId: null },
      location: typeB, environment: 'test', now: NOW, chain: { seq: 1, previous: null },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(cancel.body).toContain('<invoiceType>1.2</invoiceType>');
    expect(cancel.body).toContain('<icls:classificationType>E3_561_005</icls:classificationType><icls:classificationCategory>category1_1</icls:classificationCategory>');
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(cancel.body, 'gr/mydata/v1.0.12/InvoicesDoc-v1.0.12.xsd');
      expect(v.ok, v.output).toBe(true);
    }
  });

  it('a reversal sent once its original has its MARK: an 11.4 names it instead of "correlation difficulty" (same UID, valid); a 5.2, a CancelInvoice or an original without a MARK: unchanged', () => {
    const reversalOf = (over: Partial<TransactionDraft>) => {
      const { tx, record } = validatedBuild(myData, loc, greek(over));
      const cancel = myData.build({
        transactionId: 'c3', kind: 'cancellation', tx,
        original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), upstreamId: null },
        location: loc, environment: 'test', now: NOW, chain: { seq: 1, previous: null },
        software: { name: 'x', version: '1', vendorTaxId: 'x' },
      });
      return { cancel, tx };
    };
    const original = (upstreamId: string | null) => ({ transactionId: TX_ID, status: 'success', fiscalId: 'A-1', upstreamId });
    const retail = reversalOf({});
    expect(retail.cancel.body).toContain('<specialInvoiceCategory>13</specialInvoiceCategory>');
    const record = stored(retail.cancel, retail.tx, 'cancellation', 'c3');
    const body = correlateReversal({ ...record, original: original('400001925600940') });
    expect(body).toBe(retail.cancel.body.replace('<specialInvoiceCategory>13</specialInvoiceCategory>', '<correlatedInvoices>400001925600940</correlatedInvoices>'));
    expect(body).toContain('<currency>EUR</currency><correlatedInvoices>400001925600940</correlatedInvoices></invoiceHeader>');
    expect(uidOfDocument(body!)).toBe(retail.cancel.fingerprint);
    if (HAVE_SCHEMAS) {
      for (const xsd of ['gr/mydata/v1.0.12/InvoicesDoc-v1.0.12.xsd', 'gr/mydata/v2.0.1/InvoicesDoc-v2.0.1.xsd']) {
        const v = xsdValidate(body!, xsd);
        expect(v.ok, v.output).toBe(true);
      }
    }
    // Completed already (a retry after a failed send), or nothing to name: as it is.
    expect(correlateReversal({ ...record, body: body!, original: original('400001925600940') })).toBeUndefined();
    expect(correlateReversal({ ...record, original: original(null) })).toBeUndefined();
    const b2b = reversalOf({ metadata: { counterpart_vat_number: '123456783' } });
    expect(b2b.cancel.body).toContain('<invoiceType>5.2</invoiceType>');
    expect(correlateReversal({ ...stored(b2b.cancel, b2b.tx, 'cancellation', 'c3'), original: original('400001925600940') })).toBeUndefined();
    const call = { ...record, body: cancelInvoiceBody('400001925600940'), contentType: 'application/json' };
    expect(correlateReversal({ ...call, original: original('400001925600940') })).toBeUndefined();
  });

  it('stub submit: accept with MARK, uid, authentication code and QR render hints; 233 is a duplicate', async () => {
    const { tx, record } = validatedBuild(myData, loc, greek());
    const out = await myData.submit(stored(record, tx), submitCtx(loc));
    if (out.kind !== 'accepted') throw new Error(out.kind);
    expect(out.renderHints?.map((h) => h.key)).toEqual(['mark', 'uid', 'auth_code', 'qr']);
    const dup = validatedBuild(myData, loc, greek({ metadata: { sandbox_outcome: 'reject:233' } }));
    expect((await myData.submit(stored(dup.record, dup.tx), submitCtx(loc))).kind).toBe('duplicate');
    const rej = validatedBuild(myData, loc, greek({ metadata: { sandbox_outcome: 'reject:203' } }));
    expect(await myData.submit(stored(rej.record, rej.tx), submitCtx(loc))).toMatchObject({ kind: 'rejected', code: '203' });
  });
});
