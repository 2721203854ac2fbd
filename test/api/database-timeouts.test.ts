import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbUnavailableError } from '../../src/core/errors.ts';
import { openPostgresDb, type TransactionFailure } from '../../src/store/pg-db.ts';
import type { Db } from '../../src/store/db.ts';
import { STORE, createTestDatabase, startTestApp, type TestApp } from '../support/harness.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { createLocation, saleBody } from '../support/transactions.ts';

/*
 * A PostgreSQL that accepts and never answers (a hung server, a network black hole), or a
 * lock another session holds forever: the request answers 503 with Retry-After within the
 * statement bound (DATABASE_STATEMENT_TIMEOUT_MS, here 500 ms), never hangs and never
 * 500s; the service answers again once the database does, without a restart; a create
 * that failed so is written once when sent again with its key. (store/pg-db.ts; the
 * embedded store has no network and no bound.)
 */
const unavailable = { error: 'service temporarily unavailable: database unreachable' };
/** A statement past its bound (cancelled by PostgreSQL, or unanswered): told apart from no connection. */
const timedOut = { error: 'service temporarily unavailable: database timed out' };
/**
 * The longest a refused request may take here: the bound and the driver's grace on the
 * pipe, as long again for the check of an append whose answer never came (ledger.ts
 * settleUnknown) or a new connection's timeout, and slack.
 */
const WITHIN_MS = 4_000;

describe.runIf(STORE === 'postgres')('a database that does not answer (PostgreSQL)', () => {
  let url: string;
  let proxy: TcpProxy;
  let direct: Db;
  let db: Db;
  let app: TestApp;
  let key: string;
  let location: string;
  beforeAll(async () => {
    url = await createTestDatabase();
    proxy = await startTcpProxy({ host: new URL(url).hostname, port: Number(new URL(url).port || 5432) });
    direct = await openPostgresDb(url);
    db = await openPostgresDb(proxy.url(url), { statementTimeoutMs: 500, answerGraceMs: 500, connectionTimeoutMillis: 1_000 });
    app = await startTestApp({ db });
    ({ key } = await app.signup());
    location = await createLocation(app, key, 'fr-nf525');
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await direct?.close();
    await proxy?.close();
  });

  const create = (idem: string) => app.request({ method: 'POST', url: '/v1/transactions', key, headers: { 'idempotency-key': idem }, payload: saleBody(location) });
  const list = () => app.request({ method: 'GET', url: '/v1/transactions', key });
  const stored = async (idem: string) => (await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE idempotency_key = $1', [idem])).rows[0]!.n;
  /** A sale whose first item names `marker` (found in the statement's bytes by the proxy), sent without an Idempotency-Key. */
  const createMarked = (marker: string, at = location) => {
    const body = saleBody(at);
    body.items = body.items.map((item, i) => (i === 0 ? { ...item, description: marker } : item));
    return app.request({ method: 'POST', url: '/v1/transactions', key, payload: body });
  };
  /** Sales stored whose request names `marker`. */
  const storedMarked = async (marker: string) => (await direct.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM transactions WHERE request_payload::text LIKE '%' || $1 || '%'`, [marker])).rows[0]!.n;
  const pipePid = async () => (await db.pipe!.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [])).rows[0]!.pid;
  /** The sale's chain as stored: seqs from 1 without a gap or a fork, each record on the one before, the head on the last. */
  const expectChainWhole = async (transactionId: string) => {
    const chainKey = (await direct.query<{ chain_key: string }>('SELECT chain_key FROM fiscal_records WHERE transaction_id = $1', [transactionId])).rows[0]!.chain_key;
    const rows = (await direct.query<{ seq: string; previous_fingerprint: string | null; fingerprint: string }>(
      'SELECT seq, previous_fingerprint, fingerprint FROM fiscal_records WHERE chain_key = $1 ORDER BY seq', [chainKey])).rows;
    expect(rows.map((r) => Number(r.seq))).toEqual(rows.map((_, i) => i + 1));
    rows.forEach((r, i) => expect(r.previous_fingerprint).toBe(i === 0 ? null : rows[i - 1]!.fingerprint));
    const head = (await direct.query<{ seq: string; last_fingerprint: string }>('SELECT seq, last_fingerprint FROM chain_heads WHERE chain_key = $1', [chainKey])).rows[0]!;
    expect([Number(head.seq), head.last_fingerprint]).toEqual([rows.length, rows[rows.length - 1]!.fingerprint]);
  };
  const timed = async <T>(p: Promise<T>) => {
    const t0 = performance.now();
    const value = await p;
    return { value, ms: performance.now() - t0 };
  };

  it('a lock held forever by another session: the create\'s append and a read answer 503 with Retry-After at the bound; nothing written; both work once it is released', async () => {
    // The chain's next append goes on the pipe, built on the head this node knows.
    expect((await create('warm-up-1')).statusCode).toBe(201);
    expect((await create('warm-up-2')).statusCode).toBe(201);
    const pipePid = (await db.pipe!.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [])).rows[0]!.pid;

    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      // The records table: the create's one-statement append on the pipe waits for it.
      await locker.query('BEGIN; LOCK TABLE fiscal_records IN ACCESS EXCLUSIVE MODE');
      const { value: res, ms } = await timed(create('under-lock'));
      expect([res.statusCode, res.headers['retry-after'], res.json()]).toEqual([503, '5', timedOut]);
      expect(ms).toBeLessThan(WITHIN_MS);
      await locker.query('ROLLBACK');
      // The transactions table: every read of the list waits for it.
      await locker.query('BEGIN; LOCK TABLE transactions IN ACCESS EXCLUSIVE MODE');
      const read = await timed(list());
      expect([read.value.statusCode, read.value.headers['retry-after'], read.value.json()]).toEqual([503, '5', timedOut]);
      expect(read.ms).toBeLessThan(WITHIN_MS);
      await locker.query('ROLLBACK');
    } finally {
      await locker.end();
    }
    // PostgreSQL cancelled the append: its connection answered, and is kept.
    expect((await db.pipe!.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [])).rows[0]!.pid).toBe(pipePid);
    expect(await stored('under-lock')).toBe(0);
    expect((await list()).statusCode).toBe(200);
    const again = await create('under-lock');
    expect(again.statusCode, again.body).toBe(201);
    expect((await create('under-lock')).statusCode).toBe(200);
    expect(await stored('under-lock')).toBe(1);
    expect((await create('after-the-lock')).statusCode).toBe(201);
  });

  it('a server that accepts and never answers: reads, creates and health answer 503 with Retry-After within the bound; the service answers again once it does, a create sent again is written once', async () => {
    // Two creates: the second leaves the pipe open and the chain's head known, so the
    // create in the hole goes straight to its one-statement append on the pipe.
    expect((await create('before-the-hole-1')).statusCode).toBe(201);
    expect((await create('before-the-hole-2')).statusCode).toBe(201);
    proxy.blackhole(true);
    try {
      // A statement sent on an open connection and never answered: "timed out". Health then
      // needs a new connection (the list's was given up), whose connect times out: no
      // connection, "unreachable" (or "timed out" if the pool still had an idle one).
      for (const [what, req, bodies] of [
        ['list', list, [timedOut]],
        ['create', () => create('in-the-hole'), [timedOut]],
        ['health', () => app.request({ method: 'GET', url: '/health' }), [unavailable, timedOut]],
      ] as const) {
        const { value: res, ms } = await timed(req());
        expect([res.statusCode, res.headers['retry-after']], what).toEqual([503, '5']);
        expect(bodies, what).toContainEqual(res.json());
        expect(ms, what).toBeLessThan(WITHIN_MS);
      }
    } finally {
      proxy.blackhole(false);
    }
    expect((await list()).statusCode).toBe(200);
    expect((await app.request({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    // The create in the hole never reached the server (the hole swallowed it): written now, once.
    const again = await create('in-the-hole');
    expect(again.statusCode, again.body).toBe(201);
    expect((await create('in-the-hole')).statusCode).toBe(200);
    expect(await stored('in-the-hole')).toBe(1);
    expect((await create('after-the-hole')).statusCode).toBe(201);
  });

  it('an append the server ran whose answer never comes, and the whole store silent (its outcome cannot be learnt): 503 within the bound; sent again with its key, the committed sale is found (200, the same id), never written twice', async () => {
    expect((await create('answer-lost-warm-up-1')).statusCode).toBe(201);
    expect((await create('answer-lost-warm-up-2')).statusCode).toBe(201);
    proxy.blackhole(true, 'answers');
    try {
      const { value: res, ms } = await timed(create('answer-lost'));
      expect([res.statusCode, res.headers['retry-after'], res.json()]).toEqual([503, '5', timedOut]);
      expect(ms).toBeLessThan(WITHIN_MS);
    } finally {
      proxy.blackhole(false);
    }
    // It committed: the client's retry gets it, not a second sale.
    expect(await stored('answer-lost')).toBe(1);
    const id = (await direct.query<{ id: string }>('SELECT id FROM transactions WHERE idempotency_key = $1', ['answer-lost'])).rows[0]!.id;
    const retried = await create('answer-lost');
    expect(retried.statusCode, retried.body).toBe(200);
    expect(retried.json().id).toBe(id);
    expect(await stored('answer-lost')).toBe(1);
    expect((await create('after-the-lost-answer')).statusCode).toBe(201);
  });

  /*
   * Only the pipe's connection silenced (the proxy holds the one that sends the sale's
   * statement), the pool answering: the ledger learns the append's outcome under the
   * chain's lock before answering (ledger.ts settleUnknown). Without an Idempotency-Key, as
   * a client that sends none: a 503 here would have it send the sale again, a second one.
   */
  it('an append the server ran whose answer never comes, the store otherwise answering: 201 with the sale, stored once, the chain whole; the next create works on a new pipe connection', async () => {
    expect((await create('settle-ran-warm-up-1')).statusCode).toBe(201);
    expect((await create('settle-ran-warm-up-2')).statusCode).toBe(201);
    const before = await pipePid();
    const marker = `answer-lost-${crypto.randomBytes(6).toString('hex')}`;
    let held = false;
    void proxy.holdOn(new RegExp(marker), 'answers').then(() => (held = true));
    const { value: res, ms } = await timed(createMarked(marker));
    // The pipe's connection was the one silenced (the sale's statement went on it).
    expect(held).toBe(true);
    expect(res.statusCode, res.body).toBe(201);
    // The pipe's answer was waited for (the bound and the grace: 1 s) and never came.
    expect(ms).toBeGreaterThan(900);
    expect(ms).toBeLessThan(WITHIN_MS);
    const id = res.json<{ id: string }>().id;
    expect(await storedMarked(marker)).toBe(1);
    expect((await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM fiscal_records WHERE transaction_id = $1', [id])).rows[0]!.n).toBe(1);
    await expectChainWhole(id);
    const next = await create('settle-ran-next');
    expect(next.statusCode, next.body).toBe(201);
    expect(await pipePid()).not.toBe(before);
    await expectChainWhole(next.json<{ id: string }>().id);
  });

  it('an append whose statement never reaches the server, the store otherwise answering: written once on the locking path (201), the chain whole; the next create works', async () => {
    expect((await create('settle-lost-warm-up-1')).statusCode).toBe(201);
    expect((await create('settle-lost-warm-up-2')).statusCode).toBe(201);
    const before = await pipePid();
    const marker = `statement-lost-${crypto.randomBytes(6).toString('hex')}`;
    let held = false;
    void proxy.holdOn(new RegExp(marker), 'statements').then(() => (held = true));
    const { value: res, ms } = await timed(createMarked(marker));
    // The pipe's connection was the one silenced (the sale's statement went on it).
    expect(held).toBe(true);
    expect(res.statusCode, res.body).toBe(201);
    expect(ms).toBeGreaterThan(900);
    expect(ms).toBeLessThan(WITHIN_MS);
    const id = res.json<{ id: string }>().id;
    expect(await storedMarked(marker)).toBe(1);
    await expectChainWhole(id);
    const next = await create('settle-lost-next');
    expect(next.statusCode, next.body).toBe(201);
    expect(await pipePid()).not.toBe(before);
    await expectChainWhole(next.json<{ id: string }>().id);
  });
  it('a transaction whose COMMIT was sent and never answered fails marked `atCommit` (it may have committed: here it did); one whose earlier statement was never answered is not (rolled back)', async () => {
    await direct.exec('CREATE TABLE IF NOT EXISTS commit_probe (marker text NOT NULL)');
    const count = async (marker: string) => (await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM commit_probe WHERE marker = $1', [marker])).rows[0]!.n;
    const write = (marker: string) => db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      await tx.query('INSERT INTO commit_probe (marker) VALUES ($1)', [marker]);
    }).then(() => undefined, (err: unknown) => err);
    const atCommit = `commit-lost-${crypto.randomBytes(6).toString('hex')}`;
    void proxy.holdOn(new RegExp(atCommit), 'answers', /COMMIT/);
    const lost = await write(atCommit);
    expect(lost).toBeInstanceOf(DbUnavailableError);
    expect((lost as TransactionFailure).atCommit).toBe(true);
    expect(await count(atCommit)).toBe(1);
    const before = `statement-answer-lost-${crypto.randomBytes(6).toString('hex')}`;
    void proxy.holdOn(new RegExp(before), 'answers');
    const failed = await write(before);
    expect(failed).toBeInstanceOf(DbUnavailableError);
    expect((failed as TransactionFailure).atCommit).toBeUndefined();
    expect(await count(before)).toBe(0);
  });

  /*
   * The locking path (a chain this node does not know yet: a new location's first sale),
   * its transaction's COMMIT answer lost (the proxy silences the connection that sent the
   * sale, from its COMMIT on): the ledger learns the outcome under the chain's lock
   * (ledger.ts appendLockedAlone, settleUnknown) before answering.
   */
  it('a create on the locking path whose COMMIT answer never comes: 201 whether it committed or not, stored once, the chain whole; the next create works', async () => {
    for (const what of ['answers', 'statements'] as const) {
      const at = await createLocation(app, key, 'fr-nf525');
      const marker = `commit-${what}-lost-${crypto.randomBytes(6).toString('hex')}`;
      let held = false;
      void proxy.holdOn(new RegExp(marker), what, /COMMIT/).then(() => (held = true));
      const { value: res, ms } = await timed(createMarked(marker, at));
      expect(held, what).toBe(true);
      expect(res.statusCode, `${what}: ${res.body}`).toBe(201);
      // The COMMIT's answer was waited for (the bound and the grace: 1 s) and never came.
      expect(ms, what).toBeGreaterThan(900);
      expect(ms, what).toBeLessThan(WITHIN_MS);
      const id = res.json<{ id: string }>().id;
      expect(await storedMarked(marker), what).toBe(1);
      expect((await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM fiscal_records WHERE transaction_id = $1', [id])).rows[0]!.n, what).toBe(1);
      await expectChainWhole(id);
      const next = await createMarked(`${marker}-next`, at);
      expect(next.statusCode, next.body).toBe(201);
      await expectChainWhole(next.json<{ id: string }>().id);
    }
  });

  /*
   * A replay only on the locking path: the sale was stored by another node (a second app on
   * the same database), so this node does not know the chain and its ledger takes the
   * locking path at once; the batch finds the key stored and writes nothing. Its COMMIT's
   * answer lost: it answers the replay as it is (ledger.ts appendLockedAlone, "Replays only"),
   * without a settle and without remembering the head, which may not be the chain's.
   */
  it('a replay on the locking path whose COMMIT answer never comes: answered with the stored sale (200, the same id), nothing written; the next create works', async () => {
    const other = await startTestApp({ db: direct });
    try {
      for (const what of ['answers', 'statements'] as const) {
        const at = await createLocation(app, key, 'fr-nf525');
        const idem = `replay-commit-${what}-lost-${crypto.randomBytes(6).toString('hex')}`;
        const payload = saleBody(at);
        const first = await other.request({ method: 'POST', url: '/v1/transactions', key, headers: { 'idempotency-key': idem }, payload });
        expect(first.statusCode, first.body).toBe(201);
        const id = first.json<{ id: string }>().id;
        let held = false;
        // The key travels in the lock statement's parameters (the stored keys found under the lock).
        void proxy.holdOn(new RegExp(idem), what, /COMMIT/).then(() => (held = true));
        const sentBefore = proxy.sent.length;
        const { value: res, ms } = await timed(app.request({ method: 'POST', url: '/v1/transactions', key, headers: { 'idempotency-key': idem }, payload }));
        expect(held, what).toBe(true);
        // One locking transaction named the key, the lost one: no settle took the lock again.
        expect(proxy.sent.slice(sentBefore).filter((chunk) => chunk.includes(idem)), what).toHaveLength(1);
        expect(res.statusCode, `${what}: ${res.body}`).toBe(200);
        expect(res.json<{ id: string }>().id, what).toBe(id);
        // The COMMIT's answer was waited for (the bound and the grace) and never came.
        expect(ms, what).toBeGreaterThan(900);
        expect(ms, what).toBeLessThan(WITHIN_MS);
        expect(await stored(idem), what).toBe(1);
        expect((await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM fiscal_records WHERE transaction_id = $1', [id])).rows[0]!.n, what).toBe(1);
        await expectChainWhole(id);
        const next = await createMarked(`${idem}-next`, at);
        expect(next.statusCode, next.body).toBe(201);
        const nextId = next.json<{ id: string }>().id;
        await expectChainWhole(nextId);
        expect((await direct.query<{ seq: string }>('SELECT seq FROM fiscal_records WHERE transaction_id = $1', [nextId])).rows[0]!.seq, what).toBe('2');
      }
    } finally {
      await other.close();
    }
  });
});
