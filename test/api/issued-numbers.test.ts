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
