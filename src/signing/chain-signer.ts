/**
 * Signs a run of chained records off the event loop.
 *
 * Some records sign the previous record's signature: an NF525 record (France) and a
 * SAF-T (PT) document both end their signed message with the previous one's signature as
 * text. A run is therefore serial: record i's message is `head_i + text(sig_{i-1})`. On
 * a busy register the ledger builds runs of ten or more at once, and signing them on the
 * one JavaScript thread was the largest single cost of a create (ECDSA P-256 ~27 µs,
 * RSA-1024 ~89 µs a record on the benchmark machine, against ~0.25 ms for the whole
 * create). Here the whole run goes to one worker thread in one message, which signs it
 * in order and answers the texts; the event loop meanwhile serves other requests. The
 * answers come back on a port that `poll` reads synchronously: the ledger takes them
 * between requests instead of after the event loop's next turn.
 *
 * Only keys held in this process can go (`inProcessKeyOf`: a KeyObject is sent once to
 * the worker and kept there by id). A run with a key that is not (a PKCS#11 token's:
 * its session is used by one call at a time, on this thread) is signed here, in order,
 * as before. So is every run when threads are off (`signChainInline`), and a run whose
 * worker fails (it is restarted for the next run): a record is never refused because
 * the worker is gone.
 *
 * The worker signs exactly as `Signer.sign` does in process (signer.ts): ECDSA in IEEE
 * P1363 `r || s`, RSA PKCS#1 v1.5. Its source is a string evaluated by the worker (not a
 * file): the service also runs as one bundled executable (scripts/sea), where no second
 * file exists to start a worker from.
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { KeyObject } from 'node:crypto';
import { inProcessKeyOf, type Signer, type SignerDigest } from './signer.ts';

/** One record of a run: who signs, how, and its message up to the previous signature's text. */
export interface ChainSigning {
  signer: Signer;
  digest: SignerDigest;
  /** How a signature is written as text (what the next record signs and the record carries). */
  encoding: 'base64' | 'base64url';
  /** The signed message without its last part, the previous record's signature text ('' for a chain's first). */
  messageHead: string;
}

/**
 * Where a run starts: the signature text of the record before it (null: none), or the
 * answer of the run sent before it on the same chain (`SignChain`'s promise), not come
 * yet: the run then starts from that run's last text.
 */
export type RunStart = string | null | Promise<string[]>;

/** The text a run starts from, once its start is known. */
export const startText = async (start: RunStart): Promise<string | null> => (start instanceof Promise ? lastOf(await start) : start);

const lastOf = (texts: readonly string[]): string => {
  const last = texts[texts.length - 1];
  if (last === undefined) throw new Error('a run starts from a run of no records');
  return last;
};

/**
 * Signs a run in order: the first record's message ends with the text `previous` gives
 * (`RunStart`), each next one's with the text of the one before. Answers the texts, in
 * order. A run that starts from another not answered yet is signed right after it, without
 * waiting for its answer here: a chain's next batch is prepared and sent while the one
 * before is still being signed (ledger.ts `buildBatch`).
 */
export type SignChain = ((run: readonly ChainSigning[], previous: RunStart) => Promise<string[]>) & {
  /**
   * Takes the answers that already arrived, now, without waiting for the event loop to
   * deliver them (see `createChainSigner`). Optional: an inline signer has none.
   */
  poll?(): void;
};

/** The same run signed on this thread. */
export function signChainInline(run: readonly ChainSigning[], previous: string | null): string[] {
  const out: string[] = [];
  let last = previous ?? '';
  for (const r of run) {
    last = r.signer.sign(r.digest, Buffer.from(r.messageHead + last, 'utf8')).toString(r.encoding);
    out.push(last);
  }
  return out;
}

/** The worker's source (CommonJS, evaluated): keys by id, one run per message. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const reply = workerData.reply;
const crypto = require('node:crypto');
const keys = new Map();
// The last text of the latest runs, for a run sent to start from one of them (m.after).
const lasts = new Map();
parentPort.on('message', (m) => {
  for (const k of m.keys) keys.set(k.id, k.key);
  try {
    const out = [];
    let last = m.previous;
    if (m.after !== undefined) {
      last = lasts.get(m.after);
      if (last === undefined) throw Object.assign(new Error('the run this one starts from was not signed here'), { unchained: true });
    }
    for (const r of m.run) {
      const key = keys.get(r.keyId);
      const options = key.asymmetricKeyType === 'rsa'
        ? { key, padding: crypto.constants.RSA_PKCS1_PADDING }
        : { key, dsaEncoding: 'ieee-p1363' };
      last = crypto.sign(r.digest, Buffer.from(r.messageHead + last, 'utf8'), options).toString(r.encoding);
      out.push(last);
    }
    lasts.set(m.id, last);
    if (lasts.size > 256) lasts.delete(lasts.keys().next().value);
    reply.postMessage({ id: m.id, out });
  } catch (err) {
    reply.postMessage({ id: m.id, error: String((err && err.message) || err), unchained: err && err.unchained === true });
  }
});
`;

/** What the thread answers for a run: its signatures, or why it could not. */
interface Answer { id: number; out?: string[]; error?: string; unchained?: boolean }

interface Pending { resolve: (out: string[]) => void; reject: (err: Error) => void }

/** Ids of the in-process keys, for the worker's key map (a key is sent once per worker). */
const keyIds = new WeakMap<KeyObject, number>();
let nextKeyId = 1;
const idOf = (key: KeyObject): number => {
  let id = keyIds.get(key);
  if (id === undefined) keyIds.set(key, (id = nextKeyId++));
  return id;
};

/**
 * One signing thread. Started on first use, unreferenced (it never keeps a process
 * alive), restarted after a failure. A run waits behind the runs sent before it; the
 * thread has work only while a chain's batch is being built.
 */
export function createChainSigner(log?: { warn(obj: object, msg: string): void }): SignChain & {
  poll(): void;
  /** Runs sent to the thread and not answered yet. */
  awaiting(): number;
  close(): Promise<void>;
  readonly runs: { thread: number; inline: number };
} {
  /**
   * The thread, with the runs it has not answered yet (a gone thread fails its own runs
   * only), and the port its answers come back on (`answered` settles one).
   */
  let worker: { thread: Worker; answers: MessagePort; answered: (m: Answer) => void; pending: Map<number, Pending>; sent: Set<number> } | undefined;
  /** Runs signed by the thread and on the calling thread (a key not in process, a thread failure). */
  const runs = { thread: 0, inline: 0 };
  let nextId = 1;

  /** Settles every answer already on the port, now (no-op when none is awaited). */
  const take = (w: NonNullable<typeof worker>) => {
    if (w.pending.size === 0) return;
    for (let m = receiveMessageOnPort(w.answers); m !== undefined; m = receiveMessageOnPort(w.answers)) w.answered(m.message as Answer);
  };

  const start = () => {
    // Answers come on a port of their own, not the worker's: `poll` can take them with
    // receiveMessageOnPort, which does not exist for the worker's own channel.
    const { port1: answers, port2: reply } = new MessageChannel();
    const thread = new Worker(WORKER_SOURCE, { eval: true, workerData: { reply }, transferList: [reply] });
    thread.unref();
    const pending = new Map<number, Pending>();
    const answered = (m: Answer) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.out) p.resolve(m.out);
      // The thread is fine: the run itself did not sign (a digest or key crypto refuses), or
      // the run it starts from did not sign there (`unchained`: it is signed here instead).
      else p.reject(Object.assign(new Error(m.error ?? 'the run could not be signed'), m.unchained === true ? { unchained: true } : { refused: true }));
    };
    const self = { thread, answers, answered, pending, sent: new Set<number>() };
    answers.on('message', answered);
    answers.unref();
    const gone = (err: Error) => {
      if (worker === self) worker = undefined;
      take(self); // answers it sent before it went still count
      answers.close();
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    };
    thread.on('error', gone);
    thread.on('exit', (code) => gone(new Error(`the signing thread exited (${code})`)));
    return self;
  };

  /**
   * The answers that already arrived, settled now instead of when the event loop gets to
   * them. Why: under load the event loop runs long stretches of request handling before it
   * delivers a message, and a chain's batch waits for its signatures all that time (on the
   * 2-core benchmark machine ~1.3 ms of a ~3 ms wait, for ~0.8 ms of signing). The ledger
   * calls this at every append, i.e. between requests: a batch's signatures are taken
   * within one request's handling of their arrival (measured: wait 3.0 → 1.9 ms a batch).
   */
  const poll = () => {
    if (worker !== undefined) take(worker);
  };

  /** Runs sent to a thread, by the promise `sign` answered: a run starting from one is sent to start from it there. */
  const sentRuns = new WeakMap<Promise<string[]>, { on: NonNullable<typeof worker>; id: number }>();

  /** The run signed on this thread, once its start is known. */
  const signHere = async (run: readonly ChainSigning[], previous: RunStart): Promise<string[]> => {
    const text = await startText(previous);
    runs.inline += 1;
    return signChainInline(run, text);
  };

  const sign = (run: readonly ChainSigning[], previous: RunStart): Promise<string[]> => {
    if (run.length === 0) return Promise.resolve([]);
    const keys: KeyObject[] = [];
    for (const r of run) {
      const key = inProcessKeyOf(r.signer);
      if (key === undefined) return signHere(run, previous);
      keys.push(key);
    }
    let w: NonNullable<typeof worker>;
    try {
      w = worker ??= start();
    } catch (err) {
      log?.warn({ err }, 'the signing thread could not start: signing the run on the main thread');
      return signHere(run, previous);
    }
    // A run starting from one this thread has not answered yet is signed there right after
    // it (the thread keeps the last text of its latest runs); from one sent elsewhere (a
    // thread since replaced, this thread), once that one is answered.
    let after: number | undefined;
    if (previous instanceof Promise) {
      const from = sentRuns.get(previous);
      if (from === undefined || from.on !== w) return previous.then((texts) => sign(run, lastOf(texts)));
      after = from.id;
    }
    const fresh: { id: number; key: KeyObject }[] = [];
    const items = run.map((r, i) => {
      const keyId = idOf(keys[i]!);
      if (!w.sent.has(keyId)) {
        w.sent.add(keyId);
        fresh.push({ id: keyId, key: keys[i]! });
      }
      return { keyId, digest: r.digest, encoding: r.encoding, messageHead: r.messageHead };
    });
    const id = nextId++;
    const answer = new Promise<string[]>((resolve, reject) => w.pending.set(id, { resolve, reject }));
    w.thread.postMessage({ id, keys: fresh, run: items, previous: typeof previous === 'string' ? previous : '', after });
    const out = answer.then(
      (texts) => {
        runs.thread += 1;
        return texts;
      },
      (err: unknown) => {
        // The thread is gone or refused the run: sign here. A gone thread's runs still sign
        // (the record must not fail for it), and is logged; a refused run fails here with this
        // thread's own error (its stack, its code), and is not the thread's failure; a run
        // whose start did not sign there starts here from that run's own answer (signed
        // here, or its failure).
        const e = err as { refused?: boolean; unchained?: boolean };
        if (e.refused !== true && e.unchained !== true) log?.warn({ err }, 'the signing thread failed: signing the run on the main thread');
        return signHere(run, previous);
      },
    );
    sentRuns.set(out, { on: w, id });
    return out;
  };

  return Object.assign(sign, {
    runs,
    poll,
    awaiting: () => worker?.pending.size ?? 0,
    async close() {
      const w = worker;
      worker = undefined;
      if (w) {
        await w.thread.terminate();
        w.answers.close();
      }
    },
  });
}
