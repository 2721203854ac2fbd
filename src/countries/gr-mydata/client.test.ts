import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { aadeUid, sampleInvoicesDoc, startFakeAade, type FakeAade } from '../../../test/support/fake-aade.ts';
import { type LocationForFiscal, type StoredRecord, type SubmitContext } from '../types.ts';
import { attemptTimeoutMs, callOf, myDataUrl, submitToAade, uidOfInvoicesDoc } from './client.ts';

/* The myDATA client against the fake AADE (real HTTPS on 127.0.0.1, XSD-validating). */

let fake: FakeAade;
beforeAll(async () => {
  fake = await startFakeAade({ credentials: { userId: 'user1', subscriptionKey: 'key-0123' } });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const location = (config: Record<string, unknown> = {}): LocationForFiscal => ({
  id: 'loc', account_id: 'acc', name: 'Καφενείο', country: 'GR', tax_id: '094259216', address: null,
  config: { afm: '094259216', branch: 0, aade_user_id: 'user1', subscription_key: 'key-0123', env: 'sandbox', ...config },
});
const ctx = (over: Partial<SubmitContext> = {}): SubmitContext => ({
  environment: 'test', mode: 'authority', location: location(), now: new Date('2026-03-02T10:00:00Z'),
  authorityBaseUrl: fake.url, timeoutMs: 5000, attempt: 1, authorityCa: fake.caPem,
  pacing: { notBefore: async () => null, hold: async () => undefined }, ...over,
});
/** SHA-1 (UTF-8) of the FORMATS.md example input, computed with node:crypto once. */
const UID_EXAMPLE = 'B6135D5377B0AA2A92264AB56B334169D0B25089';
const DOC = { vat: '094259216', series: 'A', aa: '7', issueDate: '2026-03-02', netCents: 1000, vatCents: 240 };
const record = (body: string, contentType = 'application/xml', kind: 'record' | 'cancellation' = 'record'): StoredRecord => ({
  transactionId: 'tx-1', kind, body, contentType, fiscalId: 'A-7',
  tx: { metadata: {} } as unknown as StoredRecord['tx'],
});

describe('endpoints', () => {
  it('maps the four env values to AADE\'s base URLs', () => {
    const c = (env: string) => ({ environment: 'test' as const, location: location({ env }), authorityBaseUrl: undefined });
    expect(myDataUrl('SendInvoices', c('sandbox'))).toBe('https://mydataapidev.aade.gr/SendInvoices');
    expect(myDataUrl('SendInvoices', c('production'))).toBe('https://mydatapi.aade.gr/myDATA/SendInvoices');
    expect(myDataUrl('CancelInvoice', c('provider_sandbox'))).toBe('https://mydataapidev.aade.gr/myDATAProvider/CancelInvoice');
    expect(myDataUrl('SendInvoices', c('provider_production'))).toBe('https://mydatapi.aade.gr/myDataProvider/SendInvoices');
  });

  it('a configured base URL replaces scheme and host and keeps the channel\'s path', () => {
    const c = { environment: 'test' as const, location: location({ env: 'production' }), authorityBaseUrl: 'https://127.0.0.1:9999/ignored' };
    expect(myDataUrl('SendInvoices', c)).toBe('https://127.0.0.1:9999/myDATA/SendInvoices');
  });
});

describe('callOf', () => {
  it('an InvoicesDoc is sent; a CancelInvoice record cancels by MARK; a placeholder is not sendable', () => {
    expect(callOf(record(sampleInvoicesDoc(DOC))).op).toBe('send');
    expect(callOf(record('{"operation":"CancelInvoice","mark":"400001000000001","entityVatNumber":null}', 'application/json'))).toEqual({ op: 'cancel', mark: '400001000000001' });
    expect(callOf(record('{"operation":"CancelInvoice","mark":"5","entityVatNumber":"094259216"}', 'application/json'))).toEqual({ op: 'cancel', mark: '5', entityVatNumber: '094259216' });
    expect(callOf(record('{"operation":"CancelInvoice","mark":null}', 'application/json')).op).toBe('none');
    expect(callOf(record('{"placeholder":true}', 'application/json')).op).toBe('none');
  });

  it('the UID read back from the document is AADE\'s (independent computation in the fake)', () => {
    expect(uidOfInvoicesDoc(sampleInvoicesDoc(DOC))).toBe(aadeUid({ vat: DOC.vat, issueDate: DOC.issueDate, branch: '0', invoiceType: '11.1', series: 'A', aa: '7' }));
    // FORMATS.md §6 example input `999999999-2020-10-22-0-1.1-Α-2` (Greek capital alpha), SHA-1 of its UTF-8 bytes.
    expect(uidOfInvoicesDoc(sampleInvoicesDoc({ ...DOC, vat: '999999999', issueDate: '2020-10-22', invoiceType: '1.1', series: 'Α', aa: '2' })))
      .toBe(UID_EXAMPLE);
  });
});

describe('SendInvoices', () => {
  it('sends the document with both headers; the MARK, UID, authentication code and QR come back', async () => {
    const out = await submitToAade(record(sampleInvoicesDoc(DOC)), ctx());
    expect(out.kind).toBe('accepted');
    const [doc] = [...fake.documents.values()];
    expect(doc!.schemaValid).toBe(true);
    const req = fake.requests[0]!;
    expect(req.path).toBe('/SendInvoices');
    expect(req.headers['aade-user-id']).toBe('user1');
    expect(req.headers['ocp-apim-subscription-key']).toBe('key-0123');
    expect(req.headers['content-type']).toMatch(/^application\/xml/);
    if (out.kind !== 'accepted') throw new Error('not accepted');
    expect(out.upstreamId).toBe(doc!.mark);
    expect(out.renderHints!.map((h) => [h.key, h.placement, h.kind])).toEqual([
      ['mark', 'footer_bottom', 'text'], ['uid', 'footer_bottom', 'text'], ['auth_code', 'footer_bottom', 'text'], ['qr', 'footer_right', 'qr_url'],
    ]);
    expect(out.renderHints!.find((h) => h.key === 'uid')!.value).toBe(doc!.uid);
  });

  it('the same document again: AADE\'s duplicate answer (228) is success with the original MARK', async () => {
    const first = await submitToAade(record(sampleInvoicesDoc(DOC)), ctx());
    const again = await submitToAade(record(sampleInvoicesDoc(DOC)), ctx());
    expect(fake.documents.size).toBe(1);
    expect(again).toMatchObject({ kind: 'duplicate', upstreamId: (first as { upstreamId: string }).upstreamId, response: { category: 'duplicate_as_success', authority_code: '228' } });
  });

  it('wrong subscription key: HTTP 401 → a permanent rejection', async () => {
    const out = await submitToAade(record(sampleInvoicesDoc(DOC)), ctx({ location: location({ subscription_key: 'wrong' }) }));
    expect(out).toMatchObject({ kind: 'rejected', code: 'unauthorized', response: { http_status: 401, category: 'permanent' }, error: { category: 'permanent' } });
    expect((out as { error: object }).error).not.toHaveProperty('authority_code');
  });

  it('a document that is not schema-valid: XMLSyntaxError 101, a regulatory rejection', async () => {
    const bad = sampleInvoicesDoc(DOC).replace('<currency>EUR</currency>', '<currency>EURO</currency>');
    const out = await submitToAade(record(bad), ctx());
    expect(out).toMatchObject({ kind: 'rejected', code: '101', response: { category: 'regulatory_reject', authority_code: '101' }, error: { category: 'regulatory_reject', authority_code: '101' } });
    expect(fake.documents.size).toBe(0);
  });

  it('a credit note 5.1 that names no MARK: AADE\'s 204, a regulatory rejection (the builder never writes one: validation refuses it first)', async () => {
    const out = await submitToAade(record(sampleInvoicesDoc({ ...DOC, invoiceType: '5.1' })), ctx());
    expect(out).toMatchObject({ kind: 'rejected', code: '204', message: 'CorrelatedInvoices is mandatory for this invoice type.', error: { category: 'regulatory_reject', authority_code: '204' } });
    expect(fake.documents.size).toBe(0);
  });

  it('the fake AADE refuses what AADE\'s business validations refuse, with its codes (counterpart country 242, counterpart on a retail receipt 205, counterpart = issuer 235, classification 307/308)', async () => {
    const withCounterpart = (doc: string, cp: string) => doc.replace('</issuer>', `</issuer><counterpart>${cp}</counterpart>`);
    const de = '<vatNumber>DE123456789</vatNumber><country>DE</country><branch>0</branch><name>Beispiel GmbH</name><address><postalCode>10117</postalCode><city>Berlin</city></address>';
    const code = async (doc: string) => {
      const out = await submitToAade(record(doc), ctx());
      return out.kind === 'rejected' ? out.code : out.kind;
    };
    // A 1.1 to a German business (the invoice type the service used to choose for it).
    expect(await code(withCounterpart(sampleInvoicesDoc({ ...DOC, invoiceType: '1.1' }).replaceAll('E3_561_003', 'E3_561_001'), de))).toBe('242');
    expect(await code(withCounterpart(sampleInvoicesDoc(DOC), '<vatNumber>123456783</vatNumber><country>GR</country><branch>0</branch>'))).toBe('205');
    expect(await code(withCounterpart(sampleInvoicesDoc({ ...DOC, invoiceType: '1.1', aa: '8' }).replaceAll('E3_561_003', 'E3_561_001'), '<vatNumber>094259216</vatNumber><country>GR</country><branch>0</branch>'))).toBe('235');
    expect(await code(sampleInvoicesDoc({ ...DOC, aa: '9' }).replaceAll('E3_561_003', 'E3_561_001'))).toBe('307');
    expect(await code(sampleInvoicesDoc({ ...DOC, aa: '10' }).replaceAll('category1_2', 'category3'))).toBe('308');
    expect(fake.documents.size).toBe(0);
    // The same 1.1 with a Greek counterpart is taken.
    expect(await code(withCounterpart(sampleInvoicesDoc({ ...DOC, invoiceType: '1.1', aa: '11' }).replaceAll('E3_561_003', 'E3_561_001'), '<vatNumber>123456783</vatNumber><country>GR</country><branch>0</branch>'))).toBe('accepted');
  });

  it('503, TechnicalError and no answer at all are transient (retry_later, error.category transient)', async () => {
    const transient = { kind: 'retry_later', response: { category: 'transient' }, error: { category: 'transient' } };
    fake.unavailable();
    expect(await submitToAade(record(sampleInvoicesDoc(DOC)), ctx())).toMatchObject({ ...transient, code: 'unavailable' });
    fake.technicalError();
    expect(await submitToAade(record(sampleInvoicesDoc(DOC)), ctx())).toMatchObject(transient);
    fake.down();
    const cut = await submitToAade(record(sampleInvoicesDoc(DOC)), ctx());
    expect(cut).toMatchObject(transient);
    expect((cut as { code: string }).code).not.toBe('unavailable');
    await fake.refuse();
    expect(await submitToAade(record(sampleInvoicesDoc(DOC)), ctx())).toMatchObject({ ...transient, code: 'connection_error' });
    await fake.normal();
    expect((await submitToAade(record(sampleInvoicesDoc(DOC)), ctx())).kind).toBe('accepted');
  });

  it('a slow AADE: the attempt gives up before the inline window ends (timeout), though AADE registered it', async () => {
    fake.slow(1500);
    const started = Date.now();
    // The first attempt (the create call's inline wait) keeps a margin; later ones take the window.
    expect(attemptTimeoutMs({ timeoutMs: 5000, attempt: 1 })).toBe(4000);
    expect(attemptTimeoutMs({ timeoutMs: 5000, attempt: 2 })).toBe(5000);
    const out = await submitToAade(record(sampleInvoicesDoc(DOC)), ctx({ timeoutMs: 1000, attempt: 2 }));
    expect(out).toMatchObject({ kind: 'retry_later', code: 'timeout', error: { category: 'transient' } });
    expect(Date.now() - started).toBeLessThan(1400);
    expect(fake.documents.size).toBe(1);
  });
});

describe('a duplicate answer without the MARK: RequestTransmittedDocs', () => {
  const again = async () => submitToAade(record(sampleInvoicesDoc(DOC)), ctx({ attempt: 2 }));

  it('228 without a MARK: the lookup pages through AADE\'s book to the UID and returns the original MARK, UID, auth code and QR', async () => {
    // Other documents of the same day and type first, so the one we look for is on page 3.
    for (const aa of ['1', '2', '3', '4']) await submitToAade(record(sampleInvoicesDoc({ ...DOC, aa })), ctx());
    // A document of another day: filtered out by dateFrom/dateTo.
    await submitToAade(record(sampleInvoicesDoc({ ...DOC, aa: '5', issueDate: '2026-03-01' })), ctx());
    const first = await submitToAade(record(sampleInvoicesDoc(DOC)), ctx());
    const original = [...fake.documents.values()].find((d) => d.aa === '7' && d.issueDate === DOC.issueDate)!;
    expect(first).toMatchObject({ kind: 'accepted', upstreamId: original.mark });
    fake.transmittedPageSize = 2;
    fake.duplicatesWithoutMark();
    fake.requests.length = 0;
    const out = await again();
    expect(out).toMatchObject({
      kind: 'duplicate', upstreamId: original.mark,
      response: { category: 'duplicate_as_success', authority_code: '228', invoiceMark: original.mark, invoiceUid: original.uid, lookup: { service: 'RequestTransmittedDocs', pages: 3 } },
    });
    if (out.kind !== 'duplicate') throw new Error('not a duplicate');
    const hints = Object.fromEntries(out.renderHints!.map((h) => [h.key, h.value]));
    expect(hints).toEqual({ mark: original.mark, uid: original.uid, auth_code: original.authenticationCode, qr: original.qrUrl });
    // SendInvoices, then three GETs with both headers, the day and type, then the continuation token.
    expect(fake.requests.map((r) => `${r.method} ${r.path.split('?')[0]}`)).toEqual(['POST /SendInvoices', 'GET /RequestTransmittedDocs', 'GET /RequestTransmittedDocs', 'GET /RequestTransmittedDocs']);
    const q = new URL(fake.requests[1]!.path, 'https://x').searchParams;
    expect(Object.fromEntries(q)).toEqual({ mark: '0', dateFrom: '02/03/2026', dateTo: '02/03/2026', invType: '11.1' });
    expect(new URL(fake.requests[3]!.path, 'https://x').searchParams.get('nextRowKey')).toBe('4');
    expect(fake.requests[2]!.headers['aade-user-id']).toBe('user1');
    expect(fake.documents.size).toBe(6);
  });

  it('the provider channel: the lookup uses the channel\'s path', async () => {
    const c = ctx({ location: location({ env: 'provider_sandbox' }) });
    await submitToAade(record(sampleInvoicesDoc(DOC)), c);
    fake.duplicatesWithoutMark();
    const out = await submitToAade(record(sampleInvoicesDoc(DOC)), c);
    expect(out).toMatchObject({ kind: 'duplicate', upstreamId: [...fake.documents.values()][0]!.mark, response: { authority_code: '228' } });
    expect(fake.requests.at(-1)!.path).toMatch(/^\/myDATAProvider\/RequestTransmittedDocs\?mark=0&/);
  });

  it('not listed (AADE\'s book lagging), or beyond five pages: transient, not a rejection', async () => {
    await submitToAade(record(sampleInvoicesDoc(DOC)), ctx());
    fake.duplicatesWithoutMark();
    fake.hideTransmitted();
    expect(await again()).toMatchObject({ kind: 'retry_later', code: 'duplicate_not_found', error: { category: 'transient' }, response: { authority_code: '228', lookup: { found: false, pages: 1 } } });
    fake.hideTransmitted(false);
    for (let aa = 10; aa < 16; aa++) await submitToAade(record(sampleInvoicesDoc({ ...DOC, aa: String(aa) })), ctx());
    fake.transmittedPageSize = 1; // the document is first: found on page 1
    expect((await again()).kind).toBe('duplicate');
    // A document registered after six others is on page 7: beyond the bound.
    const late = { ...DOC, aa: '99' };
    await fake.reset();
    for (let aa = 10; aa < 16; aa++) await submitToAade(record(sampleInvoicesDoc({ ...DOC, aa: String(aa) })), ctx());
    await submitToAade(record(sampleInvoicesDoc(late)), ctx());
    fake.duplicatesWithoutMark();
    fake.transmittedPageSize = 1;
    fake.requests.length = 0;
    expect(await submitToAade(record(sampleInvoicesDoc(late)), ctx({ attempt: 2 }))).toMatchObject({ kind: 'retry_later', code: 'duplicate_not_found', response: { lookup: { pages: 5 } } });
    expect(fake.requests.filter((r) => r.method === 'GET')).toHaveLength(5);
  });

  it('AADE unavailable during the lookup (503): transient', async () => {
    await submitToAade(record(sampleInvoicesDoc(DOC)), ctx());
    fake.duplicatesWithoutMark();
    fake.hideTransmitted('unavailable');
    const out = await again();
    expect(out).toMatchObject({ kind: 'retry_later', code: 'duplicate_not_found', error: { category: 'transient' } });
    expect((out as { message: string }).message).toMatch(/HTTP 503/);
  });
});

describe('CancelInvoice', () => {
  it('cancels by MARK (query parameter); again → 251, already cancelled: success; unknown MARK → 104 rejection', async () => {
    const sent = await submitToAade(record(sampleInvoicesDoc(DOC)), ctx());
    const mark = (sent as { upstreamId: string }).upstreamId;
    const cancel = record(JSON.stringify({ operation: 'CancelInvoice', mark, entityVatNumber: null }), 'application/json', 'cancellation');
    const out = await submitToAade(cancel, ctx());
    expect(fake.requests.at(-1)!.path).toBe(`/CancelInvoice?mark=${mark}`);
    const doc = [...fake.documents.values()][0]!;
    // The cancellation's own MARK: its fiscal_id_upstream and its receipt's `mark` item.
    expect(out).toMatchObject({ kind: 'accepted', upstreamId: doc.cancellationMark, renderHints: [{ key: 'mark', placement: 'footer_bottom', kind: 'text', value: doc.cancellationMark }] });
    expect(await submitToAade(cancel, ctx())).toMatchObject({ kind: 'duplicate', response: { authority_code: '251' } });
    const unknown = record(JSON.stringify({ operation: 'CancelInvoice', mark: '1', entityVatNumber: null }), 'application/json', 'cancellation');
    expect(await submitToAade(unknown, ctx())).toMatchObject({ kind: 'rejected', code: '104' });
  });

  it('251 (already cancelled: our earlier answer was lost) names no cancellation MARK: read from AADE\'s book (cancelledByMark of that one document)', async () => {
    const sent = await submitToAade(record(sampleInvoicesDoc(DOC)), ctx());
    const mark = (sent as { upstreamId: string }).upstreamId;
    // Other documents around it, before and after: the query lists the cancelled one alone.
    await submitToAade(record(sampleInvoicesDoc({ ...DOC, aa: '8' })), ctx());
    const cancel = record(JSON.stringify({ operation: 'CancelInvoice', mark, entityVatNumber: null }), 'application/json', 'cancellation');
    fake.slow(4_500);
    expect(await submitToAade(cancel, ctx())).toMatchObject({ kind: 'retry_later', code: 'timeout' });
    await fake.normal();
    const doc = [...fake.documents.values()].find((d) => d.mark === mark)!;
    expect(doc.cancellationMark).toMatch(/^\d+$/); // AADE cancelled it although we never heard
    fake.requests.length = 0;
    const out = await submitToAade(cancel, ctx({ attempt: 2 }));
    expect(out).toMatchObject({
      kind: 'duplicate', upstreamId: doc.cancellationMark,
      response: { authority_code: '251', category: 'duplicate_as_success', cancelledMark: mark, cancellationMark: doc.cancellationMark, lookup: { service: 'RequestTransmittedDocs', pages: 1 } },
      renderHints: [{ key: 'mark', value: doc.cancellationMark }],
    });
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /CancelInvoice?mark=${mark}`,
      `GET /RequestTransmittedDocs?mark=${BigInt(mark) - 1n}&maxMark=${mark}`,
    ]);
    // AADE's book does not list it (yet): still cancelled (AADE said so), without the MARK, and says why.
    fake.hideTransmitted();
    const blind = await submitToAade(cancel, ctx({ attempt: 3 }));
    expect(blind).toMatchObject({ kind: 'duplicate', response: { authority_code: '251', lookup: { found: false, why: expect.stringContaining('does not list it') } } });
    expect((blind as { upstreamId?: string }).upstreamId).toBeUndefined();
  }, 20_000);
});
