import { describe, it, expect } from 'vitest';
import { sdi } from './index.ts';
import { NOW, TX_ID, draft, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';

describe('it-sdi build and sandbox', () => {
  const loc = location('it-sdi');
  const sale = () => draft({ metadata: { invoice_number: '2026/15' } });

  it('FatturaPA placeholder: no local fiscal id, the invoice number as hint', () => {
    const { record } = validatedBuild(sdi, loc, sale());
    expect(record.fiscalId).toBeNull();
    expect(record.documentNumber).toBe('2026/15');
    expect(record.renderHints).toEqual([{ key: 'invoice_number', placement: 'header', mandatory: true, kind: 'text', value: '2026/15' }]);
    expect(JSON.parse(record.body)).toMatchObject({
      format: 'FatturaPA 1.2.2 XML',
      tipo_documento: 'TD01',
      numero: '2026/15',
      data: '2026-01-15',
      formato_trasmissione: 'FPR12',
      codice_destinatario: '0000000',
    });
  });

  it('cancellation is a TD04 credit note numbered from the original', () => {
    const { tx, record } = validatedBuild(sdi, loc, sale());
    const note = sdi.build({
      transactionId: 'c1',
      kind: 'cancellation',
      tx,
      original: { transactionId: TX_ID, fiscalId: null, tx, issuedAt: NOW.toISOString(), documentNumber: record.documentNumber },
      location: loc,
      environment: 'test',
      now: NOW,
      chain: { seq: 1, previous: null },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(note.documentNumber).toBe('NC-2026/15');
    expect(JSON.parse(note.body)).toMatchObject({
      tipo_documento: 'TD04',
      numero: 'NC-2026/15',
      fattura_collegata: { numero: '2026/15', data: '2026-01-15' },
    });
  });

  it('accept: delivered, IdentificativoSdI; reject: rejected (NS) with the code text; 00404 duplicate', async () => {
    const ok = validatedBuild(sdi, loc, sale());
    expect(await sdi.submit(stored(ok.record, ok.tx), submitCtx(loc))).toMatchObject({
      kind: 'accepted',
      status: 'delivered',
      fiscalId: expect.stringMatching(/^[1-9]\d{9}$/),
    });
    const rej = validatedBuild(sdi, loc, draft({ metadata: { invoice_number: '1', sandbox_outcome: 'reject:00311' } }));
    expect(await sdi.submit(stored(rej.record, rej.tx), submitCtx(loc))).toMatchObject({
      kind: 'rejected',
      status: 'rejected',
      code: '00311',
      message: '1.1.4 <CodiceDestinatario> is not valid.',
    });
    const dup = validatedBuild(sdi, loc, draft({ metadata: { invoice_number: '1', sandbox_outcome: 'reject:00404' } }));
    expect((await sdi.submit(stored(dup.record, dup.tx), submitCtx(loc))).kind).toBe('duplicate');
  });
});
