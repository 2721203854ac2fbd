import { describe, expect, it } from 'vitest';
import { TransportError, type StoredRecord, type SubmitContext } from '../types.ts';
import { parseResponseDoc } from './response.ts';
import { myDataStubSubmit, stubAnswer } from './sandbox.ts';
import { transportFaultOutcome } from './client.ts';

/* The stub AADE answers as AADE's ResponseDoc, read by the real parser. */

const ctx = { environment: 'test', mode: 'stub', now: new Date('2026-03-02T10:00:00Z'), timeoutMs: 5000, attempt: 1 } as SubmitContext;
const record = (outcome?: string, kind: 'record' | 'cancellation' = 'record'): StoredRecord => ({
  transactionId: 'tx-sandbox-1', kind, body: '{}', contentType: 'application/json', fiscalId: 'A-1',
  tx: { metadata: outcome ? { sandbox_outcome: outcome } : {} } as unknown as StoredRecord['tx'],
});

describe('myDATA stub', () => {
  it('accept: a ResponseDoc with MARK, UID, QR and authentication code; the same for a retried job', async () => {
    const answer = stubAnswer(record(), ctx);
    expect(parseResponseDoc(answer.body)![0]).toMatchObject({ statusCode: 'Success', invoiceMark: expect.stringMatching(/^\d{15}$/), invoiceUid: expect.stringMatching(/^[0-9A-F]{40}$/) });
    const out = await myDataStubSubmit(record(), ctx);
    expect(out).toMatchObject({ kind: 'accepted', upstreamId: expect.stringMatching(/^\d{15}$/), response: { sandbox: true, category: 'success' } });
    expect(await myDataStubSubmit(record(), ctx)).toEqual(out);
    expect(out.kind === 'accepted' && out.renderHints!.map((h) => h.key)).toEqual(['mark', 'uid', 'auth_code', 'qr']);
  });

  it('reject:203 → regulatory_reject; reject:233 → AADE\'s duplicate answer: success with the same MARK an accept gives', async () => {
    expect(await myDataStubSubmit(record('reject:203'), ctx)).toMatchObject({ kind: 'rejected', code: '203', response: { authority_code: '203' } });
    const accepted = await myDataStubSubmit(record(), ctx);
    const dup = await myDataStubSubmit(record('reject:233'), ctx);
    expect(dup).toMatchObject({ kind: 'duplicate', upstreamId: (accepted as { upstreamId: string }).upstreamId, response: { category: 'duplicate_as_success' } });
    // The receipt items an accept gives, the mandatory QR among them (spec, Greek render_hints).
    const hints = (o: typeof dup) => (o.kind === 'accepted' || o.kind === 'duplicate' ? o.renderHints : undefined);
    expect(hints(dup)).toEqual(hints(accepted));
    expect(hints(dup)!.map((h) => h.key)).toEqual(['mark', 'uid', 'auth_code', 'qr']);
  });

  it('error:<code> → TechnicalError, error:503 → HTTP 503: transient; timeout → no answer, transient as the real client says', async () => {
    expect(await myDataStubSubmit(record('error:999'), ctx)).toMatchObject({ kind: 'retry_later', code: '999', error: { category: 'transient' } });
    expect(await myDataStubSubmit(record('error:503'), ctx)).toMatchObject({ kind: 'retry_later', code: 'unavailable', error: { category: 'transient' } });
    // The shape submitToAade gives a TransportError (client.ts transportFaultOutcome).
    expect(await myDataStubSubmit(record('timeout'), ctx)).toEqual({
      ...transportFaultOutcome(new TransportError('timeout', 'sandbox: AADE did not answer in time (sandbox_outcome timeout)')),
      response: { category: 'transient', sandbox: true },
    });
  });

  it('a cancellation gets a cancellationMark', async () => {
    expect(await myDataStubSubmit(record(undefined, 'cancellation'), ctx)).toMatchObject({ kind: 'accepted', upstreamId: expect.stringMatching(/^\d{15}$/) });
  });
});
