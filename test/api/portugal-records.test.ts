import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { TransactionDraft } from '../../src/core/transaction.ts';
import { documentHashMessage, verifyHash, PRODUCER_KEY_SIZE_ERROR } from '../../src/countries/pt-saft/signature.ts';
import { hashExtract } from '../../src/countries/pt-saft/qr.ts';
import { SANDBOX_PRODUCER_PUBLIC_KEY_PEM } from '../../src/countries/pt-saft/sandbox-key.ts';
import { buildSaftFile } from '../../src/countries/pt-saft/saft-file.ts';
import { HAVE_XSD11, XSD11_MISSING_MESSAGE, opensslVerifyHash, saftXsdValidate } from '../../src/countries/pt-saft/test-tools.ts';
import { DEFAULT_SOFTWARE } from '../../src/runtime.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm, type GeneratedCert } from '../support/p12.ts';
import { createLocation, createTx, getTx, locationBody, saleBody } from '../support/transactions.ts';
import { firstTagText } from '../support/xml-tools.ts';

/*
 * Portuguese records as the API hands them out (test keys, stub mode): each document is
 * the SAF-T (PT) `Invoice` element, its Hash an RSA-SHA1 signature by the producer key
 * (Portaria 363/2010) over InvoiceDate;SystemEntryDate;InvoiceNo;GrossTotal and the Hash
 * of the previous document of its series and type, so the chain holds across creates,
 * concurrent ones included. Without an uploaded producer key the sandbox producer key
 * signs; with one (`country_config.at_certificate_id`, RSA-1024) that one does.
 */

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-02T10:00:00.000Z');
  t = await startTestApp({ clock, limiter: unlimitedLimiter() });
});
afterAll(() => t?.close());

const tag = firstTagText;

async function fiscalRecord(key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
  expect(res.headers['x-fiscal-record-placeholder']).toBe('false');
  return res.body;
}

async function sale(key: string, loc: string, over: Record<string, unknown> = {}) {
  const res = await createTx(t, key, saleBody(loc, over));
  expect(res.statusCode, res.body).toBe(201);
  const tx = res.json();
  return { tx, xml: await fiscalRecord(key, tx.id) };
}

const messageOf = documentHashMessage;

/** Each document of one series, in number order, signs the previous one's Hash. */
function expectChain(xmls: string[], publicKeyPem: string): void {
  const ordered = [...xmls].sort((a, b) => Number(tag(a, 'InvoiceNo').split('/')[1]) - Number(tag(b, 'InvoiceNo').split('/')[1]));
  let previous: string | null = null;
  ordered.forEach((xml, i) => {
    expect(Number(tag(xml, 'InvoiceNo').split('/')[1])).toBe(i + 1);
    const hash = tag(xml, 'Hash');
    expect(verifyHash(messageOf(xml, previous), hash, publicKeyPem), `${tag(xml, 'InvoiceNo')} signs the previous Hash`).toBe(true);
    previous = hash;
  });
}

/** A self-signed RSA-1024 certificate, as a producer key AT would certify. */
function producerCertificate(): GeneratedCert {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-producer-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('/usr/bin/openssl', ['req', '-x509', '-newkey', 'rsa:1024', '-nodes', '-keyout', key, '-out', cert, '-days', '3650', '-subj', '/C=PT/O=Test software producer/CN=SAF-T PT producer key'], { stdio: 'ignore' });
  const certPem = fs.readFileSync(cert, 'utf8');
  const x = new crypto.X509Certificate(certPem);
  return { certPem, keyPem: fs.readFileSync(key, 'utf8'), notBefore: new Date(x.validFrom), notAfter: new Date(x.validTo) };
}

async function uploadCertificate(key: string, certificateId: string, cert: GeneratedCert): Promise<void> {
  const { payload, headers } = uploadForm({ certificateId, password: 'senha', file: exportP12(cert, 'senha') });
  const res = await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
  expect(res.statusCode, res.body).toBe(201);
}

describe('Portugal: SAF-T (PT) documents through the API', () => {
  it('a sale is an FS signed by the sandbox producer key; render hints carry the number, ATCUD, QR and Hash characters', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const { tx, xml } = await sale(key, loc);
    expect(tx).toMatchObject({ status: 'success', fiscal_id: 'BBJFJMVNTN-1', country: 'PT', system: 'pt-saft' });
    expect(xml.startsWith('<Invoice xmlns="urn:OECD:StandardAuditFile-Tax:PT_1.04_01"><InvoiceNo>FS B/1</InvoiceNo><ATCUD>BBJFJMVNTN-1</ATCUD>')).toBe(true);
    expect(tag(xml, 'SystemEntryDate')).toBe('2026-03-02T10:00:00');
    const hash = tag(xml, 'Hash');
    expect(hash).toHaveLength(172);
    // OpenSSL, independently: the first document of its series signs an empty previous Hash.
    const v = opensslVerifyHash('2026-03-02;2026-03-02T10:00:00;FS B/1;20.46;', hash, SANDBOX_PRODUCER_PUBLIC_KEY_PEM);
    expect(v.ok, v.output).toBe(true);

    const hints = Object.fromEntries(tx.render_hints.map((h: { key: string; value: string }) => [h.key, h.value]));
    const extract = hashExtract(hash);
    expect(hints).toMatchObject({
      invoice_no: 'FS B/1',
      atcud: 'BBJFJMVNTN-1',
      hash_extract: extract,
      software_certificate: `${extract}-Processado por programa certificado n.º 1234/AT`,
    });
    expect(hints.qr).toBe(`A:123456789*B:999999990*C:PT*D:FS*E:N*F:20260302*G:FS B/1*H:BBJFJMVNTN-1*I1:PT*I7:18.00*I8:2.46*N:2.46*O:20.46*Q:${extract}*R:1234`);
  });

  it('the chain holds across creates, sequential and concurrent, per series and type', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const first = [];
    for (let i = 0; i < 3; i++) {
      first.push((await sale(key, loc)).xml);
      clock.advance(1000);
    }
    const burst = await Promise.all(Array.from({ length: 12 }, () => sale(key, loc)));
    const ft = await sale(key, loc, { metadata: { document_type: 'FT' }, customer_context: { nif: '500000000', name: 'Empresa, S.A.' } });
    const series = [...first, ...burst.map((b) => b.xml)];
    expect(new Set(series.map((x) => tag(x, "InvoiceNo"))).size).toBe(15);
    expectChain(series, SANDBOX_PRODUCER_PUBLIC_KEY_PEM);
    // The FT series has its own chain: its first document signs an empty previous Hash.
    expect(tag(ft.xml, 'InvoiceNo')).toBe('FT A/1');
    expect(tag(ft.xml, 'CustomerID')).toBe('500000000');
    expectChain([ft.xml], SANDBOX_PRODUCER_PUBLIC_KEY_PEM);
  });

  it('a refund is an NC referencing the original; without the reference it is refused; a cancellation marks the original A and takes no number', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const a = await sale(key, loc);
    const refused = await createTx(t, key, saleBody(loc, { type: 'refund' }));
    expect([refused.statusCode, refused.json()]).toEqual([400, { error: 'metadata.original_invoice_no is required for credit notes (NC): the InvoiceNo of the document it corrects' }]);
    const refundRes = await createTx(t, key, saleBody(loc, { type: 'refund', metadata: { original_invoice_no: 'FS B/1', reason: 'Devolução' } }));
    expect(refundRes.statusCode, refundRes.body).toBe(201);
    const nc = await fiscalRecord(key, refundRes.json().id);
    expect(tag(nc, 'InvoiceNo')).toBe('NC C/1');
    expect(nc).toContain('<References><Reference>FS B/1</Reference><Reason>Devolução</Reason></References>');
    expectChain([nc], SANDBOX_PRODUCER_PUBLIC_KEY_PEM);

    // FS B/1 is cancelled only once the NC crediting it is (409 before).
    const early = await t.request({ method: 'POST', url: `/v1/transactions/${a.tx.id}/cancel`, key, payload: { reason: 'Erro de emissão' } });
    expect([early.statusCode, early.json()]).toEqual([409, { error: 'transaction cannot be cancelled' }]);
    const ncCancel = await t.request({ method: 'POST', url: `/v1/transactions/${refundRes.json().id}/cancel`, key, payload: { reason: 'Erro de emissão' } });
    expect(ncCancel.statusCode, ncCancel.body).toBe(201);
    const ncStatus = await fiscalRecord(key, ncCancel.json().id);
    expect(tag(ncStatus, 'InvoiceNo')).toBe('NC C/1');
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${a.tx.id}/cancel`, key, payload: { reason: 'Erro de emissão' } });
    expect(cancel.statusCode, cancel.body).toBe(201);
    const status = await fiscalRecord(key, cancel.json().id);
    expect(status).toBe(
      '<Invoice xmlns="urn:OECD:StandardAuditFile-Tax:PT_1.04_01"><InvoiceNo>FS B/1</InvoiceNo><ATCUD>BBJFJMVNTN-1</ATCUD><DocumentStatus><InvoiceStatus>A</InvoiceStatus>' +
        `<InvoiceStatusDate>${tag(status, 'InvoiceStatusDate')}</InvoiceStatusDate><Reason>Erro de emissão</Reason><SourceID>${tag(status, 'SourceID')}</SourceID><SourceBilling>P</SourceBilling></DocumentStatus></Invoice>`,
    );
    expect((await getTx(t, key, a.tx.id)).status).toBe('cancelled');
    // The next sale is number 2 and signs document 1's Hash: the cancellation is outside the chain.
    const b = await sale(key, loc);
    expect(tag(b.xml, 'InvoiceNo')).toBe('FS B/2');
    expectChain([a.xml, b.xml], SANDBOX_PRODUCER_PUBLIC_KEY_PEM);

    // The month's SAF-T file from the stored records: the cancelled FS and NC are A, count in no total; valid against the XSD.
    const draftOf = (body: Record<string, unknown>): TransactionDraft => ({ customer_context: null, metadata: {}, ...(body as object) }) as TransactionDraft;
    const file = buildSaftFile({
      location: { id: loc, account_id: '', name: 'Café Lisboa', country: 'PT', tax_id: '123456789', address: null, config: locationBody('pt-saft').country_config as Record<string, unknown> },
      period: '2026-03',
      records: [
        { kind: 'record', body: a.xml, tx: draftOf(saleBody(loc)) },
        { kind: 'record', body: nc, tx: draftOf(saleBody(loc, { type: 'refund' })) },
        { kind: 'cancellation', body: ncStatus, tx: draftOf(saleBody(loc, { type: 'refund' })) },
        { kind: 'cancellation', body: status, tx: draftOf(saleBody(loc)) },
        { kind: 'record', body: b.xml, tx: draftOf(saleBody(loc)) },
      ],
      software: DEFAULT_SOFTWARE,
      createdAt: clock.now(),
    });
    expect(file.numberOfEntries).toBe(3);
    expect(file.totalCredit).toBe('18.00');
    expect(file.totalDebit).toBe('0.00'); // the NC, cancelled, counts in no total
    if (!HAVE_XSD11) return console.warn(`portugal-records: ${XSD11_MISSING_MESSAGE}`);
    const valid = saftXsdValidate(file.bytes);
    expect(valid.ok, valid.output).toBe(true);
  });

  it('with an uploaded RSA-1024 producer key (at_certificate_id) that key signs; an RSA-2048 one is refused', async () => {
    const { key } = await t.signup();
    const cert = producerCertificate();
    await uploadCertificate(key, 'producer-1024', cert);
    const body = locationBody('pt-saft');
    const loc = await createLocation(t, key, 'pt-saft', { country_config: { ...(body.country_config as object), at_certificate_id: 'producer-1024' } });
    const s1 = await sale(key, loc);
    const s2 = await sale(key, loc);
    expectChain([s1.xml, s2.xml], cert.certPem);
    expect(verifyHash(messageOf(s1.xml, null), tag(s1.xml, 'Hash'), SANDBOX_PRODUCER_PUBLIC_KEY_PEM)).toBe(false);

    await uploadCertificate(key, 'big-key', generateCert({ subject: '/C=PT/CN=Too big' }));
    const loc2 = await createLocation(t, key, 'pt-saft', { country_config: { ...(body.country_config as object), at_certificate_id: 'big-key' } });
    const res = await createTx(t, key, saleBody(loc2));
    expect([res.statusCode, res.json()]).toEqual([400, { error: PRODUCER_KEY_SIZE_ERROR }]);
  });
});
