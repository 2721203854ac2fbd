import { describe, expect, it } from 'vitest';
import { KeyedMutex } from './keyed-mutex.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('KeyedMutex', () => {
  it('serializes one key in arrival order, runs other keys alongside, survives failures, forgets idle keys', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    const task = (name: string, ms: number, fail = false) => async () => {
      log.push(`start ${name}`);
      await sleep(ms);
      log.push(`end ${name}`);
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([
      m.run('a', task('a1', 20)),
      m.run('a', task('a2', 1, true)),
      m.run('a', task('a3', 1)),
      m.run('b', task('b1', 5)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    // b1 ran while a1 was running; a2 and a3 waited for their predecessors.
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'));
    expect(log.indexOf('start a2')).toBeGreaterThan(log.indexOf('end a1'));
    expect(log.indexOf('start a3')).toBeGreaterThan(log.indexOf('end a2'));
    expect(m.size).toBe(0);
  });
});
