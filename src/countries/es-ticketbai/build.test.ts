import { describe, it, expect } from 'vitest';
import { ticketBai } from './index.ts';
import { crc8Text } from './crc8.ts';
import { NOW, TX_ID, draft, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';

const TBAI_ID = /^TBAI-[0-9A-Z]{9}-\d{6}-[A-Za-z0-9+/]{13}-\d{3}$/;

describe('es-ticketbai build', () => {
  const loc = location('es-ticketbai');

  it('TBAI id: NIF, local issue date DDMMYY, 13 signature characters, real CRC-8', () => {
    const { record } = validatedBuild(ticketBai, loc, draft());
    const id = record.fiscalId!;
    expect(id).toMatch(TBAI_ID);
    expect(id).toHaveLength(39);
    expect(id.startsWith('TBAI-B12345674-150126-')).toBe(true);
    expect(id.slice(36)).toBe(crc8Text(id.slice(0, 36)));
  });

  it('QR URL: territory test URL, id, series, number, total, CRC last', () => {
    const { record } = validatedBuild(ticketBai, loc, draft(), { chain: { seq: 42, previous: null } });
    const qr = record.qrData!;
    expect(qr.startsWith(`https://tbai.prep.gipuzkoa.eus/qr/?id=${encodeURIComponent(record.fiscalId!)}&s=A&nf=42&i=12.10&cr=`)).toBe(true);
    const cut = qr.lastIndexOf('&cr=');
    expect(qr.slice(cut + 4)).toBe(crc8Text(qr.slice(0, cut)));
    expect(record.documentNumber).toBe('42');
  });

  it('live environment and territory pick the QR base', () => {
    const live = validatedBuild(ticketBai, loc, draft(), { environment: 'live' }).record;
    expect(live.qrData).toMatch(/^https:\/\/tbai\.egoitza\.gipuzkoa\.eus\/qr\/\?id=/);
    const araba = validatedBuild(ticketBai, location('es-ticketbai', { territory: 'araba', territory_code: '01' }), draft()).record;
    expect(araba.qrData).toMatch(/^https:\/\/pruebas-ticketbai\.araba\.eus\/tbai\/qrtbai\/\?id=/);
    const bizkaia = validatedBuild(ticketBai, location('es-ticketbai', { territory: 'bizkaia', territory_code: '48' }), draft()).record;
    expect(bizkaia.qrData).toMatch(/^https:\/\/batuz\.eus\/QRTBAI\/\?id=/);
  });

  it('render hints: tbai_id then qr', () => {
    const { record } = validatedBuild(ticketBai, loc, draft());
    expect(record.renderHints).toEqual([
      { key: 'tbai_id', placement: 'footer_bottom', mandatory: true, kind: 'text', value: record.fiscalId },
      { key: 'qr', placement: 'footer_bottom', mandatory: true, kind: 'qr_url', value: record.qrData },
    ]);
  });

  it('body carries the placeholder facts', () => {
    const { record } = validatedBuild(ticketBai, loc, draft());
    expect(JSON.parse(record.body)).toMatchObject({
      format: 'TicketBAI 1.2 XML (XAdES-EPES signed)',
      issuer: { tax_id: 'B12345674', name: 'Ejemplo SL' },
      series: 'A',
      number: '1',
      issue_date: '15-01-2026',
      invoice_type: 'F2',
      tbai_id: record.fiscalId,
      totals: { total_amount: 1210 },
    });
  });

  it('sandbox accept echoes the TBAI id; reject:005 is a duplicate', async () => {
    const ok = validatedBuild(ticketBai, loc, draft());
    expect(await ticketBai.submit(stored(ok.record, ok.tx), submitCtx(loc))).toMatchObject({
      kind: 'accepted',
      response: { estado: '00', identificador_tbai: ok.record.fiscalId },
    });
    const dup = validatedBuild(ticketBai, loc, draft({ metadata: { sandbox_outcome: 'reject:005' } }));
    expect((await ticketBai.submit(stored(dup.record, dup.tx), submitCtx(loc))).kind).toBe('duplicate');
  });

  it('AnulaTicketBai: names the invoice, signed alone, outside the chain', () => {
    const { tx, record } = validatedBuild(ticketBai, loc, draft(), { chain: { seq: 5, previous: null } });
    const cancel = ticketBai.build({
      transactionId: 'c1',
      kind: 'cancellation',
      tx,
      original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), documentNumber: record.documentNumber },
      location: loc,
      environment: 'test',
      now: NOW,
      chain: { seq: 6, previous: { fingerprint: record.fingerprint, fiscalId: record.fiscalId, issuedAt: NOW.toISOString() } },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(ticketBai.capabilities.cancellationJoinsChain).toBe(false);
    expect(cancel).toMatchObject({ fiscalId: null, fingerprint: null, qrData: null, renderHints: [] });
    const body = JSON.parse(cancel.body);
    expect(body).toMatchObject({
      format: 'TicketBAI 1.2 AnulaTicketBai XML (XAdES-EPES signed)',
      cancelled_invoice: { issuer_nif: 'B12345674', series: 'A', number: '5', issue_date: '15-01-2026', tbai_id: record.fiscalId },
    });
    expect(body.chain).toBeUndefined();
  });
});
