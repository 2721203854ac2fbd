import { describe, expect, it, vi } from 'vitest';
import type { Queryable } from '../store/db.ts';
import { createAuthorityPacing } from './authority-pacing.ts';

const until = new Date('2026-01-15T10:01:00.000Z');

describe('createAuthorityPacing', () => {
  it('reads and holds through the repo (one statement each)', async () => {
    const query = vi.fn(async () => ({ rows: [{ not_before: until }], rowCount: 1 }));
    const pacing = createAuthorityPacing({ query, exec: vi.fn() } as unknown as Queryable, { warn: vi.fn() });
    expect(await pacing.notBefore('es-verifactu:B12345674:test')).toEqual(until);
    await pacing.hold('es-verifactu:B12345674:test', until);
    expect(query).toHaveBeenCalledTimes(2);
    expect(query.mock.calls[1]).toEqual([expect.stringMatching(/ON CONFLICT \(pacing_key\) DO UPDATE/), ['es-verifactu:B12345674:test', until]]);
  });

  it('a hold that cannot be written is logged, not thrown: the authority\'s answer it follows is not lost', async () => {
    const warn = vi.fn();
    const failing = { query: vi.fn(async () => { throw new Error('connection lost'); }), exec: vi.fn() } as unknown as Queryable;
    const pacing = createAuthorityPacing(failing, { warn });
    await expect(pacing.hold('k', until)).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
    // A read that fails does throw: the submission must not go out blind.
    await expect(pacing.notBefore('k')).rejects.toThrow('connection lost');
  });
});
