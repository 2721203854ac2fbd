import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE, openTestDb, startTestApp, type TestApp } from '../support/harness.ts';
import type { Db } from '../../src/store/db.ts';
import { accountsRepo } from '../../src/store/repos/accounts-repo.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';
import { configs } from '../support/fixtures.ts';

/*
 * The request path caches authentication and locations in each node (store/change-feed.ts):
 * a change made through one node, or behind the service's back, must reach every node, and
 * a node that cannot hear changes must not serve from its cache.
 */
let db: Db;
let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  db = await openTestDb();
  [a, b] = await Promise.all([startTestApp({ db }), startTestApp({ db })]);
});
afterAll(async () => {
  await a.close();
  await b.close();
  await db.close();
});

/** Both nodes have seen every change committed so far. */
const synced = () => Promise.all([a.rt.changes.sync(), b.rt.changes.sync()]);
const list = (t: TestApp, key: string) => t.request({ method: 'GET', url: '/v1/locations', key });

describe('request caches', () => {
  it('the change feed is live on both nodes', async () => {
    await waitFor(() => a.rt.changes.live() && b.rt.changes.live()); // PostgreSQL: once LISTEN is in place
    expect(a.rt.changes.live()).toBe(true);
    expect(b.rt.changes.live()).toBe(true);
  });

  it('a key revoked on one node stops working on the other', async () => {
    const { key } = await a.signup();
    const other = await a.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'till 2' } });
    const { id, key: till } = other.json();
    expect((await list(b, till)).statusCode).toBe(200); // node b caches it
    expect((await list(b, till)).statusCode).toBe(200);
    expect((await a.request({ method: 'DELETE', url: `/v1/api-keys/${id}`, key })).statusCode).toBe(204);
    expect((await list(a, till)).json()).toEqual({ error: 'API key has been revoked' }); // at once where it was revoked
    await synced();
    expect((await list(b, till)).json()).toEqual({ error: 'API key has been revoked' });
  });

  it('a rotated key stops working on every node, its successor works', async () => {
    const { key } = await a.signup();
    const { id, key: till } = (await a.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'till' } })).json();
    expect((await list(b, till)).statusCode).toBe(200);
    const rotated = await a.request({ method: 'POST', url: `/v1/api-keys/${id}/rotate`, key });
    expect(rotated.statusCode).toBe(200);
    await synced();
    expect((await list(b, till)).statusCode).toBe(401);
    expect((await list(b, rotated.json().key)).statusCode).toBe(200);
  });

  it("an account's status written straight to the database reaches every cached key", async () => {
    const { key, accountId } = await a.signup();
    expect((await list(a, key)).statusCode).toBe(200);
    expect((await list(b, key)).statusCode).toBe(200);
    await accountsRepo.setStatus(db, accountId, 'suspended', 'payment failed', new Date());
    await synced();
    expect((await list(a, key)).json()).toEqual({ error: 'account is suspended' });
    expect((await list(b, key)).json()).toEqual({ error: 'account is suspended' });
    await accountsRepo.setStatus(db, accountId, 'active', null, new Date());
    await synced();
    expect((await list(b, key)).statusCode).toBe(200);
  });

  it('a location deactivated, changed or deleted on one node is seen by creates on the other', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    expect((await createTx(b, key, saleBody(loc))).statusCode).toBe(201); // cached on b
    expect((await a.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { status: 'inactive' } })).statusCode).toBe(200);
    await synced();
    expect((await createTx(b, key, saleBody(loc))).json()).toEqual({ error: 'location is not active' });

    expect((await a.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { status: 'active', country_config: { ...configs.nf525, legal_name: 'Exemple Renommée SAS' } } })).statusCode).toBe(200);
    await synced();
    const renamed = await createTx(b, key, saleBody(loc));
    expect(renamed.statusCode).toBe(201);
    const record = await b.request({ method: 'GET', url: `/v1/transactions/${renamed.json().id}/fiscal-record`, key });
    // The record names the legal name of the new config, not the cached one. (The register
    // id itself is sealed once the register has records: France NF525 audit, session 26.)
    expect(JSON.parse(record.body)).toMatchObject({ legal_name: 'Exemple Renommée SAS' });

    expect((await a.request({ method: 'DELETE', url: `/v1/locations/${loc}`, key })).statusCode).toBe(204);
    await synced();
    expect((await createTx(b, key, saleBody(loc))).json()).toEqual({ error: 'location not found' });
  });

  it("another account's location is not found, cached or not", async () => {
    const owner = await a.signup();
    const stranger = await a.signup();
    const loc = await createLocation(a, owner.key, 'fr-nf525');
    expect((await createTx(a, owner.key, saleBody(loc))).statusCode).toBe(201); // now cached
    expect((await createTx(a, stranger.key, saleBody(loc))).json()).toEqual({ error: 'location not found' });
  });

  it('a replay is answered even after its location was deactivated', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const first = await createTx(a, key, saleBody(loc), { 'idempotency-key': 'till-1-0001' });
    expect(first.statusCode).toBe(201);
    await a.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { status: 'inactive' } });
    await synced();
    const again = await createTx(b, key, saleBody(loc), { 'idempotency-key': 'till-1-0001' });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    const other = await createTx(b, key, saleBody(loc, { payment_method: 'cash' }), { 'idempotency-key': 'till-1-0001' });
    expect(other.statusCode).toBe(409);
  });

  it('one key in concurrent requests with two different bodies: one transaction, the same body replays it, the other is a 409', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const bodies = Array.from({ length: 30 }, (_, i) => saleBody(loc, { payment_method: i % 2 ? 'cash' : 'card' }));
    const answers = await Promise.all(bodies.map((body, i) => createTx(i % 3 ? a : b, key, body, { 'idempotency-key': 'shared-key' })));
    const ok = answers.filter((r) => r.statusCode === 201 || r.statusCode === 200);
    const conflicts = answers.filter((r) => r.statusCode === 409);
    expect(ok.length + conflicts.length).toBe(30);
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(1);
    const ids = new Set(ok.map((r) => r.json().id));
    expect(ids.size).toBe(1);
    const method = ok[0]!.json().payment_method;
    expect(ok).toHaveLength(15); // exactly the requests with the winner's body
    expect(ok.every((r) => r.json().payment_method === method)).toBe(true);
    expect(conflicts.every((r) => r.json().error === 'idempotency key already used with a different request')).toBe(true);
    const listed = await a.request({ method: 'GET', url: `/v1/transactions?location_id=${loc}`, key });
    expect(listed.json().total).toBe(1);
  });
});

describe('request caches: what is read', () => {
  it('after the first request, authentication and the location come from memory; a change reloads them', async () => {
    const seen: string[] = [];
    const counting: Db = { ...db, query: (sql, params) => (seen.push(sql), db.query(sql, params)) };
    const c = await startTestApp({ db: counting });
    try {
      await waitFor(() => c.rt.changes.live());
      const { key } = await c.signup();
      const loc = await createLocation(c, key, 'fr-nf525');
      expect((await createTx(c, key, saleBody(loc))).statusCode).toBe(201);
      const reads = () => ({
        keys: seen.filter((q) => /FROM api_keys k JOIN accounts/.test(q)).length,
        locations: seen.filter((q) => /FROM locations WHERE account_id/.test(q)).length,
      });
      seen.length = 0;
      for (let i = 0; i < 5; i++) expect((await createTx(c, key, saleBody(loc))).statusCode).toBe(201);
      expect(reads()).toEqual({ keys: 0, locations: 0 });
      await c.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { name: 'Café Paris 2' } });
      await c.rt.changes.sync(); // the trigger's notification too (PostgreSQL: it may land after the next read)
      seen.length = 0;
      expect((await createTx(c, key, saleBody(loc))).statusCode).toBe(201);
      expect((await createTx(c, key, saleBody(loc))).statusCode).toBe(201);
      expect(reads()).toEqual({ keys: 0, locations: 1 });
    } finally {
      await c.close();
    }
  });
});

describe.runIf(STORE === 'postgres')('request caches when the change feed drops (PostgreSQL)', () => {
  it('a lost listening connection empties the caches and bypasses them until it is back', async () => {
    const { key, accountId } = await a.signup();
    expect((await list(a, key)).statusCode).toBe(200); // cached
    // The listening backends of this database (one per node), cut as a network fault would.
    const killed = await db.query<{ pid: number }>(
      `SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`,
    );
    expect(killed.rows.length).toBeGreaterThanOrEqual(1); // the nodes share this Db, and its one listening connection
    await waitFor(() => !a.rt.changes.live());
    // While deaf, a change must still be seen: the cache is not used.
    await accountsRepo.setStatus(db, accountId, 'suspended', null, new Date());
    expect((await list(a, key)).json()).toEqual({ error: 'account is suspended' });
    await waitFor(() => a.rt.changes.live() && b.rt.changes.live(), 5_000);
    await accountsRepo.setStatus(db, accountId, 'active', null, new Date());
    await synced();
    expect((await list(a, key)).statusCode).toBe(200);
  });
});

async function waitFor(cond: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}
