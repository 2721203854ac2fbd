/**
 * The chain ledger: the one way anything joins a chain (sales, cancellations, closures,
 * journals). An entry is built on the link the previous one left, and committed with its
 * rows, jobs and events before `append` returns.
 *
 * Two ways to write, chosen per batch:
 * - the locking path: one database transaction that locks the chain head, takes invoice
 *   numbers, writes the batch and runs the entries' own writes (`afterWrite`). Always
 *   right; a chain's first batch on this node, and whatever the other path refuses, go here;
 * - the one-statement path: a node builds the chain's next batch on the head its own last
 *   commit left (`knownHeads`) and writes it with one autocommitted statement guarded by
 *   that head (ledger-repo `appendGuarded`): no lock, no BEGIN/COMMIT, one round trip.
 *   If another node moved the head (or a series, or a key was taken), the statement
 *   writes nothing and the batch takes the locking path. If its answer never comes (the
 *   pipe's connection lost or silent), the locking path first learns, under the chain's
 *   lock, whether it committed (`settleUnknown`). So does a locking-path transaction whose
 *   COMMIT answer never came (`appendLockedAlone`).
 *
 * Batching: appends queue per chain (core/group-commit.ts), several batches of a chain at
 * once on the pipe (two without): while one is signed or its statement runs, the next are
 * built on what it will leave, each on the one before, and sent behind it. Chains'
 * batches that queue while this node's statements are busy share the next statement
 * (combiner.ts). Why: a chain is serial by law; its throughput is one statement's time.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { DbUnavailableError } from '../core/errors.ts';
import type { ChainLink, PendingLink } from '../core/chain-link.ts';
import { GroupCommitter, type Turn } from '../core/group-commit.ts';
import { promoteQueue, type EnqueueInput } from '../store/repos/jobs-repo.ts';
import { isUniqueViolation, type Db, type Queryable } from '../store/db.ts';
import type { TransactionFailure } from '../store/pg-db.ts';
import type { FiscalRecordRow } from '../store/repos/fiscal-records-repo.ts';
import type { TransactionRow } from '../store/repos/transactions-repo.ts';
import { Combiner } from './combiner.ts';
import { CHAIN_HEAD_MOVED, NUMBERS_MOVED, continues, ledgerRepo, renderBatch, type ChainBatch, type RenderedBatch, type Written } from './ledger-repo.ts';
import { sortOutReplays, type Replays } from './replays.ts';
import { createChainSigner, startText, type RunStart, type SignChain } from '../signing/chain-signer.ts';
import type { Appended, BuiltEntry, Ledger, LedgerEntry, LedgerEvents, PreparedEntry } from './types.ts';

/** SQLSTATE deadlock_detected. */
const DEADLOCK = '40P01';
/** The most chains' batches one append statement carries (statement size, lock time). */
const MAX_CHAINS_PER_STATEMENT = 32;
/** One-statement appends of a node in flight at once; more wait and go together. */
const APPEND_STATEMENTS_IN_FLIGHT = 2;
/**
 * Batches of one chain begun at once. On the pipe, four: one writing and three built on
 * what the ones before will leave, sent behind them. A busy register's chain is a
 * pipeline of serial stages (build, sign on the signing thread, statement, answers) and
 * with two batches one stage often waited on another: Portugal (RSA signatures, ~0.13 ms
 * a record) went 1,246 / 1,438 / 1,472 → 1,293 / 1,527 / 1,633 creates a second in
 * alternating pairs (docs/decisions.md, session 22). Without a pipe (PGlite: one backend,
 * each statement after the one before is answered) nothing overlaps: two.
 */
const APPEND_BATCHES_PER_CHAIN = { pipe: 4, alone: 2 } as const;
/** The most chains (and series) a node remembers the head of; the oldest is forgotten first. */
const MAX_KNOWN = 10_000;
/** The combiner fails an item whose result is an Error: a thrown non-Error is wrapped. */
const toError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

export interface LedgerDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  events: LedgerEvents;
  /** Signs runs of prepared entries (default: one signing thread per process, shared). */
  signChain?: SignChain;
}

/** The process's signing thread, shared by its ledgers (started on first use). */
let sharedSigner: SignChain | undefined;

/**
 * A chain head as a batch is built on it: the last record's facts, or none for a new chain.
 * Its fingerprint may still be being signed (the batch that leaves it was prepared and
 * sent to the signing thread, `buildBatch`): then the answer of the run it ends, which
 * the next batch's run starts from. Set to the text once the batch is finished.
 */
interface BuiltOn {
  seq: number;
  fingerprint: RunStart;
  fiscalId: string | null;
  issuedAt: Date | null;
  link: Record<string, string> | null;
}

/**
 * The link an entry is built on when `head` is the chain's last record, as `prepare` gets
 * it: the next place, its document number, and what the head left for it (nothing for a
 * chain's first record) but its fingerprint, which may not be signed yet. The one way a
 * link is made, for an append and for a preview alike.
 */
function pendingLinkAfter(head: BuiltOn, number: number | undefined, now: Date): PendingLink {
  return {
    seq: head.seq + 1,
    number,
    previous: head.seq === 0 ? null : { fiscalId: head.fiscalId, issuedAt: (head.issuedAt ?? now).toISOString(), linkData: head.link },
  };
}

/** The same link with the head's fingerprint (signed: `fingerprint`), as `build` gets it. */
function linkAfter(head: BuiltOn, fingerprint: string | null, number: number | undefined, now: Date): ChainLink {
  const link = pendingLinkAfter(head, number, now);
  return { ...link, previous: link.previous === null ? null : { fingerprint, ...link.previous } };
}

/** What a batch answers for one of its entries: appended (or replayed), or this entry's own error. */
type Outcome = Appended | { error: unknown };

/**
 * Whether a failed one-statement append may have committed all the same: the store became
 * unavailable without the server answering for this statement (no answer within the
 * driver's wait, a lost connection, a session the server ended: pg-db.ts `connectionLost`).
 * A statement the server itself refused (an ERROR answer: cancelled at its
 * statement_timeout) wrote nothing.
 */
function outcomeUnknown(err: unknown): err is DbUnavailableError {
  return err instanceof DbUnavailableError && (err.cause as { severity?: unknown } | null | undefined)?.severity !== 'ERROR';
}

/**
 * Whether a locking-path transaction that failed may have committed all the same: its
 * COMMIT was sent and its answer never came (pg-db.ts `atCommit`, and `outcomeUnknown`).
 * A failure before COMMIT rolled the transaction back: nothing to settle.
 */
function commitUnknown(err: unknown): err is DbUnavailableError {
  return outcomeUnknown(err) && (err as TransactionFailure).atCommit === true;
}

/**
 * An append whose outcome is unknown (a one-statement append, `outcomeUnknown`, or a
 * locking-path transaction whose COMMIT answer was lost, `commitUnknown`), with what it
 * built: the caller settles it (`settleUnknown`) before answering.
 */
class Unsettled extends Error {
  constructor(
    /** The store's error, answered (503) when the outcome cannot be learnt. */
    readonly original: DbUnavailableError,
    /** The batch's first record: stored if and only if the batch committed (one statement). */
    readonly recordId: string,
    /** The batch's outcomes as committed; moves what this node knows as its commit does. */
    readonly committed: () => Outcome[],
  ) {
    super('the outcome of an append is unknown', { cause: original });
    this.name = 'Unsettled';
  }
}

/**
 * A chain's batch on the one-statement path whose statement is not answered yet: built on
 * `base`, it leaves `head` and the series at `numbers` (every series moved by it or by the
 * batches ahead it was built on). The chain's next batch is built on these meanwhile if
 * this one is still on course (`onCourse`), and sent: on the pipe at once, behind this one
 * (its guard refuses it if this one did not commit); without a pipe once this one is
 * answered, and only if it committed.
 */
interface Ahead {
  base: BuiltOn;
  head: BuiltOn;
  numbers: Map<string, number>;
  /** The batch ahead this one was built on, while this one is not answered (then cut: no list grows). */
  prev: Ahead | undefined;
  /** Its statement failed (refused, or its answer lost), or it could not be built: nothing may be built on it any more. */
  failed: boolean;
  /** Settles once its statement is sent (or it failed before): a batch built on it is sent behind it. */
  sent: Promise<void>;
}

export function createLedger(deps: LedgerDeps): Ledger {
  const { db, clock } = deps;
  const signChain = deps.signChain ?? (sharedSigner ??= createChainSigner(deps.log));
  /** Sets `key` as the most recent entry of a bounded map (oldest out). */
  const rememberIn = <V>(map: Map<string, V>, key: string, value: V) => {
    map.delete(key);
    map.set(key, value);
    if (map.size > MAX_KNOWN) map.delete(map.keys().next().value!);
  };
  /**
   * The head each chain had after this node's last commit to it: the next batch is built
   * on it and written by one guarded statement (`appendAlone`). Forgotten when that guard
   * finds the head elsewhere (another node appended) or a batch fails; a forgotten chain
   * takes the locking path once.
   */
  const knownHeads = new Map<string, BuiltOn>();
  const remember = (chainKey: string, head: BuiltOn) => rememberIn(knownHeads, chainKey, head);
  /**
   * The last number each numbering series had after this node's last commit that took
   * from it: a batch on a known head numbers its entries from here, and its statement
   * moves the series only from these values (else it is refused like a moved head), and
   * only while no number a request took lies ahead (else the locking path skips those).
   * Not kept for a series with such numbers ahead.
   */
  const knownNumbers = new Map<string, number>();
  const rememberNumber = (numberingKey: string, last: number) => rememberIn(knownNumbers, numberingKey, last);
  /** Each chain's last batch built on the one-statement path and not answered yet. */
  const aheadOf = new Map<string, Ahead>();
  /**
   * Whether a batch ahead can still leave what it predicts, given the head this node
   * knows: it committed (its head is known), or it was built on the known head or on a
   * batch ahead that is still on course, and none of them failed. A batch built on one
   * that failed would only be refused by its guard.
   */
  const onCourse = (a: Ahead | undefined, known: BuiltOn): a is Ahead =>
    a !== undefined && !a.failed && (a.head === known || a.base === known || onCourse(a.prev, known));

  /**
   * Where one-statement appends go: the store's ordered pipe (PostgreSQL: a connection of
   * its own in pipeline mode), where a chain's next statement is written while the one
   * before still runs and is executed the moment it is done; else the store itself
   * (PGlite: one backend, nothing to overlap), where a chain's next statement waits for
   * the answer to the one before.
   */
  const appendQ = db.pipe ?? db;

  /**
   * The one-statement appends of different chains that queue while this node's append
   * statements are busy go to PostgreSQL as ONE statement (an idle node's goes at once).
   * If the combined statement fails, nothing of it was written and each batch runs again
   * alone, so each meets its own verdict (a moved head, a replay) and takes the locking
   * path alone; unless the store was unavailable (every batch fails with that).
   */
  const guardedAppends = new Combiner<RenderedBatch, Written>(writeGuarded, APPEND_STATEMENTS_IN_FLIGHT, MAX_CHAINS_PER_STATEMENT);

  /** Runs calls in order: on the pipe all at once (they run in the order sent), else each after the one before. */
  function inOrder(calls: readonly (() => Promise<void>)[]): Promise<unknown> {
    return db.pipe ? Promise.all(calls.map((c) => c())) : calls.reduce<Promise<void>>((p, c) => p.then(c), Promise.resolve());
  }

  async function writeGuarded(parts: RenderedBatch[]): Promise<(Written | Error)[]> {
    const out: (Written | Error)[] = new Array(parts.length);
    // With the pipe, a chain's next batches can queue beside the one before. Built on the
    // head it leaves (`continues`: the usual case, each built on the batch ahead), a batch
    // goes in the same statement, whose one commit covers both: a busy register's chain is
    // serial, and each statement of it paid its own commit (fsync, ~2.3 ms here, while
    // the chain waited; docs/decisions.md, session 26). Built on anything else, it goes in
    // the next statement (a statement moves each head once).
    const layers: number[][] = [];
    const lastOf = new Map<string, { part: RenderedBatch; layer: number }>();
    parts.forEach((p, i) => {
      const before = lastOf.get(p.chainKey);
      const d = before === undefined ? 0 : continues(before.part, p) ? before.layer : before.layer + 1;
      lastOf.set(p.chainKey, { part: p, layer: d });
      (layers[d] ??= []).push(i);
    });
    const mine = (w: Written, k: number): Written => ({ jobIds: [w.jobIds[k]!], fannedOut: w.fannedOut });
    const alone = (i: number) => () => ledgerRepo.appendGuarded(appendQ, [parts[i]!]).then((w) => void (out[i] = mine(w, 0)), (err: unknown) => void (out[i] = toError(err)));
    await inOrder(layers.map((layer) => async () => {
      try {
        const written = await ledgerRepo.appendGuarded(appendQ, layer.map((i) => parts[i]!));
        layer.forEach((i, k) => (out[i] = mine(written, k)));
      } catch (err) {
        // The store unavailable (down, or past its statement bound): running each batch
        // again alone would only wait as long again per batch; each fails with it (503).
        if (layer.length === 1 || err instanceof DbUnavailableError) layer.forEach((i) => (out[i] = toError(err)));
        else await inOrder(layer.map(alone));
      }
    }));
    return out;
  }

  /** Can this batch be written by one statement on a head this node knows? */
  function aloneEligible(items: readonly LedgerEntry[], numbersAhead: Map<string, number> | undefined): boolean {
    return items.every((p) => !p.afterWrite
      && (p.numberingKey === undefined || knownNumbers.has(p.numberingKey) || numbersAhead?.has(p.numberingKey) === true));
  }

  const appends = new GroupCommitter<LedgerEntry, Outcome>(async (chainKey, take, turn) => {
    let items: LedgerEntry[] | undefined;
    let outcomes: Outcome[] | undefined;
    /** The one-statement append failed with its outcome unknown: settled on the locking path. */
    let unsettled: Unsettled | undefined;
    let base = knownHeads.get(chainKey);
    /** The batch ahead this one is built on (pipelined, on course). */
    let builtOn: Ahead | undefined;
    if (turn.pipelined) {
      // The batches before are still running: build on what the last will leave, if it is
      // still on course and no entry may refuse itself on that prediction
      // (`refusesOnHead`); else wait for it (it will take the locking path, or did).
      const ahead = aheadOf.get(chainKey);
      items = take();
      if (base !== undefined && onCourse(ahead, base) && !items.some((p) => p.refusesOnHead)) {
        base = ahead.head;
        builtOn = ahead;
      } else {
        await turn.previous;
        base = knownHeads.get(chainKey);
      }
    }
    if (base) {
      items ??= take();
      if (aloneEligible(items, builtOn?.numbers)) {
        try {
          outcomes = await appendAlone(chainKey, items, base, builtOn, turn);
        } catch (err) {
          for (const p of items) if (p.numberingKey !== undefined) knownNumbers.delete(p.numberingKey);
          if (err instanceof Unsettled) unsettled = err;
          else if (!takesTheLockingPath(err)) {
            knownHeads.delete(chainKey);
            throw err;
          }
        }
      }
    }
    if (!outcomes) {
      // The chain's batch before is over (its own outcome settled too): this one is
      // written, or its outcome learnt, on the head that batch left.
      await turn.previous;
      knownHeads.delete(chainKey);
      const batch = (items ??= take());
      outcomes = unsettled
        ? await settleUnknown(chainKey, batch, unsettled)
        : await appendLockedAlone(chainKey, batch);
    }
    // The batch's in-chain-order jobs entered `waiting`: now that they are committed, the
    // queue's first waiting job goes if nothing of the queue is active (jobs/queue.ts
    // promoteNext). Off the chain's path: the next batch does not wait for it, the answers
    // do. Should this process die first, the worker's sweep promotes it.
    if (outcomes.some((o) => 'created' in o && o.created && o.built.jobs?.some((j) => j.inChainOrder))) {
      const ready = promoteQueue(db, chainKey, clock.now()).catch((err) => {
        deps.log.warn({ err, chainKey }, 'could not promote the queue after an append: the worker sweep will');
      });
      for (const o of outcomes) if ('created' in o && o.created) o.ready = ready;
    }
    return outcomes;
  }, undefined, db.pipe ? APPEND_BATCHES_PER_CHAIN.pipe : APPEND_BATCHES_PER_CHAIN.alone, (err) => err instanceof DbUnavailableError);

  /**
   * Whether a one-statement append that failed should be run again through the locking
   * path: its guard found the chain or a series moved, or the unique index refused a key
   * or a seq (a replay, or a race with another node: the locking path sorts both out), or
   * it lost a deadlock. Anything else is a real failure.
   */
  function takesTheLockingPath(err: unknown): boolean {
    const code = (err as { code?: string } | null)?.code;
    return code === CHAIN_HEAD_MOVED || code === NUMBERS_MOVED || code === DEADLOCK || isUniqueViolation(err);
  }

  /**
   * Builds a batch's entries on `head`, in order, each on the one before it: the rows to
   * write, the jobs, the events, and the head after the last entry. `numbers` gives each
   * entry's document number (entries with a numbering series).
   *
   * Entries that sign the previous one's signature (`prepare`) are prepared in a run, and
   * the run is sent to the signing thread (`signChain`) at once when an entry that needs
   * the previous fingerprint comes, or at the end; meanwhile the event loop serves others.
   * `head` may itself be still being signed (the batch before, prepared): the run starts
   * from that batch's last run, and the thread signs it right after.
   *
   * `prepared` is told the head this batch will leave as soon as every entry is prepared
   * and sent, before the signatures come back: the chain's next batch may be prepared on
   * it meanwhile (`appendAlone`). Why: signing is a serial stage of a busy chain, and a
   * batch that waited for the one before to be signed left the signing thread idle while
   * it was prepared, and the event loop waiting while it was signed (Portugal, RSA: ~2.3 of
   * a ~4.7 ms cycle per batch of ~18; docs/decisions.md, session 23). The head it is told
   * is the one returned: its fingerprint is set once signed.
   */
  async function buildBatch(
    chainKey: string, items: readonly LedgerEntry[], head: BuiltOn, numbers: readonly (number | undefined)[], now: Date,
    prepared?: (head: BuiltOn) => void,
  ) {
    const built: BuiltEntry[] = new Array(items.length);
    /** What the next entry is built on; `fingerprint` is null within a run not yet sent. */
    let last: BuiltOn = head;
    /** The runs sent, each with the fingerprint its first entry signs and its answer. */
    const sent: { entries: { index: number; prepared: PreparedEntry }[]; from: RunStart; signatures: Promise<string[]> }[] = [];
    let run: { index: number; prepared: PreparedEntry }[] = [];
    /** The fingerprint the run's first entry signs. */
    let runFrom: RunStart = null;
    const send = () => {
      const signatures = signChain(run.map((r) => r.prepared.signing), runFrom);
      // Awaited below, in order; a failure meanwhile is not an unhandled rejection.
      signatures.catch(() => {});
      sent.push({ entries: run, from: runFrom, signatures });
      last = { ...last, fingerprint: signatures };
      run = [];
    };
    for (const [index, p] of items.entries()) {
      const entry = p.prepare?.(pendingLinkAfter(last, numbers[index], now), now) ?? null;
      if (entry !== null) {
        if (run.length === 0) runFrom = last.fingerprint;
        run.push({ index, prepared: entry });
        last = { seq: last.seq + 1, fingerprint: null, fiscalId: entry.fiscalId, issuedAt: now, link: entry.linkData };
        continue;
      }
      // Built whole: on the run before it, once signed (its link needs the last signature).
      if (run.length > 0) send();
      const b = (built[index] = p.build(linkAfter(last, await startText(last.fingerprint), numbers[index], now), now));
      last = { seq: last.seq + 1, fingerprint: b.record.fingerprint, fiscalId: b.record.fiscal_id, issuedAt: now, link: b.linkData ?? null };
    }
    if (run.length > 0) send();
    const leaves = last;
    prepared?.(leaves);
    for (const r of sent) {
      const signatures = await r.signatures;
      let previous = await startText(r.from);
      r.entries.forEach(({ index, prepared: entry }, k) => {
        const signature = signatures[k]!;
        const b = entry.finish(signature, previous);
        if (b.record.fingerprint !== signature) throw new Error(`ledger: a prepared entry of ${chainKey} does not carry its signature as its fingerprint`);
        built[index] = b;
        previous = signature;
      });
    }
    /** The fingerprint of the head this batch was built on, and of the one it leaves. */
    const from = await startText(head.fingerprint);
    const fingerprint = await startText(leaves.fingerprint);
    leaves.fingerprint = fingerprint;

    let seq = head.seq;
    let previous = from;
    const records: FiscalRecordRow[] = [];
    const transactions: TransactionRow[] = [];
    const jobs: EnqueueInput[] = [];
    /** Each entry's jobs: [first, end) in `jobs`. */
    const jobSpan: [number, number][] = [];
    for (const b of built) {
      seq += 1;
      records.push({ ...b.record, chain_key: chainKey, seq, previous_fingerprint: previous, created_at: now });
      if (b.transaction) transactions.push(b.transaction);
      const first = jobs.length;
      for (const j of b.jobs ?? []) {
        // A chain's in-order jobs (submissions) form an ordered queue: they enter `waiting`
        // and are promoted after the commit, in chain order (jobs/queue.ts).
        jobs.push(j.inChainOrder ? { ...j.input, queueKey: chainKey, queueSeq: seq, waiting: true } : j.input);
      }
      jobSpan.push([first, jobs.length]);
      previous = b.record.fingerprint;
    }
    const eventInputs = built.flatMap((b) => b.events ?? []);
    const events = eventInputs.length > 0 ? deps.events.rows(eventInputs, now) : undefined;
    // One fan-out job per account (the statement keeps it only if a subscription of that account wants the events).
    const fanOut: EnqueueInput[] = [];
    if (events) {
      const byAccount = new Map<string, string[]>();
      for (const e of events.rows) {
        const ids = byAccount.get(e.account_id);
        if (ids) ids.push(e.id);
        else byAccount.set(e.account_id, [e.id]);
      }
      for (const [accountId, ids] of byAccount) fanOut.push(deps.events.fanOutJob(accountId, ids, now));
    }
    const batch: ChainBatch = {
      records, transactions, events, jobs, fanOut,
      head: { chainKey, seq: leaves.seq, fingerprint, fiscalId: leaves.fiscalId, issuedAt: now, link: leaves.link },
    };
    return { built, batch, jobSpan, last: leaves, from };
  }

  /** The appended entries' outcomes, then the replays of keys an entry of this very batch took. */
  function settle(replays: Replays, built: readonly BuiltEntry[], jobSpan: readonly [number, number][], jobIds: readonly string[], seqs: (i: number) => number): Outcome[] {
    const stored = new Map(replays.fresh.map((original, i) => [original, built[i]!.transaction]));
    const settled: (Outcome | undefined)[] = replays.settle(stored);
    replays.fresh.forEach((original, i) => {
      const [from, to] = jobSpan[i]!;
      settled[original] = { created: true, built: built[i]!, seq: seqs(i), jobIds: jobIds.slice(from, to), ready: Promise.resolve() };
    });
    return settled as Outcome[];
  }

  /** Locks the chain's head for a batch (`appendLocked`), finding its keys already stored. */
  function lockFor(tx: Queryable, chainKey: string, all: readonly LedgerEntry[], now: Date) {
    return ledgerRepo.lockChainHead(tx, chainKey, now, all.flatMap((p) => (p.idempotency ? [p.idempotency] : [])));
  }

  /**
   * A batch on the locking path, in a transaction of its own. Its COMMIT sent and its
   * answer lost (`commitUnknown`): the batch may have committed; its outcome is settled as
   * a one-statement append's is (`settleUnknown`: under the chain's lock, whether its
   * first record is stored). A batch that wrote nothing (replays only) answers its replays.
   * (Any other failure, before COMMIT or answered by the server, rolled back: it is thrown.)
   */
  async function appendLockedAlone(chainKey: string, batch: readonly LedgerEntry[]): Promise<Outcome[]> {
    let done: Awaited<ReturnType<typeof appendLocked>> | undefined;
    try {
      return lockedDone(chainKey, await db.transaction(async (tx) => {
        const now = clock.now();
        return (done = await appendLocked(tx, chainKey, batch, await lockFor(tx, chainKey, batch, now), now));
      }));
    } catch (err) {
      if (done === undefined || !commitUnknown(err)) throw err;
      const written = done;
      // Replays only: nothing written, whether it committed or not (the head not remembered:
      // its row may have been created by this transaction).
      if (written.recordId === undefined) return written.outcomes;
      return settleUnknown(chainKey, batch, new Unsettled(err, written.recordId, () => lockedDone(chainKey, written)));
    }
  }

  /** What this node knows after a commit on the locking path; the batch's outcomes. */
  function lockedDone(chainKey: string, done: Awaited<ReturnType<typeof appendLocked>>): Outcome[] {
    remember(chainKey, done.head);
    for (const [key, last] of done.numbers) rememberNumber(key, last);
    for (const key of done.forgotten) knownNumbers.delete(key);
    if (done.fannedOut) deps.events.enqueued();
    return done.outcomes;
  }

  /**
   * Settles an append whose outcome is unknown (a one-statement append's statement, or a
   * locking-path transaction's COMMIT, may have run; its answer never came: docs/decisions.md
   * "An append whose answer never came is settled before answering"), on the locking path:
   * once the chain's head is locked, one statement of its own asks whether the batch's first
   * record is stored (through the pool, a transaction of its own).
   * (A lost COMMIT: the lost transaction held the chain's lock until it committed or rolled
   * back, so the check, granted the lock after, sees which.)
   * - Stored: the batch committed. Answered as committed, nothing written again.
   * - Not stored: it did not commit, and no longer can: a statement still on its way (or
   *   still running on the old connection's backend) updates the head first, so it either
   *   committed before the lock was granted (and this statement, whose snapshot is taken
   *   after, sees it) or waits behind the lock and then finds the head moved by this
   *   transaction (its guard refuses it). The batch is written here, under that lock, as a
   *   batch the one-statement path refused is. Why not ask before taking the lock, and
   *   answer 503 "nothing written": outside the lock "not stored" may only mean "not yet".
   * - The check not answered (the store still unreachable): the append's own error (503),
   *   its outcome still unknown. No second check, no loop.
   * A combined statement of several chains fails all its batches at once: each settles
   * its own, under its own chain's lock (one check could not hold every chain's lock
   * without ordering locks across chains).
   */
  async function settleUnknown(chainKey: string, batch: readonly LedgerEntry[], unsettled: Unsettled): Promise<Outcome[]> {
    const check: { written?: boolean } = {};
    try {
      const done = await db.transaction(async (tx) => {
        const now = clock.now();
        const locked = await lockFor(tx, chainKey, batch, now);
        check.written = await ledgerRepo.recordWritten(tx, unsettled.recordId);
        return check.written ? undefined : appendLocked(tx, chainKey, batch, locked, now);
      });
      deps.log.warn({ err: unsettled.original, chainKey, committed: check.written }, 'an append whose answer never came: its outcome settled under the chain lock');
      return done === undefined ? unsettled.committed() : lockedDone(chainKey, done);
    } catch (err) {
      // Stored: only the end of a transaction that wrote nothing failed.
      if (check.written === true) return unsettled.committed();
      if (check.written === undefined) {
        deps.log.warn({ err, chainKey }, 'an append whose answer never came: its outcome could not be learnt');
        throw unsettled.original;
      }
      throw err;
    }
  }

  /**
   * A batch of one chain in the caller's database transaction, on the chain head `locked`
   * (`lockFor`, first): appends to one chain are serial and the chain never forks; each
   * entry is built on the one before it. Answers the outcomes and the head and series
   * after the batch (what the next batch of this node may be built on).
   */
  async function appendLocked(tx: Queryable, chainKey: string, all: readonly LedgerEntry[], locked: Awaited<ReturnType<typeof lockFor>>, now: Date) {
    const head: BuiltOn = { seq: locked.seq, fingerprint: locked.last_fingerprint, fiscalId: locked.last_fiscal_id, issuedAt: locked.last_issued_at, link: locked.last_link };
    const replays = await sortOutReplays(tx, all, locked.existing);
    const items = replays.fresh.map((i) => all[i]!);
    if (items.length === 0) return { outcomes: replays.settle(new Map()) as Outcome[], head, numbers: new Map<string, number>(), forgotten: [], fannedOut: false, recordId: undefined };
    // Document numbers for the whole batch: one statement per series, in the batch's order.
    const taken = new Map<string, { numbers: number[]; clientAhead: boolean }>();
    for (const key of new Set(items.map((p) => p.numberingKey))) {
      if (key !== undefined) taken.set(key, await ledgerRepo.takeNumbers(tx, key, items.filter((p) => p.numberingKey === key).length, now));
    }
    const used = new Map<string, number>();
    const numbers = items.map((p) => {
      if (p.numberingKey === undefined) return undefined;
      const i = used.get(p.numberingKey) ?? 0;
      used.set(p.numberingKey, i + 1);
      return taken.get(p.numberingKey)!.numbers[i]!;
    });
    // A series with numbers requests took ahead of its counter is numbered here only (takeNumbers skips them).
    const numbersAfter = new Map([...taken].flatMap(([key, t]) => (t.clientAhead ? [] : [[key, t.numbers[t.numbers.length - 1]!] as const])));
    const forgotten = [...taken].flatMap(([key, t]) => (t.clientAhead ? [key] : []));
    const { built, batch, jobSpan, last } = await buildBatch(chainKey, items, head, numbers, now);
    const written = await ledgerRepo.insertBatch(tx, batch);
    for (const [i, p] of items.entries()) if (p.afterWrite) await p.afterWrite(tx, built[i]!, now);
    return {
      outcomes: settle(replays, built, jobSpan, written.jobIds, (i) => head.seq + i + 1), head: last, numbers: numbersAfter, forgotten, fannedOut: written.fannedOut,
      /** The batch's first record: stored if and only if its transaction committed. */
      recordId: batch.records[0]!.id as string | undefined,
    };
  }

  /**
   * The same batch in one autocommitted statement, built on the head this node's last
   * commit to the chain left (`known`): no lock taken first, no BEGIN, no COMMIT, one
   * round trip instead of three. The statement checks what the build assumed and fails as
   * a whole when it does not hold; the caller then takes the locking path. Only for
   * batches that need nothing else in their transaction (no `afterWrite`) and whose
   * series this node knows (moved by the same statement, from what it knew).
   */
  async function appendAlone(chainKey: string, all: readonly LedgerEntry[], known: BuiltOn, builtOn: Ahead | undefined, turn: Turn): Promise<Outcome[]> {
    const numbersAhead = builtOn?.numbers;
    const now = clock.now();
    // Keys already stored are not looked up here: the unique index refuses such a batch,
    // and the locking path sorts out its replays. A key twice in the batch is stored once.
    const replays = await sortOutReplays(db, all, []);
    const items = replays.fresh.map((i) => all[i]!);
    // Numbers from the series as the batch before leaves them (aloneEligible: all known).
    const series = new Map<string, { from: number; to: number }>();
    const numbers = items.map((p) => {
      const key = p.numberingKey;
      if (key === undefined) return undefined;
      const from = numbersAhead?.get(key) ?? knownNumbers.get(key)!;
      const s = series.get(key) ?? { from, to: from };
      s.to += 1;
      series.set(key, s);
      return s.to;
    });
    let sent!: () => void;
    const ahead: Ahead = {
      // `head`: what it will leave, once prepared (below).
      base: known, head: known, prev: builtOn, failed: false,
      numbers: new Map([...(numbersAhead ?? []), ...[...series].map(([key, s]) => [key, s.to] as const)]),
      sent: new Promise<void>((resolve) => (sent = resolve)),
    };
    let made: Awaited<ReturnType<typeof buildBatch>> | undefined;
    let part: RenderedBatch | undefined;
    let written: Written;
    try {
      // The chain's next batch begins as soon as this one is prepared and sent to be
      // signed, on the head it will leave (`buildBatch`).
      made = await buildBatch(chainKey, items, known, numbers, now, (leaves) => {
        ahead.head = leaves;
        aheadOf.set(chainKey, ahead);
        turn.release();
      });
      part = renderBatch({ ...made.batch, guard: { ...known, fingerprint: made.from }, numbers: [...series].map(([key, s]) => ({ key, from: s.from, to: s.to })) });
      if (!db.pipe) {
        // Built on the batch before: send only if it committed what this was built on. (On
        // the pipe this statement runs after that one anyway, and its guard tells.)
        await turn.previous;
        if (knownHeads.get(chainKey) !== known || [...series].some(([key, s]) => knownNumbers.get(key) !== s.from)) {
          throw Object.assign(new Error('the batch this one was built on did not commit'), { code: CHAIN_HEAD_MOVED });
        }
      } else if (builtOn !== undefined) {
        // The pipe runs statements in the order sent: this one goes behind the one it was
        // built on (signed first, that one is usually sent first, but not surely).
        await builtOn.sent;
      }
      const answer = guardedAppends.submit(part);
      sent();
      written = await answer;
    } catch (err) {
      ahead.failed = true;
      // The pipe lost the statement's answer: it may have committed. The caller learns which
      // (settleUnknown). If it did, it wrote the jobs rendered here; whether it wrote the
      // fan-out job is not known: a worker is woken if it may have (a wake for nothing is
      // harmless). (Without a pipe the store answers or fails the statement itself.)
      if (db.pipe && outcomeUnknown(err) && made !== undefined && part !== undefined) {
        const { built, jobSpan, last, batch } = made;
        const jobIds = [part.jobs?.ids ?? []];
        const fannedOut = part.fanOut !== null;
        throw new Unsettled(err, batch.records[0]!.id, () => aloneCommitted(chainKey, known, last, series, replays, built, jobSpan, { jobIds, fannedOut }));
      }
      throw err;
    } finally {
      sent();
      ahead.prev = undefined;
      if (aheadOf.get(chainKey) === ahead) aheadOf.delete(chainKey);
    }
    const { built, jobSpan, last } = made;
    return aloneCommitted(chainKey, known, last, series, replays, built, jobSpan, written);
  }

  /** A one-statement append committed: what this node knows moves, the entries' outcomes. */
  function aloneCommitted(
    chainKey: string, known: BuiltOn, last: BuiltOn, series: Map<string, { from: number; to: number }>, replays: Replays,
    built: readonly BuiltEntry[], jobSpan: readonly [number, number][], written: Written,
  ): Outcome[] {
    // Only forward: the answers of a chain's pipelined batches may be taken in any order.
    if ((knownHeads.get(chainKey)?.seq ?? -1) < last.seq) remember(chainKey, last);
    for (const [key, s] of series) if ((knownNumbers.get(key) ?? -1) < s.to) rememberNumber(key, s.to);
    if (written.fannedOut) deps.events.enqueued();
    return settle(replays, built, jobSpan, written.jobIds[0]!, (i) => known.seq + i + 1);
  }

  return {
    async append(entry) {
      // Between two requests: a batch whose signatures came back goes on now, not after
      // the event loop's next turn (signing/chain-signer.ts `poll`).
      signChain.poll?.();
      const outcome = await appends.run(entry.chainKey, entry);
      if ('error' in outcome) throw outcome.error;
      return outcome;
    },

    /**
     * The entry built on the committed head, as `buildBatch` builds an append's first
     * entry (the same `linkAfter`, the same `build`); the series' next number as
     * `takeNumbers` would hand it now. Reads only: no lock, no head row created.
     */
    async preview(entry) {
      const now = clock.now();
      const stored = await ledgerRepo.readChainHead(db, entry.chainKey);
      const fingerprint = stored?.last_fingerprint ?? null;
      const head: BuiltOn = stored
        ? { seq: stored.seq, fingerprint, fiscalId: stored.last_fiscal_id, issuedAt: stored.last_issued_at, link: stored.last_link }
        : { seq: 0, fingerprint, fiscalId: null, issuedAt: null, link: null };
      const number = entry.numberingKey === undefined ? undefined : await ledgerRepo.nextNumber(db, entry.numberingKey);
      const link = linkAfter(head, fingerprint, number, now);
      return { built: entry.build(link, now), seq: link.seq, number, previousFingerprint: fingerprint, headAt: head.issuedAt, at: now };
    },
  };
}
