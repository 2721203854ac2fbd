import crypto from 'node:crypto';
import { ApiError, badRequest, conflict, forbidden, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { allowsCountry } from '../core/permissions.ts';
import { stableStringify } from '../core/stable-json.ts';
import { Combiner } from '../core/combiner.ts';
import { GroupCommitter, type Turn } from '../core/group-commit.ts';
import { normalizeTransactionRequest } from '../core/transaction-request.ts';
import { getSystem } from '../countries/registry.ts';
import type { FiscalSystem, LocationForFiscal, SoftwareIdentity } from '../countries/types.ts';
import type { SigningKey } from '../core/signing-key.ts';
import type { TransactionStatus } from '../core/status.ts';
import type { TransactionDraft } from '../core/transaction.ts';
import { promoteQueue, type EnqueueInput } from '../store/repos/jobs-repo.ts';
import { isUniqueViolation, type Queryable } from '../store/db.ts';
import { fiscalRecordsRepo, type FiscalRecordRow } from '../store/repos/fiscal-records-repo.ts';
import { locationsRepo, type LocationRow } from '../store/repos/locations-repo.ts';
import { CHAIN_HEAD_MOVED, HAS_SUBSCRIBERS, NUMBERS_MOVED, renderAppend, transactionsRepo, type RenderedAppend, type TransactionFilter, type TransactionRow } from '../store/repos/transactions-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';
import type { EventPublisher } from './events.ts';
import type { WebhookRow } from '../store/repos/webhooks-repo.ts';
import type { CachedLocation, LocationService } from './locations.ts';
import type { SigningKeyService } from './signing-keys.ts';
import type { ListResult, Page } from './pagination.ts';
import { completionEvent, SUBMIT_JOB, submitJobMaxAttempts, toTransactionView, type TransactionView } from './transaction-view.ts';

/** Statuses from which a cancellation may be issued (DECISIONS "Statuses"). */
export const CANCELLABLE: readonly TransactionStatus[] = ['success', 'pending_lroe', 'pending_submission', 'pending_batch', 'delivered'];

/** A chain's records reach the authority in chain order: its submit jobs form an ordered queue (jobs/queue.ts). */
const isOrdered = (system: FiscalSystem) => system.capabilities.chained && system.capabilities.submission === 'realtime';

/** The legal submission deadline: the system's own rule, else its window in calendar days. */
function deadlineOf(system: FiscalSystem, createdAt: Date, tx: TransactionDraft): Date | null {
  if (system.submissionDeadline) return system.submissionDeadline({ createdAt, tx });
  const days = system.capabilities.submissionWindowDays;
  return days ? new Date(createdAt.getTime() + days * 86_400_000) : null;
}

/** SQLSTATE deadlock_detected. */
const DEADLOCK = '40P01';

/** The inline budget a client may ask for with X-Fiscalization-Timeout (seconds). */
const MAX_INLINE_SECONDS = 10;
/** The most chains' batches one append statement carries (statement size, lock time). */
const MAX_CHAINS_PER_STATEMENT = 32;
/** One-statement appends of a node in flight at once; more wait and go together. */
const APPEND_STATEMENTS_IN_FLIGHT = 2;
/** Batches of one chain begun at once: one writing, the next built on what it will leave. */
const APPEND_BATCHES_PER_CHAIN = 2;
/** The combiner fails an item whose result is an Error: a thrown non-Error is wrapped. */
const toError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));
/** How often an inline wait looks at a submission another worker is running. */
const INLINE_POLL_MS = 50;

export interface Submitter {
  /** Claims and runs this job now, if it is runnable. */
  runNow(jobId: string): Promise<unknown>;
  /** A job was enqueued: a worker in this process should look now. */
  notify(): void;
}

export interface TransactionDeps extends Deps {
  events: EventPublisher;
  locations: LocationService;
  submitter: Submitter | null;
  software: SoftwareIdentity;
  maxAttempts: number;
  signingKeys: SigningKeyService;
}

/** One append: everything a record needs before it takes its place in the chain. */
interface AppendParams {
  id: string;
  auth: AuthContext;
  system: FiscalSystem;
  location: LocationForFiscal;
  draft: TransactionDraft;
  kind: 'record' | 'cancellation';
  type: TransactionRow['type'];
  idempotencyKey: string;
  hash: string;
  requestPayload: unknown;
  sandboxMode: 'stub' | 'authority';
  original?: TransactionRow | undefined;
  originalRecord?: FiscalRecordRow | undefined;
  signingKey?: SigningKey | undefined;
}

interface Stored {
  row: TransactionRow;
  jobId: string | null;
  /** False: the idempotency key was taken already and `row` is that earlier transaction. */
  created: boolean;
  /** Settles once the submit job is runnable (an ordered queue's promotion after the commit). */
  ready?: Promise<void> | undefined;
}

/** What a batch answers for one of its items: stored (or replayed), or this item's own error. */
type Outcome = Stored | { error: ApiError };

export interface CreateHeaders {
  idempotencyKey?: string | undefined;
  timeout?: string | undefined;
  sandbox?: string | undefined;
}

export function createTransactionService(deps: TransactionDeps) {
  const { db, clock } = deps;
  /**
   * The head each chain had after this node's last commit to it: the next batch is built
   * on it and written by one guarded statement (`appendAlone`). Forgotten when that guard
   * finds the head elsewhere (another node appended) or a batch fails; bounded (oldest
   * chains forgotten first: a forgotten chain takes the locking path once).
   */
  const knownHeads = new Map<string, BuiltOn>();
  const MAX_KNOWN_HEADS = 10_000;
  /** Sets `key` as the most recent entry of a map bounded like `knownHeads` (oldest out). */
  const rememberIn = <V>(map: Map<string, V>, key: string, value: V) => {
    map.delete(key);
    map.set(key, value);
    if (map.size > MAX_KNOWN_HEADS) map.delete(map.keys().next().value!);
  };
  const remember = (chainKey: string, head: BuiltOn) => rememberIn(knownHeads, chainKey, head);
  /**
   * The last invoice number each numbering series had after this node's last commit that
   * took from it: a batch on a known head numbers its invoices from here, and its statement
   * moves the series only from these values (else it is refused like a moved head).
   */
  const knownNumbers = new Map<string, number>();
  const rememberNumber = (numberingKey: string, last: number) => rememberIn(knownNumbers, numberingKey, last);
  /**
   * Per account, the webhook subscriptions that wanted its completion events at this node's
   * last locking-path batch with such events: a one-statement batch writes their deliveries
   * itself, and refuses itself if the subscriptions are no longer exactly these (then the
   * locking path finds the current ones). Unknown: none expected.
   */
  const knownSubscribers = new Map<string, WebhookRow[]>();
  const rememberSubscribers = (accountId: string, subs: WebhookRow[]) => rememberIn(knownSubscribers, accountId, subs);

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
   * statements are busy go to PostgreSQL as ONE statement (transactionsRepo.appendGuarded,
   * core/combiner.ts; an idle node's goes at once): with
   * appends spread over many locations each chain's batch holds a record or two, and a
   * statement per chain paid its planning and commit for each. If the combined statement
   * fails, nothing of it was written and each batch runs again alone, so each meets its
   * own verdict (a moved head, a replay) and takes the locking path alone.
   */
  const guardedAppends = new Combiner<RenderedAppend, { jobIds: string[] }>(writeAppends, APPEND_STATEMENTS_IN_FLIGHT, MAX_CHAINS_PER_STATEMENT);

  /**
   * Runs calls in order: on the pipe all at once (they run in the order sent), else each
   * after the one before.
   */
  function inOrder(calls: readonly (() => Promise<void>)[]): Promise<unknown> {
    return db.pipe ? Promise.all(calls.map((c) => c())) : calls.reduce<Promise<void>>((p, c) => p.then(c), Promise.resolve());
  }

  async function writeAppends(parts: RenderedAppend[]): Promise<({ jobIds: string[] } | Error)[]> {
    const out: ({ jobIds: string[] } | Error)[] = new Array(parts.length);
    // A statement moves each head once: with the pipe, a chain's next batch can queue
    // beside the one before, and goes in the next statement.
    const layers: number[][] = [];
    const depth = new Map<string, number>();
    parts.forEach((p, i) => {
      const d = depth.get(p.chainKey) ?? 0;
      depth.set(p.chainKey, d + 1);
      (layers[d] ??= []).push(i);
    });
    const alone = (i: number) => () => transactionsRepo.appendGuarded(appendQ, [parts[i]!]).then(([one]) => void (out[i] = one!), (err: unknown) => void (out[i] = toError(err)));
    await inOrder(layers.map((layer) => async () => {
      try {
        const written = await transactionsRepo.appendGuarded(appendQ, layer.map((i) => parts[i]!));
        layer.forEach((i, k) => (out[i] = written[k]!));
      } catch (err) {
        if (layer.length === 1) out[layer[0]!] = toError(err);
        else await inOrder(layer.map(alone));
      }
    }));
    return out;
  }

  /**
   * A chain's batch on the one-statement path whose statement is not answered yet: built on
   * `base`, it leaves `head` and the series at `numbers`. The chain's next batch is built
   * on these meanwhile (GroupCommitter pipelining) if `base` is what this node knows, and
   * sent: on the pipe at once, behind this one (its guard refuses it if this one did not
   * commit); without a pipe once this one is answered, and only if it committed
   * (`knownHeads` then holds `head` itself). Either way a refused batch takes the locking
   * path after the one before. Why: one busy chain is serial, and building a batch
   * (records, hashes, the statement's JSON) took a sixth of each turn of the chain while
   * PostgreSQL idled; now it happens while the statement before runs.
   */
  interface Ahead { base: BuiltOn; head: BuiltOn; numbers: Map<string, number> }
  const aheadOf = new Map<string, Ahead>();

  /** Can this batch be written by one statement on a head this node knows? */
  function aloneEligible(items: readonly AppendParams[], numbersAhead: Map<string, number> | undefined): boolean {
    return items.every((p) => {
      if (p.kind !== 'record' || p.original) return false;
      const numbering = p.system.numberingKey?.({ location: p.location, tx: p.draft });
      return numbering === undefined || knownNumbers.has(numbering) || numbersAhead?.has(numbering) === true;
    });
  }

  /**
   * Appends queue per chain and commit in batches (see GroupCommitter), two batches of a
   * chain at once: while one's statement runs, the next is built on what it will leave.
   */
  const appends = new GroupCommitter<AppendParams, Outcome>(async (chainKey, take, turn) => {
    let items: AppendParams[] | undefined;
    let outcomes: Outcome[] | undefined;
    let base = knownHeads.get(chainKey);
    let numbersAhead: Map<string, number> | undefined;
    if (turn.pipelined) {
      // The batch before is still running: build on what it will leave, if it was built on
      // what this node knows; else wait for it (it will take the locking path, or did).
      const ahead = aheadOf.get(chainKey);
      if (ahead && base !== undefined && ahead.base === base) {
        base = ahead.head;
        numbersAhead = ahead.numbers;
      } else {
        await turn.previous;
        base = knownHeads.get(chainKey);
      }
    }
    if (base) {
      items = take();
      if (aloneEligible(items, numbersAhead)) {
        try {
          outcomes = await appendAlone(chainKey, items, base, numbersAhead, turn);
        } catch (err) {
          for (const p of items) {
            const numbering = p.system.numberingKey?.({ location: p.location, tx: p.draft });
            if (numbering !== undefined) knownNumbers.delete(numbering);
          }
          if (!takesTheLockingPath(err)) {
            knownHeads.delete(chainKey);
            throw err;
          }
        }
      }
    }
    if (!outcomes) {
      await turn.previous;
      knownHeads.delete(chainKey);
      const done = await db.transaction((tx) => appendBatch(tx, chainKey, (items ??= take())));
      remember(chainKey, done.head);
      for (const [key, last] of done.numbers) rememberNumber(key, last);
      for (const [accountId, subs] of done.subscribers) rememberSubscribers(accountId, subs);
      outcomes = done.outcomes;
    }
    const batch = items!;
    // The batch's submit jobs of an ordered queue entered `waiting`: now that they are
    // committed, the queue's first waiting job goes if nothing of the queue is active
    // (jobs/queue.ts promoteNext). Off the chain's path: the next batch does not wait for
    // it, the answers do. Should this process die first, the worker's sweep promotes it.
    if (outcomes.some((o, i) => 'row' in o && o.created && o.jobId && isOrdered(batch[i]!.system))) {
      const ready = promoteQueue(db, chainKey, clock.now()).catch((err) => {
        deps.log.warn({ err, chainKey }, 'could not promote the queue after a create: the worker sweep will');
      });
      for (const o of outcomes) if ('row' in o) o.ready = ready;
    }
    return outcomes;
  }, undefined, APPEND_BATCHES_PER_CHAIN);

  /**
   * Whether a one-statement append that failed should be run again through the
   * transactional path: its guard found the chain or a series moved, or webhook
   * subscriptions other than those it planned deliveries for, or
   * the unique index refused a key or a seq (a replay, or a race with another node: the
   * locking path sorts both out), or it lost a deadlock. Anything else is a real failure.
   */
  function takesTheLockingPath(err: unknown): boolean {
    const code = (err as { code?: string } | null)?.code;
    return code === CHAIN_HEAD_MOVED || code === NUMBERS_MOVED || code === HAS_SUBSCRIBERS || code === DEADLOCK || isUniqueViolation(err);
  }

  /** The chain a record joins: its system's chain, or the side sequence of annulments outside the chain. */
  function chainKeyOf(p: Pick<AppendParams, 'system' | 'location' | 'draft' | 'kind'>): string {
    const main = p.system.chainKey({ location: p.location, tx: p.draft });
    // An annulment that is not a link of the chain (TicketBAI, SII, SDI, myDATA, PT) is
    // numbered in a side sequence of its own, so the chain and its numbering stay whole.
    return p.kind === 'cancellation' && !p.system.capabilities.cancellationJoinsChain ? `${main}#annulments` : main;
  }

  const append = async (p: AppendParams): Promise<Stored> => {
    const outcome = await appends.run(chainKeyOf(p), p);
    if ('error' in outcome) throw outcome.error;
    return outcome;
  };

  /**
   * Idempotency for a whole batch: items whose key a stored transaction holds already
   * (`existing`, found with the chain head lock) are replays (the same request) or
   * conflicts (another request), and a key twice in one batch is stored once. The unique
   * index still settles races with other nodes: the batch fails and its items run again
   * one by one (GroupCommitter).
   */
  function sortOutReplays(all: readonly AppendParams[], existingRows: readonly TransactionRow[]): { fresh: number[]; settle: (stored: Map<number, TransactionRow>) => (Outcome | undefined)[] } {
    const keyOf = (p: { accountId: string; environment: string; key: string }) => `${p.accountId}\u0000${p.environment}\u0000${p.key}`;
    const existing = new Map(existingRows.map((row) => [keyOf({ accountId: row.account_id, environment: row.environment, key: row.idempotency_key }), row]));
    const fresh: number[] = [];
    const firstWith = new Map<string, number>();
    const replays: { index: number; of: number | TransactionRow }[] = [];
    for (const [index, p] of all.entries()) {
      const key = keyOf({ accountId: p.auth.accountId, environment: p.auth.environment, key: p.idempotencyKey });
      const prior = existing.get(key) ?? firstWith.get(key);
      if (prior !== undefined) {
        replays.push({ index, of: prior });
        continue;
      }
      firstWith.set(key, index);
      fresh.push(index);
    }
    const answer = (p: AppendParams, row: TransactionRow): Outcome =>
      row.request_hash === p.hash ? { row, jobId: null, created: false } : { error: conflict('idempotency key already used with a different request') };
    return {
      fresh,
      settle: (stored) => {
        const out: (Outcome | undefined)[] = new Array(all.length);
        for (const r of replays) out[r.index] = answer(all[r.index]!, typeof r.of === 'number' ? stored.get(r.of)! : r.of);
        return out;
      },
    };
  }

  /**
   * The key the record is signed with (systems that sign with the issuer's certificate),
   * resolved before the chain lock is taken. The real authority also needs the location's
   * uploaded certificate for its TLS: checked here, so a create fails at once, not in the queue.
   */
  async function signingKeyFor(system: FiscalSystem, location: LocationForFiscal, environment: 'test' | 'live', mode: 'stub' | 'authority') {
    if (mode === 'authority' && system.capabilities.submission !== 'none') await deps.signingKeys.forAuthority(location);
    return system.capabilities.signsWithCertificate ? deps.signingKeys.forRecord(location, environment, mode) : undefined;
  }

  function usableLocation(auth: AuthContext, found: CachedLocation | undefined): { system: FiscalSystem; location: LocationForFiscal } {
    const row = found?.row;
    if (!row || !row.system) throw badRequest('location not found');
    if (row.status !== 'active') throw badRequest('location is not active');
    if (!allowsCountry(auth.permissions, row.country)) throw forbidden(`API key is not allowed to act in country ${row.country}`);
    return { system: getSystem(row.system), location: found.fiscal };
  }

  function parseHeaders(auth: AuthContext, h: CreateHeaders) {
    const key = h.idempotencyKey ?? crypto.randomUUID();
    if (key.length < 1 || key.length > 255) throw badRequest('Idempotency-Key must be 1-255 characters');
    let inline: number | undefined;
    if (h.timeout !== undefined) {
      inline = Number(h.timeout);
      if (h.timeout.trim() === '' || !Number.isFinite(inline) || inline < 0 || inline > MAX_INLINE_SECONDS) {
        throw badRequest('X-Fiscalization-Timeout must be a number of seconds from 0 to 10');
      }
    }
    if (h.sandbox !== undefined && h.sandbox !== 'authority') throw badRequest('X-Svc-Sandbox must be "authority"');
    if (h.sandbox !== undefined && auth.environment !== 'test') throw badRequest('X-Svc-Sandbox is only accepted with test keys');
    return { key, inline, sandbox: h.sandbox };
  }

  /** The same key again: the same request gets the same transaction; another request is a 409. */
  function replay(existing: TransactionRow, hash: string): TransactionRow {
    if (existing.request_hash !== hash) throw conflict('idempotency key already used with a different request');
    return existing;
  }

  /** A chain head as a batch is built on it: the last record's facts, or none for a new chain. */
  interface BuiltOn {
    seq: number;
    fingerprint: string | null;
    fiscalId: string | null;
    issuedAt: Date | null;
    link: Record<string, string> | null;
  }

  /**
   * Builds a batch's records on `head`, in order, each on the one before it: the rows to
   * write, the submit jobs, the completion events, and the head after the last record.
   * `numbers` gives each item's invoice number (systems with a numbering series).
   */
  function buildBatch(chainKey: string, items: readonly AppendParams[], head: BuiltOn, numbers: readonly (number | undefined)[], now: Date) {
    let previous = head.seq === 0
      ? null
      : { fingerprint: head.fingerprint, fiscalId: head.fiscalId, issuedAt: (head.issuedAt ?? now).toISOString(), linkData: head.link };
    let seq = head.seq;
    let last: BuiltOn = head;
    const rows: { t: TransactionRow; r: FiscalRecordRow }[] = [];
    const jobs: { index: number; input: EnqueueInput }[] = [];
    for (const [index, p] of items.entries()) {
      seq += 1;
      const status = p.system.initialStatus(p.location);
      const record = p.system.build({
        transactionId: p.id,
        kind: p.kind,
        tx: p.draft,
        original: p.original
          ? {
              transactionId: p.original.id, fiscalId: p.original.fiscal_id, tx: p.original.normalized,
              issuedAt: (p.originalRecord?.created_at ?? p.original.created_at).toISOString(),
              documentNumber: p.originalRecord?.document_number ?? null, upstreamId: p.original.fiscal_id_upstream,
            }
          : undefined,
        location: p.location,
        environment: p.auth.environment,
        now,
        chain: { seq, number: numbers[index], previous },
        software: deps.software,
        signingKey: p.signingKey,
      });
      const t: TransactionRow = {
        id: p.id,
        account_id: p.auth.accountId,
        location_id: p.location.id,
        environment: p.auth.environment,
        type: p.type,
        status,
        amount: p.draft.total_amount,
        currency: p.draft.currency,
        country: p.location.country,
        system: p.system.key,
        idempotency_key: p.idempotencyKey,
        request_hash: p.hash,
        request_payload: p.requestPayload,
        normalized: p.draft,
        response_payload: {},
        fiscal_id: record.fiscalId,
        fiscal_id_upstream: null,
        error_message: null,
        render_hints: record.renderHints,
        sandbox_mode: p.sandboxMode,
        cancels_id: p.original?.id ?? null,
        cancelled_by_id: null,
        deadline_at: status === 'success' ? null : deadlineOf(p.system, now, p.draft),
        offline_until: null,
        submitted_at: null,
        completed_at: status === 'success' ? now : null,
        created_at: now,
        updated_at: now,
      };
      rows.push({
        t,
        r: {
          id: newId(), transaction_id: p.id, account_id: p.auth.accountId, system: p.system.key, kind: p.kind, chain_key: chainKey, seq,
          previous_fingerprint: last.fingerprint, fingerprint: record.fingerprint, fiscal_id: record.fiscalId,
          document_number: record.documentNumber ?? null, qr_data: record.qrData,
          content_type: record.contentType, body: record.body, placeholder: record.placeholder, created_at: now,
        },
      });
      if (status === 'pending') {
        // A chain's records reach the authority in chain order (jobs/queue.ts ordered queues).
        const ordered = isOrdered(p.system);
        jobs.push({
          index,
          input: {
            kind: SUBMIT_JOB, accountId: p.auth.accountId, transactionId: p.id, maxAttempts: submitJobMaxAttempts(p.system, deps.maxAttempts), runAt: now,
            // Ordered: enters `waiting`; promoted after the commit (see `appends`).
            ...(ordered ? { queueKey: chainKey, queueSeq: seq, waiting: true } : {}),
          },
        });
      }
      last = { seq, fingerprint: record.fingerprint, fiscalId: record.fiscalId, issuedAt: now, link: record.linkData ?? null };
      previous = { fingerprint: record.fingerprint, fiscalId: record.fiscalId, issuedAt: now.toISOString(), linkData: record.linkData ?? null };
    }
    // Fiscalized at creation (FR, PT): the completion events commit with the records.
    const events = deps.events.prepareMany(rows.filter((r) => r.t.status === 'success').map((r) => completionEvent(r.t, now)), now);
    return { rows, jobs, events, last };
  }

  /** The stored items' outcomes, then the replays of keys an item of this very batch took. */
  function settleBatch(replays: ReturnType<typeof sortOutReplays>, rows: readonly { t: TransactionRow }[], jobs: readonly { index: number }[], jobIds: readonly string[]): Outcome[] {
    const jobOf = new Map(jobs.map((j, i) => [j.index, jobIds[i]!]));
    const stored = new Map(replays.fresh.map((original, i) => [original, rows[i]!.t]));
    const settled = replays.settle(stored);
    replays.fresh.forEach((original, i) => (settled[original] = { row: rows[i]!.t, jobId: jobOf.get(i) ?? null, created: true }));
    return settled as Outcome[];
  }

  /**
   * Stores a batch of transactions of one chain with their fiscal records, chained, and
   * their submit jobs: one database transaction (the transactional outbox). The chain
   * head is locked first, so appends to one chain are serial and the chain never forks;
   * each record is built on the one before it. Answers the outcomes and the head after
   * the batch (what the next batch of this node may be built on: see `appendAlone`).
   */
  async function appendBatch(
    tx: Queryable, chainKey: string, all: readonly AppendParams[],
  ): Promise<{ outcomes: Outcome[]; head: BuiltOn; numbers: Map<string, number>; subscribers: Map<string, WebhookRow[]> }> {
    const now = clock.now();
    const locked = await fiscalRecordsRepo.lockChainHead(tx, chainKey, now, all.map((p) => ({ accountId: p.auth.accountId, environment: p.auth.environment, key: p.idempotencyKey })));
    const head: BuiltOn = { seq: locked.seq, fingerprint: locked.last_fingerprint, fiscalId: locked.last_fiscal_id, issuedAt: locked.last_issued_at, link: locked.last_link };
    const replays = sortOutReplays(all, locked.existing.length > 0 ? await transactionsRepo.getByIds(tx, locked.existing) : []);
    const items = replays.fresh.map((i) => all[i]!);
    if (items.length === 0) return { outcomes: replays.settle(new Map()) as Outcome[], head, numbers: new Map(), subscribers: new Map() };
    // Invoice numbers for the whole batch: one statement per series, in the batch's order.
    const numberingKeys = items.map((p) => (p.kind === 'record' ? p.system.numberingKey?.({ location: p.location, tx: p.draft }) : undefined));
    const nextOf = new Map<string, number>();
    for (const key of new Set(numberingKeys)) {
      if (key) nextOf.set(key, await fiscalRecordsRepo.takeNumbers(tx, key, numberingKeys.filter((k) => k === key).length, now));
    }
    const numbers = numberingKeys.map((key) => {
      if (!key) return undefined;
      const n = nextOf.get(key)!;
      nextOf.set(key, n + 1);
      return n;
    });
    // Learnt once this transaction commits (see `appends`).
    const numbersAfter = new Map([...nextOf].map(([key, next]) => [key, next - 1]));
    const { rows, jobs, events, last } = buildBatch(chainKey, items, head, numbers, now);
    // One statement writes the batch: transactions, records, jobs, chain head, events.
    const written = await transactionsRepo.insertManyWithRecords(
      tx, rows, { chainKey, seq: last.seq, fingerprint: last.fingerprint, fiscalId: last.fiscalId, issuedAt: now, link: last.link },
      { events: events.batch, jobs: jobs.map((j) => j.input) },
    );
    await events.deliver(tx, written.matched);
    // Who wants these events now, per account of the batch (learnt once this commits).
    const subscribers = new Map<string, WebhookRow[]>();
    if (events.batch.rows.length > 0) {
      for (const e of events.batch.rows) subscribers.set(e.account_id, written.matched.filter((w) => w.account_id === e.account_id));
    }

    for (const [i, p] of items.entries()) {
      if (!p.original) continue;
      await transactionsRepo.update(tx, p.original.id, { cancelled_by_id: p.id }, now);
      // Locally signed records (FR, PT) are final at creation, and so is their annulment.
      if (rows[i]!.t.status === 'success') await transactionsRepo.update(tx, p.original.id, { status: 'cancelled' }, now, CANCELLABLE);
    }
    return { outcomes: settleBatch(replays, rows, jobs, written.jobIds), head: last, numbers: numbersAfter, subscribers };
  }

  /**
   * The same batch in one autocommitted statement, built on the head this node's last
   * commit to the chain left (`known`): no lock taken first, no BEGIN, no COMMIT, one
   * round trip instead of three. The statement checks what the build assumed and fails
   * as a whole when it does not hold (transactions-repo `appendGuarded`):
   * the caller then runs the batch through `appendBatch`. Only for batches that need
   * nothing else in their transaction: invoice numbers only from series this node knows
   * (moved by the same statement, from what it knew), no original to mark cancelled;
   * webhook deliveries only for the subscriptions this node knows (the statement refuses
   * itself if those changed).
   */
  async function appendAlone(chainKey: string, all: readonly AppendParams[], known: BuiltOn, numbersAhead: Map<string, number> | undefined, turn: Turn): Promise<Outcome[]> {
    const now = clock.now();
    // Keys already stored are not looked up here: the unique index refuses such a batch,
    // and the transactional path sorts out its replays. A key twice in the batch is stored once.
    const replays = sortOutReplays(all, []);
    const items = replays.fresh.map((i) => all[i]!);
    // Invoice numbers from the series as the batch before leaves them (aloneEligible: all known).
    const series = new Map<string, { from: number; to: number }>();
    const numbers = items.map((p) => {
      const key = p.system.numberingKey?.({ location: p.location, tx: p.draft });
      if (key === undefined) return undefined;
      const from = numbersAhead?.get(key) ?? knownNumbers.get(key)!;
      const s = series.get(key) ?? { from, to: from };
      s.to += 1;
      series.set(key, s);
      return s.to;
    });
    const { rows, jobs, events, last } = buildBatch(chainKey, items, known, numbers, now);
    // Webhook deliveries of the completion events, for the subscriptions this node knows
    // want them (the statement checks that they still are exactly those).
    const subscribersOf = (accountId: string) => knownSubscribers.get(accountId) ?? [];
    const planned = events.deliveries(subscribersOf);
    const accounts = [...new Set(events.batch.rows.map((e) => e.account_id))];
    const part = renderAppend({
      items: rows, head: { chainKey, seq: last.seq, fingerprint: last.fingerprint, fiscalId: last.fiscalId, issuedAt: now, link: last.link },
      // The submit jobs first: settleBatch finds theirs by position.
      events: events.batch, jobs: [...jobs.map((j) => j.input), ...planned.jobs], guard: known,
      numbers: [...series].map(([key, s]) => ({ key, from: s.from, to: s.to })),
      subscribers: accounts.flatMap(subscribersOf), deliveries: planned.deliveries,
    });
    const ahead: Ahead = { base: known, head: last, numbers: new Map([...series].map(([key, s]) => [key, s.to])) };
    aheadOf.set(chainKey, ahead);
    turn.release();
    let written: { jobIds: string[] };
    try {
      if (!db.pipe) {
        // Built on the batch before: send only if it committed what this was built on. (On
        // the pipe this statement runs after that one anyway, and its guard tells.)
        await turn.previous;
        if (knownHeads.get(chainKey) !== known || [...series].some(([key, s]) => knownNumbers.get(key) !== s.from)) {
          throw Object.assign(new Error('the batch this one was built on did not commit'), { code: CHAIN_HEAD_MOVED });
        }
      }
      written = await guardedAppends.submit(part);
    } finally {
      if (aheadOf.get(chainKey) === ahead) aheadOf.delete(chainKey);
    }
    // Only forward: the answers of a chain's pipelined batches may be taken in any order.
    if ((knownHeads.get(chainKey)?.seq ?? -1) < last.seq) remember(chainKey, last);
    for (const [key, s] of series) if ((knownNumbers.get(key) ?? -1) < s.to) rememberNumber(key, s.to);
    if (planned.deliveries.length > 0) events.enqueued();
    return settleBatch(replays, rows, jobs, written.jobIds);
  }

  /** Waits up to the inline budget for the authority, then answers with whatever status was reached. */
  async function settleInline(row: TransactionRow, jobId: string | null, system: FiscalSystem, inline: number | undefined): Promise<TransactionRow> {
    if (!jobId || !deps.submitter) return row;
    const budget = inline ?? system.capabilities.inlineWindowSeconds ?? 0;
    if (budget <= 0) {
      deps.submitter.notify();
      return row;
    }
    const deadline = Date.now() + budget * 1000;
    const run = deps.submitter.runNow(jobId).catch((err) => {
      deps.log.error({ err, jobId }, 'inline submission failed');
      return true;
    });
    let timer: NodeJS.Timeout | undefined;
    const ranHere = await Promise.race([run, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), budget * 1000)))]);
    clearTimeout(timer);
    let current = (await transactionsRepo.getById(db, row.id)) ?? row;
    // A worker of this or another process took the job first: wait for its outcome instead,
    // within the same budget.
    while (ranHere === false && (current.status === 'pending' || current.status === 'processing') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, INLINE_POLL_MS));
      current = (await transactionsRepo.getById(db, row.id)) ?? current;
    }
    return current;
  }

  async function create(auth: AuthContext, body: unknown, headers: CreateHeaders): Promise<{ transaction: TransactionView; created: boolean }> {
    const h = parseHeaders(auth, headers);
    const { draft } = normalizeTransactionRequest(body, clock.now());
    const hash = crypto.createHash('sha256').update(stableStringify({ body, sandbox: h.sandbox ?? null })).digest('hex');

    let prepared: Pick<AppendParams, 'system' | 'location' | 'sandboxMode' | 'draft' | 'signingKey'>;
    try {
      const { system, location } = usableLocation(auth, await deps.locations.forTransaction(auth.accountId, draft.location_id));
      const sandboxMode = auth.environment === 'test' && h.sandbox === undefined ? 'stub' : 'authority';
      if (sandboxMode === 'authority' && !system.capabilities.authorityTransport) {
        throw new ApiError(400, `the ${system.key} authority client is not available yet: use a test key without X-Svc-Sandbox (the sandbox stub)`);
      }
      const metadata = system.validateTransaction(draft, { location, environment: auth.environment, now: clock.now() });
      prepared = { system, location, sandboxMode, draft: { ...draft, metadata }, signingKey: await signingKeyFor(system, location, auth.environment, sandboxMode) };
    } catch (err) {
      // A replay answers what the first request got, even if the location changed since
      // (deactivated, rules tightened): look the key up before reporting the error.
      if (err instanceof ApiError && headers.idempotencyKey !== undefined) {
        const existing = await transactionsRepo.findByIdempotencyKey(db, auth.accountId, auth.environment, h.key);
        if (existing) return { transaction: toTransactionView(replay(existing, hash)), created: false };
      }
      throw err;
    }

    let stored: Stored;
    try {
      stored = await append({
        id: newId(), auth, ...prepared, kind: 'record', type: draft.type, idempotencyKey: h.key, hash, requestPayload: body,
      });
    } catch (err) {
      // Another node committed the same key first: the unique index waited for it.
      if (isUniqueViolation(err, 'transactions_idempotency_key')) {
        const winner = await transactionsRepo.findByIdempotencyKey(db, auth.accountId, auth.environment, h.key);
        if (winner) return { transaction: toTransactionView(replay(winner, hash)), created: false };
      }
      throw err;
    }
    if (!stored.created) return { transaction: toTransactionView(stored.row), created: false };
    await stored.ready;
    const settled = await settleInline(stored.row, stored.jobId, prepared.system, h.inline);
    return { transaction: toTransactionView(settled), created: true };
  }

  async function get(auth: AuthContext, id: string): Promise<TransactionView> {
    const row = await transactionsRepo.get(db, auth.accountId, id);
    if (!row) throw notFound('transaction not found');
    return toTransactionView(row);
  }

  async function list(auth: AuthContext, filter: TransactionFilter, page: Page): Promise<ListResult<TransactionView>> {
    const { rows, total } = await transactionsRepo.list(db, auth.accountId, filter, page.limit, page.offset);
    return { data: rows.map(toTransactionView), total, ...page };
  }

  /** The fiscal document exactly as signed or sent (DECISIONS "Fiscal record"). */
  async function fiscalRecord(auth: AuthContext, id: string): Promise<FiscalRecordRow> {
    const row = await transactionsRepo.get(db, auth.accountId, id);
    if (!row) throw notFound('transaction not found');
    const record = await fiscalRecordsRepo.getForTransaction(db, row.id);
    if (!record) throw notFound('fiscal record not found');
    return record;
  }

  /**
   * Cancels through the same pipeline: a new `cancellation` transaction carrying the
   * system's annulment record. Idempotent: a second cancel returns the first one.
   */
  async function cancel(auth: AuthContext, id: string, reason: string | undefined): Promise<{ transaction: TransactionView; created: boolean }> {
    const original = await transactionsRepo.get(db, auth.accountId, id);
    if (!original) throw notFound('transaction not found');
    const already = original.cancelled_by_id ? await transactionsRepo.getById(db, original.cancelled_by_id) : undefined;
    if (already) return { transaction: toTransactionView(already), created: false };
    if (original.type === 'cancellation' || !CANCELLABLE.includes(original.status)) throw conflict('transaction cannot be cancelled');

    const locRow = await locationsRepo.getById(db, original.location_id);
    if (!locRow?.system) throw conflict('transaction cannot be cancelled');
    if (!allowsCountry(auth.permissions, locRow.country)) throw forbidden(`API key is not allowed to act in country ${locRow.country}`);
    const system = getSystem(locRow.system);
    const location = deps.locations.toFiscal(locRow);
    const signingKey = await signingKeyFor(system, location, original.environment, original.sandbox_mode ?? 'stub');
    const draft: TransactionDraft = {
      ...original.normalized,
      timestamp: clock.now().toISOString(),
      metadata: { ...original.normalized.metadata, ...(reason ? { cancellation_reason: reason } : {}) },
    };
    try {
      // The original's record never changes once written: read outside the append.
      const originalRecord = await fiscalRecordsRepo.getForTransaction(db, original.id);
      const stored = await append({
        id: newId(), auth, system, location, draft, kind: 'cancellation', type: 'cancellation',
        idempotencyKey: `cancel:${original.id}`, hash: `cancel:${original.id}`, requestPayload: { reason: reason ?? null },
        sandboxMode: original.sandbox_mode ?? 'stub', original, originalRecord, signingKey,
      });
      if (!stored.created) return { transaction: toTransactionView(stored.row), created: false };
      await stored.ready;
      const settled = await settleInline(stored.row, stored.jobId, system, undefined);
      return { transaction: toTransactionView(settled), created: true };
    } catch (err) {
      if (isUniqueViolation(err)) {
        const winner = await transactionsRepo.findCancellation(db, original.id);
        if (winner) return { transaction: toTransactionView(winner), created: false };
      }
      throw err;
    }
  }

  return { create, get, list, fiscalRecord, cancel };
}

export type TransactionService = ReturnType<typeof createTransactionService>;
