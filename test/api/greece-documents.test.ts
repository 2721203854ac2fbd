import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { myDataUid } from '../../src/countries/gr-mydata/uid.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { GR_AFM } from '../support/fixtures.ts';
import { createLocation, createTx, getTx, saleBody, saleLines } from '../support/transactions.ts';
import { HAVE_SCHEMAS, xsdValidate, firstTagText } from '../support/xml-tools.ts';

/*
 * Greek documents as the API hands them out (test keys, stub AADE): each sale is a real
 * myDATA InvoicesDoc, valid against the official XSD, numbered gaplessly per series
 * (concurrent creates included) and again from 1 in a new Greek year; the UID is the
 * record's fingerprint; a cancellation of a document AADE acknowledged is the
 * CancelInvoice call by its MARK.
 */

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-02T10:00:00.000Z');
  t = await startTestApp({ clock, limiter: unlimitedLimiter() });
});
afterAll(() => t?.close());

const tag = firstTagText;
const greekSale = (loc: string, metadata: Record<string, unknown> = {}) => saleBody(loc, { ...saleLines['gr-mydata'], metadata });

async function record(key: string, id: string) {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['x-fiscal-record-placeholder']).toBe('false');
  return { body: res.body, contentType: String(res.headers['content-type']) };
}

async function fresh() {
  const { key } = await t.signup();
  return { key, loc: await createLocation(t, key, 'gr-mydata') };
}

describe('Greece: myDATA documents through the API', () => {
  it('sales are InvoicesDoc XML, valid, numbered A-1..A-n without gaps under concurrency, UID = SHA-1 of the header', async () => {
    const { key, loc } = await fresh();
    const created = await Promise.all(Array.from({ length: 6 }, () => createTx(t, key, greekSale(loc))));
    const txs = created.map((r) => {
      expect(r.statusCode, r.body).toBe(201);
      return r.json();
    });
    expect(txs.map((x) => x.fiscal_id).sort()).toEqual(['A-1', 'A-2', 'A-3', 'A-4', 'A-5', 'A-6']);
    for (const tx of txs) {
      const { body, contentType } = await record(key, tx.id);
      expect(contentType).toBe('application/xml; charset=utf-8');
      expect(`${tag(body, 'series')}-${tag(body, 'aa')}`).toBe(tx.fiscal_id);
      expect(tag(body, 'issueDate')).toBe('2026-03-02');
      expect(tag(body, 'invoiceType')).toBe('11.1');
      expect(tag(body, 'totalGrossValue')).toBe('21.00');
      const uid = myDataUid({ afm: GR_AFM, issueDate: '2026-03-02', branch: 0, invoiceType: '11.1', series: 'A', aa: tag(body, 'aa') });
      const stored = await t.db.query<{ fingerprint: string }>('SELECT fingerprint FROM fiscal_records WHERE transaction_id = $1', [tx.id]);
      expect(stored.rows[0]!.fingerprint).toBe(uid);
      if (HAVE_SCHEMAS) {
        const v = xsdValidate(body, 'gr/mydata/v1.0.12/InvoicesDoc-v1.0.12.xsd');
        expect(v.ok, v.output).toBe(true);
      }
      expect((await getTx(t, key, tx.id)).status).toBe('success');
    }
  });

  it('two locations of one AFM and branch draw one series: never the same number twice; another branch numbers on its own', async () => {
    const { key, loc } = await fresh();
    const twin = await createLocation(t, key, 'gr-mydata', { name: 'Second till' });
    const other = await t.request({ method: 'GET', url: `/v1/locations/${loc}`, key });
    const branch1 = await createLocation(t, key, 'gr-mydata', { name: 'Branch 1', country_config: { ...other.json().country_config, subscription_key: 'secret-key-1234', branch: 1 } });
    const made = await Promise.all([loc, twin, loc, twin].map((l) => createTx(t, key, greekSale(l))));
    expect(made.map((r) => r.statusCode)).toEqual([201, 201, 201, 201]);
    expect(made.map((r) => r.json().fiscal_id).sort()).toEqual(['A-1', 'A-2', 'A-3', 'A-4']);
    expect((await createTx(t, key, greekSale(branch1))).json().fiscal_id).toBe('A-1');
    // Another account with the same AFM is another tenant: its own numbering.
    const stranger = await fresh();
    expect((await createTx(t, stranger.key, greekSale(stranger.loc))).json().fiscal_id).toBe('A-1');
  });

  it('a location that issued documents keeps its AFM and branch (the numbering they were issued under)', async () => {
    const { key, loc } = await fresh();
    const before = (await t.request({ method: 'GET', url: `/v1/locations/${loc}`, key })).json();
    const config = { ...before.country_config, subscription_key: 'secret-key-1234' };
    // No document yet: the branch may still change.
    expect((await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...config, branch: 2 } } })).statusCode).toBe(200);
    expect((await createTx(t, key, greekSale(loc))).statusCode).toBe(201);
    const moved = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...config, branch: 3 } } });
    expect([moved.statusCode, moved.json()]).toEqual([400, { error: 'country_config.branch cannot be changed once the location has transactions: create a new location' }]);
    expect((await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...config, branch: 2, legal_name: 'New Name AE' } } })).statusCode).toBe(200);
  });

  it('migration 0042 moves per-location chains to the issuer\'s series; chains that already collided continue from the furthest', async () => {
    const { key, loc } = await fresh();
    const twin = await createLocation(t, key, 'gr-mydata', { name: 'Twin' });
    const alone = await fresh();
    const account = (await t.db.query<{ account_id: string }>('SELECT account_id FROM locations WHERE id = $1', [loc])).rows[0]!.account_id;
    const lone = (await t.db.query<{ account_id: string }>('SELECT account_id FROM locations WHERE id = $1', [alone.loc])).rows[0]!.account_id;
    const now = new Date('2026-03-01T09:00:00Z');
    // Heads as the per-location keys left them: two of one AFM and branch (A-3 and A-5
    // issued), one alone (B-2, live).
    for (const [k, seq, fiscalId] of [[`gr-mydata:${loc}:A`, 3, 'A-3'], [`gr-mydata:${twin}:A`, 5, 'A-5'], [`gr-mydata:${alone.loc}:B:live`, 2, 'B-2']] as const) {
      await t.db.query('INSERT INTO chain_heads (chain_key, seq, last_fiscal_id, last_issued_at, updated_at) VALUES ($1, $2, $3, $4, $4)', [k, seq, fiscalId, now]);
    }
    const sql = (await import('node:fs')).readFileSync(new URL('../../src/store/migrations/0042_greek_series_chains.sql', import.meta.url), 'utf8');
    await t.db.transaction((tx) => tx.exec(sql));
    const heads = async (prefix: string) => (await t.db.query<{ chain_key: string; seq: string | number }>(
      'SELECT chain_key, seq FROM chain_heads WHERE chain_key LIKE $1 ORDER BY chain_key', [`${prefix}%`])).rows.map((r) => [r.chain_key, Number(r.seq)]);
    expect(await heads(`gr-mydata:${account}:`)).toEqual([[`gr-mydata:${account}:${GR_AFM}:0:A`, 5]]);
    expect(await heads(`gr-mydata:${loc}:`)).toEqual([[`gr-mydata:${loc}:A`, 3]]); // kept: its records keep their key
    expect(await heads(`gr-mydata:${lone}:`)).toEqual([[`gr-mydata:${lone}:${GR_AFM}:0:B:live`, 2]]);
    expect(await heads(`gr-mydata:${alone.loc}:`)).toEqual([]);
    // The next sale of either twin is A-6: no number a third time.
    expect((await createTx(t, key, greekSale(twin))).json().fiscal_id).toBe('A-6');
    // Running it again changes nothing.
    await t.db.transaction((tx) => tx.exec(sql));
    expect(await heads(`gr-mydata:${account}:`)).toEqual([[`gr-mydata:${account}:${GR_AFM}:0:A`, 6]]);
  });

  it('a new Greek year restarts the numbering (00:30 on 1 January in Athens is still 31 December UTC)', async () => {
    const { key, loc } = await fresh();
    clock.set('2026-12-31T21:00:00.000Z');
    const last = (await createTx(t, key, greekSale(loc))).json();
    const before = (await createTx(t, key, greekSale(loc))).json();
    clock.set('2026-12-31T22:30:00.000Z');
    const next = (await createTx(t, key, greekSale(loc))).json();
    expect([last.fiscal_id, before.fiscal_id, next.fiscal_id]).toEqual(['A-1', 'A-2', 'A-1']);
    expect(tag((await record(key, next.id)).body, 'issueDate')).toBe('2027-01-01');
    clock.set('2026-03-02T10:00:00.000Z');
  });

  it('an invoice to a business counterpart (1.1), a credit note 5.1 correlated to its MARK', async () => {
    const { key, loc } = await fresh();
    const inv = (await createTx(t, key, greekSale(loc, { counterpart_vat_number: '123456783' }))).json();
    const invXml = (await record(key, inv.id)).body;
    expect(tag(invXml, 'invoiceType')).toBe('1.1');
    expect(invXml).toContain('<counterpart><vatNumber>123456783</vatNumber><country>GR</country><branch>0</branch></counterpart>');
    const mark = (await getTx(t, key, inv.id)).fiscal_id_upstream;
    const credit = await createTx(t, key, { ...greekSale(loc, { counterpart_vat_number: '123456783', correlated_mark: mark }), type: 'refund' });
    expect(credit.statusCode, credit.body).toBe(201);
    const creditXml = (await record(key, credit.json().id)).body;
    expect(tag(creditXml, 'invoiceType')).toBe('5.1');
    expect(tag(creditXml, 'correlatedInvoices')).toBe(mark);
  });

  it('refuses a non-Greek VAT rate and a 0 % line without its exemption cause, with 400s', async () => {
    const { key, loc } = await fresh();
    const res = await createTx(t, key, saleBody(loc));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'items[0].tax_rate must be a Greek VAT rate (24, 13, 6, 17, 9, 4, 3 or 0)' });
    const zero = saleBody(loc, { items: [{ description: 'Βιβλίο', quantity: 1, unit_price: 1000, tax_rate: 0, tax_amount: 0, total_amount: 1000 }], pretax_amount: 1000, tax_amount: 0, total_amount: 1000 });
    expect((await createTx(t, key, zero)).json()).toEqual({ error: 'metadata.vat_exemption_category is required for a 0 % line (myDATA exemption cause 1-31)' });
    expect((await createTx(t, key, { ...zero, metadata: { vat_exemption_category: 27 } })).statusCode).toBe(201);
  });

  it('cancelling an acknowledged sale is the CancelInvoice call by its MARK', async () => {
    const { key, loc } = await fresh();
    const sale = (await createTx(t, key, greekSale(loc))).json();
    const mark = (await getTx(t, key, sale.id)).fiscal_id_upstream;
    expect(mark).toMatch(/^\d{15}$/);
    const c = await t.request({ method: 'POST', url: `/v1/transactions/${sale.id}/cancel`, key, payload: { reason: 'λάθος' } });
    expect(c.statusCode, c.body).toBe(201);
    const rec = await record(key, c.json().id);
    expect(rec.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(rec.body)).toEqual({ operation: 'CancelInvoice', mark, entityVatNumber: null });
  });

  it('sandbox reject:233 (a duplicate with its MARK): success with every receipt item of an accept, the mandatory qr among them', async () => {
    const { key, loc } = await fresh();
    const dup = (await createTx(t, key, greekSale(loc, { sandbox_outcome: 'reject:233' }))).json();
    expect(dup.status).toBe('success');
    const full = await getTx(t, key, dup.id);
    expect(full.response_payload.authority).toMatchObject({ category: 'duplicate_as_success', authority_code: '233' });
    const hints = Object.fromEntries(full.render_hints.map((h: { key: string }) => [h.key, h]));
    expect(Object.keys(hints)).toEqual(expect.arrayContaining(['mark', 'uid', 'auth_code', 'qr']));
    // As the normal success path gives it (spec: qr | online | footer_right | yes | qr_url).
    expect(hints.qr).toMatchObject({ placement: 'footer_right', mandatory: true, kind: 'qr_url', value: expect.stringMatching(/^https:\/\/mydataapidev\.aade\.gr\/TimologioQR\/QRInfo\?q=/) });
    expect(hints.mark.value).toBe(full.fiscal_id_upstream);
  });

  it('sandbox timeout: offline_pending with error.category transient, as the real client answers a timeout', async () => {
    const { key, loc } = await fresh();
    const tx = (await createTx(t, key, greekSale(loc, { sandbox_outcome: 'timeout' }))).json();
    expect(tx.status).toBe('offline_pending');
    const full = await getTx(t, key, tx.id);
    expect(full.response_payload.error).toEqual({ category: 'transient' });
    expect(full.response_payload.authority).toMatchObject({ category: 'transient' });
    expect(full.response_payload.submit_error).toMatchObject({ error_code: 'timeout' });
  });
});
