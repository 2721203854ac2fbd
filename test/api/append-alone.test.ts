import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb, startTestApp, type TestApp } from '../support/harness.ts';
import type { Db, Queryable } from '../../src/store/db.ts';
import { transactionsRepo } from '../../src/store/repos/transactions-repo.ts';
import { CHAIN_HEAD_MOVED, NUMBERS_MOVED, ledgerRepo, renderBatch } from '../../src/ledger/ledger-repo.ts';
import { FAN_OUT_EVENTS } from '../../src/services/event-publisher.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';

/*
 * The create's one-statement append (services/transactions.ts `appendAlone`): a node builds
 * the next batch of a chain on the head its own last commit left, and writes it with one
 * autocommitted statement guarded by that head. Whatever the guard refuses goes through
 * the locking path, and the chain stays whole.
 */

/**
 * A Db that counts what goes through it: appends through the locking path (database
 * transactions that lock a chain head; the worker's own transactions are not counted),
 * statements run outside a transaction (on the store or its ordered pipe), and the codes
 * of those refused. `gate` holds the one-statement appends (in order) until opened.
 */
function counted(inner: Db) {
  const n = { transactions: 0, alone: 0, refused: [] as string[], guarded: [] as number[] };
  const held: (() => void)[] = [];
  const gate = {
    closed: false,
    get held() {
      return held.length;
    },
    open() {
      gate.closed = false;
      for (const go of held.splice(0)) go();
    },
  };
  const countedQuery = (q: Pick<Queryable, 'query'>): Queryable['query'] => async (sql, params) => {
    n.alone += 1;
    // A guarded append: its first parameter lists the chain heads it moves.
    const guarded = sql.includes('UPDATE chain_heads h SET');
    if (guarded) n.guarded.push((JSON.parse(String(params![0])) as unknown[]).length);
    // Held statements go on in the order they came (the pipe's order is the order sent).
    if (guarded && (gate.closed || held.length > 0)) await new Promise<void>((go) => held.push(go));
    try {
      return await q.query(sql, params);
    } catch (err) {
      n.refused.push(String((err as { code?: string }).code));
      throw err;
    }
  };
  const db: Db = {
    kind: inner.kind,
    query: countedQuery(inner),
    pipe: inner.pipe ? { query: countedQuery(inner.pipe) } : undefined,
    exec: (sql) => inner.exec(sql),
    subscribe: (channel, l) => inner.subscribe(channel, l),
    transaction: (fn) => inner.transaction((tx) => fn({
      query: (sql, params) => {
        if (sql.includes('INSERT INTO chain_heads')) n.transactions += 1;
        return tx.query(sql, params);
      },
      exec: (sql) => tx.exec(sql),
    })),
    close: () => inner.close(),
  };
  return { db, n, gate };
}

/** Resolves once `check` holds (polled). */
async function until(check: () => boolean, what: string) {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting: ${what}`);
}

let shared: Db;
let a: TestApp;
let b: TestApp;
let onA: ReturnType<typeof counted>;
beforeAll(async () => {
  shared = await openTestDb();
  onA = counted(shared);
  a = await startTestApp({ db: onA.db });
  b = await startTestApp({ db: shared }); // a second node on the same database
});
afterAll(async () => {
  await a.close();
  await b.close();
  await shared.close();
});

/** The location's chain as stored: seq and links. */
async function chainOf(location: string) {
  const rows = (await shared.query<{ seq: string | number; previous_fingerprint: string | null; fingerprint: string; transaction_id: string }>(
    `SELECT r.seq, r.previous_fingerprint, r.fingerprint, r.transaction_id FROM fiscal_records r
     JOIN transactions t ON t.id = r.transaction_id WHERE t.location_id = $1 ORDER BY r.seq`, [location])).rows;
  const head = (await shared.query<{ seq: string | number; last_fingerprint: string }>(
    `SELECT h.seq, h.last_fingerprint FROM chain_heads h JOIN fiscal_records r ON r.chain_key = h.chain_key
     JOIN transactions t ON t.id = r.transaction_id WHERE t.location_id = $1 LIMIT 1`, [location])).rows[0];
  return { rows, head };
}

function expectWhole(chain: Awaited<ReturnType<typeof chainOf>>, length: number) {
  expect(chain.rows.map((r) => Number(r.seq))).toEqual(Array.from({ length }, (_, i) => i + 1));
  chain.rows.forEach((r, i) => expect(r.previous_fingerprint).toBe(i === 0 ? null : chain.rows[i - 1]!.fingerprint));
  expect(Number(chain.head!.seq)).toBe(length);
  expect(chain.head!.last_fingerprint).toBe(chain.rows[length - 1]!.fingerprint);
}

describe('one-statement append', () => {
  it("a node's next create on a chain opens no database transaction", async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201); // first: the locking path learns the head
    const before = { ...onA.n };
    const second = await createTx(a, key, saleBody(loc));
    expect(second.statusCode).toBe(201);
    expect(second.json().status).toBe('success');
    expect(onA.n.transactions).toBe(before.transactions);
    expect(onA.n.refused).toEqual(before.refused);
    expectWhole(await chainOf(loc), 2);
  });

  it('a head moved by another node: the guard refuses the batch whole, the locking path appends it', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201);
    expect((await createTx(b, key, saleBody(loc))).statusCode).toBe(201);
    expect((await createTx(b, key, saleBody(loc))).statusCode).toBe(201);
    const before = { transactions: onA.n.transactions, refused: onA.n.refused.length };
    const res = await createTx(a, key, saleBody(loc));
    expect(res.statusCode).toBe(201);
    expect(onA.n.refused.slice(before.refused)).toEqual([CHAIN_HEAD_MOVED]);
    expect(onA.n.transactions).toBe(before.transactions + 1);
    const chain = await chainOf(loc);
    expectWhole(chain, 4);
    expect(chain.rows[3]!.transaction_id).toBe(res.json().id);
    // Learnt again: the next one goes alone.
    const again = onA.n.transactions;
    expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201);
    expect(onA.n.transactions).toBe(again);
  });

  it('a replay, and a key reused with another body, answer as on the locking path', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201);
    const first = await createTx(a, key, saleBody(loc), { 'idempotency-key': 'till-1-0042' });
    expect(first.statusCode).toBe(201);
    const replay = await createTx(a, key, saleBody(loc), { 'idempotency-key': 'till-1-0042' });
    expect(replay.statusCode).toBe(200);
    expect(replay.json().id).toBe(first.json().id);
    const other = await createTx(a, key, saleBody(loc, { payment_method: 'cash' }), { 'idempotency-key': 'till-1-0042' });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({ error: 'idempotency key already used with a different request' });
    expectWhole(await chainOf(loc), 2);
  });

  it('the guard locks and checks the head before anything is inserted', async () => {
    // A batch built on seq 1 while the chain is at 2: its record would also collide with
    // seq 2 on the unique index. The guard's error, not the index's, shows the head was
    // checked first (two writers of one chain queue on the head row, never deadlock).
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const t1 = (await createTx(b, key, saleBody(loc))).json();
    await createTx(b, key, saleBody(loc));
    const chain = await chainOf(loc);
    const t = (await transactionsRepo.getById(shared, t1.id))!;
    const record = (await shared.query<Record<string, unknown>>('SELECT * FROM fiscal_records WHERE transaction_id = $1', [t1.id])).rows[0]!;
    const chainKey = String(record.chain_key);
    const copy = { ...t, id: crypto.randomUUID(), idempotency_key: `copy-${crypto.randomUUID()}` };
    const rec = {
      ...(record as never as import('../../src/store/repos/fiscal-records-repo.ts').FiscalRecordRow),
      id: crypto.randomUUID(), transaction_id: copy.id, seq: 2, previous_fingerprint: chain.rows[0]!.fingerprint, fingerprint: 'x'.repeat(64),
    };
    const now = new Date();
    const attempt = (q: Queryable) => ledgerRepo.appendGuarded(q, [renderBatch({
      transactions: [copy], records: [rec], head: { chainKey, seq: 2, fingerprint: rec.fingerprint, fiscalId: rec.fiscal_id, issuedAt: now, link: null },
      guard: { seq: 1, fingerprint: chain.rows[0]!.fingerprint, fiscalId: t.fiscal_id, issuedAt: t.created_at, link: null },
    })]);
    await expect(attempt(shared)).rejects.toMatchObject({ code: CHAIN_HEAD_MOVED });
    expectWhole(await chainOf(loc), 2);
    expect((await transactionsRepo.getById(shared, copy.id))).toBeUndefined();
  });

  it('webhook subscribers: the one statement writes the events and a fan-out job, whose run writes their deliveries', async () => {
    const { key, accountId } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201); // head learnt, no subscription yet
    const sub = await a.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: 'http://127.0.0.1:9/hook', events: ['fiscalization.completed'] } });
    expect(sub.statusCode).toBe(201);
    const before = { transactions: onA.n.transactions, refused: onA.n.refused.length };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createTx(a, key, saleBody(loc))).json().id);
    // Nothing to plan in the append: no statement refused, no locking path.
    expect(onA.n.refused.slice(before.refused)).toEqual([]);
    expect(onA.n.transactions).toBe(before.transactions);
    const fanOuts = (await shared.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE kind = $1 AND account_id = $2', [FAN_OUT_EVENTS, accountId])).rows[0]!.n;
    expect(fanOuts).toBe(3); // the first create, before the subscription, wrote none
    await a.worker.drain();
    const deliveries = (await shared.query<{ transaction_id: string; event_type: string; payload: Record<string, unknown>; job_status: string; event_id: string }>(
      `SELECT e.data->>'transaction_id' AS transaction_id, d.event_type, d.payload, j.status AS job_status, d.event_id
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN jobs j ON j.id = d.job_id
       WHERE d.account_id = $1 ORDER BY d.created_at, e.created_at, d.id`, [accountId])).rows;
    // Each sale under both names of the fact (DECISIONS "Events and webhooks").
    expect(deliveries.map((d) => d.transaction_id).sort()).toEqual([...ids, ...ids].sort());
    for (const d of deliveries) {
      expect(['fiscalization.completed', 'transaction.fiscalized']).toContain(d.event_type);
      const payload = typeof d.payload === 'string' ? JSON.parse(d.payload) : d.payload;
      expect(payload).toMatchObject({ id: d.event_id, event: d.event_type, account_id: accountId, transaction_id: expect.any(String) });
      expect(Object.keys(payload).sort()).toEqual(Object.keys(typeof deliveries[0]!.payload === 'string' ? JSON.parse(deliveries[0]!.payload) : deliveries[0]!.payload).sort());
    }
    expectWhole(await chainOf(loc), 4);
  });

  it('a subscription changed since (another event, the fact again, disabled): the fan-out follows the change', async () => {
    const { key, accountId } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const sub = (await a.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: 'http://127.0.0.1:9/hook', events: ['fiscalization.completed'] } })).json();
    await createTx(a, key, saleBody(loc));
    await createTx(a, key, saleBody(loc));
    await a.worker.drain();
    // Changed through the other node: the same subscription now asks for another event only.
    expect((await b.request({ method: 'PATCH', url: `/v1/webhooks/${sub.id}`, key, payload: { events: ['certificate.expiring'] } })).statusCode).toBe(200);
    const before = onA.n.refused.length;
    const elsewhere = (await createTx(a, key, saleBody(loc))).json();
    expect(onA.n.refused.slice(before)).toEqual([]);
    await a.worker.drain();
    // The fact again, under its other name: both names delivered.
    expect((await b.request({ method: 'PATCH', url: `/v1/webhooks/${sub.id}`, key, payload: { events: ['transaction.fiscalized'] } })).statusCode).toBe(200);
    const renamed = (await createTx(a, key, saleBody(loc))).json();
    await a.worker.drain();
    // Disabled: none wanted any more.
    expect((await b.request({ method: 'PATCH', url: `/v1/webhooks/${sub.id}`, key, payload: { enabled: false } })).statusCode).toBe(200);
    const quiet = (await createTx(a, key, saleBody(loc))).json();
    await a.worker.drain();
    const rows = (await shared.query<{ transaction_id: string; event_type: string }>(
      `SELECT e.data->>'transaction_id' AS transaction_id, d.event_type FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.account_id = $1 ORDER BY d.created_at, d.id`, [accountId])).rows;
    expect(rows.filter((r) => r.transaction_id === elsewhere.id)).toEqual([]);
    expect(rows.filter((r) => r.transaction_id === renamed.id).map((r) => r.event_type).sort()).toEqual(['fiscalization.completed', 'transaction.fiscalized']);
    expect(rows.filter((r) => r.transaction_id === quiet.id)).toEqual([]);
    expect(rows).toHaveLength(6); // the first two sales under both names, and the renamed one
  });

  it('numbered invoices (TicketBAI): numbers come from the series as the node left it, gapless across nodes', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'es-ticketbai');
    expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201); // learns the head and series A
    const before = onA.n.transactions;
    expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201);
    expect(onA.n.transactions).toBe(before); // alone: number 2 taken from what it knew
    expect((await createTx(b, key, saleBody(loc))).statusCode).toBe(201); // the other node takes 3
    expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201); // refused, then the locking path: 4
    expect(onA.n.transactions).toBe(before + 1);
    const bodies = (await shared.query<{ body: string; seq: string | number }>(
      `SELECT r.body, r.seq FROM fiscal_records r JOIN transactions t ON t.id = r.transaction_id WHERE t.location_id = $1 ORDER BY r.seq`, [loc])).rows;
    expect(bodies.map((r) => /<NumFactura>([^<]*)<\/NumFactura>/.exec(r.body)?.[1])).toEqual(['1', '2', '3', '4']);
    expectWhole(await chainOf(loc), 4);
  });

  it('a series moved behind the head\'s back refuses the batch whole', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'es-ticketbai');
    const t1 = (await createTx(b, key, saleBody(loc))).json();
    const chain = await chainOf(loc);
    const t = (await transactionsRepo.getById(shared, t1.id))!;
    const record = (await shared.query<Record<string, unknown>>('SELECT * FROM fiscal_records WHERE transaction_id = $1', [t1.id])).rows[0]!;
    const head = (await shared.query<{ last_link: Record<string, string> | null; last_issued_at: Date }>('SELECT last_link, last_issued_at FROM chain_heads WHERE chain_key = $1', [record.chain_key])).rows[0]!;
    const series = (await shared.query<{ numbering_key: string; last_number: string | number }>(
      "SELECT numbering_key, last_number FROM number_series WHERE numbering_key LIKE 'es-ticketbai:%' AND numbering_key LIKE $1", [`%${t.account_id}%`])).rows;
    expect(series.map((r) => Number(r.last_number))).toEqual([1]);
    const copy = { ...t, id: crypto.randomUUID(), idempotency_key: `copy-${crypto.randomUUID()}` };
    const rec = {
      ...(record as never as import('../../src/store/repos/fiscal-records-repo.ts').FiscalRecordRow),
      id: crypto.randomUUID(), transaction_id: copy.id, seq: 2, previous_fingerprint: chain.rows[0]!.fingerprint, fingerprint: 'y'.repeat(64),
    };
    const attempt = (from: number) => ledgerRepo.appendGuarded(shared, [renderBatch({
      transactions: [copy], records: [rec],
      head: { chainKey: String(record.chain_key), seq: 2, fingerprint: rec.fingerprint, fiscalId: rec.fiscal_id, issuedAt: new Date(), link: null },
      guard: { seq: 1, fingerprint: chain.rows[0]!.fingerprint, fiscalId: t.fiscal_id, issuedAt: head.last_issued_at, link: head.last_link },
      numbers: [{ key: series[0]!.numbering_key, from, to: from + 1 }],
    })]);
    await expect(attempt(0)).rejects.toMatchObject({ code: NUMBERS_MOVED }); // the head holds, the series does not
    expect(await transactionsRepo.getById(shared, copy.id)).toBeUndefined();
    expectWhole(await chainOf(loc), 1);
    await attempt(1); // both hold: written, head and series moved together
    expectWhole(await chainOf(loc), 2);
    expect(Number((await shared.query<{ n: string }>('SELECT last_number AS n FROM number_series WHERE numbering_key = $1', [series[0]!.numbering_key])).rows[0]!.n)).toBe(2);
  });

  it('batches of many chains ready at once share one statement; every chain stays whole', async () => {
    const { key } = await a.signup();
    const locs: string[] = [];
    for (let i = 0; i < 12; i++) locs.push(await createLocation(a, key, 'fr-nf525'));
    for (const loc of locs) expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201); // heads learnt
    const before = { transactions: onA.n.transactions, guarded: onA.n.guarded.length, refused: onA.n.refused.length };
    // Descriptions of different UTF-8 lengths (1 to 4 bytes a character), one per chain:
    // the records' bodies travel as bytes cut by length (ledger-repo), so each must land
    // whole on its own row.
    const described = (i: number) => {
      const body = saleBody(locs[i]!);
      body.items[0] = { ...body.items[0]!, description: `${'Crème brûlée € '.repeat(i)}🍰 n.º ${i}` };
      return body;
    };
    const res = await Promise.all(locs.map((_, i) => createTx(a, key, described(i))));
    expect(res.map((r) => r.statusCode)).toEqual(locs.map(() => 201));
    for (const [i, r] of res.entries()) {
      const stored = await shared.query<{ body: string; fingerprint: string }>('SELECT body, fingerprint FROM fiscal_records WHERE transaction_id = $1', [r.json().id]);
      const record = JSON.parse(stored.rows[0]!.body) as { transaction_id: string; lines: { description: string }[]; signature: { value: string } };
      expect(record.transaction_id).toBe(r.json().id);
      expect(record.lines[0]!.description).toBe(described(i).items[0]!.description);
      expect(record.signature.value).toBe(stored.rows[0]!.fingerprint);
      // The transaction's json documents travel as bytes too.
      const tx = await shared.query<{ request_payload: unknown; normalized: unknown; render_hints: unknown }>(
        'SELECT request_payload, normalized, render_hints FROM transactions WHERE id = $1', [r.json().id]);
      const asStored = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v) as { items: { description: string }[] };
      expect(asStored(tx.rows[0]!.request_payload)).toEqual(described(i));
      expect(asStored(tx.rows[0]!.normalized).items[0]!.description).toBe(described(i).items[0]!.description);
      expect(asStored(tx.rows[0]!.render_hints)).toEqual(r.json().render_hints);
    }
    const statements = onA.n.guarded.slice(before.guarded);
    expect(statements.reduce((x, y) => x + y, 0)).toBe(12); // every chain's batch, once
    // On PostgreSQL the batches that queued behind busy statements went together. The
    // embedded store runs each statement to its end before the next batch is built (one
    // thread): nothing ever queues there.
    if (shared.kind === 'postgres') expect(statements.length).toBeLessThan(12);
    expect(onA.n.transactions).toBe(before.transactions);
    expect(onA.n.refused.length).toBe(before.refused);
    for (const loc of locs) expectWhole(await chainOf(loc), 2);
  });

  it('the locking path (a chain\'s first batch) carries bodies and documents of any UTF-8 length whole too', async () => {
    const { key } = await a.signup();
    const locs: string[] = [];
    for (let i = 0; i < 4; i++) locs.push(await createLocation(a, key, 'fr-nf525'));
    const before = onA.n.transactions;
    const described = (i: number) => {
      const body = saleBody(locs[i]!);
      body.items[0] = { ...body.items[0]!, description: `${'Ünïcödé ✓ '.repeat(i + 1)}𝄞 ${i}` };
      return body;
    };
    const res = await Promise.all(locs.map((_, i) => createTx(a, key, described(i))));
    expect(res.map((r) => r.statusCode)).toEqual(locs.map(() => 201));
    // Each chain's first batch locked its head (a French register's first create also opens its journal's chain).
    expect(onA.n.transactions - before).toBeGreaterThanOrEqual(4);
    for (const [i, r] of res.entries()) {
      const stored = await shared.query<{ body: string; created_at: Date }>('SELECT body, created_at FROM fiscal_records WHERE transaction_id = $1', [r.json().id]);
      const record = JSON.parse(stored.rows[0]!.body) as { lines: { description: string }[] };
      expect(record.lines[0]!.description).toBe(described(i).items[0]!.description);
      const tx = await shared.query<{ request_payload: unknown; created_at: Date }>('SELECT request_payload, created_at FROM transactions WHERE id = $1', [r.json().id]);
      expect((typeof tx.rows[0]!.request_payload === 'string' ? JSON.parse(tx.rows[0]!.request_payload) : tx.rows[0]!.request_payload)).toEqual(described(i));
      // Dates travel as their ISO text (store/repos/json-rows.ts): the same instant as answered.
      expect(new Date(tx.rows[0]!.created_at).toISOString()).toBe(r.json().created_at);
      expect(new Date(stored.rows[0]!.created_at).getTime()).toBe(new Date(tx.rows[0]!.created_at).getTime());
    }
  });

  it('one moved head among them: the shared statement is refused whole, each batch runs again alone, that chain alone takes the locking path', async () => {
    const { key } = await a.signup();
    const locs: string[] = [];
    for (let i = 0; i < 6; i++) locs.push(await createLocation(a, key, 'fr-nf525'));
    for (const loc of locs) expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201);
    expect((await createTx(b, key, saleBody(locs[2]!))).statusCode).toBe(201); // another node moves one head
    const before = { transactions: onA.n.transactions, refused: onA.n.refused.length, guarded: onA.n.guarded.length };
    const res = await Promise.all(locs.map((loc) => createTx(a, key, saleBody(loc))));
    expect(res.map((r) => r.statusCode)).toEqual(locs.map(() => 201));
    expect(onA.n.transactions).toBe(before.transactions + 1);
    const refused = onA.n.refused.slice(before.refused);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(new Set(refused)).toEqual(new Set([CHAIN_HEAD_MOVED]));
    // Refused shared statements were followed by one statement per batch.
    const statements = onA.n.guarded.slice(before.guarded);
    expect(statements.filter((heads) => heads === 1).length).toBeGreaterThanOrEqual(1);
    for (const [i, loc] of locs.entries()) {
      const chain = await chainOf(loc);
      expectWhole(chain, i === 2 ? 3 : 2);
      expect(chain.rows.at(-1)!.transaction_id).toBe(res[i]!.json().id);
    }
  });

  describe('a busy chain: the next batch is built while the one before is written', () => {
    it('two batches in flight at once (PostgreSQL: both on the pipe), answers and chain in arrival order', async () => {
      const { key } = await a.signup();
      const loc = await createLocation(a, key, 'fr-nf525');
      expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201); // the head learnt
      const before = { transactions: onA.n.transactions, refused: onA.n.refused.length };
      onA.gate.closed = true;
      let first: Promise<Awaited<ReturnType<typeof createTx>>>;
      let rest: Promise<Awaited<ReturnType<typeof createTx>>>[];
      try {
        first = createTx(a, key, saleBody(loc, { payment_method: 'cash' }));
        await until(() => onA.gate.held === 1, 'the first batch written');
        rest = [createTx(a, key, saleBody(loc)), createTx(a, key, saleBody(loc))];
        if (shared.pipe) {
          // Built on what the first will leave, and sent behind it before its answer.
          await until(() => onA.gate.held === 2, 'the second batch sent behind the first');
        } else {
          // The embedded store: built, then waiting for the first's answer to be sent.
          await new Promise((r) => setTimeout(r, 30));
          expect(onA.gate.held).toBe(1);
        }
      } finally {
        onA.gate.open();
      }
      const answers = await Promise.all([first, ...rest]);
      expect(answers.map((r) => r.statusCode)).toEqual([201, 201, 201]);
      expect(onA.n.transactions).toBe(before.transactions);
      expect(onA.n.refused.length).toBe(before.refused);
      const chain = await chainOf(loc);
      expectWhole(chain, 4);
      expect(chain.rows[1]!.transaction_id).toBe(answers[0]!.json().id);
      expect(new Set(chain.rows.slice(2).map((r) => r.transaction_id))).toEqual(new Set(answers.slice(1).map((r) => r.json().id)));
    });

    it('the batch before refused (another node moved the head): the one built on it is refused too, and both go through the locking path in order', async () => {
      const { key } = await a.signup();
      const loc = await createLocation(a, key, 'fr-nf525');
      expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201);
      const before = { transactions: onA.n.transactions, refused: onA.n.refused.length };
      onA.gate.closed = true;
      let first: Promise<Awaited<ReturnType<typeof createTx>>>;
      let rest: Promise<Awaited<ReturnType<typeof createTx>>>[];
      let other: Awaited<ReturnType<typeof createTx>>;
      try {
        first = createTx(a, key, saleBody(loc, { payment_method: 'cash' }));
        await until(() => onA.gate.held === 1, 'the first batch written');
        rest = [createTx(a, key, saleBody(loc)), createTx(a, key, saleBody(loc))];
        if (shared.pipe) await until(() => onA.gate.held === 2, 'the second batch sent behind the first');
        else await new Promise((r) => setTimeout(r, 30));
        other = await createTx(b, key, saleBody(loc)); // the other node appends meanwhile
        expect(other.statusCode).toBe(201);
      } finally {
        onA.gate.open();
      }
      const answers = await Promise.all([first, ...rest]);
      expect(answers.map((r) => r.statusCode)).toEqual([201, 201, 201]);
      // The first refused by its guard, the second by its own (on the pipe) or before it
      // was sent (the embedded store): each then through the locking path, in order.
      expect(onA.n.refused.slice(before.refused)).toEqual(shared.pipe ? [CHAIN_HEAD_MOVED, CHAIN_HEAD_MOVED] : [CHAIN_HEAD_MOVED]);
      expect(onA.n.transactions).toBe(before.transactions + 2);
      const chain = await chainOf(loc);
      expectWhole(chain, 5);
      expect(chain.rows[1]!.transaction_id).toBe(other!.json().id);
      expect(chain.rows[2]!.transaction_id).toBe(answers[0]!.json().id);
      expect(new Set(chain.rows.slice(3).map((r) => r.transaction_id))).toEqual(new Set(answers.slice(1).map((r) => r.json().id)));
      // Learnt again: the next one goes alone.
      const again = onA.n.transactions;
      expect((await createTx(a, key, saleBody(loc))).statusCode).toBe(201);
      expect(onA.n.transactions).toBe(again);
    });
  });
});

