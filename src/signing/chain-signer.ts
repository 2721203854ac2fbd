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
 * in order and answers the texts; the event loop meanwhile serves other requests.
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
import { Worker } from 'node:worker_threads';
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
 * Signs a run in order: the first record's message ends with `previous` (the signature
 * text of the record before the run; null: none), each next one's with the text of the
 * one before. Answers the texts, in order.
 */
export type SignChain = (run: readonly ChainSigning[], previous: string | null) => Promise<string[]>;

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
const { parentPort } = require('node:worker_threads');
const crypto = require('node:crypto');
const keys = new Map();
parentPort.on('message', (m) => {
  for (const k of m.keys) keys.set(k.id, k.key);
  try {
    const out = [];
    let last = m.previous;
    for (const r of m.run) {
      const key = keys.get(r.keyId);
      const options = key.asymmetricKeyType === 'rsa'
        ? { key, padding: crypto.constants.RSA_PKCS1_PADDING }
        : { key, dsaEncoding: 'ieee-p1363' };
      last = crypto.sign(r.digest, Buffer.from(r.messageHead + last, 'utf8'), options).toString(r.encoding);
      out.push(last);
    }
    parentPort.postMessage({ id: m.id, out });
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String((err && err.message) || err) });
  }
});
`;

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
export function createChainSigner(log?: { warn(obj: object, msg: string): void }): SignChain & { close(): Promise<void>; readonly runs: { thread: number; inline: number } } {
  /** The thread, with the runs it has not answered yet (a gone thread fails its own runs only). */
  let worker: { thread: Worker; pending: Map<number, Pending>; sent: Set<number> } | undefined;
  /** Runs signed by the thread and on the calling thread (a key not in process, a thread failure). */
  const runs = { thread: 0, inline: 0 };
  let nextId = 1;

  const start = () => {
    const thread = new Worker(WORKER_SOURCE, { eval: true });
    thread.unref();
    const self = { thread, pending: new Map<number, Pending>(), sent: new Set<number>() };
    thread.on('message', (m: { id: number; out?: string[]; error?: string }) => {
      const p = self.pending.get(m.id);
      if (!p) return;
      self.pending.delete(m.id);
      if (m.out) p.resolve(m.out);
      else p.reject(new Error(m.error ?? 'the signing thread failed'));
    });
    const gone = (err: Error) => {
      if (worker === self) worker = undefined;
      for (const p of self.pending.values()) p.reject(err);
      self.pending.clear();
    };
    thread.on('error', gone);
    thread.on('exit', (code) => gone(new Error(`the signing thread exited (${code})`)));
    return self;
  };

  const sign = async (run: readonly ChainSigning[], previous: string | null): Promise<string[]> => {
    if (run.length === 0) return [];
    const keys: KeyObject[] = [];
    for (const r of run) {
      const key = inProcessKeyOf(r.signer);
      if (key === undefined) {
        runs.inline += 1;
        return signChainInline(run, previous);
      }
      keys.push(key);
    }
    try {
      const w = (worker ??= start());
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
      w.thread.postMessage({ id, keys: fresh, run: items, previous: previous ?? '' });
      const out = await answer;
      runs.thread += 1;
      return out;
    } catch (err) {
      // The thread is gone or refused the run: sign here (the record must not fail for it).
      log?.warn({ err }, 'the signing thread failed: signing the run on the main thread');
      runs.inline += 1;
      return signChainInline(run, previous);
    }
  };

  return Object.assign(sign, {
    runs,
    async close() {
      const w = worker;
      worker = undefined;
      if (w) await w.thread.terminate();
    },
  });
}
