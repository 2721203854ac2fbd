import crypto from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/core/clock.ts';
import { DbUnavailableError, conflict } from '../../src/core/errors.ts';
import { newId } from '../../src/core/ids.ts';
import { createLedger } from '../../src/ledger/ledger.ts';
import type { PendingLink } from '../../src/core/chain-link.ts';
import type { Appended, BuiltEntry, Ledger, LedgerEntry } from '../../src/ledger/types.ts';
import type { Db, Queryable } from '../../src/store/db.ts';
import { createChainSigner, signChainInline } from '../../src/signing/chain-signer.ts';
import { inProcessSigner, verifyWith, type Signer } from '../../src/signing/signer.ts';
import { FAN_OUT_EVENTS, createEventPublisher } from '../../src/services/event-publisher.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

/*
 * The ledger on its own, with no HTTP request behind it: what a scheduled closure or a
 * technical-event journal will do (France). Entries without a transaction, built on the
 * previous link, numbered, with events, failing alone.
 */

let t: TestApp;
let ledger: Ledger;
let accountId: string;
beforeAll(async () => {
  t = await startTestApp();
  accountId = (await t.signup()).accountId;
  ledger = createLedger({ db: t.db, clock: systemClock, log: pino({ level: 'silent' }), events: createEventPublisher({ log: pino({ level: 'silent' }) }) });
});
afterAll(async () => {
  await t.close();
});

const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/** A journal entry: its fingerprint chains the previous one's, as a signed journal would. */
function journal(chainKey: string, text: string, more: Partial<LedgerEntry> & { event?: boolean } = {}): LedgerEntry {
  return {
    chainKey,
    ...more,
    build: (link, now): BuiltEntry => {
      if (text === 'boom') throw new Error('this entry cannot be built');
      const fingerprint = sha(`${link.previous?.fingerprint ?? ''}|${link.seq}|${link.number ?? ''}|${text}`);
      return {
        record: {
          id: newId(), transaction_id: null, account_id: accountId, system: 'test', kind: 'journal', fingerprint,
          fiscal_id: `J-${link.number ?? link.seq}`, document_number: link.number === undefined ? null : String(link.number), qr_data: null,
          content_type: 'application/json', body: JSON.stringify({ text, seq: link.seq, previous: link.previous?.fingerprint ?? null, at: now.toISOString() }), placeholder: false,
        },
        linkData: { text },
        events: more.event ? [{ accountId, type: 'fiscalization.completed', data: { journal: text } }] : [],
      };
    },
  };
}

async function chain(chainKey: string) {
  const rows = (await t.db.query<{ seq: string | number; previous_fingerprint: string | null; fingerprint: string; body: string; document_number: string | null; transaction_id: string | null }>(
    'SELECT seq, previous_fingerprint, fingerprint, body, document_number, transaction_id FROM fiscal_records WHERE chain_key = $1 ORDER BY seq', [chainKey])).rows;
  const head = (await t.db.query<{ seq: string | number; last_fingerprint: string; last_link: Record<string, string> }>('SELECT seq, last_fingerprint, last_link FROM chain_heads WHERE chain_key = $1', [chainKey])).rows[0];
  return { rows, head };
}

/** The server's own refusal of a statement past its bound (57014, an ERROR answer): nothing of it was written. */
const cancelled = () => new DbUnavailableError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014', severity: 'ERROR' }), 'timeout');
/** No answer within the driver's wait: the statement may have run. */
const noAnswer = () => new DbUnavailableError(new Error('Query read timeout'), 'timeout');

/** A COMMIT sent whose answer never came (pg-db.ts marks it `atCommit`): the transaction may have committed. */
const commitLost = () => Object.assign(noAnswer(), { atCommit: true as const });

/**
 * The test store's transactions, the next `lose` of which lose their COMMIT's answer
 * (`commitLost`): committed first (`ran`), or rolled back (the COMMIT never reached the
 * server). While `down`, a transaction fails at once (the store unreachable); `downAfterLoss`:
 * down from the lost answer on.
 * `transactions` counts every one begun.
 */
function commitLosing(ran: boolean) {
  const state = { lose: 0, down: false, downAfterLoss: false, transactions: 0, thrown: [] as Error[] };
  const rolledBack = new Error('rolled back here');
  const transaction: Db['transaction'] = async (fn) => {
    state.transactions += 1;
    if (state.down) throw new DbUnavailableError(new Error('connect ECONNREFUSED'));
    if (state.lose === 0) return t.db.transaction(fn);
    state.lose -= 1;
    await t.db.transaction(async (tx) => {
      const result = await fn(tx);
      if (!ran) throw rolledBack;
      return result;
    }).catch((err: unknown) => {
      if (err !== rolledBack) throw err;
    });
    const error = commitLost();
    state.thrown.push(error);
    if (state.downAfterLoss) state.down = true;
    throw error;
  };
  return { transaction, state };
}

/**
 * A ledger whose ordered pipe is in front of the test store's (PGlite: the store itself, as
 * a pipe). Once armed, every statement waits for `release`; the first `pass` then run as
 * usual, and every one after fails as `run`/`error` say: run first (its answer lost),
 * not (it never reached the server), or `later` (kept in `later`: still on its way), then
 * its error thrown. `sent` counts every statement.
 * With `pass` 2, two appends hold the pipe's two slots and the next chains' appends queue
 * and go as one combined statement.
 */
function gatedLedger(fail: { pass: number; run: boolean | 'later'; error: () => Error }, db: Partial<Db> = {}) {
  const inner = t.db.pipe ?? t.db;
  const state = { armed: false, calls: 0, sent: 0, release: () => {}, thrown: [] as Error[], later: [] as (() => Promise<unknown>)[] };
  const gate = new Promise<void>((r) => (state.release = r));
  const pipe: Db['pipe'] = {
    query: async (sql, params) => {
      state.sent += 1;
      if (!state.armed) return inner.query(sql, params);
      const call = (state.calls += 1);
      await gate;
      if (call <= fail.pass) return inner.query(sql, params);
      if (fail.run === true) await inner.query(sql, params);
      if (fail.run === 'later') state.later.push(() => inner.query(sql, params));
      const error = fail.error();
      state.thrown.push(error);
      throw error;
    },
  };
  const ledger = createLedger({ db: { ...t.db, pipe, ...db }, clock: systemClock, log: pino({ level: 'silent' }), events: createEventPublisher({ log: pino({ level: 'silent' }) }) });
  return { ledger, state };
}

/**
 * Entries signed over their head and the previous fingerprint (the way NF525 and SAF-T
 * records are: `prepare`, signed by the ledger's signing thread); `prepare` is null for
 * texts starting with 'plain' (built whole, signed here).
 */
function signedEntries(key: string, signer: Signer) {
  const head = (link: PendingLink, text: string) => `S|${link.seq}|${link.previous?.fiscalId ?? ''}|${text}|`;
  const signed = (text: string): LedgerEntry => {
    const finish = (link: PendingLink, now: Date, signature: string, previous: string | null): BuiltEntry => ({
      record: {
        id: newId(), transaction_id: null, account_id: accountId, system: 'test', kind: 'journal', fingerprint: signature,
        fiscal_id: `S-${link.seq}`, document_number: null, qr_data: null, content_type: 'application/json',
        body: JSON.stringify({ text, seq: link.seq, previous, at: now.toISOString() }), placeholder: false,
      },
      linkData: { text },
    });
    return {
      chainKey: key,
      prepare: (link, now) => (text.startsWith('plain')
        ? null
        : { signing: { signer, digest: 'sha256', encoding: 'base64url', messageHead: head(link, text) }, fiscalId: `S-${link.seq}`, linkData: { text },
            finish: (signature, previous) => finish(link, now, signature, previous) }),
      build: (link, now) => {
        const previous = link.previous?.fingerprint ?? null;
        const [signature] = signChainInline([{ signer, digest: 'sha256', encoding: 'base64url', messageHead: head(link, text) }], previous);
        return finish(link, now, signature!, previous);
      },
    };
  };
  /** Each stored record's signature checks over its head and the fingerprint before it. */
  const expectSigned = (rows: { seq: string | number; fingerprint: string; previous_fingerprint: string | null; body: string }[]) => rows.forEach((r, i) => {
    const body = JSON.parse(r.body) as { text: string };
    const link = { seq: Number(r.seq), previous: i === 0 ? null : { fiscalId: `S-${Number(r.seq) - 1}`, issuedAt: '' } };
    const message = head(link, body.text) + (r.previous_fingerprint ?? '');
    expect(verifyWith(signer.publicKey, 'sha256', Buffer.from(message), Buffer.from(r.fingerprint, 'base64url'))).toBe(true);
  });
  return { head, signed, expectSigned };
}

/** Four chains whose heads the ledger knows (their next appends take the one-statement path), the third numbered. */
async function warmChains(ledger: Ledger) {
  const keys = Array.from({ length: 4 }, () => `journal:${newId()}`);
  const series = `journal-series:${newId()}`;
  const numbered = (key: string) => (key === keys[2] ? { numberingKey: series } : {});
  for (const key of keys) for (let i = 0; i < 2; i++) await ledger.append(journal(key, `warm ${i}`, numbered(key)));
  return { keys, numbered };
}

/** Two appends hold the pipe's two slots; the other two chains' appends queue and go as one combined statement (the third). */
async function combined(g: ReturnType<typeof gatedLedger>, keys: string[], numbered: (key: string) => Partial<LedgerEntry>) {
  g.state.armed = true;
  const first = keys.slice(0, 2).map((key) => g.ledger.append(journal(key, 'first')));
  await vi.waitFor(() => expect(g.state.calls).toBe(2));
  const queued = Promise.allSettled(keys.slice(2).map((key) => g.ledger.append(journal(key, 'queued', numbered(key)))));
  await new Promise((r) => setTimeout(r, 50));
  g.state.release();
  await Promise.all(first);
  const settled = await queued;
  g.state.armed = false;
  return settled;
}

/** A chain as stored: each seq once, from 1, each record on the one before, the head on the last. */
async function expectWhole(key: string, texts: string[]) {
  const { rows, head } = await chain(key);
  expect(rows.map((r) => JSON.parse(r.body).text)).toEqual(texts);
  expect(rows.map((r) => Number(r.seq))).toEqual(texts.map((_, i) => i + 1));
  rows.forEach((r, i) => expect(r.previous_fingerprint).toBe(i === 0 ? null : rows[i - 1]!.fingerprint));
  expect([Number(head!.seq), head!.last_fingerprint]).toEqual([rows.length, rows[rows.length - 1]!.fingerprint]);
  return rows;
}

describe('ledger', () => {
  it('a combined append the store refused (cancelled at its bound: nothing written) fails each batch with it, without running them again alone', async () => {
    const g = gatedLedger({ pass: 2, run: false, error: cancelled });
    const { keys, numbered } = await warmChains(g.ledger);
    const settled = await combined(g, keys, numbered);
    expect(settled.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    for (const r of settled) expect((r as PromiseRejectedResult).reason).toBe(g.state.thrown[0]);
    // One combined statement for the two queued chains, not one more for each alone.
    expect(g.state.calls).toBe(3);
    for (const key of keys.slice(2)) await expectWhole(key, ['warm 0', 'warm 1']);
  });

  describe('an append whose answer never came (its outcome unknown) is settled under its chain lock before answering', () => {
    it('it committed: each batch of the combined statement answers as committed, stored once; heads and series known as after a commit', async () => {
      const g = gatedLedger({ pass: 2, run: true, error: noAnswer });
      const { keys, numbered } = await warmChains(g.ledger);
      const settled = await combined(g, keys, numbered);
      expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
      for (const r of settled) expect((r as PromiseFulfilledResult<Appended>).value).toMatchObject({ created: true, seq: 3 });
      // Settled through the pool, nothing sent on the pipe again.
      expect(g.state.calls).toBe(3);
      for (const key of keys.slice(2)) await expectWhole(key, ['warm 0', 'warm 1', 'queued']);
      // Known as after a commit: the next append of each goes on the pipe (one statement),
      // built on the settled batch and numbered after it.
      const sent = g.state.sent;
      for (const key of keys.slice(2)) await expect(g.ledger.append(journal(key, 'next', numbered(key)))).resolves.toMatchObject({ created: true, seq: 4 });
      expect(g.state.sent - sent).toBe(2);
      expect((await expectWhole(keys[2]!, ['warm 0', 'warm 1', 'queued', 'next'])).map((r) => r.document_number)).toEqual(['1', '2', '3', '4']);
      await expectWhole(keys[3]!, ['warm 0', 'warm 1', 'queued', 'next']);
    });

    it('it never ran: each batch is written once on the locking path, the chains whole, numbered without a gap', async () => {
      const g = gatedLedger({ pass: 2, run: false, error: noAnswer });
      const { keys, numbered } = await warmChains(g.ledger);
      const settled = await combined(g, keys, numbered);
      expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
      for (const r of settled) expect((r as PromiseFulfilledResult<Appended>).value).toMatchObject({ created: true, seq: 3 });
      expect(g.state.calls).toBe(3);
      expect((await expectWhole(keys[2]!, ['warm 0', 'warm 1', 'queued'])).map((r) => r.document_number)).toEqual(['1', '2', '3']);
      await expectWhole(keys[3]!, ['warm 0', 'warm 1', 'queued']);
    });

    it('it reaches the server only after the batch was settled and written: its guard refuses it, nothing stored twice', async () => {
      const g = gatedLedger({ pass: 2, run: 'later', error: noAnswer });
      const { keys, numbered } = await warmChains(g.ledger);
      const settled = await combined(g, keys, numbered);
      expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
      expect(g.state.later).toHaveLength(1);
      await expect(g.state.later[0]!()).rejects.toMatchObject({ code: 'SV001' });
      for (const key of keys.slice(2)) await expectWhole(key, ['warm 0', 'warm 1', 'queued']);
    });

    it("a chain's pipelined batches both lost with the pipe: each settles after the one before, the chain whole", async () => {
      for (const run of [true, false]) {
        const g = gatedLedger({ pass: 0, run, error: noAnswer });
        const key = `journal:${newId()}`;
        for (let i = 0; i < 2; i++) await g.ledger.append(journal(key, `warm ${i}`));
        g.state.armed = true;
        const a = g.ledger.append(journal(key, 'a'));
        await vi.waitFor(() => expect(g.state.calls).toBe(1));
        // Built on what the first will leave, sent behind it.
        const b = g.ledger.append(journal(key, 'b'));
        await vi.waitFor(() => expect(g.state.calls).toBe(2));
        g.state.release();
        await expect(Promise.all([a, b]), `ran: ${run}`).resolves.toMatchObject([{ created: true, seq: 3 }, { created: true, seq: 4 }]);
        await expectWhole(key, ['warm 0', 'warm 1', 'a', 'b']);
      }
    });

    it('the check gets no answer either: each append fails with its own error (503), its outcome still unknown; nothing written twice once the store is back', async () => {
      let down = false;
      const unreachable = new DbUnavailableError(new Error('connect ECONNREFUSED'));
      const g = gatedLedger({ pass: 2, run: true, error: noAnswer }, {
        transaction: (fn) => (down ? Promise.reject(unreachable) : t.db.transaction(fn)),
      });
      const { keys, numbered } = await warmChains(g.ledger);
      down = true;
      const settled = await combined(g, keys, numbered);
      down = false;
      expect(settled.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      // The pipe's own error, not the check's.
      for (const r of settled) expect((r as PromiseRejectedResult).reason).toBe(g.state.thrown[0]);
      // It had committed: appended again (the same chain, the batch's place taken), the chain goes on after it.
      for (const key of keys.slice(2)) await g.ledger.append(journal(key, 'next', numbered(key)));
      expect((await expectWhole(keys[2]!, ['warm 0', 'warm 1', 'queued', 'next'])).map((r) => r.document_number)).toEqual(['1', '2', '3', '4']);
    });
  });

  describe("the locking path's COMMIT sent and its answer lost: settled under the chain lock as well", () => {
    const series = () => ({ numberingKey: `journal-series:${newId()}` });
    /** A ledger on a store whose next COMMIT answer is lost, after committing (`ran`) or rolling back; a new numbered chain. */
    const losingCommit = (ran: boolean) => {
      const store = commitLosing(ran);
      const g = gatedLedger({ pass: 0, run: false, error: noAnswer }, { transaction: store.transaction });
      store.state.lose = 1;
      return { store, g, key: `journal:${newId()}`, numbered: series() };
    };

    it('it committed: answered as committed, stored once; the head and the series known as after a commit (the next append goes on the pipe, numbered on)', async () => {
      // A chain this node does not know: the locking path.
      const { store, g, key, numbered } = losingCommit(true);
      await expect(g.ledger.append(journal(key, 'first', numbered))).resolves.toMatchObject({ created: true, seq: 1 });
      // The lost one, then the check under the chain's lock.
      expect(store.state.transactions).toBe(2);
      expect(g.state.sent).toBe(0);
      await expectWhole(key, ['first']);
      await expect(g.ledger.append(journal(key, 'next', numbered))).resolves.toMatchObject({ created: true, seq: 2 });
      expect([g.state.sent, store.state.transactions]).toEqual([1, 2]);
      expect((await expectWhole(key, ['first', 'next'])).map((r) => r.document_number)).toEqual(['1', '2']);
    });

    it('it did not commit: written once on the locking path, numbered without a gap', async () => {
      const { store, g, key, numbered } = losingCommit(false);
      await expect(g.ledger.append(journal(key, 'first', numbered))).resolves.toMatchObject({ created: true, seq: 1 });
      expect(store.state.transactions).toBe(2);
      expect((await expectWhole(key, ['first'])).map((r) => r.document_number)).toEqual(['1']);
      // Written by the settle's own transaction: known as after a commit.
      await expect(g.ledger.append(journal(key, 'next', numbered))).resolves.toMatchObject({ created: true, seq: 2 });
      expect([g.state.sent, store.state.transactions]).toEqual([1, 2]);
      expect((await expectWhole(key, ['first', 'next'])).map((r) => r.document_number)).toEqual(['1', '2']);
    });

    it('an entry with writes of its own on a chain the node knows: its writes and its record committed once, or written once', async () => {
      for (const ran of [true, false]) {
        const store = commitLosing(ran);
        const g = gatedLedger({ pass: 0, run: false, error: noAnswer }, { transaction: store.transaction });
        const key = `journal:${newId()}`;
        for (let i = 0; i < 2; i++) await g.ledger.append(journal(key, `warm ${i}`));
        const writes: string[] = [];
        store.state.lose = 1;
        const own = { afterWrite: async (tx: Queryable) => void writes.push((await tx.query<{ n: string }>("SELECT 'own' AS n")).rows[0]!.n) };
        await expect(g.ledger.append(journal(key, 'own', own)), `ran: ${ran}`).resolves.toMatchObject({ created: true, seq: 3 });
        // Run again only when it had not committed.
        expect(writes, `ran: ${ran}`).toEqual(ran ? ['own'] : ['own', 'own']);
        // The warm-up's, the lost one, the check.
        expect(store.state.transactions, `ran: ${ran}`).toBe(3);
        await expectWhole(key, ['warm 0', 'warm 1', 'own']);
      }
    });

    it('the check gets no answer either: the append fails with the COMMIT\'s own error (503), its outcome still unknown; the chain goes on after it once the store is back', async () => {
      const store = commitLosing(true);
      const g = gatedLedger({ pass: 0, run: false, error: noAnswer }, { transaction: store.transaction });
      const key = `journal:${newId()}`;
      // Down once the COMMIT's answer is lost: the check fails to connect.
      Object.assign(store.state, { lose: 1, downAfterLoss: true });
      const failed = await g.ledger.append(journal(key, 'first')).then(() => undefined, (err: unknown) => err);
      expect(failed).toBeDefined();
      expect(failed).toBe(store.state.thrown[0]);
      expect(store.state.transactions).toBe(2);
      store.state.down = false;
      await expect(g.ledger.append(journal(key, 'next'))).resolves.toMatchObject({ created: true, seq: 2 });
      await expectWhole(key, ['first', 'next']);
    });
  });

  describe("a busy chain's batches in flight at once on the pipe (four: one writing, three built on what the ones before will leave)", () => {
    /** An entry that notes its name in `built` when it is built. */
    const noted = (built: string[], e: LedgerEntry, name: string): LedgerEntry => ({ ...e, build: (link, now) => (built.push(name), e.build(link, now)) });

    it('each is built on the one before while the first is not answered, numbered on from the series as the ones before leave it; none takes the locking path', async () => {
      let locked = 0;
      const g = gatedLedger({ pass: 100, run: true, error: noAnswer }, { transaction: (fn) => ((locked += 1), t.db.transaction(fn)) });
      const key = `journal:${newId()}`;
      const series = `journal-series:${newId()}`;
      for (let i = 0; i < 2; i++) await g.ledger.append(journal(key, `warm ${i}`, { numberingKey: series }));
      locked = 0;
      g.state.armed = true;
      const built: string[] = [];
      // a and c numbered, b and d not: c is built on b, which moved no series, and numbers on from a.
      const names = ['a', 'b', 'c', 'd'];
      const appends: Promise<Appended>[] = [];
      for (const [i, name] of names.entries()) {
        appends.push(g.ledger.append(noted(built, journal(key, name, i % 2 === 0 ? { numberingKey: series } : {}), name)));
        await vi.waitFor(() => expect(built).toContain(name));
      }
      // All four built while the first statement is held; two statements sent (the pipe's two slots), the rest queued.
      expect(g.state.calls).toBe(2);
      g.state.release();
      expect((await Promise.all(appends)).map((a) => ('seq' in a ? a.seq : null))).toEqual([3, 4, 5, 6]);
      const rows = await expectWhole(key, ['warm 0', 'warm 1', ...names]);
      expect(rows.map((r) => r.document_number)).toEqual(['1', '2', '3', null, '4', null]);
      expect(locked).toBe(0);
    });

    it('the batches that queued behind the statements in flight go in one statement (one commit), the head and the series each moved once from the first to the last', async () => {
      let locked = 0;
      const g = gatedLedger({ pass: 100, run: true, error: noAnswer }, { transaction: (fn) => ((locked += 1), t.db.transaction(fn)) });
      const key = `journal:${newId()}`;
      const series = `journal-series:${newId()}`;
      for (let i = 0; i < 2; i++) await g.ledger.append(journal(key, `warm ${i}`, { numberingKey: series }));
      locked = 0;
      g.state.armed = true;
      const built: string[] = [];
      const names = ['a', 'b', 'c', 'd'];
      const appends: Promise<Appended>[] = [];
      for (const name of names) {
        appends.push(g.ledger.append(noted(built, journal(key, name, { numberingKey: series }), name)));
        await vi.waitFor(() => expect(built).toContain(name));
      }
      expect(g.state.calls).toBe(2); // a and b hold the pipe's two slots; c and d queue
      g.state.release();
      expect((await Promise.all(appends)).map((a) => ('seq' in a ? a.seq : null))).toEqual([3, 4, 5, 6]);
      // c was built on what b leaves and d on what c leaves: one statement for both (was two, two commits).
      expect(g.state.calls).toBe(3);
      const rows = await expectWhole(key, ['warm 0', 'warm 1', ...names]);
      expect(rows.map((r) => r.document_number)).toEqual(['1', '2', '3', '4', '5', '6']);
      expect(Number((await t.db.query<{ n: string }>('SELECT last_number AS n FROM number_series WHERE numbering_key = $1', [series])).rows[0]!.n)).toBe(6);
      expect(locked).toBe(0);
    });

    it('an entry that may refuse itself on the head (refusesOnHead) is built only once the batch before is answered, on the head it committed', async () => {
      const g = gatedLedger({ pass: 100, run: true, error: noAnswer });
      const key = `journal:${newId()}`;
      for (let i = 0; i < 2; i++) await g.ledger.append(journal(key, `warm ${i}`));
      g.state.armed = true;
      const built: string[] = [];
      const a = g.ledger.append(noted(built, journal(key, 'a'), 'a'));
      await vi.waitFor(() => expect(built).toContain('a'));
      const b = g.ledger.append({ ...noted(built, journal(key, 'b'), 'b'), refusesOnHead: true });
      await new Promise((r) => setTimeout(r, 50));
      // A plain entry would be built on what a will leave by now; this one waits.
      expect(built).toEqual(['a']);
      g.state.release();
      expect([(await a).created, (await b).created]).toEqual([true, true]);
      expect(built).toEqual(['a', 'b']);
      await expectWhole(key, ['warm 0', 'warm 1', 'a', 'b']);
    });

    it('the first refused by its guard (another node appended meanwhile): the ones built on it are refused too and written after it on the locking path, in order, numbered without a gap', async () => {
      const g = gatedLedger({ pass: 100, run: true, error: noAnswer });
      const key = `journal:${newId()}`;
      const series = `journal-series:${newId()}`;
      for (let i = 0; i < 2; i++) await g.ledger.append(journal(key, `warm ${i}`, { numberingKey: series }));
      g.state.armed = true;
      const built: string[] = [];
      const names = ['a', 'b', 'c', 'd'];
      const appends: Promise<Appended>[] = [];
      for (const name of names) {
        appends.push(g.ledger.append(noted(built, journal(key, name, { numberingKey: series }), name)));
        await vi.waitFor(() => expect(built).toContain(name));
      }
      // Another node (its own ledger, its own connections) appends while this node's statements are held.
      await ledger.append(journal(key, 'other node', { numberingKey: series }));
      g.state.release();
      expect((await Promise.all(appends)).map((a) => ('seq' in a ? a.seq : null))).toEqual([4, 5, 6, 7]);
      const rows = await expectWhole(key, ['warm 0', 'warm 1', 'other node', ...names]);
      expect(rows.map((r) => r.document_number)).toEqual(['1', '2', '3', '4', '5', '6', '7']);
      // Known again: the next goes on the one-statement path, on the head the locking path left.
      await g.ledger.append(journal(key, 'next', { numberingKey: series }));
      await expectWhole(key, ['warm 0', 'warm 1', 'other node', ...names, 'next']);
    });
  });

  it('the store unreachable: a batch of appends fails at once with its error (503), each not tried again alone (each would wait the bound again)', async () => {
    const unreachable = new DbUnavailableError(new Error('connect ECONNREFUSED'));
    let transactions = 0;
    const down = createLedger({
      db: { ...t.db, transaction: () => ((transactions += 1), Promise.reject(unreachable)) },
      clock: systemClock, log: pino({ level: 'silent' }), events: createEventPublisher({ log: pino({ level: 'silent' }) }),
    });
    const key = `journal:${newId()}`;
    const settled = await Promise.allSettled(['a', 'b', 'c', 'd'].map((text) => down.append(journal(key, text))));
    expect(settled.map((r) => (r.status === 'rejected' ? r.reason : r.status))).toEqual([unreachable, unreachable, unreachable, unreachable]);
    expect(transactions).toBe(1);
  });

  it('appends entries of no transaction from a scheduled caller: one chain, each built on the link before', async () => {
    const key = `journal:${newId()}`;
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => ledger.append(journal(key, `event ${i}`))));
    expect(results.every((r) => r.created)).toBe(true);
    const { rows, head } = await chain(key);
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    rows.forEach((r, i) => {
      expect(r.transaction_id).toBeNull();
      expect(r.previous_fingerprint).toBe(i === 0 ? null : rows[i - 1]!.fingerprint);
      const body = JSON.parse(r.body) as { text: string; previous: string | null };
      // The builder was handed the previous link it is chained to.
      expect(body.previous).toBe(r.previous_fingerprint);
      expect(r.fingerprint).toBe(sha(`${r.previous_fingerprint ?? ''}|${i + 1}||${body.text}`));
    });
    expect(Number(head!.seq)).toBe(25);
    expect(head!.last_fingerprint).toBe(rows[24]!.fingerprint);
    expect(head!.last_link).toEqual({ text: JSON.parse(rows[24]!.body).text });
    // Sequential appends after that take the one-statement path on the known head: still whole.
    for (let i = 0; i < 3; i++) await ledger.append(journal(key, `late ${i}`));
    expect((await chain(key)).rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 28 }, (_, i) => i + 1));
  });

  it('numbers entries of a series without gaps, apart from the chain sequence', async () => {
    const key = `closures:${newId()}`;
    const series = `closures-series:${newId()}`;
    await ledger.append(journal(key, 'unnumbered'));
    await Promise.all(Array.from({ length: 10 }, (_, i) => ledger.append(journal(key, `closure ${i}`, { numberingKey: series }))));
    const { rows } = await chain(key);
    expect(rows.map((r) => r.document_number)).toEqual([null, ...Array.from({ length: 10 }, (_, i) => String(i + 1))]);
  });

  it('previews an entry on the committed head and series, writing nothing: the next append is built the same', async () => {
    const key = `journal:${newId()}`;
    const series = `journal-series:${newId()}`;
    const rowsOf = async () => (await t.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM fiscal_records WHERE chain_key = $1) + (SELECT count(*) FROM chain_heads WHERE chain_key = $1)
         + (SELECT count(*) FROM number_series WHERE numbering_key = $2) AS n`, [key, series])).rows[0]!.n;
    // An empty chain: the first place, no link, number 1; not even the head's row is made.
    const empty = await ledger.preview(journal(key, 'x', { numberingKey: series }));
    expect(empty).toMatchObject({ seq: 1, number: 1, previousFingerprint: null, headAt: null });
    expect(Number(await rowsOf())).toBe(0);
    const first = await ledger.append(journal(key, 'x', { numberingKey: series }));
    expect(first.created && first.built.record.fingerprint).toBe(empty.built.record.fingerprint);

    await ledger.append(journal(key, 'y'));
    const written = Number(await rowsOf());
    const p = await ledger.preview(journal(key, 'z', { numberingKey: series }));
    expect(Number(await rowsOf())).toBe(written);
    const { head } = await chain(key);
    expect(p).toMatchObject({ seq: 3, number: 2, previousFingerprint: head!.last_fingerprint });
    expect(JSON.parse(p.built.record.body)).toMatchObject({ seq: 3, previous: head!.last_fingerprint });
    const next = await ledger.append(journal(key, 'z', { numberingKey: series }));
    expect(next.created && next.built.record.fingerprint).toBe(p.built.record.fingerprint);
    expect(next.created && next.built.record.document_number).toBe('2');
    await expect(ledger.preview(journal(key, 'boom'))).rejects.toThrow('this entry cannot be built');
  });

  it('an entry that cannot be built fails alone; the others commit and the chain stays whole', async () => {
    const key = `journal:${newId()}`;
    const settled = await Promise.allSettled(['a', 'b', 'boom', 'c', 'd'].map((text) => ledger.append(journal(key, text))));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const { rows } = await chain(key);
    expect(rows.map((r) => JSON.parse(r.body).text)).toEqual(['a', 'b', 'c', 'd']);
    rows.forEach((r, i) => expect(r.previous_fingerprint).toBe(i === 0 ? null : rows[i - 1]!.fingerprint));
  });

  it('an entry with writes of its own (afterWrite) commits them with itself, or nothing', async () => {
    const key = `journal:${newId()}`;
    await ledger.append(journal(key, 'first'));
    await expect(ledger.append(journal(key, 'refused', { afterWrite: async () => { throw new Error('refused by its own write'); } }))).rejects.toThrow('refused by its own write');
    let seen: string | undefined;
    await ledger.append(journal(key, 'kept', { afterWrite: async (tx, built) => { seen = (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM fiscal_records WHERE id = $1', [built.record.id])).rows[0]!.n === 1 ? 'in the same transaction' : 'not'; } }));
    expect(seen).toBe('in the same transaction');
    expect((await chain(key)).rows.map((r) => JSON.parse(r.body).text)).toEqual(['first', 'kept']);
  });

  it('an entry refused by its own writes (a client error) fails alone, even batched with others: they commit, the chain stays whole', async () => {
    const key = `journal:${newId()}`;
    // The first entry holds the chain (its own write waits) while the others queue behind
    // it, so they go as one batch. Every entry has writes of its own; one refuses.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = ledger.append(journal(key, 'first', { afterWrite: () => held }));
    await new Promise((r) => setTimeout(r, 50));
    const own = (refuse: boolean) => ({ afterWrite: async () => { if (refuse) throw conflict('document 0001-0001 is already cancelled'); } });
    const pending = Promise.allSettled(['a', 'b', 'twice', 'c', 'd'].map((text) => ledger.append(journal(key, text, own(text === 'twice')))));
    await new Promise((r) => setTimeout(r, 50));
    release();
    await first;
    const settled = await pending;
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((settled[2] as PromiseRejectedResult).reason).toMatchObject({ status: 409, message: 'document 0001-0001 is already cancelled' });
    const { rows } = await chain(key);
    expect(rows.map((r) => JSON.parse(r.body).text)).toEqual(['first', 'a', 'b', 'c', 'd']);
    rows.forEach((r, i) => expect(r.previous_fingerprint).toBe(i === 0 ? null : rows[i - 1]!.fingerprint));
  });

  it("an entry's events commit with it; their fan-out job only when a subscription wants them", async () => {
    const fanOuts = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE kind = $1 AND account_id = $2', [FAN_OUT_EVENTS, accountId])).rows[0]!.n;
    const key = `journal:${newId()}`;
    const before = await fanOuts();
    await ledger.append(journal(key, 'nobody listens', { event: true }));
    await ledger.append(journal(key, 'still nobody', { event: true }));
    expect(await fanOuts()).toBe(before);
    const events = (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE account_id = $1 AND data->>'journal' IN ('nobody listens', 'still nobody')`, [accountId])).rows[0]!.n;
    expect(events).toBe(2);
    await t.db.query(
      `INSERT INTO webhook_subscriptions (id, account_id, url, secret, events, description, enabled, created_at, updated_at)
       VALUES ($1, $2, 'http://127.0.0.1:9/hook', 'x', '["transaction.fiscalized"]', NULL, true, now() - interval '1 minute', now())`, [newId(), accountId]);
    await ledger.append(journal(key, 'heard', { event: true }));
    expect(await fanOuts()).toBe(before + 1);
    await t.worker.drain();
    const delivered = (await t.db.query<{ event_type: string; payload: Record<string, unknown> | string }>(
      `SELECT d.event_type, d.payload FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.data->>'journal' = 'heard'`)).rows;
    // Delivered under both names of the fact: the published one and the alias asked for.
    expect(delivered.map((d) => d.event_type).sort()).toEqual(['fiscalization.completed', 'transaction.fiscalized']);
  });

  it('entries that sign the previous signature are prepared, signed as a run off the event loop, and finished in order', async () => {
    const key = `signed:${newId()}`;
    const ecKey = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const signer = inProcessSigner(ecKey);
    const threads = createChainSigner();
    const runs: number[] = [];
    let polls = 0;
    const signing = createLedger({
      db: t.db, clock: systemClock, log: pino({ level: 'silent' }), events: createEventPublisher({ log: pino({ level: 'silent' }) }),
      // Polled at every append (the answers are taken between requests, not after the event loop's turn).
      signChain: Object.assign((run: Parameters<typeof threads>[0], previous: Parameters<typeof threads>[1]) => (runs.push(run.length), threads(run, previous)), {
        poll: () => ((polls += 1), threads.poll()),
      }),
    });
    const { head, signed } = signedEntries(key, signer);
    const texts = Array.from({ length: 40 }, (_, i) => (i % 7 === 6 ? `plain ${i}` : `entry ${i}`));
    // A journal entry (no `prepare`, fingerprint over the previous one) also comes between runs.
    const results = await Promise.all([...texts.map((x) => signing.append(signed(x))), signing.append(journal(key, 'journal'))]);
    expect(results.every((r) => r.created)).toBe(true);
    const { rows, head: stored } = await chain(key);
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    rows.forEach((r, i) => {
      expect(r.previous_fingerprint).toBe(i === 0 ? null : rows[i - 1]!.fingerprint);
      const body = JSON.parse(r.body) as { text: string; previous: string | null };
      expect(body.previous).toBe(r.previous_fingerprint);
      if (body.text === 'journal') return expect(r.fingerprint).toBe(sha(`${r.previous_fingerprint ?? ''}|${i + 1}||journal`));
      const link = { seq: i + 1, previous: i === 0 ? null : { fiscalId: `S-${i}`, issuedAt: '' } };
      const message = head(link, body.text) + (r.previous_fingerprint ?? '');
      expect(verifyWith(signer.publicKey, 'sha256', Buffer.from(message), Buffer.from(r.fingerprint, 'base64url'))).toBe(true);
    });
    expect(stored!.last_fingerprint).toBe(rows[40]!.fingerprint);
    // Concurrent appends queued into batches: some runs held several entries, and the thread signed them.
    expect(Math.max(...runs)).toBeGreaterThan(1);
    expect(threads.runs.thread).toBe(runs.length);
    expect(polls).toBe(41);
    await threads.close();
  });

  it("a chain's next batch is prepared and sent to be signed while the one before is still being signed, and starts from its last signature", async () => {
    const key = `signed:${newId()}`;
    const signer = inProcessSigner(crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    const threads = createChainSigner();
    /** The runs asked for, each with what it starts from; the first run after `armed` is answered only on `release`. */
    const calls: { size: number; previous: unknown }[] = [];
    const gate = { armed: false, release: () => {} };
    const held = new Promise<void>((resolve) => (gate.release = resolve));
    const signing = createLedger({
      db: t.db, clock: systemClock, log: pino({ level: 'silent' }), events: createEventPublisher({ log: pino({ level: 'silent' }) }),
      signChain: Object.assign((run: Parameters<typeof threads>[0], previous: Parameters<typeof threads>[1]) => {
        const out = threads(run, previous);
        if (!gate.armed) return out;
        calls.push({ size: run.length, previous });
        return calls.length === 1 ? held.then(() => out) : out;
      }, { poll: () => threads.poll() }),
    });
    const { signed, expectSigned } = signedEntries(key, signer);
    // Known heads: the next appends take the one-statement path, pipelined.
    for (const text of ['warm 0', 'warm 1']) await signing.append(signed(text));
    gate.armed = true;
    const a = signing.append(signed('a'));
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    const b = signing.append(signed('b'));
    // b's run asked for while a's signatures are held, starting from a's run (its answer to come).
    await vi.waitFor(() => expect(calls).toHaveLength(2));
    expect(calls[1]!.previous).toBeInstanceOf(Promise);
    gate.release();
    expect([(await a).created, (await b).created]).toEqual([true, true]);
    const rows = await expectWhole(key, ['warm 0', 'warm 1', 'a', 'b']);
    expectSigned(rows);
    await threads.close();
  });
});

