import { describe, it, expect } from 'vitest';
import { nf525 } from './index.ts';
import { NOW, TX_ID, draft, location, txCtx, validatedBuild } from '../shared/test-fixtures.ts';

describe('fr-nf525', () => {
  const loc = location('fr-nf525');

  it('nothing required in metadata; success at creation', () => {
    expect(nf525.validateTransaction(draft(), txCtx(loc))).toEqual({});
    expect(nf525.initialStatus(loc)).toBe('success');
  });

  it('fiscal id: register id and sequence; hints: number and signature extract', () => {
    const { record } = validatedBuild(nf525, loc, draft(), { chain: { seq: 35, previous: null } });
    expect(record.fiscalId).toBe('73282932000074-00000035');
    expect(record.renderHints).toEqual([
      { key: 'document_number', placement: 'header', mandatory: true, kind: 'text', value: '73282932000074-00000035' },
      { key: 'signature_extract', placement: 'footer_bottom', mandatory: true, kind: 'text', value: record.fingerprint!.slice(0, 8) },
    ]);
  });

  it('a cancellation is a new chained record naming the original', () => {
    const { tx, record } = validatedBuild(nf525, loc, draft());
    const cancel = nf525.build({
      transactionId: 'c1',
      kind: 'cancellation',
      tx,
      original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString() },
      location: loc,
      environment: 'test',
      now: NOW,
      chain: { seq: 2, previous: { fingerprint: record.fingerprint, fiscalId: record.fiscalId, issuedAt: NOW.toISOString() } },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(cancel.fiscalId).toBe('73282932000074-00000002');
    expect(JSON.parse(cancel.body)).toMatchObject({ cancels: record.fiscalId, chain: { seq: 2, previous_fingerprint: record.fingerprint } });
  });
});
