import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, unlimitedLimiter, type TestApp } from '../support/harness.ts';
import { createLocation, saleBody } from '../support/transactions.ts';

/**
 * The same request ten times at once, for the mutating routes whose races no other test
 * covers: never a 500 (a unique index losing a race is the loser's 404 / 409 / replay, not
 * a database error), and exactly one effect. Two API nodes on one store, so the races are
 * between processes' worth of state, not one node's locks.
 */
let a: TestApp;
let b: TestApp;
let key: string;
beforeAll(async () => {
  a = await startTestApp({ limiter: unlimitedLimiter() });
  b = await startTestApp({ db: a.db, limiter: unlimitedLimiter() });
  ({ key } = await a.signup());
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const tenAtOnce = (req: (node: TestApp, i: number) => Promise<{ statusCode: number; body: string; json(): any }>) =>
  Promise.all(Array.from({ length: 10 }, (_, i) => req(i % 2 ? b : a, i)));
const statuses = (answers: { statusCode: number }[]) => answers.map((r) => r.statusCode).sort();

describe('ten identical mutations at once: one effect, never a 500', () => {
  it('cancelling one sale: one cancellation, every answer names it', async () => {
    const loc = await createLocation(a, key, 'fr-nf525');
    const sale = (await a.request({ method: 'POST', url: '/v1/transactions', key, payload: saleBody(loc) })).json();
    const answers = await tenAtOnce((n) => n.request({ method: 'POST', url: `/v1/transactions/${sale.id}/cancel`, key, payload: { reason: 'race' } }));
    for (const r of answers) expect([200, 201], r.body).toContain(r.statusCode);
    expect(new Set(answers.map((r) => r.json().id)).size).toBe(1);
    const { rows } = await a.db.query<{ n: number }>("SELECT count(*)::int AS n FROM transactions WHERE cancels_id = $1", [sale.id]);
    expect(rows[0]!.n).toBe(1);
  });

  it('one idempotency key, ten different bodies: one sale, the others 409 or its replay', async () => {
    const loc = await createLocation(a, key, 'fr-nf525');
    const answers = await tenAtOnce((n, i) => n.request({ method: 'POST', url: '/v1/transactions', key, headers: { 'idempotency-key': 'race-key' }, payload: saleBody(loc, { payment_method: i === 0 ? 'card' : 'cash', items: [{ description: `x${i}`, quantity: 1, unit_price: 100, tax_rate: 20, tax_amount: 20, total_amount: 120 }], pretax_amount: 100, tax_amount: 20, total_amount: 120 }) }));
    for (const r of answers) expect([200, 201, 409], r.body).toContain(r.statusCode);
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(1);
    const { rows } = await a.db.query<{ n: number }>("SELECT count(*)::int AS n FROM transactions WHERE idempotency_key = 'race-key'");
    expect(rows[0]!.n).toBe(1);
  });

  it('deleting one location, one webhook: one 204, the others 404', async () => {
    const loc = await createLocation(a, key, 'pt-saft');
    expect(statuses(await tenAtOnce((n) => n.request({ method: 'DELETE', url: `/v1/locations/${loc}`, key })))).toEqual([204, ...Array(9).fill(404)]);
    const hook = (await a.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: 'https://receiver.invalid/hook', events: ['fiscalization.completed'] } })).json();
    expect(statuses(await tenAtOnce((n) => n.request({ method: 'DELETE', url: `/v1/webhooks/${hook.id}`, key })))).toEqual([204, ...Array(9).fill(404)]);
  });

  it('patching one location ten ways: every answer 200, the row is one of them', async () => {
    const loc = await createLocation(a, key, 'it-dc');
    const answers = await tenAtOnce((n, i) => n.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { name: `Name ${i}` } }));
    expect(statuses(answers)).toEqual(Array(10).fill(200));
    const final = (await a.request({ method: 'GET', url: `/v1/locations/${loc}`, key })).json().name;
    expect(answers.map((r) => r.json().name)).toContain(final);
  });

  it('revoking one API key: one 204, the others 404', async () => {
    const k = (await a.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'race' } })).json();
    expect(statuses(await tenAtOnce((n) => n.request({ method: 'DELETE', url: `/v1/api-keys/${k.id}`, key })))).toEqual([204, ...Array(9).fill(404)]);
  });

  it('granting one consent ten times, then withdrawing it ten times: one record, every answer 2xx or 404, never a 500', async () => {
    const grants = await tenAtOnce((n) => n.request({ method: 'POST', url: '/v1/account/consents', key, payload: { type: 'marketing', version: 'v9' } }));
    // One grant (201); the others answer the standing record (200): one record, not ten.
    expect(statuses(grants)).toEqual([...Array(9).fill(200), 201]);
    expect(new Set(grants.map((r) => r.json().id)).size).toBe(1);
    const id = grants[0]!.json().id as string;
    const withdrawals = await tenAtOnce((n) => n.request({ method: 'DELETE', url: `/v1/account/consents/${id}`, key }));
    for (const r of withdrawals) expect([200, 404], r.body).toContain(r.statusCode);
    expect(withdrawals.filter((r) => r.statusCode === 200).length).toBeGreaterThanOrEqual(1);
    const listed = (await a.request({ method: 'GET', url: '/v1/account/consents', key })).json();
    const rows = (Array.isArray(listed) ? listed : listed.data) as { id: string; active: boolean }[];
    expect(rows.find((c) => c.id === id)?.active).toBe(false);
    expect(rows.filter((c) => c.active)).toEqual([]);
  });
});
