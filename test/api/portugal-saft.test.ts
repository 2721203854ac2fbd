import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { HAVE_XSD11, XSD11_MISSING_MESSAGE, saftXsdValidate } from '../../src/countries/pt-saft/test-tools.ts';
import { saftFilesRepo } from '../../src/store/repos/saft-files-repo.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';
import { firstTagText } from '../support/xml-tools.ts';

/*
 * Portugal's monthly SAF-T (PT) file through the API: PT documents made on a fixed clock
 * (an FS cancelled, another FS, an FT with a customer NIF, an NC), the inspector's
 * GET /v1/locations/{id}/saft?period=YYYY-MM while the month is open and once it is closed,
 * then POST /v1/admin/process-pending (`portugal/saft`) produces and keeps the month, whose
 * stored bytes the route serves from then on, whatever happens to the documents later.
 * Lisbon is UTC+1 from 29 March 2026: 22:30 UTC on the 31st is still March there, 23:30 UTC
 * is April.
 */

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-02T10:00:00.000Z');
  t = await startTestApp({ clock, limiter: unlimitedLimiter(), liveEnabled: true });
});
afterAll(() => t?.close());

const tag = firstTagText;
const latin = (bytes: Buffer): string => new TextDecoder('windows-1252').decode(bytes);
/** The Invoice element of one document in the file. */
const invoice = (xml: string, invoiceNo: string): string => new RegExp(`<Invoice[^>]*><InvoiceNo>${invoiceNo}</InvoiceNo>.*?</Invoice>`, 's').exec(xml)?.[0] ?? '';

async function sale(key: string, loc: string, over: Record<string, unknown> = {}) {
  const res = await createTx(t, key, saleBody(loc, over));
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const saft = (key: string, loc: string, query: string) => t.request({ method: 'GET', url: `/v1/locations/${loc}/saft${query}`, key });

async function processPending(key: string) {
  const res = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key });
  expect([200, 207], res.body).toContain(res.statusCode);
  return (res.json().results as Array<Record<string, any>>).find((r) => r.processor === 'portugal/saft')!;
}

function expectValid(bytes: Buffer): void {
  if (!HAVE_XSD11) return console.warn(`portugal-saft: ${XSD11_MISSING_MESSAGE}`);
  const valid = saftXsdValidate(bytes);
  expect(valid.ok, valid.output).toBe(true);
}

describe('Portugal: the monthly SAF-T (PT) file', () => {
  it('served while open, produced at closing by portugal/saft, then served as produced', async () => {
    clock.set('2026-03-02T10:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const a = await sale(key, loc); // FS B/1, cancelled below
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${a.id}/cancel`, key, payload: { reason: 'Erro de emissão' } });
    expect(cancel.statusCode, cancel.body).toBe(201);
    clock.advance(60_000);
    const b = await sale(key, loc); // FS B/2
    clock.advance(60_000);
    const ft = await sale(key, loc, { metadata: { document_type: 'FT' }, customer_context: { nif: '500000000', name: 'Empresa, S.A.' } }); // FT A/1
    clock.advance(60_000);
    await sale(key, loc, { type: 'refund', metadata: { original_invoice_no: 'FS B/2', reason: 'Devolução' } }); // NC C/1

    // The open month: built on demand from the stored records.
    const open = await saft(key, loc, '?period=2026-03');
    expect(open.statusCode, open.body).toBe(200);
    expect(open.headers['content-type']).toBe('application/xml; charset=windows-1252');
    expect(open.headers['x-saft-status']).toBe('open');
    expect(open.headers['content-disposition']).toBe('attachment; filename="SAFT_123456789_2026-03.xml"');
    const bytes = open.rawPayload;
    expect(bytes.subarray(0, 45).toString('latin1')).toBe('<?xml version="1.0" encoding="Windows-1252"?>');
    // Windows-1252, not UTF-8: "Devolução" is one byte per letter.
    expect(bytes.includes(Buffer.from('Devolu\u00e7\u00e3o', 'latin1'))).toBe(true);
    expect(bytes.includes(Buffer.from('Devolução', 'utf8'))).toBe(false);
    const xml = latin(bytes);
    expect(tag(xml, 'StartDate')).toBe('2026-03-01');
    expect(tag(xml, 'EndDate')).toBe('2026-03-31');
    expect(tag(xml, 'NumberOfEntries')).toBe('4');
    expect([...xml.matchAll(/<Invoice[^>]*><InvoiceNo>([^<]*)<\/InvoiceNo>/g)].map((m) => m[1])).toEqual(['FS B/1', 'FS B/2', 'FT A/1', 'NC C/1']);
    // The cancelled FS is A and counts in no total: credit the FS and the FT (18.00 each), debit the NC.
    expect(tag(invoice(xml, 'FS B/1'), 'InvoiceStatus')).toBe('A');
    expect(tag(invoice(xml, 'FS B/1'), 'Reason')).toBe('Erro de emissão');
    expect(tag(invoice(xml, 'FS B/2'), 'InvoiceStatus')).toBe('N');
    expect(tag(xml, 'TotalCredit')).toBe('36.00');
    expect(tag(xml, 'TotalDebit')).toBe('18.00');
    expect(xml).toContain('<Customer><CustomerID>500000000</CustomerID>');
    expectValid(bytes);

    // Still March in Lisbon (23:30 WEST): the run has no closed month yet.
    clock.set('2026-03-31T22:30:00.000Z');
    await sale(key, loc); // FS B/3, 31 March
    expect(await processPending(key)).toMatchObject({ batches_created: 0, accepted: 0, failed: 0 });
    // 00:30 on 1 April in Lisbon: April.
    clock.set('2026-03-31T23:30:00.000Z');
    await sale(key, loc); // FS B/4, 1 April

    // Closed, not produced yet: built on demand, with the last day's document and without April's.
    const before = await saft(key, loc, '?period=2026-03');
    expect(before.statusCode, before.body).toBe(200);
    expect(before.headers['x-saft-status']).toBe('not_produced');
    expect([...latin(before.rawPayload).matchAll(/<InvoiceNo>(FS B\/\d)<\/InvoiceNo>/g)].map((m) => m[1])).toEqual(['FS B/1', 'FS B/2', 'FS B/3']);

    // The run produces and keeps March: one file, its five documents.
    const run = await processPending(key);
    expect(run).toMatchObject({ batches_created: 1, accepted: 5, rejected: 0, failed: 0, errors_count: 0 });
    const stored = await saftFilesRepo.get(t.db, { locationId: loc, environment: 'test', period: '2026-03' });
    expect(stored).toMatchObject({ file_name: 'SAFT_123456789_2026-03.xml', documents: 5, total_credit: '54.00', total_debit: '18.00' });
    expect(await processPending(key)).toMatchObject({ batches_created: 0, accepted: 0 });
    expectValid(stored!.content);

    // Later: FT A/1 cancelled in April (FS B/2, which NC C/1 credits, cannot be: 409); the
    // March file stays what was produced at closing.
    clock.set('2026-04-10T09:00:00.000Z');
    expect((await t.request({ method: 'POST', url: `/v1/transactions/${b.id}/cancel`, key, payload: { reason: 'Erro' } })).statusCode).toBe(409);
    const late = await t.request({ method: 'POST', url: `/v1/transactions/${ft.id}/cancel`, key, payload: { reason: 'Erro' } });
    expect(late.statusCode, late.body).toBe(201);
    const after = await saft(key, loc, '?period=2026-03');
    expect(after.statusCode).toBe(200);
    expect(after.headers['x-saft-status']).toBe('produced');
    expect(after.headers['content-type']).toBe('application/xml; charset=windows-1252');
    expect(after.rawPayload.equals(stored!.content)).toBe(true);
    expect(tag(invoice(latin(after.rawPayload), 'FT A/1'), 'InvoiceStatus')).toBe('N');
    expect(tag(latin(after.rawPayload), 'DateCreated')).toBe('2026-04-01');

    // April, still open, has FS B/4 only.
    const april = await saft(key, loc, '?period=2026-04');
    expect(april.headers['x-saft-status']).toBe('open');
    expect(tag(latin(april.rawPayload), 'NumberOfEntries')).toBe('1');
  });

  it('a month without documents, or not begun: 404; a bad period: 400; another account: 404; live keys see live documents only', async () => {
    clock.set('2026-05-05T10:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    await sale(key, loc);
    expect((await saft(key, loc, '?period=2026-05')).statusCode).toBe(200);

    const none = await saft(key, loc, '?period=2026-04');
    expect([none.statusCode, none.json()]).toEqual([404, { error: 'no SAF-T file for 2026-04: the location issued no documents that month' }]);
    const future = await saft(key, loc, '?period=2026-06');
    expect([future.statusCode, future.json()]).toEqual([404, { error: 'no SAF-T file for 2026-06: the month has not begun' }]);

    for (const q of ['', '?date=2026-05']) {
      const bad = await saft(key, loc, q);
      expect([bad.statusCode, bad.json()], q).toEqual([400, { error: 'period is required: a month in the form YYYY-MM' }]);
    }
    for (const q of ['?period=2026-13', '?period=2026-5', '?period=2026-05-01']) {
      const bad = await saft(key, loc, q);
      expect([bad.statusCode, bad.json()], q).toEqual([400, { error: 'period must be a month in the form YYYY-MM' }]);
    }

    const other = await t.signup();
    const theirs = await saft(other.key, loc, '?period=2026-05');
    expect([theirs.statusCode, theirs.json()]).toEqual([404, { error: 'location not found' }]);

    // The same location with a live key of the account: its test documents are not there.
    const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } })).json().key as string;
    const liveFile = await saft(live, loc, '?period=2026-05');
    expect([liveFile.statusCode, liveFile.json()]).toEqual([404, { error: 'no SAF-T file for 2026-05: the location issued no documents that month' }]);

    // Not a Portuguese location: no saft file there.
    const es = await createLocation(t, key, 'es-verifactu');
    const notPt = await saft(key, es, '?period=2026-05');
    expect([notPt.statusCode, notPt.json()]).toEqual([404, { error: "this location's fiscal system (es-verifactu) has no saft file" }]);
  });

  it('GET /v1/batch/schedule lists portugal/saft on the 1st at 02:00 UTC; the scheduled run visits only the scopes with a closed month', async () => {
    clock.set('2026-06-10T10:00:00.000Z');
    const { key, accountId } = await t.signup();
    const schedule = (await t.request({ method: 'GET', url: '/v1/batch/schedule', key })).json().schedule;
    expect(schedule).toContainEqual({ processor: 'portugal/saft', cron: '0 2 1 * *', timezone: 'UTC', next_run_at: '2026-07-01T02:00:00.000Z', runs_on: 'schedule' });

    const loc = await createLocation(t, key, 'pt-saft');
    const june = await sale(key, loc);
    const p = t.rt.batch.processors.find((x) => x.name === 'portugal/saft')!;
    expect(await p.scopesWithWork(t.db, clock.now())).not.toContainEqual({ accountId, environment: 'test' });
    clock.set('2026-07-01T02:00:00.000Z');
    expect(await p.scopesWithWork(t.db, clock.now())).toContainEqual({ accountId, environment: 'test' });
    const results = await t.rt.batch.runScheduled('portugal/saft');
    expect(results.reduce((n, r) => n + r.batches_created, 0)).toBeGreaterThanOrEqual(1);
    expect(await saftFilesRepo.get(t.db, { locationId: loc, environment: 'test', period: '2026-06' })).toMatchObject({ documents: 1 });
    expect(await p.scopesWithWork(t.db, clock.now())).not.toContainEqual({ accountId, environment: 'test' });

    // July: only the cancellation of June's sale, no document: no July file to make.
    clock.set('2026-07-02T10:00:00.000Z');
    expect((await t.request({ method: 'POST', url: `/v1/transactions/${june.id}/cancel`, key, payload: {} })).statusCode).toBe(201);
    clock.set('2026-08-01T02:00:00.000Z');
    expect(await p.scopesWithWork(t.db, clock.now())).not.toContainEqual({ accountId, environment: 'test' });
    expect(await processPending(key)).toMatchObject({ batches_created: 0, failed: 0 });
    expect((await saft(key, loc, '?period=2026-07')).statusCode).toBe(404);
  });

  it('the route is in /openapi.json', async () => {
    const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/v1/locations/{id}/saft'].get;
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['id', 'period']));
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '404']));
    expect(Object.keys(op.responses['200'].content)).toContain('application/xml');
  });
});
