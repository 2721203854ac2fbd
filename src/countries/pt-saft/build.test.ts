import { describe, it, expect } from 'vitest';
import { saft } from './index.ts';
import { hashExtract, saftQrData } from './qr.ts';
import { NOW, TX_ID, draft, line, location, validatedBuild } from '../shared/test-fixtures.ts';

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

  it('ATCUD, InvoiceNo, hash chain, QR and hints', () => {
    const { record } = validatedBuild(saft, loc, draft(), { chain: { seq: 35, previous: null } });
    expect(record.fiscalId).toBe('CSDF7T5H-35');
    expect(record.documentNumber).toBe('FS A2026/35');
    expect(record.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const extract = hashExtract(record.fingerprint!);
    expect(record.qrData).toBe(
      `A:500000000*B:999999990*C:PT*D:FS*E:N*F:20260115*G:FS A2026/35*H:CSDF7T5H-35*I1:PT*I7:10.00*I8:2.10*N:2.10*O:12.10*Q:${extract}*R:9999`,
    );
    expect(record.renderHints.map((h) => [h.key, h.kind, h.value])).toEqual([
      ['atcud', 'text', 'CSDF7T5H-35'],
      ['qr', 'qr_data', record.qrData],
      ['hash_extract', 'text', extract],
      ['software_certificate', 'text', 'Processado por programa certificado n.º 9999/AT'],
    ]);
  });

  it('a customer NIF goes in field B', () => {
    const { record } = validatedBuild(saft, loc, draft({ customer_context: { nif: '123456789' } }));
    expect(record.qrData).toContain('*B:123456789*');
  });

  it('cancellation: status A for the original, no number, outside the chain', () => {
    const { tx, record } = validatedBuild(saft, loc, draft());
    const cancel = saft.build({
      transactionId: 'c1',
      kind: 'cancellation',
      tx,
      original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), documentNumber: record.documentNumber },
      location: loc,
      environment: 'test',
      now: NOW,
      chain: { seq: 2, previous: null },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(saft.capabilities.cancellationJoinsChain).toBe(false);
    expect(cancel).toMatchObject({ fiscalId: null, documentNumber: null, fingerprint: null, renderHints: [] });
    expect(JSON.parse(cancel.body)).toMatchObject({
      document_status: 'A',
      cancelled_document: { invoice_no: 'FS A2026/1', atcud: 'CSDF7T5H-1' },
    });
    expect(JSON.parse(cancel.body).chain).toBeUndefined();
  });
});
