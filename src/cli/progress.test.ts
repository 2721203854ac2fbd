import { describe, expect, it } from 'vitest';
import { createProgress } from './progress.ts';

/** Off a terminal, progress is plain lines: the first, one every `every` items, the last. */
describe('createProgress', () => {
  it('writes label: done/total lines when the stream is not a terminal', () => {
    const lines: string[] = [];
    const stream = { isTTY: false, write: (s: string) => lines.push(s) } as unknown as NodeJS.WriteStream;
    const p = createProgress(stream, 2);
    p.start(5, 'verifying records');
    for (let i = 0; i < 5; i++) p.tick();
    p.stop();
    expect(lines).toEqual(['verifying records: 0/5\n', 'verifying records: 2/5\n', 'verifying records: 4/5\n', 'verifying records: 5/5\n']);
  });
});
