import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { creditAboveOriginal, creditAboveRate, originalCancelled, originalNotIssued } from '../../src/countries/pt-saft/credit-note.ts';
import { HAVE_XSD11, XSD11_MISSING_MESSAGE, saftXsdValidate } from '../../src/countries/pt-saft/test-tools.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { createLocation, createTx, createdTx, hintOf, refusedTx, fiscalRecordOf, saleBody } from '../support/transactions.ts';

/*
 * Portugal: a credit note (NC) names a document its location issued (same account,
 * location and environment) and credits at most what that document has left: its gross
 * total less the credit notes that stand against it (CIVA art. 29 and 78; SAF-T
 * References). docs/decisions.md "Portugal: a credit note names a document of its location".
 */

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-02T10:00:00.000Z');
  t = await startTestApp({ clock, limiter: unlimitedLimiter(), liveEnabled: true });
});
afterAll(() => t?.close());

/** A sale (FS) of one exempt line (0 %, M99) of `total` cents: any amount, to the cent. */
const body = (loc: string, total: number, over: Record<string, unknown> = {}) => saleBody(loc, {
  items: [{ description: 'Livro', quantity: 1, unit_price: total, tax_rate: 0, tax_amount: 0, total_amount: total }],
  pretax_amount: total, tax_amount: 0, total_amount: total, ...over,
});
const refund = (loc: string, total: number, original: string) => body(loc, total, { type: 'refund', metadata: { original_invoice_no: original } });

const created = (key: string, payload: object) => createdTx(t, key, payload);
const refused = (key: string, payload: object, error: string) => refusedTx(t, key, payload, error);
const invoiceNo = (tx: Record<string, any>): string => hintOf(tx, 'invoice_no')!;

describe('Portugal: a credit note names a document of its location and credits at most what it has left', () => {
  it('a document never issued, another location\'s, another account\'s, another environment\'s: 400', async () => {
    const { key } = await t.signup();
    const here = await createLocation(t, key, 'pt-saft');
    const there = await createLocation(t, key, 'pt-saft');
    const own = await created(key, body(here, 1000)); // FS B/1 here
    await created(key, body(there, 1000)); // FS B/1 there
    const theirs = await created(key, body(there, 5000)); // FS B/2 there
    expect([invoiceNo(own), invoiceNo(theirs)]).toEqual(['FS B/1', 'FS B/2']);

    await refused(key, refund(here, 500, 'FS B/9'), originalNotIssued('FS B/9'));
    await refused(key, refund(here, 500, 'FT B/1'), originalNotIssued('FT B/1'));
    await refused(key, refund(here, 500, 'FS B/01'), originalNotIssued('FS B/01'));
    // The other shop's FS B/2: a number this location has not reached.
    await refused(key, refund(here, 500, 'FS B/2'), originalNotIssued('FS B/2'));
    // Another account's location that issued FS B/1 and B/2: its documents are not this one's.
    const other = await t.signup();
    const otherLoc = await createLocation(t, other.key, 'pt-saft');
    await refused(other.key, refund(otherLoc, 500, 'FS B/1'), originalNotIssued('FS B/1'));
    // A live key at the location: the test FS B/1 is no live document.
    const live = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } })).json().key as string;
    await refused(live, refund(here, 500, 'FS B/1'), originalNotIssued('FS B/1'));

    // The shop's own FS B/1: the NC names it in References.
    const nc = await created(key, refund(here, 500, 'FS B/1'));
    expect(await fiscalRecordOf(t, key, nc.id)).toContain('<References><Reference>FS B/1</Reference><Reason>Devolução</Reason></References>');
  });

  it('an NC above the original\'s gross total, or above what earlier NCs left of it: 400; a cancelled NC no longer counts', async () => {
    clock.set('2026-03-03T10:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const original = await created(key, body(loc, 10000)); // FS B/1, 100.00 EUR
    const no = invoiceNo(original);

    await refused(key, refund(loc, 10001, no), creditAboveOriginal(no, 10001, 10000, 0));
    const first = await created(key, refund(loc, 6000, no));
    // Two partial credit notes that together exceed it: the second is refused.
    await refused(key, refund(loc, 6000, no), creditAboveOriginal(no, 6000, 10000, 6000));
    const second = await created(key, refund(loc, 4000, no));
    expect((await fiscalRecordOf(t, key, second.id))).toContain(`<Reference>${no}</Reference>`);
    await refused(key, refund(loc, 1, no), creditAboveOriginal(no, 1, 10000, 10000));
    // A void is an NC too, and counts the same.
    await refused(key, { ...refund(loc, 100, no), type: 'void' }, creditAboveOriginal(no, 100, 10000, 10000));

    // Cancelled (annulled, A), the first NC credits nothing: 60.00 EUR are free again.
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${first.id}/cancel`, key, payload: { reason: 'Erro' } });
    expect(cancel.statusCode, cancel.body).toBe(201);
    await refused(key, refund(loc, 6001, no), creditAboveOriginal(no, 6001, 10000, 4000));
    await created(key, refund(loc, 6000, no));

    // The month's SAF-T file with the NCs still validates against the XSD.
    const file = await t.request({ method: 'GET', url: `/v1/locations/${loc}/saft?period=2026-03`, key });
    expect(file.statusCode, file.body).toBe(200);
    if (!HAVE_XSD11) return console.warn(`portugal-credit-notes: ${XSD11_MISSING_MESSAGE}`);
    const valid = saftXsdValidate(file.rawPayload);
    expect(valid.ok, valid.output).toBe(true);
  });

  it('a cancelled document (annulled, status A) has nothing left to credit: 400', async () => {
    clock.set('2026-03-04T10:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const original = await created(key, body(loc, 2000));
    const no = invoiceNo(original);
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key, payload: {} });
    expect(cancel.statusCode, cancel.body).toBe(201);
    await refused(key, refund(loc, 500, no), originalCancelled(no, original.id));
    // Its neighbour, not cancelled, is credited as before.
    const other = await created(key, body(loc, 2000));
    await created(key, refund(loc, 500, invoiceNo(other)));
  });

  it('a document credit notes stand against cannot be cancelled (409) until they are cancelled', async () => {
    clock.set('2026-03-06T10:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const original = await created(key, body(loc, 3000));
    const nc = await created(key, refund(loc, 1000, invoiceNo(original)));
    const cancel = (id: string) => t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key, payload: {} });
    const refusedCancel = await cancel(original.id);
    expect([refusedCancel.statusCode, refusedCancel.json()]).toEqual([409, { error: 'transaction cannot be cancelled' }]);
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${original.id}`, key })).json().status).not.toBe('cancelled');
    expect((await cancel(nc.id)).statusCode).toBe(201);
    expect((await cancel(original.id)).statusCode).toBe(201);
  });

  it('a credit note and the cancellation of its document made at once: never both', async () => {
    clock.set('2026-03-06T11:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    for (let round = 0; round < 3; round++) {
      const original = await created(key, body(loc, 3000));
      const [credit, cancelled] = await Promise.all([
        createTx(t, key, refund(loc, 1000, invoiceNo(original))),
        t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key, payload: {} }),
      ]);
      // One of the two wins: the NC (201) and the cancel refused (409), or the cancel (201) and the NC refused (400).
      expect([[201, 409], [400, 201]]).toContainEqual([credit.statusCode, cancelled.statusCode]);
    }
  });

  it('rate by rate: an NC under the total may not credit more at a rate than the document sold (less earlier NCs) at it', async () => {
    clock.set('2026-03-05T10:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    // 123.00 at 23 % and 53.00 at 6 %: 176.00 EUR.
    const line = (rate: number, net: number) => ({ description: `Artigo ${rate}`, quantity: 1, unit_price: net, tax_rate: rate, tax_amount: Math.round(net * rate / 100), total_amount: net + Math.round(net * rate / 100) });
    const lines = (...ls: ReturnType<typeof line>[]) => ({
      items: ls, pretax_amount: ls.reduce((a, l) => a + l.unit_price, 0), tax_amount: ls.reduce((a, l) => a + l.tax_amount, 0), total_amount: ls.reduce((a, l) => a + l.total_amount, 0),
    });
    const original = await created(key, saleBody(loc, lines(line(23, 10000), line(6, 5000))));
    const no = invoiceNo(original);
    const nc = (...ls: ReturnType<typeof line>[]) => saleBody(loc, { type: 'refund', metadata: { original_invoice_no: no }, ...lines(...ls) });
    // 147.60 at 23 % is under the total (176.00) but above the 23 % lines (123.00).
    await refused(key, nc(line(23, 12000)), creditAboveRate(no, 23, 14760, 12300, 0));
    // A rate the document never charged.
    await refused(key, nc(line(13, 1000)), creditAboveRate(no, 13, 1130, 0, 0));
    // Within each rate: accepted; then what is left at 23 % is what the first NC left.
    await created(key, nc(line(23, 8000)));
    await refused(key, nc(line(23, 3000)), creditAboveRate(no, 23, 3690, 12300, 9840));
    await created(key, nc(line(23, 2000), line(6, 5000)));
  });

  it('credit notes of one document made at once: together they never credit more than it', async () => {
    clock.set('2026-03-04T10:00:00.000Z');
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const no = invoiceNo(await created(key, body(loc, 10000)));
    const results = await Promise.all(Array.from({ length: 5 }, () => createTx(t, key, refund(loc, 3000, no))));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes, results.map((r) => r.body).join('\n')).toEqual([201, 201, 201, 400, 400]);
    for (const r of results.filter((x) => x.statusCode === 400)) {
      expect(r.json().error).toMatch(/^total_amount 30\.00 EUR is more than document FS B\/1 has left to credit: 10\.00 EUR/);
    }
  });
});
