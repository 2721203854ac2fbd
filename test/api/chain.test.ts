import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';
import { verifyNf525Chain } from '../../src/countries/fr-nf525/verify.ts';

/**
 * 1,000 concurrent creates on one location, through two API nodes on one store: one
 * chain, numbered 1..1,000 without a gap, every record linked to the one before it.
 */
/** The sandbox bucket (200) would refuse most of the burst: this test is about the chain, not the limit. */
let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await startTestApp({ limiter: unlimitedLimiter() });
  b = await startTestApp({ db: a.db, limiter: unlimitedLimiter() }); // a second node: its own process-local queue, the same database
});
afterAll(async () => {
  await b.close();
  await a.close();
});

describe('chain under concurrency', () => {
  it('never forks', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const answers = await Promise.all(Array.from({ length: 1000 }, (_, i) => createTx(i % 2 ? b : a, key, saleBody(loc))));
    expect(answers.filter((r) => r.statusCode !== 201).map((r) => r.body).slice(0, 3)).toEqual([]);

    const rows = (await a.db.query<{ seq: string | number; previous_fingerprint: string | null; fingerprint: string; transaction_id: string }>(
      `SELECT r.seq, r.previous_fingerprint, r.fingerprint, r.transaction_id FROM fiscal_records r
       JOIN transactions t ON t.id = r.transaction_id WHERE t.location_id = $1 ORDER BY r.seq`, [loc])).rows;
    expect(rows).toHaveLength(1000);
    rows.forEach((r, i) => {
      expect(Number(r.seq)).toBe(i + 1);
      expect(r.previous_fingerprint).toBe(i === 0 ? null : rows[i - 1]!.fingerprint);
    });
    expect(new Set(rows.map((r) => r.fingerprint)).size).toBe(1000);
    expect(new Set(rows.map((r) => r.transaction_id))).toEqual(new Set(answers.map((r) => r.json().id)));
    // The NF525 chain itself, as an auditor checks it: every ECDSA signature, every link, the grand totals.
    const bodies = (await a.db.query<{ body: string }>(
      `SELECT r.body FROM fiscal_records r JOIN transactions t ON t.id = r.transaction_id WHERE t.location_id = $1 ORDER BY r.seq`, [loc])).rows;
    const recordKey = (await a.db.query<{ public_key_pem: string }>('SELECT public_key_pem FROM record_keys WHERE location_id = $1', [loc])).rows[0]!;
    expect(verifyNf525Chain(bodies.map((b) => b.body), recordKey.public_key_pem)).toMatchObject({ ok: true, count: 1000 });
  }, 120_000);
});

describe('VERI*FACTU: one chain per issuer, gapless numbers per series', () => {
  it('links every record of the issuer across locations, annulments included, while invoice numbers run 1, 2, 3', async () => {
    const { key } = await a.signup();
    const l1 = await createLocation(a, key, 'es-verifactu');
    const l2 = await createLocation(a, key, 'es-verifactu', { name: 'Second shop' });
    const first = (await createTx(a, key, saleBody(l1))).json();
    await createTx(a, key, saleBody(l2));
    await a.worker.drain();
    const cancel = await a.request({ method: 'POST', url: `/v1/transactions/${first.id}/cancel`, key });
    expect(cancel.statusCode).toBe(201);
    await createTx(a, key, saleBody(l1));

    const rows = (await a.db.query<{ seq: string | number; kind: string; document_number: string | null; previous_fingerprint: string | null; fingerprint: string }>(
      `SELECT r.seq, r.kind, r.document_number, r.previous_fingerprint, r.fingerprint FROM fiscal_records r
       JOIN transactions t ON t.id = r.transaction_id WHERE t.location_id = ANY($1::uuid[]) ORDER BY r.seq`, [[l1, l2]])).rows;
    expect(rows.map((r) => [Number(r.seq), r.kind, r.document_number])).toEqual([
      [1, 'record', 'A-1'], [2, 'record', 'A-2'], [3, 'cancellation', null], [4, 'record', 'A-3'],
    ]);
    rows.forEach((r, i) => expect(r.previous_fingerprint).toBe(i === 0 ? null : rows[i - 1]!.fingerprint));
    expect(rows.every((r) => /^[0-9A-F]{64}$/.test(r.fingerprint))).toBe(true);
  });
});

describe('TicketBAI: one chain per issuer across series, numbers per series', () => {
  it('chains A-1, B-1, A-2 in one chain', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'es-ticketbai');
    for (const series of ['A', 'B', 'A']) expect((await createTx(a, key, saleBody(loc, { metadata: { series } }))).statusCode).toBe(201);
    const rows = (await a.db.query<{ seq: string | number; body: string; previous_fingerprint: string | null; fingerprint: string }>(
      `SELECT r.seq, r.body, r.previous_fingerprint, r.fingerprint FROM fiscal_records r
       JOIN transactions t ON t.id = r.transaction_id WHERE t.location_id = $1 ORDER BY r.seq`, [loc])).rows;
    const tag = (xml: string, name: string) => new RegExp(`<${name}(?: [^>]*)?>([^<]*)</${name}>`).exec(xml)?.[1];
    expect(rows.map((r) => [Number(r.seq), tag(r.body, 'SerieFactura'), tag(r.body, 'NumFactura')])).toEqual([[1, 'A', '1'], [2, 'B', '1'], [3, 'A', '2']]);
    rows.forEach((r, i) => {
      expect(r.previous_fingerprint).toBe(i === 0 ? null : rows[i - 1]!.fingerprint);
      // The record's own fingerprint is its SignatureValue; the next names its first 100
      // characters, with the previous invoice's series and number (FORMATS §1.5).
      expect(tag(r.body, 'ds:SignatureValue')).toBe(r.fingerprint);
      if (i === 0) expect(r.body).not.toContain('EncadenamientoFacturaAnterior');
      else {
        expect(tag(r.body, 'SignatureValueFirmaFacturaAnterior')).toBe(rows[i - 1]!.fingerprint.slice(0, 100));
        expect(tag(r.body, 'SerieFacturaAnterior')).toBe(tag(rows[i - 1]!.body, 'SerieFactura'));
        expect(tag(r.body, 'NumFacturaAnterior')).toBe(tag(rows[i - 1]!.body, 'NumFactura'));
      }
    });
  });
});

describe('numbered chains under concurrency, two nodes', () => {
  // Each node builds its next batch on the head and the series numbers its own last commit
  // left (one statement, guarded); the other node moves both under it all the time, so
  // this mostly exercises the guard refusing a batch whole and the locking path re-running it.
  it('TicketBAI: 300 concurrent creates in two series give one chain and gapless numbers per series', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'es-ticketbai');
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) =>
      createTx(i % 2 ? b : a, key, saleBody(loc, { metadata: { series: i % 3 === 0 ? 'B' : 'A' } }))));
    expect(answers.filter((r) => r.statusCode !== 201).map((r) => r.body).slice(0, 3)).toEqual([]);
    const rows = (await a.db.query<{ seq: string | number; body: string; previous_fingerprint: string | null; fingerprint: string }>(
      `SELECT r.seq, r.body, r.previous_fingerprint, r.fingerprint FROM fiscal_records r
       JOIN transactions t ON t.id = r.transaction_id WHERE t.location_id = $1 ORDER BY r.seq`, [loc])).rows;
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    rows.forEach((r, i) => expect(r.previous_fingerprint).toBe(i === 0 ? null : rows[i - 1]!.fingerprint));
    const tag = (xml: string, name: string) => new RegExp(`<${name}(?: [^>]*)?>([^<]*)</${name}>`).exec(xml)?.[1];
    for (const [series, count] of [['A', 200], ['B', 100]] as const) {
      const numbers = rows.filter((r) => tag(r.body, 'SerieFactura') === series).map((r) => Number(tag(r.body, 'NumFactura')));
      // In chain order, each series counts 1, 2, 3… without a gap or a repeat.
      expect(numbers).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    }
  }, 120_000);
});
