import { describe, it, expect } from 'vitest';
import { documentoCommerciale as dc } from './index.ts';
import { dcDocumentNumber } from './build.ts';
import { NOW, TX_ID, draft, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';

describe('it-dc build and sandbox', () => {
  const loc = location('it-dc');

  it('document numbers NNNN-NNNN per register', () => {
    expect(dcDocumentNumber(1)).toBe('0001-0001');
    expect(dcDocumentNumber(9999)).toBe('0001-9999');
    expect(dcDocumentNumber(10000)).toBe('0002-0001');
    expect(dc.chainKey({ location: loc, tx: draft() })).toBe(`it-dc:${loc.id}:ABCD-123456`);
  });

  it('the document number is the fiscal id and the document_number hint', () => {
    const { record } = validatedBuild(dc, loc, draft(), { chain: { seq: 12, previous: null } });
    expect(record.fiscalId).toBe('0001-0012');
    expect(record.renderHints).toEqual([{ key: 'document_number', placement: 'header', mandatory: true, kind: 'text', value: '0001-0012' }]);
    expect(JSON.parse(record.body)).toMatchObject({ format: 'Documento Commerciale', pem_matricola: 'ABCD-123456', electronic_amount: 1210 });
  });

  it('annullo: a new numbered document naming the original', () => {
    const { tx, record } = validatedBuild(dc, loc, draft());
    const annullo = dc.build({
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
    expect(annullo.fiscalId).toBe('0001-0002');
    expect(JSON.parse(annullo.body)).toMatchObject({
      format: 'Documento Commerciale di annullo',
      annulled_document: { matricola: 'ABCD-123456', date: '2026-01-15', number: '0001-0001' },
    });
  });

  it.each([
    ['0100', 'rejected', false],
    ['0200', 'rejected', false],
    ['0403', 'rejected', false],
  ])('reject:%s uses the spec table', async (code, kind) => {
    const { tx, record } = validatedBuild(dc, loc, draft({ metadata: { sandbox_outcome: `reject:${code}` } }));
    const out = await dc.submit(stored(record, tx), submitCtx(loc));
    expect(out).toMatchObject({ kind, code, message: dc.codes[code]!.message });
  });

  it('codes: 0429 and 0500 retriable; error:0429 is retry_later; accept gives the authority document id', async () => {
    expect(dc.codes['0429']).toMatchObject({ retriable: true });
    expect(dc.codes['0500']).toMatchObject({ retriable: true });
    expect(dc.codes['0403']).toMatchObject({ category: 'auth', retriable: false });
    const err = validatedBuild(dc, loc, draft({ metadata: { sandbox_outcome: 'error:0429' } }));
    expect(await dc.submit(stored(err.record, err.tx), submitCtx(loc))).toMatchObject({ kind: 'retry_later', code: '0429' });
    const ok = validatedBuild(dc, loc, draft());
    expect(await dc.submit(stored(ok.record, ok.tx), submitCtx(loc))).toMatchObject({
      kind: 'accepted',
      upstreamId: expect.stringMatching(/^\d{20}$/),
    });
  });
});
