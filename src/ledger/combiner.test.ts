import { describe, expect, it } from 'vitest';
import { Combiner } from './combiner.ts';

/** A run the test finishes by hand; records the items of each run. */
function manual() {
  const runs: { items: number[]; finish: (results?: (number | Error)[]) => void; fail: (err: Error) => void }[] = [];
  const combiner = new Combiner<number, number>((items) => new Promise((resolve, reject) => {
    runs.push({ items, finish: (results) => resolve(results ?? items.map((i) => i * 10)), fail: reject });
  }), 2, 3);
  return { combiner, runs };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Combiner', () => {
  it('an idle caller runs at once, alone; callers that find every run busy go together in the next', async () => {
    const { combiner, runs } = manual();
    const a = combiner.submit(1);
    expect(runs.map((r) => r.items)).toEqual([[1]]); // no waiting for a window
    const b = combiner.submit(2);
    expect(runs.map((r) => r.items)).toEqual([[1], [2]]); // a second run in flight
    const rest = [3, 4, 5, 6].map((n) => combiner.submit(n));
    expect(runs).toHaveLength(2); // both busy: they wait
    runs[0]!.finish();
    expect(await a).toBe(10);
    await tick();
    expect(runs.map((r) => r.items)).toEqual([[1], [2], [3, 4, 5]]); // up to maxItems together
    runs[1]!.finish();
    expect(await b).toBe(20);
    await tick();
    expect(runs[3]!.items).toEqual([6]);
    runs[2]!.finish();
    runs[3]!.finish();
    expect(await Promise.all(rest)).toEqual([30, 40, 50, 60]);
    expect(combiner.busy).toBe(0);
  });

  it('an Error answered for one item fails that item alone; a run that throws fails its items', async () => {
    const { combiner, runs } = manual();
    const first = combiner.submit(1);
    const second = combiner.submit(2);
    const joined = [combiner.submit(3), combiner.submit(4)];
    runs[0]!.fail(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await tick();
    runs[2]!.finish([30, new Error('refused: 4')]);
    expect(await joined[0]).toBe(30);
    await expect(joined[1]).rejects.toThrow('refused: 4');
    runs[1]!.finish();
    expect(await second).toBe(20);
  });

  it('fewer results than items fails the unanswered ones', async () => {
    const { combiner, runs } = manual();
    const p = [combiner.submit(1), combiner.submit(2), combiner.submit(3)];
    runs[0]!.finish([10]);
    runs[1]!.finish([]);
    expect(await p[0]).toBe(10);
    await expect(p[1]).rejects.toThrow('answered 0 results for 1 items');
    await tick();
    runs[2]!.finish();
    expect(await p[2]).toBe(30);
  });
});
