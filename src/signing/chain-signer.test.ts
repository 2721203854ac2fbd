import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createChainSigner, signChainInline, type ChainSigning } from './chain-signer.ts';
import { inProcessSigner, verifyWith, type Signer } from './signer.ts';

const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
const signer = createChainSigner();
afterAll(() => signer.close());

const ecRun = (n: number, s: Signer = inProcessSigner(ec)): ChainSigning[] =>
  Array.from({ length: n }, (_, i) => ({ signer: s, digest: 'sha256', encoding: 'base64url', messageHead: `NF|${i + 1}|${'x'.repeat(i)}|` }));
const rsaRun = (n: number): ChainSigning[] =>
  Array.from({ length: n }, (_, i) => ({ signer: inProcessSigner(rsa), digest: 'sha1', encoding: 'base64', messageHead: `2026-01-0${(i % 9) + 1};2026-01-01T10:00:00;FT A/${i + 1};1.00;` }));

/** Every signature checks over its head and the text before it (the run's `previous` first). */
function expectChained(run: ChainSigning[], out: string[], previous: string | null) {
  expect(out).toHaveLength(run.length);
  let last = previous ?? '';
  run.forEach((r, i) => {
    const sig = Buffer.from(out[i]!, r.encoding);
    expect(sig.toString(r.encoding)).toBe(out[i]);
    expect(verifyWith(r.signer.publicKey, r.digest, Buffer.from(r.messageHead + last, 'utf8'), sig)).toBe(true);
    last = out[i]!;
  });
}

describe('chain signer', () => {
  it('signs an ECDSA run in order on its thread, each message ending with the signature before it', async () => {
    const run = ecRun(25);
    const before = { ...signer.runs };
    const out = await signer(run, 'the-previous-signature');
    expect(signer.runs).toEqual({ thread: before.thread + 1, inline: before.inline });
    expectChained(run, out, 'the-previous-signature');
    for (const s of out) expect(Buffer.from(s, 'base64url')).toHaveLength(64); // P1363 r||s
    expectChained(run.slice(0, 3), await signer(run.slice(0, 3), null), null);
  });

  it('gives byte for byte the RSA-SHA1 signatures the main thread gives (PKCS#1 v1.5 is deterministic)', async () => {
    const run = rsaRun(12);
    const out = await signer(run, null);
    expect(out).toEqual(signChainInline(run, null));
    expectChained(run, out, null);
    for (const s of out) expect(Buffer.from(s, 'base64')).toHaveLength(128);
  });

  it('runs with two keys and runs sent together each keep their own order', async () => {
    const mixed = [...ecRun(2), ...rsaRun(2), ...ecRun(2)];
    const [a, b, c] = await Promise.all([signer(mixed, 'p'), signer(rsaRun(5), 'q'), signer(ecRun(7), null)]);
    expectChained(mixed, a, 'p');
    expectChained(rsaRun(5), b, 'q');
    expectChained(ecRun(7), c, null);
    expect(await signer([], 'p')).toEqual([]);
  });

  it('poll takes a run\'s answer while this thread is busy, without the event loop', async () => {
    const run = ecRun(6);
    let settled = false;
    const answer = signer(run, null).then((out) => ((settled = true), out));
    // Busy, as an event loop under load: only poll can take the answer now. Without it the
    // answer stays on the port until the loop is free again, and this loop ends at 10 s.
    const until = Date.now() + 10_000;
    while (signer.awaiting() > 0 && Date.now() < until) signer.poll();
    expect(signer.awaiting()).toBe(0);
    expect(settled).toBe(false); // taken, and settled by the next microtask
    expectChained(run, await answer, null);
    signer.poll(); // nothing awaited: nothing to do
  });

  it('signs on the calling thread with a key that is not held in process (a PKCS#11 token)', async () => {
    const inner = inProcessSigner(ec);
    let calls = 0;
    const token: Signer = { algorithm: 'ec-p256', publicKey: inner.publicKey, device: 'pkcs11', sign: (d, data) => (calls++, inner.sign(d, data)) };
    const run = ecRun(4, token);
    const before = { ...signer.runs };
    const out = await signer(run, null);
    expect(calls).toBe(4);
    expect(signer.runs).toEqual({ thread: before.thread, inline: before.inline + 1 });
    expectChained(run, out, null);
  });

  it('starts a new thread after the last one is gone, and a run the thread refuses fails with its error', async () => {
    await signer.close();
    const run = ecRun(3);
    const before = signer.runs.thread;
    expectChained(run, await signer(run, null), null);
    expect(signer.runs.thread).toBe(before + 1);
    const bad = run.map((r) => ({ ...r, digest: 'no-such-digest' as 'sha256' }));
    await expect(signer(bad, null)).rejects.toThrow(/digest/i);
    expectChained(run, await signer(run, 'after'), 'after');
  });

  it('logs a gone thread, not a run that crypto refuses (signed again here, it fails with its own error)', async () => {
    const warned: string[] = [];
    const own = createChainSigner({ warn: (_obj, msg) => void warned.push(msg) });
    try {
      const run = ecRun(2);
      expectChained(run, await own(run, null), null);
      await expect(own(run.map((r) => ({ ...r, digest: 'no-such-digest' as 'sha256' })), null)).rejects.toThrow(/digest/i);
      expect(warned).toEqual([]);
      expect(own.runs).toEqual({ thread: 1, inline: 1 });
      // A thread gone with a run on it (~60 ms of signing: it cannot answer first).
      const long = ecRun(2000);
      const signing = own(long, null);
      await own.close();
      expectChained(long, await signing, null);
      expect(warned).toEqual(['the signing thread failed: signing the run on the main thread']);
    } finally {
      await own.close();
    }
  });

  it('sends a run that starts from one not answered yet at once, and the thread signs it from that run\'s last text', async () => {
    const own = createChainSigner();
    try {
      const first = rsaRun(8);
      const second = rsaRun(5).map((r, i) => ({ ...r, messageHead: `second ${i};` }));
      const a = own(first, 'p');
      const b = own(second, a);
      // Both on the thread now: the second did not wait here for the first's answer.
      expect(own.awaiting()).toBe(2);
      const [outA, outB] = await Promise.all([a, b]);
      expectChained(first, outA, 'p');
      expectChained(second, outB, outA[outA.length - 1]!);
      expect(outB).toEqual(signChainInline(second, outA[outA.length - 1]!));
      expect(own.runs).toEqual({ thread: 2, inline: 0 });
      // From a run already answered: the same.
      const c = own(ecRun(3), b);
      expectChained(ecRun(3), await c, outB[outB.length - 1]!);
    } finally {
      await own.close();
    }
  });

  it('a run starting from one that fails fails with it; from one on a thread gone, it is signed from that run\'s answer', async () => {
    const warned: string[] = [];
    const own = createChainSigner({ warn: (_obj, msg) => void warned.push(msg) });
    try {
      const bad = own(ecRun(2).map((r) => ({ ...r, digest: 'no-such-digest' as 'sha256' })), null);
      const after = own(ecRun(2), bad);
      await expect(bad).rejects.toThrow(/digest/i);
      await expect(after).rejects.toThrow(/digest/i);
      expect(warned).toEqual([]);
      // The thread gone with both runs on it: each is signed here, the second from the
      // first's own (new, ECDSA is randomised) signatures.
      const long = ecRun(2000);
      const first = own(long, null);
      const second = own(ecRun(4), first);
      await own.close();
      const [outFirst, outSecond] = await Promise.all([first, second]);
      expectChained(long, outFirst, null);
      expectChained(ecRun(4), outSecond, outFirst[outFirst.length - 1]!);
      // A run from one signed by a thread since replaced: sent once that one is answered.
      const old = own(ecRun(3), null);
      await own.close();
      const fresh = own(ecRun(2), old);
      expectChained(ecRun(2), await fresh, (await old)[2]!);
    } finally {
      await own.close();
    }
  });
});
