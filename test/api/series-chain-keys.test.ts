import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { DEFAULT_SOFTWARE } from '../../src/runtime.ts';
import { configs, GR_AFM } from '../support/fixtures.ts';
import { startTestApp, unlimitedLimiter, type TestApp } from '../support/harness.ts';
import { createdTx, createLocation, locationBody, refusedTx, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';

/*
 * A series is the last part of its chain key (shared/chain-key.ts), and `:` and `#` give a
 * key its structure (`:live`, `#annulments`). A series holding them keyed another series'
 * chain: a test series `A:live` the live chain of `A`, a series `A#annulments` the
 * annulments of `A`. Now, where the chain numbers the documents (Portugal, Greece) a new
 * series with one is refused and a stored one keeps its key; where the numbers are the
 * merchant's (SII) the series is escaped in the key. Ordinary series keep their key to the
 * byte (written out literally below), so no stored chain restarts. On both stores.
 */

let t: TestApp;
beforeAll(async () => {
  // Live Portuguese documents are signed with the software producer's key (pt-saft/signature.ts).
  const producer = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });
  t = await startTestApp({
    clock: new ManualClock('2026-03-02T10:00:00.000Z'), liveEnabled: true, limiter: unlimitedLimiter(),
    software: { ...DEFAULT_SOFTWARE, producerKeys: { PT: { privateKey: producer.privateKey, version: '2', certificateNumber: '4321' } } },
  });
});
afterAll(() => t?.close());

const PT_SEPARATOR = (type: string) =>
  `country_config.series[${type}].prefix must not contain ":", "#" or "*" (they separate the parts of its chain key and the fields of the QR code)`;

async function liveKey(key: string): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().key as string;
}

const chainKeyOf = async (transactionId: string): Promise<string> =>
  (await t.db.query<{ chain_key: string }>('SELECT chain_key FROM fiscal_records WHERE transaction_id = $1', [transactionId])).rows[0]!.chain_key;

describe('Portugal: series prefixes and their chain keys', () => {
  it('refuses a new prefix holding ":", "#" or "*" with a 400, on create and on PATCH', async () => {
    const { key } = await t.signup();
    const body = locationBody('pt-saft');
    const series = (body.country_config as { series: Record<string, unknown> }).series;
    for (const prefix of ['A#annulments', 'A:live', 'A*B']) {
      const res = await t.request({
        method: 'POST', url: '/v1/locations', key,
        payload: { ...body, country_config: { ...configs.saft, series: { ...series, FS: { prefix, atcud_code: 'BBJFJMVNTN' } } } },
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toBe(PT_SEPARATOR('FS'));
    }
    const loc = await createLocation(t, key, 'pt-saft');
    const res = await t.request({
      method: 'PATCH', url: `/v1/locations/${loc}`, key,
      payload: { country_config: { ...configs.saft, series: { ...series, FT: { prefix: 'A:live', atcud_code: 'AAJFJMVNTN' } } } },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe(PT_SEPARATOR('FT'));
  });

  it('an ordinary series keeps its exact key, test and live (a sale is a simplified invoice, FS, series B)', async () => {
    const { key } = await t.signup();
    const live = await liveKey(key);
    const loc = await createLocation(t, key, 'pt-saft');
    const test = await createdTx(t, key, saleBody(loc));
    const liveTx = await createdTx(t, live, saleBody(loc));
    expect(await chainKeyOf(test.id)).toBe(`pt-saft:${loc}:FS B`);
    expect(await chainKeyOf(liveTx.id)).toBe(`pt-saft:${loc}:FS B:live`);
  });

  it('a prefix stored before the rule keeps working, under the key it had, and a PATCH may keep it', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    // A config stored when the rule did not exist yet.
    const stored = { ...configs.saft, series: { FS: { prefix: 'X:1', atcud_code: 'BBJFJMVNTN' } } };
    await t.db.query('UPDATE locations SET country_config = $2 WHERE id = $1', [loc, JSON.stringify(stored)]);
    const sale = await createdTx(t, key, saleBody(loc));
    expect(await chainKeyOf(sale.id)).toBe(`pt-saft:${loc}:FS X:1`);
    const kept = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...stored, software_certificate_number: '4321' } } });
    expect(kept.statusCode, kept.body).toBe(200);
    // …but not for another document type (a chain that does not exist yet).
    const other = await t.request({
      method: 'PATCH', url: `/v1/locations/${loc}`, key,
      payload: { country_config: { ...stored, series: { ...stored.series, FT: { prefix: 'X:1', atcud_code: 'AAJFJMVNTN' } } } },
    });
    expect(other.statusCode, other.body).toBe(400);
    expect(other.json().error).toBe(PT_SEPARATOR('FT'));
    const next = await createdTx(t, key, saleBody(loc));
    expect(await chainKeyOf(next.id)).toBe(`pt-saft:${loc}:FS X:1`);
  });
});

describe('Greece: series and their chain keys', () => {
  const greekSale = (loc: string, metadata: Record<string, unknown> = {}) => saleBody(loc, { ...saleLines['gr-mydata'], metadata });
  const SEPARATOR = (field: string) => `${field} must not contain ":" or "#" (they separate the parts of the series' chain key)`;

  it('refuses a new series holding ":" or "#" (config and metadata); an ordinary one keeps its exact key', async () => {
    const { key, accountId } = await t.signup();
    const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { ...locationBody('gr-mydata'), country_config: { ...configs.mydata, default_series: 'A#annulments' } } });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe(SEPARATOR('country_config.default_series'));
    const loc = await createLocation(t, key, 'gr-mydata');
    await refusedTx(t, key, greekSale(loc, { series: 'A:live' }), SEPARATOR('metadata.series'));
    await refusedTx(t, key, greekSale(loc, { series: 'A#corrections' }), SEPARATOR('metadata.series'));
    const sale = await createdTx(t, key, greekSale(loc));
    expect(await chainKeyOf(sale.id)).toBe(`gr-mydata:${accountId}:${GR_AFM}:0:A`);
  });

  it("a stored default_series with one keeps working, under its key as it was", async () => {
    const { key, accountId } = await t.signup();
    const loc = await createLocation(t, key, 'gr-mydata');
    await t.db.query("UPDATE locations SET country_config = jsonb_set(country_config, '{default_series}', '\"Α:1\"') WHERE id = $1", [loc]);
    const sale = await createdTx(t, key, greekSale(loc));
    expect(await chainKeyOf(sale.id)).toBe(`gr-mydata:${accountId}:${GR_AFM}:0:Α:1`);
    // Named in metadata too: it is the location's own series.
    const named = await createdTx(t, key, greekSale(loc, { series: 'Α:1' }));
    expect(await chainKeyOf(named.id)).toBe(`gr-mydata:${accountId}:${GR_AFM}:0:Α:1`);
  });
});

describe('SII: a series is escaped in its key', () => {
  const siiSale = (loc: string, series?: string) => saleBody(loc, { metadata: { ...saleMetadata['es-sii'], ...(series === undefined ? {} : { series }) } });

  it('series A#annulments and the annulments of series A: two chains; A keeps its exact key', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const a = await createdTx(t, key, siiSale(loc, 'A'));
    const odd = await createdTx(t, key, siiSale(loc, 'A#annulments'));
    const colon = await createdTx(t, key, siiSale(loc, 'A:live'));
    const none = await createdTx(t, key, siiSale(loc));
    expect(await chainKeyOf(a.id)).toBe(`es-sii:${loc}:A`);
    expect(await chainKeyOf(none.id)).toBe(`es-sii:${loc}:default`);
    expect(await chainKeyOf(odd.id)).toBe(`es-sii:${loc}:A%23annulments`);
    expect(await chainKeyOf(colon.id)).toBe(`es-sii:${loc}:A%3Alive`);
    await t.worker.drain(); // the stub accepts the invoice: cancellable now
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${a.id}/cancel`, key, payload: {} });
    expect(cancel.statusCode, cancel.body).toBeLessThan(300);
    expect(await chainKeyOf(cancel.json().id)).toBe(`es-sii:${loc}:A#annulments`);
    // Each chain numbered on its own: the odd series' first record was not followed by the annulment.
    const seqs = (await t.db.query<{ chain_key: string; seq: number | string }>(
      'SELECT chain_key, seq FROM fiscal_records WHERE chain_key = ANY($1::text[]) ORDER BY chain_key', [[`es-sii:${loc}:A#annulments`, `es-sii:${loc}:A%23annulments`]],
    )).rows.map((r) => [r.chain_key, Number(r.seq)]);
    expect(seqs).toEqual([[`es-sii:${loc}:A#annulments`, 1], [`es-sii:${loc}:A%23annulments`, 1]]);
  });
});
