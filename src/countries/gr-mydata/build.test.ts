import { describe, it, expect } from 'vitest';
import { myData } from './index.ts';
import { NOW, TX_ID, draft, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';

describe('gr-mydata build and sandbox', () => {
  const loc = location('gr-mydata');

  it('fiscal id series-aa; no render hints before AADE answers', () => {
    const { record } = validatedBuild(myData, loc, draft(), { chain: { seq: 8, previous: null } });
    expect(record.fiscalId).toBe('A-8');
    expect(record.renderHints).toEqual([]);
    expect(JSON.parse(record.body)).toMatchObject({ afm: '094259216', branch: 0, invoice_type: '11.1', series: 'A', aa: '8', issue_date: '2026-01-15' });
  });

  it('accept: MARK, uid, authentication code and QR, as render hints in the spec table', async () => {
    const { tx, record } = validatedBuild(myData, loc, draft());
    const out = await myData.submit(stored(record, tx), submitCtx(loc));
    if (out.kind !== 'accepted') throw new Error(out.kind);
    expect(out.fiscalId).toBeUndefined(); // the local series-number stays
    expect(out.upstreamId).toMatch(/^[1-9]\d{14}$/);
    expect(out.response).toMatchObject({
      invoiceMark: out.upstreamId,
      invoiceUid: expect.stringMatching(/^[0-9A-F]{40}$/),
      authenticationCode: expect.stringMatching(/^[0-9A-F]{32}$/),
      qrUrl: expect.stringMatching(/^https:\/\/mydataapidev\.aade\.gr\/TimologioQR\/QRInfo\?q=\S+$/),
    });
    expect(out.renderHints?.map((h) => [h.key, h.placement, h.mandatory, h.kind])).toEqual([
      ['mark', 'footer_bottom', true, 'text'],
      ['uid', 'footer_bottom', true, 'text'],
      ['auth_code', 'footer_bottom', true, 'text'],
      ['qr', 'footer_right', true, 'qr_url'],
    ]);
    expect(out.renderHints?.[0]?.value).toBe(out.upstreamId);
  });

  it('cancellation: CancelInvoice by MARK, answered with a cancellation MARK', async () => {
    const { tx, record } = validatedBuild(myData, loc, draft());
    const cancel = myData.build({
      transactionId: 'c1',
      kind: 'cancellation',
      tx,
      original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), upstreamId: '400001925600940' },
      location: loc,
      environment: 'test',
      now: NOW,
      chain: { seq: 1, previous: null },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(JSON.parse(cancel.body)).toMatchObject({ format: 'myDATA CancelInvoice', cancelled_mark: '400001925600940' });
    const out = await myData.submit(stored(cancel, tx, 'cancellation', 'c1'), submitCtx(loc));
    expect(out).toMatchObject({ kind: 'accepted', upstreamId: expect.stringMatching(/^\d{15}$/), response: { cancellationMark: expect.any(String) } });
  });

  it('reject with an AADE code; 233 (UID already sent) is a duplicate', async () => {
    const rej = validatedBuild(myData, loc, draft({ metadata: { sandbox_outcome: 'reject:203' } }));
    expect(await myData.submit(stored(rej.record, rej.tx), submitCtx(loc))).toMatchObject({
      kind: 'rejected',
      code: '203',
      message: "Gross value doesn't match the sum of net value plus taxes.",
    });
    const dup = validatedBuild(myData, loc, draft({ metadata: { sandbox_outcome: 'reject:233' } }));
    expect((await myData.submit(stored(dup.record, dup.tx), submitCtx(loc))).kind).toBe('duplicate');
  });
});
