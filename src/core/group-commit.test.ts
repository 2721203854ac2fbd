import { describe, expect, it } from 'vitest';
import { GroupCommitter } from './group-commit.ts';

const tick = () => new Promise((r) => setTimeout(r, 5));
/**
 * A gate the test opens: a batch that must still be running when the test queues more
 * waits on one, rather than for a time (on a busy machine a timer can fire late).
 */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

describe('GroupCommitter', () => {
  it('an error that is every item\'s (failsEveryItem: the store unavailable) fails the whole batch at once, none run again alone', async () => {
    class Down extends Error {}
    const runs: number[][] = [];
    const g = new GroupCommitter<number, number>(async (_key, take) => {
      const items = take();
      runs.push(items);
      throw items.includes(2) && items.length === 1 ? new Error('2 is bad') : new Down('store down');
    }, 64, 1, (err) => err instanceof Down);
    const results = await Promise.allSettled([1, 2, 3].map((i) => g.run('chain', i)));
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'ok'))).toEqual(['store down', 'store down', 'store down']);
    expect(runs).toEqual([[1, 2, 3]]);
    // Any other error still finds its culprit alone.
    const h = new GroupCommitter<number, number>(async (_key, take) => {
      const items = take();
      if (items.includes(2)) throw new Error('2 is bad');
      return items.map((i) => i * 10);
    }, 64, 1, (err) => err instanceof Down);
    const alone = await Promise.allSettled([1, 2, 3].map((i) => h.run('chain', i)));
    expect(alone.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('batches what queues up while a batch runs, in arrival order', async () => {
    const batches: number[][] = [];
    const running = gate();
    const g = new GroupCommitter<number, string>(async (_key, take) => {
      const items = take();
      batches.push(items);
      await (batches.length === 1 ? running.wait : tick());
      return items.map((i) => `r${i}`);
    });
    const first = [1, 2].map((i) => g.run('chain', i));
    while (batches.length === 0) await new Promise((r) => setImmediate(r)); // the first batch is running
    const later = [3, 4, 5].map((i) => g.run('chain', i));
    running.open();
    expect(await Promise.all([...first, ...later])).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    // Arrivals of one turn share a batch; those that queued while it ran share the next.
    expect(batches).toEqual([[1, 2], [3, 4, 5]]);
    expect(g.size).toBe(0);
  });

  it('never runs two batches of one key at once, but runs keys side by side', async () => {
    let running = 0;
    let maxSameKey = 0;
    const perKey = new Map<string, number>();
    let maxKeys = 0;
    const g = new GroupCommitter<number, number>(async (key, take) => {
      const items = take();
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
      maxSameKey = Math.max(maxSameKey, perKey.get(key)!);
      running++;
      maxKeys = Math.max(maxKeys, running);
      await tick();
      running--;
      perKey.set(key, perKey.get(key)! - 1);
      return items;
    }, 3);
    await Promise.all(Array.from({ length: 20 }, (_, i) => g.run(i % 2 ? 'a' : 'b', i)));
    expect(maxSameKey).toBe(1);
    expect(maxKeys).toBe(2);
  });

  it('respects the batch bound', async () => {
    const sizes: number[] = [];
    const g = new GroupCommitter<number, number>(async (_k, take) => {
      const items = take();
      sizes.push(items.length);
      await tick();
      return items;
    }, 4);
    await Promise.all(Array.from({ length: 10 }, (_, i) => g.run('k', i)));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(10);
  });

  it('isolates a failing item: the batch is retried item by item', async () => {
    const calls: number[][] = [];
    const g = new GroupCommitter<number, number>(async (_k, take) => {
      const items = take();
      calls.push(items);
      await tick();
      if (items.includes(3)) throw new Error('bad 3');
      return items.map((i) => i * 10);
    });
    const settled = await Promise.allSettled([1, 2, 3, 4].map((i) => g.run('k', i)));
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([10, 20, 'bad 3', 40]);
    expect(calls).toEqual([[1, 2, 3, 4], [1], [2], [3], [4]]);
  });

  it('takes its batch only once the transaction has begun: arrivals meanwhile join it', async () => {
    const batches: number[][] = [];
    const connection = gate();
    let begun = false;
    const g = new GroupCommitter<number, number>(async (_k, take) => {
      begun = true;
      await connection.wait; // waiting for a connection, or for the embedded store's lock
      const items = take();
      batches.push(items);
      return items;
    });
    const first = g.run('k', 1);
    while (!begun) await new Promise((r) => setImmediate(r));
    const rest = [2, 3].map((i) => g.run('k', i));
    connection.open();
    expect(await Promise.all([first, ...rest])).toEqual([1, 2, 3]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('a batch that fails before taking its items fails them, and the queue goes on', async () => {
    let calls = 0;
    const g = new GroupCommitter<number, number>(async (_k, take) => {
      calls++;
      if (calls === 1) throw new Error('no connection');
      return take();
    });
    const settled = await Promise.allSettled([g.run('k', 1)]);
    expect(settled[0]).toMatchObject({ status: 'rejected', reason: { message: 'no connection' } });
    expect(await g.run('k', 2)).toBe(2);
    expect(g.size).toBe(0);
  });

  describe('pipelining (maxInFlight 2)', () => {
    it('a batch that releases lets the next one take and build while it still writes; answers stay in order', async () => {
      const log: string[] = [];
      const turns: { pipelined: boolean }[] = [];
      // The first two batches write until the test opens their gate.
      const gates = new Map([1, 2].map((n) => [n, gate()]));
      const logged = async (line: string) => {
        while (!log.includes(line)) await new Promise((r) => setImmediate(r));
      };
      const g = new GroupCommitter<number, number>(async (_k, take, turn) => {
        const items = take();
        turns.push({ pipelined: turn.pipelined });
        log.push(`built ${items.join(',')}`);
        turn.release();
        await turn.previous;
        log.push(`write ${items.join(',')}`);
        await (gates.get(items[0]!)?.wait ?? tick());
        log.push(`written ${items.join(',')}`);
        return items;
      }, 64, 2);
      const first = g.run('k', 1);
      await logged('write 1'); // the first batch is writing
      const second = [2, 3].map((i) => g.run('k', i));
      await logged('built 2,3');
      const third = g.run('k', 4); // two batches begun: this one waits for the first to end
      gates.get(1)!.open();
      await logged('built 4');
      gates.get(2)!.open();
      expect(await Promise.all([first, ...second, third])).toEqual([1, 2, 3, 4]);
      expect(log).toEqual(['built 1', 'write 1', 'built 2,3', 'written 1', 'write 2,3', 'built 4', 'written 2,3', 'write 4', 'written 4']);
      expect(turns.map((t) => t.pipelined)).toEqual([false, true, true]);
      expect(g.size).toBe(0);
    });

    it('without release, batches of a key still run one after the other', async () => {
      let running = 0;
      let most = 0;
      const g = new GroupCommitter<number, number>(async (_k, take) => {
        const items = take();
        most = Math.max(most, ++running);
        await tick();
        running--;
        return items;
      }, 2, 2);
      await Promise.all(Array.from({ length: 9 }, (_, i) => g.run('k', i)));
      expect(most).toBe(1);
    });

    it('a failed batch finds its culprit after the batch before ends, and the batch after waits for that', async () => {
      const log: string[] = [];
      const firstWrite = gate();
      const begun: number[][] = [];
      const g = new GroupCommitter<number, number>(async (_k, take, turn) => {
        const items = take();
        begun.push(items);
        turn.release();
        await turn.previous;
        log.push(`write ${items.join(',')}`);
        await (items[0] === 1 ? firstWrite.wait : tick());
        if (items.length > 1 && items.includes(3)) throw new Error('bad 3');
        if (items.length === 1 && items[0] === 3) throw new Error('bad 3 alone');
        return items.map((i) => i * 10);
      }, 64, 2);
      const until = async (ok: () => boolean) => {
        while (!ok()) await new Promise((r) => setImmediate(r));
      };
      const a = g.run('k', 1);
      await until(() => log.includes('write 1'));
      const b = [2, 3].map((i) => g.run('k', i));
      await until(() => begun.length === 2);
      const c = g.run('k', 4);
      firstWrite.open();
      const settled = await Promise.allSettled([a, ...b, c]);
      expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([10, 20, 'bad 3 alone', 40]);
      // 2,3 failed: each alone, in order, before 4 (begun behind it) wrote.
      expect(log).toEqual(['write 1', 'write 2,3', 'write 2', 'write 3', 'write 4']);
    });
  });
});

