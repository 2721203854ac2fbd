import { describe, expect, it } from 'vitest';
import { alreadyCancelledOutcome, cancelOutcome, duplicateNotFoundOutcome, duplicateOf, foundDuplicateOutcome, markLessDuplicate, parseResponseDoc, responseDocXml, sendOutcome } from './response.ts';

/* AADE's ResponseDoc (response-v1.0.12.xsd) read into the spec's categories. */

const UID = 'E983749569A44D1417B39328DED86B6E84AF6B59';
const ok200 = (inner: string) => ({ status: 200, body: `<?xml version="1.0" encoding="utf-8"?><ResponseDoc xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><response><index>1</index>${inner}</response></ResponseDoc>` });

describe('parseResponseDoc', () => {
  it('reads a success and keeps the 15-digit MARK as a string', () => {
    const [r] = parseResponseDoc(ok200(`<invoiceUid>${UID}</invoiceUid><invoiceMark>400001966030681</invoiceMark><qrUrl>https://x/q?a=1&amp;b=2</qrUrl><authenticationCode>ABC</authenticationCode><statusCode>Success</statusCode>`).body)!;
    expect(r).toEqual({ index: '1', invoiceUid: UID, invoiceMark: '400001966030681', qrUrl: 'https://x/q?a=1&b=2', cancellationMark: undefined, authenticationCode: 'ABC', errors: [], statusCode: 'Success' });
  });

  it('reads errors, and is null for what is not a ResponseDoc', () => {
    const [r] = parseResponseDoc(ok200('<errors><error><message>m1</message><code>203</code></error><error><message>m2</message><code>207</code></error></errors><statusCode>ValidationError</statusCode>').body)!;
    expect(r!.errors).toEqual([{ code: '203', message: 'm1' }, { code: '207', message: 'm2' }]);
    expect(parseResponseDoc('<html>503</html>')).toBeNull();
    expect(parseResponseDoc('{"statusCode":401}')).toBeNull();
  });

  it('round-trips what the sandbox writes', () => {
    const xml = responseDocXml([{ index: '1', invoiceMark: '1', invoiceUid: UID, errors: [], statusCode: 'Success' }]);
    expect(parseResponseDoc(xml)![0]).toMatchObject({ invoiceMark: '1', invoiceUid: UID, statusCode: 'Success' });
  });
});

describe('sendOutcome', () => {
  it('Success → accepted: MARK as upstreamId, the four receipt items', () => {
    const out = sendOutcome(ok200(`<invoiceUid>${UID}</invoiceUid><invoiceMark>400001966030681</invoiceMark><qrUrl>https://q</qrUrl><authenticationCode>AC</authenticationCode><statusCode>Success</statusCode>`));
    expect(out).toMatchObject({ kind: 'accepted', upstreamId: '400001966030681', response: { category: 'success', invoiceUid: UID } });
    expect(out.kind === 'accepted' && out.renderHints!.map((h) => `${h.key}=${h.value}`)).toEqual(['mark=400001966030681', `uid=${UID}`, 'auth_code=AC', 'qr=https://q']);
  });

  it('ValidationError → regulatory_reject with authority_code', () => {
    const out = sendOutcome(ok200('<errors><error><message>gross</message><code>203</code></error></errors><statusCode>ValidationError</statusCode>'));
    expect(out).toMatchObject({ kind: 'rejected', code: '203', response: { category: 'regulatory_reject', authority_code: '203' } });
    // The spec's error object, written by the core as response_payload.error.
    expect(out.kind === 'rejected' && out.error).toEqual({ category: 'regulatory_reject', authority_code: '203' });
  });

  it('the duplicate answers: 228 naming the UID and 233, with the original MARK → duplicate_as_success', () => {
    const m228 = `The UID: ${UID} is invalid . It has already been sent for another invoice (MARK:400001966030681 , AUTHENTICATION_CODE:0A1B)`;
    const out = sendOutcome(ok200(`<errors><error><message>${m228}</message><code>228</code></error></errors><statusCode>ValidationError</statusCode>`), { uid: UID });
    expect(out).toMatchObject({ kind: 'duplicate', upstreamId: '400001966030681', response: { category: 'duplicate_as_success', authority_code: '228' } });
    expect(out.kind === 'duplicate' && out.renderHints!.map((h) => h.key)).toEqual(['mark', 'uid', 'auth_code']);
    expect(duplicateOf([{ code: '233', message: 'This UID has already been sent (MARK:400001000000009)' }])).toMatchObject({ code: '233', mark: '400001000000009' });
  });

  it('228 about something else (invoice type, malformed UID) stays a rejection; a duplicate of another UID too', () => {
    expect(sendOutcome(ok200('<errors><error><message>The INVOICE TYPE: 11.5 is invalid</message><code>228</code></error></errors><statusCode>ValidationError</statusCode>')).kind).toBe('rejected');
    const other = `The UID: ${UID} is invalid . It has already been sent for another invoice (MARK:400001966030681 , AUTHENTICATION_CODE:0A1B)`;
    expect(sendOutcome(ok200(`<errors><error><message>${other}</message><code>228</code></error></errors><statusCode>ValidationError</statusCode>`), { uid: 'F'.repeat(40) }).kind).toBe('rejected');
  });

  it('a duplicate that names no MARK is never a success without MARK: sendOutcome alone rejects it, markLessDuplicate sends it to the lookup', () => {
    const m233 = ok200('<errors><error><message>This UID has already been sent</message><code>233</code></error></errors><statusCode>ValidationError</statusCode>');
    expect(sendOutcome(m233).kind).toBe('rejected');
    expect(markLessDuplicate(m233, { uid: UID })).toEqual({ code: '233', message: 'This UID has already been sent' });
    // Without our UID there is nothing to look for.
    expect(markLessDuplicate(m233, {})).toBeNull();
    const m228 = (uid: string) => ok200(`<errors><error><message>The UID: ${uid} is invalid . It has already been sent for another invoice</message><code>228</code></error></errors><statusCode>ValidationError</statusCode>`);
    expect(markLessDuplicate(m228(UID), { uid: UID.toLowerCase() })).toMatchObject({ code: '228' });
    expect(markLessDuplicate(m228('F'.repeat(40)), { uid: UID })).toBeNull(); // another document's UID
    // Named MARK, other errors, success: not a lookup.
    expect(markLessDuplicate(ok200('<errors><error><message>This UID has already been sent (MARK:7)</message><code>233</code></error></errors><statusCode>ValidationError</statusCode>'), { uid: UID })).toBeNull();
    expect(markLessDuplicate(ok200('<errors><error><message>gross</message><code>203</code></error></errors><statusCode>ValidationError</statusCode>'), { uid: UID })).toBeNull();
    expect(markLessDuplicate(ok200('<invoiceMark>5</invoiceMark><statusCode>Success</statusCode>'), { uid: UID })).toBeNull();
    expect(markLessDuplicate({ status: 503, body: '' }, { uid: UID })).toBeNull();
  });

  it('the lookup\'s outcomes: found → duplicate with the listed MARK and receipt items; not found → transient', () => {
    const dup = { code: '233', message: 'This UID has already been sent' };
    const found = foundDuplicateOutcome(dup, UID, { mark: '400001000000042', authenticationCode: 'AC', qrCodeUrl: 'https://q' }, 2);
    expect(found).toMatchObject({ kind: 'duplicate', upstreamId: '400001000000042', response: { category: 'duplicate_as_success', authority_code: '233', invoiceMark: '400001000000042', lookup: { pages: 2 } } });
    expect(found.kind === 'duplicate' && found.renderHints!.map((h) => `${h.key}=${h.value}`)).toEqual(['mark=400001000000042', `uid=${UID}`, 'auth_code=AC', 'qr=https://q']);
    expect(duplicateNotFoundOutcome(dup, 'does not list it', 1)).toMatchObject({ kind: 'retry_later', code: 'duplicate_not_found', error: { category: 'transient' } });
  });

  it('TechnicalError, 5xx, 429 and unreadable answers are transient; 401/403 permanent', () => {
    expect(sendOutcome(ok200('<errors><error><message>db down</message><code>999</code></error></errors><statusCode>TechnicalError</statusCode>'))).toMatchObject({ kind: 'retry_later', response: { category: 'transient' } });
    expect(sendOutcome({ status: 503, body: '<html/>' })).toMatchObject({ kind: 'retry_later', code: 'unavailable' });
    expect(sendOutcome({ status: 429, body: '', retryAfter: '30' })).toMatchObject({ kind: 'retry_later', retryAfterSeconds: 30 });
    expect(sendOutcome({ status: 200, body: 'garbage' })).toMatchObject({ kind: 'retry_later', code: 'unreadable_answer' });
    expect(sendOutcome({ status: 401, body: '{"statusCode":401}' })).toMatchObject({ kind: 'rejected', code: 'unauthorized', response: { category: 'permanent' }, error: { category: 'permanent' } });
    expect(sendOutcome({ status: 503, body: '<html/>' })).toMatchObject({ error: { category: 'transient' } });
  });

  it('a MARK with remarks (quarantined with warnings) is a success with warnings', () => {
    // Not in the v1.0.12 schema (a MARK or errors): read leniently should AADE send both.
    const out = sendOutcome(ok200('<invoiceMark>5</invoiceMark><errors><error><message>w</message><code>300</code></error></errors><statusCode>Success</statusCode>'));
    expect(out).toMatchObject({ kind: 'accepted', upstreamId: '5', warnings: ['300'] });
  });
});

describe('cancelOutcome', () => {
  it('cancellationMark → accepted; 251 → already cancelled; others rejected', () => {
    expect(cancelOutcome(ok200('<cancellationMark>400001000000002</cancellationMark><statusCode>Success</statusCode>'), '1')).toMatchObject({ kind: 'accepted', upstreamId: '400001000000002' });
    expect(cancelOutcome(ok200('<errors><error><message>x</message><code>251</code></error></errors><statusCode>ValidationError</statusCode>'), '1').kind).toBe('duplicate');
    expect(cancelOutcome(ok200('<errors><error><message>x</message><code>104</code></error></errors><statusCode>ValidationError</statusCode>'), '1')).toMatchObject({ kind: 'rejected', code: '104', error: { category: 'regulatory_reject', authority_code: '104' } });
  });

  it('the cancellation MARK is the cancellation\'s receipt item `mark` (no UID, code or QR: CancelInvoice issues no document)', () => {
    const out = cancelOutcome(ok200('<cancellationMark>400001000000002</cancellationMark><statusCode>Success</statusCode>'), '400001000000001');
    expect(out).toMatchObject({ response: { cancelledMark: '400001000000001', cancellationMark: '400001000000002' } });
    expect(out.kind === 'accepted' && out.renderHints).toEqual([{ key: 'mark', placement: 'footer_bottom', mandatory: true, kind: 'text', value: '400001000000002' }]);
  });

  it('251 with the cancellation MARK read from AADE\'s book: its upstreamId and receipt item; not found: still cancelled, and why', () => {
    const dup = cancelOutcome(ok200('<errors><error><message>x</message><code>251</code></error></errors><statusCode>ValidationError</statusCode>'), '400001000000001');
    if (dup.kind !== 'duplicate') throw new Error(dup.kind);
    expect(dup.upstreamId).toBeUndefined();
    const found = alreadyCancelledOutcome(dup, { cancellationMark: '400001000000009', pages: 1 });
    expect(found).toMatchObject({ kind: 'duplicate', upstreamId: '400001000000009', response: { authority_code: '251', cancellationMark: '400001000000009', lookup: { service: 'RequestTransmittedDocs', pages: 1 } } });
    expect(found.kind === 'duplicate' && found.renderHints!.map((h) => `${h.key}=${h.value}`)).toEqual(['mark=400001000000009']);
    const blind = alreadyCancelledOutcome(dup, { why: 'does not list it (1 pages)', pages: 1 });
    expect(blind).toMatchObject({ kind: 'duplicate', response: { lookup: { found: false, why: 'does not list it (1 pages)' } } });
    expect(blind.kind === 'duplicate' && (blind.upstreamId ?? blind.renderHints)).toBeUndefined();
  });
});
