import { describe, expect, it } from 'vitest';
import { TransportError, type StoredRecord, type SubmitContext } from '../types.ts';
import { parseResponseDoc } from './response.ts';
import { myDataStubSubmit, stubAnswer } from './sandbox.ts';
import { transportFaultOutcome } from './client.ts';
import { myData } from './index.ts';
import { NOW, TX_ID, draft, line, location, stored, validatedBuild } from '../shared/test-fixtures.ts';

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

  it('a cancellation gets a cancellationMark, its receipt\'s `mark`; reject:251 (already cancelled) is a success with the MARK an accept gives', async () => {
    const accepted = await myDataStubSubmit(record(undefined, 'cancellation'), ctx);
    expect(accepted).toMatchObject({ kind: 'accepted', upstreamId: expect.stringMatching(/^\d{15}$/), response: { cancellationMark: expect.stringMatching(/^\d{15}$/) } });
    const mark = (accepted as { upstreamId: string }).upstreamId;
    expect(accepted.kind === 'accepted' && accepted.renderHints!.map((h) => `${h.key}=${h.value}`)).toEqual([`mark=${mark}`]);
    const already = await myDataStubSubmit(record('reject:251', 'cancellation'), ctx);
    expect(already).toMatchObject({ kind: 'duplicate', upstreamId: mark, response: { authority_code: '251', cancellationMark: mark } });
    expect(already.kind === 'duplicate' && already.renderHints!.map((h) => h.key)).toEqual(['mark']);
  });

  it('a cancellation that is a reversing document (its original had no MARK) is answered as the document it is: MARK, UID, code and QR', async () => {
    const { tx, record: built } = validatedBuild(myData, location('gr-mydata'), draft({ items: [line({ tax_rate: 24, tax_amount: 240, total_amount: 1240 })] }));
    const reversal = myData.build({
      transactionId: 'c1', kind: 'cancellation', tx,
      original: { transactionId: TX_ID, fiscalId: built.fiscalId, tx, issuedAt: NOW.toISOString(), upstreamId: null },
      location: location('gr-mydata'), environment: 'test', now: NOW, chain: { seq: 1, previous: null },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(reversal.body).toContain('<invoiceType>11.4</invoiceType>');
    const out = await myDataStubSubmit(stored(reversal, tx, 'cancellation', 'c1'), ctx);
    expect(out).toMatchObject({ kind: 'accepted', upstreamId: expect.stringMatching(/^\d{15}$/), response: { invoiceUid: reversal.fingerprint } });
    expect(out.kind === 'accepted' && out.renderHints!.map((h) => h.key)).toEqual(['mark', 'uid', 'auth_code', 'qr']);
  });
});
