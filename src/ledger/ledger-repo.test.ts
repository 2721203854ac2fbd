import { describe, expect, it } from 'vitest';
import { continues, ledgerRepo, renderBatch, type GuardedBatch } from './ledger-repo.ts';

/*
 * Two batches of one chain in one guarded statement (the pipe's batches that queued behind
 * the ones in flight): one move of the head and of each series, or no statement at all.
 */

const at = new Date('2026-11-28T10:00:00Z');
/** A batch of no rows that moves `chainKey` from seq `from` to `to` (fingerprints `f<seq>`), and the series from/to if given. */
function part(chainKey: string, from: number, to: number, numbers?: { from: number; to: number }): GuardedBatch {
  return {
    records: [], transactions: [],
    head: { chainKey, seq: to, fingerprint: `f${to}`, fiscalId: `F-${to}`, issuedAt: at, link: { n: String(to) } },
    guard: { seq: from, fingerprint: `f${from}`, fiscalId: `F-${from}`, issuedAt: at, link: { n: String(from) } },
    numbers: numbers ? [{ key: 'series', ...numbers }] : undefined,
  };
}

/** Runs appendGuarded against a store that keeps the statement and answers it. */
async function statementOf(parts: GuardedBatch[]) {
  const seen: { sql: string; params: readonly unknown[] }[] = [];
  await ledgerRepo.appendGuarded({ query: async (sql, params) => (seen.push({ sql, params: params ?? [] }), { rows: [{ fanned: 0 }], rowCount: 1 }) as never }, parts.map(renderBatch));
  return seen;
}

describe('guarded statement: batches of one chain that continue each other', () => {
  it('a batch built on the head the one before leaves continues it; another chain, or another head, does not', () => {
    expect(continues(renderBatch(part('c', 2, 4)), renderBatch(part('c', 4, 6)))).toBe(true);
    expect(continues(renderBatch(part('c', 2, 4)), renderBatch(part('d', 4, 6)))).toBe(false);
    expect(continues(renderBatch(part('c', 2, 4)), renderBatch(part('c', 3, 6)))).toBe(false);
    const other = part('c', 4, 6);
    expect(continues(renderBatch(part('c', 2, 4)), renderBatch({ ...other, guard: { ...other.guard, link: { n: 'x' } } }))).toBe(false);
  });

  it('moves the head once, from the first guard to the last head, and the series once, from the first to the last number', async () => {
    const [s] = await statementOf([part('c', 2, 4, { from: 7, to: 9 }), part('other', 1, 2), part('c', 4, 6, { from: 9, to: 11 })]);
    const heads = JSON.parse(String(s!.params[0])) as Record<string, unknown>[];
    expect(heads.map((h) => [h.chain_key, h.g_seq, h.seq, h.g_fingerprint, h.fingerprint])).toEqual([['c', 2, 6, 'f2', 'f6'], ['other', 1, 2, 'f1', 'f2']]);
    // The statement asserts two heads and one series moved (not three and two).
    expect(s!.sql).toContain("(SELECT count(*) FROM head) = 2, 'SV001'");
    expect(s!.sql).toContain("(SELECT count(*) FROM num) = 1, 'SV003'");
    expect(s!.params).toContainEqual(['series']);
    expect(s!.params).toContainEqual([7]);
    expect(s!.params).toContainEqual([11]);
  });

  it('refuses, before any statement, two batches of a chain where the second is not built on the first, or its series does not follow on', async () => {
    await expect(statementOf([part('c', 2, 4), part('c', 3, 5)])).rejects.toThrow(/not built on the first/);
    await expect(statementOf([part('c', 2, 4, { from: 1, to: 3 }), part('c', 4, 6, { from: 4, to: 6 })])).rejects.toThrow(/does not continue/);
  });
});
