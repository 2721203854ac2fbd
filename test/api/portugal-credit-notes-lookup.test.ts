import crypto from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { creditAboveOriginal, debitedCancelled, debitedNotIssued, originalNotIssued } from '../../src/countries/pt-saft/credit-note.ts';
import { saft } from '../../src/countries/pt-saft/index.ts';
import { location as fixtureLocation } from '../../src/countries/shared/test-fixtures.ts';
import type { Queryable } from '../../src/store/db.ts';
import { withCorrectedSale } from '../../src/services/corrected-sales.ts';
import { DEFAULT_SOFTWARE } from '../../src/runtime.ts';
import { configs } from '../support/fixtures.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { createLocation, createTx, createdTx, hintOf, refusedTx, fiscalRecordOf, locationBody, saleBody } from '../support/transactions.ts';

/*
 * Portugal: how an NC or ND finds the document it names (credit-note.ts): by its InvoiceNo,
 * on a location that issues several types and series; a debit note (ND) names a document
 * of its location too. docs/decisions.md "Portugal: a credit note names a document of its
 * location" and the session's pt-left entries.
 */

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-04-02T10:00:00.000Z');
  // Live documents too (the migration's live keys): signed by a producer key of the test's.
  const producer = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });
  t = await startTestApp({
    clock, limiter: unlimitedLimiter(), liveEnabled: true,
    software: { ...DEFAULT_SOFTWARE, producerKeys: { PT: { privateKey: producer.privateKey, version: '2', certificateNumber: '4321' } } },
  });
});
afterAll(() => t?.close());

/** Every type this service issues, FT, FR and ND on one series name. */
const series = (fs = 'B') => ({
  FT: { prefix: 'S', atcud_code: 'AAJFJMVNTN' }, FR: { prefix: 'S', atcud_code: 'FRJFJMVNTN' }, FS: { prefix: fs, atcud_code: 'BBJFJMVNTN' },
  ND: { prefix: 'S', atcud_code: 'DDJFJMVNTN' }, NC: { prefix: 'C', atcud_code: 'CCJFJMVNTN' },
});
const country_config = (fs = 'B') => ({ ...configs.saft, series: series(fs) });

/** A document of one exempt line (0 %, M99) of `total` cents, of type `document_type` (FS by default). */
const body = (loc: string, total: number, metadata: Record<string, unknown> = {}, over: Record<string, unknown> = {}) => saleBody(loc, {
  items: [{ description: 'Livro', quantity: 1, unit_price: total, tax_rate: 0, tax_amount: 0, total_amount: total }],
  pretax_amount: total, tax_amount: 0, total_amount: total, metadata, ...over,
});
const refund = (loc: string, total: number, original: string) => body(loc, total, { original_invoice_no: original }, { type: 'refund' });
const debit = (loc: string, total: number, original: string) => body(loc, total, { document_type: 'ND', original_invoice_no: original });

const created = (key: string, payload: object) => createdTx(t, key, payload);
const cancel = (key: string, id: string) => t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key, payload: {} });
/** The spec's 409 for a transaction that cannot be cancelled: its exact body, nothing beside (spec Errors: all errors are `{error: string}`). */
const NOT_CANCELLABLE = { error: 'transaction cannot be cancelled' };
const refused = (key: string, payload: object, error: string) => refusedTx(t, key, payload, error);
const invoiceNo = (tx: Record<string, any>): string => hintOf(tx, 'invoice_no')!;

describe('Portugal: the document an NC or ND names, by its InvoiceNo', () => {
  it('a location of several types and series: each NC credits the document its number names, and only that one', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft', { country_config: country_config() });
    // Interleaved: FS B/1, FT S/1, FS B/2, FR S/1, FT S/2: each type and series numbers on its own.
    const fs1 = await created(key, body(loc, 1000));
    const ft1 = await created(key, body(loc, 2000, { document_type: 'FT' }));
    const fs2 = await created(key, body(loc, 3000));
    const fr1 = await created(key, body(loc, 4000, { document_type: 'FR' }));
    const ft2 = await created(key, body(loc, 5000, { document_type: 'FT' }));
    expect([fs1, ft1, fs2, fr1, ft2].map(invoiceNo)).toEqual(['FS B/1', 'FT S/1', 'FS B/2', 'FR S/1', 'FT S/2']);
    // The FS series renamed: its documents go on under B2 from 1, those of B stay creditable.
    const patched = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: country_config('B2') } });
    expect(patched.statusCode, patched.body).toBe(200);
    const fsB2 = await created(key, body(loc, 6000));
    expect(invoiceNo(fsB2)).toBe('FS B2/1');

    // Each at most its own amount: the same number n in another type or series is another document.
    for (const [doc, amount] of [[fs1, 1000], [ft1, 2000], [fs2, 3000], [fr1, 4000], [ft2, 5000], [fsB2, 6000]] as const) {
      const no = invoiceNo(doc);
      await refused(key, refund(loc, amount + 1, no), creditAboveOriginal(no, amount + 1, amount, 0));
      const nc = await created(key, refund(loc, amount, no));
      expect(await fiscalRecordOf(t, key, nc.id)).toContain(`<References><Reference>${no}</Reference>`);
      await refused(key, refund(loc, 1, no), creditAboveOriginal(no, 1, amount, amount));
    }
    // Numbers the location has not reached in that type and series.
    for (const no of ['FS B/3', 'FT S/3', 'FR S/2', 'FS B2/2', 'ND S/1']) await refused(key, refund(loc, 1, no), originalNotIssued(no));
  });

  it('a debit note (ND) naming a document never issued, or a cancelled one: 400; naming its own, 201, and it credits nothing', async () => {
    clock.set('2026-04-03T10:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft', { country_config: country_config() });
    const other = await createLocation(t, key, 'pt-saft', { country_config: country_config() });
    const original = await created(key, body(loc, 2000)); // FS B/1 here
    const no = invoiceNo(original);
    await created(key, body(other, 2000)); // FS B/1 there
    await created(key, body(other, 2000)); // FS B/2 there

    await refused(key, debit(loc, 500, 'FS B/2'), debitedNotIssued('FS B/2'));
    await refused(key, debit(loc, 500, 'FT S/1'), debitedNotIssued('FT S/1'));
    await refused(key, debit(loc, 500, 'FX B/1'), debitedNotIssued('FX B/1'));
    // Preview answers as create.
    const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: debit(loc, 500, 'FS B/2') });
    expect([preview.statusCode, preview.json()]).toEqual([400, { error: debitedNotIssued('FS B/2') }]);

    // Its own FS B/1: the ND adds 50.00 EUR; what an NC may credit of B/1 is unchanged (20.00).
    const nd = await created(key, debit(loc, 5000, no));
    expect(invoiceNo(nd)).toBe('ND S/1');
    expect(await fiscalRecordOf(t, key, nd.id)).toContain(`<References><Reference>${no}</Reference>`);
    await refused(key, refund(loc, 2001, no), creditAboveOriginal(no, 2001, 2000, 0));
    // The ND is a document of its own: an NC credits it by its number.
    await created(key, refund(loc, 5000, invoiceNo(nd)));
    await created(key, refund(loc, 2000, no));

    // A cancelled document: nothing to add to.
    const gone = await created(key, body(loc, 1000));
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${gone.id}/cancel`, key, payload: {} });
    expect(cancel.statusCode, cancel.body).toBe(201);
    await refused(key, debit(loc, 500, invoiceNo(gone)), debitedCancelled(invoiceNo(gone), gone.id));
  });

  it('the standing credit notes of a document are read in a fixed number of queries, however many there are', async () => {
    clock.set('2026-04-04T10:00:00.000Z');
    const { key, accountId } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft', { country_config: country_config() });
    const original = await created(key, body(loc, 10000));
    const no = invoiceNo(original);
    const here = { ...fixtureLocation('pt-saft', locationBody('pt-saft').country_config as Record<string, unknown>), id: loc, account_id: accountId };
    const ctx = { location: here, environment: 'test' as const, now: clock.now() };
    const request = { customer_context: null, ...refund(loc, 100, no) } as Parameters<typeof withCorrectedSale>[4];
    const draft = { ...request, metadata: saft.validateTransaction(request, ctx) };
    /** The queries one lookup runs, and what it handed the plug-in. */
    const lookup = async () => {
      let queries = 0;
      const counting: Queryable = { query: (sql, params) => { queries++; return t.db.query(sql, params); }, exec: (sql) => t.db.exec(sql) };
      const out = await withCorrectedSale(counting, { accountId, environment: 'test' }, saft, ctx, request, draft);
      return { queries, check: out.check };
    };
    await created(key, refund(loc, 100, no));
    const one = await lookup();
    for (let i = 0; i < 5; i++) await created(key, refund(loc, 100, no));
    const six = await lookup();
    expect(six.check?.saleIds).toEqual([original.id]);
    expect(six.queries).toBe(one.queries);
    // …and what they read counts: 94.01 EUR is one cent more than the six NCs left.
    await refused(key, refund(loc, 9401, no), creditAboveOriginal(no, 9401, 10000, 600));
  });

  it('a debit note (ND) holds its document: its cancel is 409 until the ND is cancelled; an ND takes nothing from what NCs may credit', async () => {
    clock.set('2026-04-05T10:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft', { country_config: country_config() });
    const original = await created(key, body(loc, 3000));
    const no = invoiceNo(original);
    const nd = await created(key, debit(loc, 1000, no));
    const refusedCancel = await cancel(key, original.id);
    expect([refusedCancel.statusCode, refusedCancel.json()]).toEqual([409, NOT_CANCELLABLE]);
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${original.id}`, key })).json().status).toBe('success');
    // A standing ND is no credit: the whole 30.00 EUR may still be credited, at its one rate.
    await refused(key, refund(loc, 3001, no), creditAboveOriginal(no, 3001, 3000, 0));
    const nc = await created(key, refund(loc, 3000, no));
    // The NC cancelled, the ND still holds it.
    expect((await cancel(key, nc.id)).statusCode).toBe(201);
    expect((await cancel(key, original.id)).json()).toEqual(NOT_CANCELLABLE);
    // The ND cancelled (annulled, A): the document is free.
    expect((await cancel(key, nd.id)).statusCode).toBe(201);
    const freed = await cancel(key, original.id);
    expect(freed.statusCode, freed.body).toBe(201);
  });

  it('a debit note and the cancellation of its document made at once: never both', async () => {
    clock.set('2026-04-05T11:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft', { country_config: country_config() });
    for (let round = 0; round < 3; round++) {
      const original = await created(key, body(loc, 3000));
      const [added, cancelled] = await Promise.all([createTx(t, key, debit(loc, 1000, invoiceNo(original))), cancel(key, original.id)]);
      // The ND (201) and the cancel refused (409), or the cancel (201) and the ND refused (400, cancelled).
      expect([[201, 409], [400, 201]], `${added.body} ${cancelled.body}`).toContainEqual([added.statusCode, cancelled.statusCode]);
      if (added.statusCode === 400) expect(added.json().error).toBe(debitedCancelled(invoiceNo(original), original.id));
    }
  });

  it('migration 0058: credit and debit notes stored before their registration hold their documents once it runs (test and live)', async () => {
    clock.set('2026-04-06T10:00:00.000Z');
    const { key, accountId } = await t.signup();
    const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } })).json().key as string;
    const loc = await createLocation(t, key, 'pt-saft', { country_config: country_config() });
    // Test: FS B/1 credited by an NC, FT S/1 added to by an ND, FS B/2 credited by an NC since
    // cancelled, FS B/3 credited by an NC; live: FS B/1 credited by an NC.
    const credited = await created(key, body(loc, 3000));
    const debited = await created(key, body(loc, 2000, { document_type: 'FT' }));
    const creditedOnce = await created(key, body(loc, 1000));
    const exposed = await created(key, body(loc, 1000));
    const liveDoc = await createdTx(t, live, body(loc, 4000));
    expect([credited, debited, creditedOnce, exposed, liveDoc].map(invoiceNo)).toEqual(['FS B/1', 'FT S/1', 'FS B/2', 'FS B/3', 'FS B/1']);
    const nc = await created(key, refund(loc, 1000, 'FS B/1'));
    const nd = await created(key, debit(loc, 500, 'FT S/1'));
    const ncGone = await created(key, refund(loc, 1000, 'FS B/2'));
    expect((await cancel(key, ncGone.id)).statusCode).toBe(201);
    const ncExposed = await created(key, refund(loc, 500, 'FS B/3'));
    const liveNc = await createdTx(t, live, refund(loc, 1500, 'FS B/1'));
    const ids = [nc.id, nd.id, ncGone.id, ncExposed.id, liveNc.id];
    const rows = async () => (await t.db.query<{ chain_key: string; document: string; transaction_id: string }>(
      "SELECT chain_key, document, transaction_id FROM chain_documents WHERE role = 'corrected' AND transaction_id = ANY($1::uuid[]) ORDER BY chain_key, transaction_id",
      [ids])).rows;
    const written = await rows();
    expect(written).toEqual([
      { chain_key: `corrected:${accountId}`, document: credited.id, transaction_id: nc.id },
      { chain_key: `corrected:${accountId}`, document: debited.id, transaction_id: nd.id },
      { chain_key: `corrected:${accountId}`, document: creditedOnce.id, transaction_id: ncGone.id },
      { chain_key: `corrected:${accountId}`, document: exposed.id, transaction_id: ncExposed.id },
      { chain_key: `corrected:${accountId}:live`, document: liveDoc.id, transaction_id: liveNc.id },
    ].sort((a, b) => `${a.chain_key} ${a.transaction_id}`.localeCompare(`${b.chain_key} ${b.transaction_id}`)));

    // What an older store holds: the NCs and the ND registered against nothing. There, a
    // document an NC stands against could be cancelled (FS B/3), and the NC did not count
    // against what is left to credit (all 30.00 EUR of FS B/1 could be credited again).
    await t.db.query("DELETE FROM chain_documents WHERE role = 'corrected' AND transaction_id = ANY($1::uuid[])", [ids]);
    expect(await rows()).toEqual([]);
    const exposedCancel = await cancel(key, exposed.id);
    expect(exposedCancel.statusCode, exposedCancel.body).toBe(201);
    const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: refund(loc, 3000, 'FS B/1') });
    expect(preview.statusCode, preview.body).toBe(200);

    const migration = fs.readFileSync(new URL('../../src/store/migrations/0058_saft_corrections_backfill.sql', import.meta.url), 'utf8');
    await t.db.exec(migration);
    expect(await rows()).toEqual(written);
    // Run again: nothing doubled.
    await t.db.exec(migration);
    expect(await rows()).toEqual(written);

    // Read as the service writes them: the documents the NC and ND name are held, in each environment.
    for (const [k, doc] of [[key, credited], [key, debited], [live, liveDoc]] as const) {
      const res = await cancel(k, doc.id);
      expect([res.statusCode, res.json()], invoiceNo(doc)).toEqual([409, NOT_CANCELLABLE]);
    }
    // The old NC counts against what is left to credit (30.00 less 10.00), the ND does not.
    await refused(key, refund(loc, 2001, 'FS B/1'), creditAboveOriginal('FS B/1', 2001, 3000, 1000));
    await refused(key, refund(loc, 2001, 'FT S/1'), creditAboveOriginal('FT S/1', 2001, 2000, 0));
    // The cancelled NC holds nothing.
    expect((await cancel(key, creditedOnce.id)).statusCode).toBe(201);
  });
});
