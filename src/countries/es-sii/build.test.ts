import { describe, it, expect } from 'vitest';
import { sii } from './index.ts';
import { TX_ID, draft, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';

describe('es-sii build and sandbox', () => {
  const loc = location('es-sii');

  it('invoice number defaults to the transaction id, series prefixed', () => {
    expect(validatedBuild(sii, loc, draft({ metadata: { simplified: true } })).record.documentNumber).toBe(TX_ID);
    const { record } = validatedBuild(sii, loc, draft({ metadata: { simplified: true, series: '2026-', invoice_number: 7 } }));
    expect(record.documentNumber).toBe('2026-7');
    expect(record.fiscalId).toBeNull();
    expect(record.fingerprint).toBeNull();
    expect(record.renderHints).toEqual([{ key: 'invoice_number', placement: 'header', mandatory: true, kind: 'text', value: '2026-7' }]);
    expect(JSON.parse(record.body)).toMatchObject({ invoice_type: 'F2', regime_key: '01', period: '01', exercise: '2026' });
  });

  it('accept returns the CSV as fiscal id (deterministic per transaction)', async () => {
    const { tx, record } = validatedBuild(sii, loc, draft({ metadata: { simplified: true } }));
    const a = await sii.submit(stored(record, tx), submitCtx(loc));
    const b = await sii.submit(stored(record, tx, 'record', 'another-id'), submitCtx(loc));
    expect(a).toMatchObject({ kind: 'accepted', fiscalId: expect.stringMatching(/^[A-Z0-9]{16}$/) });
    expect(a.kind === 'accepted' && b.kind === 'accepted' && a.fiscalId !== b.fiscalId).toBe(true);
  });
});
