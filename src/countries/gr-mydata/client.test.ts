import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { aadeUid, sampleInvoicesDoc, startFakeAade, type FakeAade } from '../../../test/support/fake-aade.ts';
import { TransportError, type LocationForFiscal, type StoredRecord, type SubmitContext } from '../types.ts';
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
    expect(out).toMatchObject({ kind: 'rejected', code: 'unauthorized', response: { http_status: 401, category: 'permanent' } });
  });

  it('a document that is not schema-valid: XMLSyntaxError 101, a regulatory rejection', async () => {
    const bad = sampleInvoicesDoc(DOC).replace('<currency>EUR</currency>', '<currency>EURO</currency>');
    const out = await submitToAade(record(bad), ctx());
    expect(out).toMatchObject({ kind: 'rejected', code: '101', response: { category: 'regulatory_reject', authority_code: '101' } });
    expect(fake.documents.size).toBe(0);
  });

  it('503 and TechnicalError are transient (retry_later); a cut connection is a TransportError', async () => {
    fake.unavailable();
    expect(await submitToAade(record(sampleInvoicesDoc(DOC)), ctx())).toMatchObject({ kind: 'retry_later', code: 'unavailable', response: { category: 'transient' } });
    fake.technicalError();
    expect(await submitToAade(record(sampleInvoicesDoc(DOC)), ctx())).toMatchObject({ kind: 'retry_later', response: { category: 'transient' } });
    fake.down();
    await expect(submitToAade(record(sampleInvoicesDoc(DOC)), ctx())).rejects.toBeInstanceOf(TransportError);
    await fake.refuse();
    await expect(submitToAade(record(sampleInvoicesDoc(DOC)), ctx())).rejects.toMatchObject({ code: 'connection_error' });
    await fake.normal();
    expect((await submitToAade(record(sampleInvoicesDoc(DOC)), ctx())).kind).toBe('accepted');
  });

  it('a slow AADE: the attempt gives up before the inline window ends (timeout), though AADE registered it', async () => {
    fake.slow(1500);
    const started = Date.now();
    // The first attempt (the create call's inline wait) keeps a margin; later ones take the window.
    expect(attemptTimeoutMs({ timeoutMs: 5000, attempt: 1 })).toBe(4000);
    expect(attemptTimeoutMs({ timeoutMs: 5000, attempt: 2 })).toBe(5000);
    const err = await submitToAade(record(sampleInvoicesDoc(DOC)), ctx({ timeoutMs: 1000, attempt: 2 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1400);
    expect(fake.documents.size).toBe(1);
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
    expect(out).toMatchObject({ kind: 'accepted', upstreamId: doc.cancellationMark });
    expect(await submitToAade(cancel, ctx())).toMatchObject({ kind: 'duplicate', response: { authority_code: '251' } });
    const unknown = record(JSON.stringify({ operation: 'CancelInvoice', mark: '1', entityVatNumber: null }), 'application/json', 'cancellation');
    expect(await submitToAade(unknown, ctx())).toMatchObject({ kind: 'rejected', code: '104' });
  });
});
