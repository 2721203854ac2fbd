import { describe, expect, it } from 'vitest';
import { lazyImport } from './lazy-import.ts';

describe('lazyImport', () => {
  it('imports nothing until asked, then once, whoever asks', async () => {
    let calls = 0;
    const load = lazyImport(async () => {
      calls += 1;
      return { value: 42 };
    });
    expect(calls).toBe(0);
    const [a, b] = await Promise.all([load(), load()]);
    expect(a).toBe(b);
    expect(a.value).toBe(42);
    await load();
    expect(calls).toBe(1);
  });

  it('tries again after a failed import instead of keeping the failure', async () => {
    let calls = 0;
    const load = lazyImport(async () => {
      calls += 1;
      if (calls === 1) throw new Error('not installed');
      return 'ok';
    });
    await expect(load()).rejects.toThrow('not installed');
    await expect(load()).resolves.toBe('ok');
    expect(calls).toBe(2);
  });

  it('loads a real package on first use', async () => {
    const load = lazyImport(() => import('node:zlib'));
    expect(typeof (await load()).gzipSync).toBe('function');
  });
});
