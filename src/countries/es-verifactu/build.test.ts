import { huellaAlta, huellaAnulacion } from './huella.ts';
import { describe, it, expect } from 'vitest';
import { verifactu } from './index.ts';
import { verifactuQrUrl } from './qr.ts';
import { draft, location, stored, submitCtx, txCtx, validatedBuild } from '../shared/test-fixtures.ts';

describe('es-verifactu validateTransaction', () => {
  const loc = location('es-verifactu');
  it('defaults: series A, F2; F1 with a customer tax id; R5/R1 for refunds', () => {
    expect(verifactu.validateTransaction(draft(), txCtx(loc))).toEqual({ series: 'A', invoice_type: 'F2' });
    expect(verifactu.validateTransaction(draft({ customer_context: { nif: 'B12345674' } }), txCtx(loc)).invoice_type).toBe('F1');
    expect(verifactu.validateTransaction(draft({ type: 'refund' }), txCtx(loc)).invoice_type).toBe('R5');
  });
});

describe('es-verifactu QR', () => {
  it('AEAT document example shape: & in the number is %26', () => {
    expect(verifactuQrUrl('live', { nif: '89890001K', numSerie: '12345678&G33', fecha: '01-01-2024', importe: '241.4' })).toBe(
      'https://www2.agenciatributaria.gob.es/wlpl/TIKE-CONT/ValidarQR?nif=89890001K&numserie=12345678%26G33&fecha=01-01-2024&importe=241.4',
    );
  });
});

describe('es-verifactu build', () => {
  const loc = location('es-verifactu');

  it('no local fiscal id (AEAT returns the CSV); QR for the test environment; hints', () => {
    const { record } = validatedBuild(verifactu, loc, draft(), { chain: { seq: 7, previous: null } });
    expect(record.fiscalId).toBeNull();
    expect(record.documentNumber).toBe('A-7');
    expect(record.qrData).toBe(
      'https://prewww2.aeat.es/wlpl/TIKE-CONT/ValidarQR?nif=B12345674&numserie=A-7&fecha=15-01-2026&importe=12.10',
    );
    expect(record.renderHints.map((h) => [h.key, h.kind, h.value])).toEqual([
      ['qr_label', 'text', 'QR tributario:'],
      ['qr', 'qr_url', record.qrData],
      ['verifactu_legend', 'text', 'VERI*FACTU'],
    ]);
    expect(JSON.parse(record.body)).toMatchObject({
      format: 'VERI*FACTU RegistroAlta XML',
      num_serie_factura: 'A-7',
      cuota_total: '2.10',
      importe_total: '12.10',
      chain: { seq: 7, previous_fingerprint: null },
    });
  });

  it('the alta\'s fingerprint is the official huella of the values it carries', () => {
    const { record } = validatedBuild(verifactu, loc, draft());
    const body = JSON.parse(record.body);
    expect(record.fingerprint).toBe(huellaAlta({
      IDEmisorFactura: 'B12345674', NumSerieFactura: body.num_serie_factura, FechaExpedicionFactura: body.issue_date,
      TipoFactura: body.invoice_type, CuotaTotal: body.cuota_total, ImporteTotal: body.importe_total, Huella: '',
      FechaHoraHusoGenRegistro: body.fecha_hora_huso_gen_registro,
    }));
    expect(body.huella).toBe(record.fingerprint);
  });

  it('RegistroAnulacion joins the chain and names the cancelled invoice', () => {
    const { tx, record } = validatedBuild(verifactu, loc, draft());
    const cancel = verifactu.build({
      ...{ transactionId: 'c1', kind: 'cancellation', tx, location: loc, environment: 'test', now: new Date('2026-01-16T10:00:00Z') },
      original: { transactionId: 't1', fiscalId: null, tx, issuedAt: '2026-01-15T10:00:00.000Z', documentNumber: record.documentNumber },
      chain: { seq: 2, previous: { fingerprint: record.fingerprint, fiscalId: null, issuedAt: '2026-01-15T10:00:00.000Z' } },
      software: { name: 'x', version: '1', vendorTaxId: 'A99800005' },
    });
    expect(verifactu.capabilities.cancellationJoinsChain).toBe(true);
    // The official huella of a RegistroAnulacion, chained to the alta's.
    expect(cancel.fingerprint).toBe(huellaAnulacion({
      IDEmisorFacturaAnulada: 'B12345674', NumSerieFacturaAnulada: 'A-1', FechaExpedicionFacturaAnulada: '15-01-2026',
      Huella: record.fingerprint!, FechaHoraHusoGenRegistro: '2026-01-16T11:00:00+01:00',
    }));
    expect(JSON.parse(cancel.body)).toMatchObject({
      format: 'VERI*FACTU RegistroAnulacion XML',
      cancelled_invoice: { issuer_nif: 'B12345674', num_serie_factura: 'A-1', issue_date: '15-01-2026' },
      chain: { seq: 2, previous_fingerprint: record.fingerprint },
    });
  });

  it('sandbox: accept returns a 16-character CSV as fiscal id; 3000 is a duplicate; 1104 rejected in English', async () => {
    const ok = validatedBuild(verifactu, loc, draft());
    const out = await verifactu.submit(stored(ok.record, ok.tx), submitCtx(loc));
    expect(out.kind).toBe('accepted');
    expect(out.kind === 'accepted' && out.fiscalId).toMatch(/^[A-Z0-9]{16}$/);
    const dup = validatedBuild(verifactu, loc, draft({ metadata: { sandbox_outcome: 'reject:3000' } }));
    expect((await verifactu.submit(stored(dup.record, dup.tx), submitCtx(loc))).kind).toBe('duplicate');
    const rej = validatedBuild(verifactu, loc, draft({ metadata: { sandbox_outcome: 'reject:1104' } }));
    expect(await verifactu.submit(stored(rej.record, rej.tx), submitCtx(loc))).toMatchObject({
      kind: 'rejected',
      code: '1104',
      message: 'Invalid NumSerieFactura (invoice series and number) value.',
    });
  });
});
