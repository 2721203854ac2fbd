import { describe, it, expect } from 'vitest';
import { saft } from './index.ts';
import { atcudOf } from './build.ts';
import { hashExtract, saftQrData } from './qr.ts';
import { NOW, TX_ID, draft, fixedSigningKey, line, location, validatedBuild } from '../shared/test-fixtures.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { goldenProducerKey } from './golden-cases.ts';
import { PRODUCER_KEY_SIZE_ERROR, hashMessage, verifyHash } from './signature.ts';
import { SANDBOX_PRODUCER_PUBLIC_KEY_PEM } from './sandbox-key.ts';

describe('SAF-T PT QR and hash extract', () => {
  it('hash extract: characters 1, 11, 21 and 31', () => {
    expect(hashExtract('abcdefghijKlmnopqrstUvwxyz0123X56789')).toBe('aKUX');
  });

  it('reproduces AT spec v1.0 example 2 (simplified invoice)', () => {
    expect(
      saftQrData({
        issuerNif: '123456789',
        buyerNif: '999999990',
        buyerCountry: 'PT',
        documentType: 'FS',
        status: 'N',
        date: '20190812',
        invoiceNo: 'FS CDVF/12345',
        atcud: 'CDF7T5HD-12345',
        lines: [line({ tax_rate: 23, tax_amount: 15, total_amount: 80 })],
        taxPayable: 15,
        grossTotal: 80,
        hashExtract: 'YhGV',
        certificateNumber: '9999',
        other: 'NU;0.80',
      }),
    ).toBe('A:123456789*B:999999990*C:PT*D:FS*E:N*F:20190812*G:FS CDVF/12345*H:CDF7T5HD-12345*I1:PT*I7:0.65*I8:0.15*N:0.15*O:0.80*Q:YhGV*R:9999*S:NU;0.80');
  });

  it('puts each mainland rate in its field', () => {
    const qr = saftQrData({
      issuerNif: '500000000', buyerNif: '999999990', buyerCountry: 'PT', documentType: 'FS', status: 'N', date: '20260115',
      invoiceNo: 'FS A/1', atcud: 'CSDF7T5H-1',
      lines: [
        line({ tax_rate: 0, tax_amount: 0, total_amount: 100 }),
        line({ tax_rate: 6, tax_amount: 6, total_amount: 106 }),
        line({ tax_rate: 13, tax_amount: 13, total_amount: 113 }),
        line({ tax_rate: 23, tax_amount: 23, total_amount: 123 }),
      ],
      taxPayable: 42, grossTotal: 442, hashExtract: 'abcd', certificateNumber: '0',
    });
    expect(qr).toContain('*I1:PT*I2:1.00*I3:1.00*I4:0.06*I5:1.00*I6:0.13*I7:1.00*I8:0.23*N:0.42*O:4.42*');
  });
});

describe('pt-saft build', () => {
  const loc = location('pt-saft');
  const signingKey = goldenProducerKey();
  const build = (tx = draft(), over: Parameters<typeof validatedBuild>[3] = {}) => validatedBuild(saft, loc, tx, { signingKey, ...over });
  const tag = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];

  it('the Portaria 363/2010 message: five fields joined by ";", the last empty for a first document', () => {
    expect(hashMessage({ invoiceDate: '2010-05-18', systemEntryDate: '2010-05-18T11:22:19', invoiceNo: 'FAC 001/14', grossTotal: '3.12', previousHash: null }))
      .toBe('2010-05-18;2010-05-18T11:22:19;FAC 001/14;3.12;');
    expect(hashMessage({ invoiceDate: 'd', systemEntryDate: 't', invoiceNo: 'n', grossTotal: '1.00', previousHash: 'abc=' })).toBe('d;t;n;1.00;abc=');
  });

  it('ATCUD: validation code and the digits after the "/" (FORMATS §7.2 example)', () => {
    expect(atcudOf('CSDF7T5H', 'FT AB2019/0035')).toBe('CSDF7T5H-0035');
    expect(atcudOf('CDF7T5HD', 'FS CDVF/12345')).toBe('CDF7T5HD-12345');
    expect(() => atcudOf('CSDF7T5H', 'FT AB2019')).toThrow();
  });

  it('ATCUD, InvoiceNo, signed Hash, QR and hints', () => {
    const { record } = build(draft(), { chain: { seq: 35, previous: null } });
    expect(record).toMatchObject({ fiscalId: 'CSDF7T5H-35', documentNumber: 'FS A2026/35', contentType: 'application/xml', placeholder: false });
    const hash = record.fingerprint!;
    expect(tag(record.body, 'Hash')).toBe(hash);
    expect(verifyHash('2026-01-15;2026-01-15T10:00:00;FS A2026/35;12.10;', hash, signingKey.certificatePem)).toBe(true);
    const extract = hashExtract(hash);
    expect(record.qrData).toBe(
      `A:500000000*B:999999990*C:PT*D:FS*E:N*F:20260115*G:FS A2026/35*H:CSDF7T5H-35*I1:PT*I7:10.00*I8:2.10*N:2.10*O:12.10*Q:${extract}*R:9999`,
    );
    expect(record.renderHints.map((h) => [h.key, h.kind, h.value])).toEqual([
      ['invoice_no', 'text', 'FS A2026/35'],
      ['atcud', 'text', 'CSDF7T5H-35'],
      ['qr', 'qr_data', record.qrData],
      ['qr_image', 'image_url', `/v1/transactions/${TX_ID}/qr.png`],
      ['hash_extract', 'text', extract],
      ['software_certificate', 'text', `${extract}-Processado por programa certificado n.º 9999/AT`],
    ]);
  });

  it('chains: the message ends with the previous Hash of the series and type', () => {
    const first = build().record;
    const second = build(draft(), { chain: { seq: 2, previous: { fingerprint: first.fingerprint, fiscalId: first.fiscalId, issuedAt: NOW.toISOString() } } }).record;
    expect(verifyHash(`2026-01-15;2026-01-15T10:00:00;FS A2026/2;12.10;${first.fingerprint}`, second.fingerprint!, signingKey.certificatePem)).toBe(true);
    expect(verifyHash('2026-01-15;2026-01-15T10:00:00;FS A2026/2;12.10;', second.fingerprint!, signingKey.certificatePem)).toBe(false);
  });

  it('dates are Lisbon wall time: summer time, and a sale after midnight local', () => {
    const summer = build(draft(), { now: new Date('2026-07-01T23:30:05.900Z') }).record.body;
    expect(tag(summer, 'InvoiceDate')).toBe('2026-07-02');
    expect(tag(summer, 'SystemEntryDate')).toBe('2026-07-02T00:30:05');
    expect(tag(summer, 'Period')).toBe('7');
  });

  it('dates never go back within a series: a document built before its predecessor\'s time takes that time', () => {
    const later = new Date(NOW.getTime() + 1500).toISOString();
    const { record } = build(draft(), { chain: { seq: 2, previous: { fingerprint: 'h', fiscalId: 'x', issuedAt: later } } });
    expect(tag(record.body, 'SystemEntryDate')).toBe('2026-01-15T10:00:01');
    const earlier = build(draft(), { chain: { seq: 2, previous: { fingerprint: 'h', fiscalId: 'x', issuedAt: '2026-01-01T00:00:00.000Z' } } }).record;
    expect(tag(earlier.body, 'SystemEntryDate')).toBe('2026-01-15T10:00:00');
  });

  it('a customer NIF goes in CustomerID and QR field B', () => {
    const { record } = build(draft({ customer_context: { nif: '123456789' } }));
    expect(record.qrData).toContain('*B:123456789*C:PT*');
    expect(tag(record.body, 'CustomerID')).toBe('123456789');
  });

  it('the producer key: sandbox certificates (RSA-2048) sign with the published sandbox key; an uploaded key must be RSA-1024', () => {
    const sandbox = { ...fixedSigningKey(), source: 'sandbox' as const };
    const { record } = build(draft(), { signingKey: sandbox });
    expect(verifyHash('2026-01-15;2026-01-15T10:00:00;FS A2026/1;12.10;', record.fingerprint!, SANDBOX_PRODUCER_PUBLIC_KEY_PEM)).toBe(true);
    expect(record.fingerprint).toHaveLength(172);
    expect400(() => build(draft(), { signingKey: fixedSigningKey() }), PRODUCER_KEY_SIZE_ERROR);
    // No certificate at all (a location without at_certificate_id): on test keys, the sandbox key.
    expect(verifyHash('2026-01-15;2026-01-15T10:00:00;FS A2026/1;12.10;', build(draft(), { signingKey: undefined }).record.fingerprint!, SANDBOX_PRODUCER_PUBLIC_KEY_PEM)).toBe(true);
  });

  it('a credit note references the corrected document; a refund without it is refused', () => {
    const tx = draft({ type: 'refund', metadata: { original_invoice_no: 'FS A2026/7' } });
    const { record } = build(tx);
    expect(record.documentNumber).toBe('NC C2026/1');
    expect(record.body).toContain('<References><Reference>FS A2026/7</Reference><Reason>Devolução</Reason></References>');
    expect(record.body).toContain('<DebitAmount>10.00</DebitAmount>');
    expect(record.body).not.toContain('<Payment>');
    const voided = build(draft({ type: 'void', metadata: { original_invoice_no: 'FS A2026/7' } })).record;
    expect(voided.body).toContain('<Reason>Anulação da venda</Reason>');
  });

  it('other rates: code OUT with the percentage; exempt lines name M99', () => {
    const { record } = build(draft({ items: [line({ tax_rate: 21 }), line({ tax_rate: 0, tax_amount: 0, total_amount: 1000 })] }));
    expect(record.body).toContain('<TaxCode>OUT</TaxCode><TaxPercentage>21</TaxPercentage></Tax></Line>');
    expect(record.body).toContain('<TaxCode>ISE</TaxCode><TaxPercentage>0</TaxPercentage></Tax><TaxExemptionReason>Não sujeito ou não tributado</TaxExemptionReason><TaxExemptionCode>M99</TaxExemptionCode>');
  });

  it('cancellation: status A for the original, no number, outside the chain', () => {
    const { tx, record } = build();
    const cancel = saft.build({
      transactionId: 'c1',
      kind: 'cancellation',
      tx: { ...tx, metadata: { ...tx.metadata, cancellation_reason: 'cliente desistiu' } },
      original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), documentNumber: record.documentNumber },
      location: loc,
      environment: 'test',
      now: new Date(NOW.getTime() + 3_600_000),
      chain: { seq: 2, previous: null },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(saft.capabilities.cancellationJoinsChain).toBe(false);
    expect(cancel).toMatchObject({ fiscalId: null, documentNumber: null, fingerprint: null, renderHints: [], placeholder: false, contentType: 'application/xml' });
    expect(cancel.body).toBe(
      '<Invoice xmlns="urn:OECD:StandardAuditFile-Tax:PT_1.04_01"><InvoiceNo>FS A2026/1</InvoiceNo><ATCUD>CSDF7T5H-1</ATCUD><DocumentStatus><InvoiceStatus>A</InvoiceStatus><InvoiceStatusDate>2026-01-15T11:00:00</InvoiceStatusDate><Reason>cliente desistiu</Reason><SourceID>x</SourceID><SourceBilling>P</SourceBilling></DocumentStatus></Invoice>',
    );
  });
});
