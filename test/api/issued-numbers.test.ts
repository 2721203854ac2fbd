import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { SystemKey } from '../support/fixtures.ts';
import { startTestApp, unlimitedLimiter, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, getTx, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';

/*
 * A number the client chose is issued once in its chain (FiscalSystem.issuedDocument,
 * services/transaction-entry.ts `onceInChain`): AEAT answers a second record under a number
 * it holds "duplicate", which reads as accepted, and the second sale would never have been
 * registered (session 18 audit). Found reused: 409 at creation, nothing stored.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T10:00:00.000Z'), limiter: unlimitedLimiter() });
});
afterAll(() => t.close());

const sale = (loc: string, system: SystemKey, metadata: Record<string, unknown>) =>
  saleBody(loc, { ...saleLines[system], metadata: { ...(saleMetadata[system] ?? {}), ...metadata } });

async function count(loc: string): Promise<number> {
  const r = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE location_id = $1', [loc]);
  return r.rows[0]!.n;
}

describe('a client invoice number is issued once', () => {
  it.each(['es-verifactu', 'es-ticketbai', 'es-sii'] as const)('%s: the same number again is a 409 naming it; another series or number is fine', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system);
    expect((await createTx(t, key, sale(loc, system, { invoice_number: '2026-7', series: 'T' }))).statusCode).toBe(201);
    const again = await createTx(t, key, sale(loc, system, { invoice_number: '2026-7', series: 'T' }));
    expect([again.statusCode, again.json()]).toEqual([409, {
      error: 'metadata.invoice_number 2026-7 was already issued in series T: an invoice number is used once in its series (RD 1619/2012 art. 6.1.a)',
    }]);
    expect(await count(loc)).toBe(1);
    expect((await createTx(t, key, sale(loc, system, { invoice_number: '2026-7', series: 'U' }))).statusCode).toBe(201);
    expect((await createTx(t, key, sale(loc, system, { invoice_number: '2026-8', series: 'T' }))).statusCode).toBe(201);
    // The idempotent replay of the first is not a reuse.
    const keyed = await createTx(t, key, sale(loc, system, { invoice_number: '2026-9', series: 'T' }), { 'idempotency-key': 'till-9' });
    const replay = await createTx(t, key, sale(loc, system, { invoice_number: '2026-9', series: 'T' }), { 'idempotency-key': 'till-9' });
    expect([replay.statusCode, replay.json().id]).toEqual([200, keyed.json().id]);
  });

  it('SII and SDI: the number is the issuer\'s, across its locations (each chains apart); another issuer may use it', async () => {
    for (const system of ['es-sii', 'it-sdi'] as const) {
      const { key } = await t.signup();
      const a = await createLocation(t, key, system, { name: 'Caja 1' });
      const b = await createLocation(t, key, system, { name: 'Caja 2' });
      const number = { invoice_number: 'X-2026-1' };
      expect((await createTx(t, key, sale(a, system, number))).statusCode, system).toBe(201);
      const again = await createTx(t, key, sale(b, system, number));
      expect(again.statusCode, `${system} ${again.body}`).toBe(409);
      const elsewhere = await t.signup();
      const c = await createLocation(t, elsewhere.key, system);
      expect((await createTx(t, elsewhere.key, sale(c, system, number))).statusCode, system).toBe(201);
    }
  });

  it('concurrent creates under one number: one 201, the others 409', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const answers = await Promise.all(Array.from({ length: 6 }, () => createTx(t, key, sale(loc, 'es-verifactu', { invoice_number: 'C-1' }))));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect(await count(loc)).toBe(1);
  });

  it('a number whose record the authority refused was not issued: it may be used again', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const refused = (await createTx(t, key, sale(loc, 'es-verifactu', { invoice_number: 'R-1', sandbox_outcome: 'reject:4102' }))).json();
    await t.worker.drain();
    expect((await getTx(t, key, refused.id)).status).toBe('failed_permanent');
    const reissued = await createTx(t, key, sale(loc, 'es-verifactu', { invoice_number: 'R-1' }));
    expect(reissued.statusCode, reissued.body).toBe(201);
  });

  it('numbers the service gives (no metadata.invoice_number) are never checked: they are the chain\'s', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    for (let i = 0; i < 3; i++) expect((await createTx(t, key, sale(loc, 'es-verifactu', {}))).statusCode).toBe(201);
    const rows = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM chain_documents d JOIN transactions x ON x.id = d.transaction_id WHERE x.location_id = $1", [loc]);
    expect(rows.rows[0]!.n).toBe(0);
  });
});

describe('preview refuses what create refuses', () => {
  it('a number already issued: the preview is the same 409; an unused number previews', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    expect((await createTx(t, key, sale(loc, 'es-verifactu', { invoice_number: 'P-1', series: 'P' }))).statusCode).toBe(201);
    const preview = (metadata: Record<string, unknown>) =>
      t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: sale(loc, 'es-verifactu', metadata) });
    const reused = await preview({ invoice_number: 'P-1', series: 'P' });
    expect([reused.statusCode, reused.json()]).toEqual([409, {
      error: 'metadata.invoice_number P-1 was already issued in series P: an invoice number is used once in its series (RD 1619/2012 art. 6.1.a)',
    }]);
    const fresh = await preview({ invoice_number: 'P-2', series: 'P' });
    expect(fresh.statusCode, fresh.body).toBe(200);
    expect(await count(loc)).toBe(1);
  });
});

/** The numbers the records of these transactions were issued under, in the order given. */
async function documentNumbers(ids: readonly string[]): Promise<string[]> {
  const r = await t.db.query<{ transaction_id: string; document_number: string }>(
    "SELECT transaction_id, document_number FROM fiscal_records WHERE transaction_id = ANY($1::uuid[]) AND kind = 'record'", [[...ids]]);
  const of = new Map(r.rows.map((row) => [row.transaction_id, row.document_number]));
  return ids.map((id) => of.get(id)!);
}

/*
 * VERI*FACTU and TicketBAI number a sale from the series' counter unless the request names
 * its number: a client number the counter has not reached yet is skipped by the counter
 * when it gets there; one it has given already is a 409 (session 20).
 */
describe('a client number and the series counter never give one number twice', () => {
  // How each system writes the number the counter gives in a series (the record's document_number).
  const counted = { 'es-verifactu': (series: string, n: number) => `${series}-${n}`, 'es-ticketbai': (_series: string, n: number) => String(n) } as const;

  it.each(['es-verifactu', 'es-ticketbai'] as const)('%s: the counter skips a number a request took ahead of it, and takes none itself for such a request', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system);
    const created = async (metadata: Record<string, unknown>) => {
      const res = await createTx(t, key, sale(loc, system, { series: 'K', ...metadata }));
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    const ids = [await created({}), await created({ invoice_number: '3' }), await created({ invoice_number: 5 })];
    for (let i = 0; i < 4; i++) ids.push(await created({}));
    // 1 by the counter, 3 and 5 by the client, then 2, 4, 6, 7: no number twice, none left out.
    expect(await documentNumbers(ids)).toEqual([1, 3, 5, 2, 4, 6, 7].map((n) => counted[system]('K', n)));
    // Another series' counter is its own: 1 there is free.
    expect((await createTx(t, key, sale(loc, system, { series: 'L', invoice_number: '1' }))).statusCode).toBe(201);
  });

  it.each(['es-verifactu', 'es-ticketbai'] as const)('%s: a number the counter gave already is a 409 at create and at preview', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system);
    for (let i = 0; i < 2; i++) expect((await createTx(t, key, sale(loc, system, { series: 'K' }))).statusCode).toBe(201);
    const message = 'metadata.invoice_number 2 was already issued in series K: an invoice number is used once in its series (RD 1619/2012 art. 6.1.a)';
    const taken = await createTx(t, key, sale(loc, system, { series: 'K', invoice_number: '2' }));
    expect([taken.statusCode, taken.json()]).toEqual([409, { error: message }]);
    const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: sale(loc, system, { series: 'K', invoice_number: 2 }) });
    expect([preview.statusCode, preview.json()]).toEqual([409, { error: message }]);
    // Not the counter's form: "02" is another number; 3 is still ahead of the counter.
    expect((await createTx(t, key, sale(loc, system, { series: 'K', invoice_number: '02' }))).statusCode).toBe(201);
    expect((await createTx(t, key, sale(loc, system, { series: 'K', invoice_number: '3' }))).statusCode).toBe(201);
    // The counter's next is 4 (3 is the client's), and a preview says so.
    const next = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: sale(loc, system, { series: 'K' }) });
    expect([next.statusCode, next.json().fiscal_record?.document_number], next.body).toEqual([200, counted[system]('K', 4)]);
    const made = await createTx(t, key, sale(loc, system, { series: 'K' }));
    expect(await documentNumbers([made.json().id])).toEqual([counted[system]('K', 4)]);
  });

  it('VERI*FACTU: the number as AEAT reads it, whichever series wrote it (series T, number 2026-3 is series T-2026\'s third)', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    expect((await createTx(t, key, sale(loc, 'es-verifactu', { series: 'T', invoice_number: '2026-3' }))).statusCode).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createTx(t, key, sale(loc, 'es-verifactu', { series: 'T-2026' }))).json().id);
    expect(await documentNumbers(ids)).toEqual(['T-2026-1', 'T-2026-2', 'T-2026-4']);
  });

  it('concurrent counter and client numbers in one series: every number once', async () => {
    for (const system of ['es-verifactu', 'es-ticketbai'] as const) {
      const { key } = await t.signup();
      const loc = await createLocation(t, key, system);
      const answers = await Promise.all(Array.from({ length: 16 }, (_, i) =>
        createTx(t, key, sale(loc, system, i % 2 === 0 ? { series: 'K' } : { series: 'K', invoice_number: String((i + 1) / 2) }))));
      const ok = answers.filter((r) => r.statusCode === 201);
      expect(answers.every((r) => r.statusCode === 201 || r.statusCode === 409), answers.map((r) => r.body).join('\n')).toBe(true);
      const numbers = await documentNumbers(ok.map((r) => r.json().id));
      expect(new Set(numbers).size, `${system}: ${numbers.join(', ')}`).toBe(numbers.length);
      // The counter's eight sales all stand, on numbers no client sale has.
      expect(answers.filter((r, i) => i % 2 === 0 && r.statusCode === 201)).toHaveLength(8);
    }
  });
});

describe('migration 0052 places the numbers registered before it in their series', () => {
  it('VERI*FACTU (test and live keys) and TicketBAI: the backfill gives each its series and number; the counter then skips it', async () => {
    const { key } = await t.signup();
    const vf = await createLocation(t, key, 'es-verifactu');
    const tbai = await createLocation(t, key, 'es-ticketbai');
    const ids: string[] = [];
    for (const [loc, system] of [[vf, 'es-verifactu'], [tbai, 'es-ticketbai']] as const) {
      const res = await createTx(t, key, sale(loc, system, { series: 'K', invoice_number: '7' }));
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().id as string);
    }
    const rows = async () => (await t.db.query<{ chain_key: string; document: string; numbering_key: string | null; number: string | null }>(
      'SELECT chain_key, document, numbering_key, number::text AS number FROM chain_documents WHERE transaction_id = ANY($1::uuid[]) ORDER BY chain_key, document', [ids])).rows;
    const registered = await rows();
    const vfChain = registered.find((r) => r.document === 'K-7')!.chain_key;
    // What a store had before 0052: no places, no client_max; and a live key's row (chain key `…:live`).
    await t.db.query("INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at) VALUES ($1, 'issued', 'K-9', $2, now())", [`${vfChain}:live`, ids[0]]);
    await t.db.query("INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at) VALUES ($1, 'issued', 'K-2026-3', $2, now())", [vfChain, ids[0]]);
    await t.db.query('UPDATE chain_documents SET numbering_key = NULL, number = NULL WHERE transaction_id = ANY($1::uuid[])', [ids]);
    const keys = registered.map((r) => r.numbering_key!);
    expect(keys).toHaveLength(2);
    await t.db.query('DELETE FROM number_series WHERE numbering_key = ANY($1::text[])', [keys]);
    const file = fs.readFileSync(new URL('../../src/store/migrations/0052_client_numbers_in_series.sql', import.meta.url), 'utf8');
    await t.db.exec(file.slice(file.indexOf('-- The numbers already registered')));
    expect((await rows()).map((r) => [r.chain_key, r.document, r.numbering_key, r.number])).toEqual(expect.arrayContaining([
      [vfChain, 'K-7', `${vfChain}:K`, '7'],
      [vfChain, 'K-2026-3', `${vfChain}:K-2026`, '3'],
      [`${vfChain}:live`, 'K-9', `${vfChain}:K:live`, '9'],
      [registered.find((r) => r.document === 'K 7')!.chain_key, 'K 7', keys.find((k) => k !== `${vfChain}:K`), '7'],
    ]));
    const series = await t.db.query<{ numbering_key: string; client_max: string }>(
      'SELECT numbering_key, client_max::text AS client_max FROM number_series WHERE numbering_key = ANY($1::text[])', [[...keys, `${vfChain}:K:live`]]);
    expect(series.rows.map((r) => r.client_max).sort()).toEqual(['7', '7', '9']);
    // The counter skips 7 in both series once it gets there.
    await t.db.query('UPDATE number_series SET last_number = 6 WHERE numbering_key = ANY($1::text[])', [keys]);
    for (const [loc, system] of [[vf, 'es-verifactu'], [tbai, 'es-ticketbai']] as const) {
      const res = await createTx(t, key, sale(loc, system, { series: 'K' }));
      expect(await documentNumbers([res.json().id])).toEqual([system === 'es-verifactu' ? 'K-8' : '8']);
    }
  });
});

describe('one issuer\'s locations are serialized on a number', () => {
  it('SII and SDI: the same number at once from several locations of one issuer: one 201', async () => {
    for (const system of ['es-sii', 'it-sdi'] as const) {
      const { key } = await t.signup();
      const locs = await Promise.all(Array.from({ length: 4 }, (_, i) => createLocation(t, key, system, { name: `Caja ${i + 1}` })));
      for (let round = 0; round < 3; round++) {
        const number = { invoice_number: `Z-${round}` };
        const answers = await Promise.all(locs.flatMap((loc) => [0, 1].map(() => createTx(t, key, sale(loc, system, number)))));
        expect(answers.map((r) => r.statusCode).sort(), `${system} ${round}`).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
      }
    }
  });
});
