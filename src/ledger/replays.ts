/**
 * Idempotency for a whole batch of entries: an entry whose key a stored transaction holds
 * already (`existingIds`, found with the chain head lock) is a replay, and a key twice in
 * one batch is stored once (the later entries answer the earlier one's transaction). The
 * unique index still settles races with other nodes: the batch fails and its entries run
 * again one by one (core/group-commit.ts). Whether a replay is the same request or a
 * conflicting one is the caller's business (it knows what a request is).
 */
import type { Queryable } from '../store/db.ts';
import { transactionsRepo, type TransactionRow } from '../store/repos/transactions-repo.ts';
import type { Appended, LedgerEntry } from './types.ts';

export interface Replays {
  /** Indexes of the entries to write, in order. */
  fresh: number[];
  /** The replays' answers, given the transactions the fresh entries stored (by their index). */
  settle(stored: Map<number, TransactionRow | undefined>): (Appended | undefined)[];
}

const keyOf = (p: { accountId: string; environment: string; key: string }) => `${p.accountId}\u0000${p.environment}\u0000${p.key}`;

export async function sortOutReplays(q: Queryable, all: readonly LedgerEntry[], existingIds: readonly string[]): Promise<Replays> {
  const existingRows = existingIds.length > 0 ? await transactionsRepo.getByIds(q, existingIds) : [];
  const existing = new Map(existingRows.map((row) => [keyOf({ accountId: row.account_id, environment: row.environment, key: row.idempotency_key }), row]));
  const fresh: number[] = [];
  const firstWith = new Map<string, number>();
  const replays: { index: number; of: number | TransactionRow }[] = [];
  for (const [index, p] of all.entries()) {
    if (!p.idempotency) {
      fresh.push(index);
      continue;
    }
    const key = keyOf(p.idempotency);
    const prior = existing.get(key) ?? firstWith.get(key);
    if (prior !== undefined) {
      replays.push({ index, of: prior });
      continue;
    }
    firstWith.set(key, index);
    fresh.push(index);
  }
  return {
    fresh,
    settle: (stored) => {
      const out: (Appended | undefined)[] = new Array(all.length);
      for (const r of replays) {
        const row = typeof r.of === 'number' ? stored.get(r.of) : r.of;
        // An entry with an idempotency key carries a transaction: the ledger stores it.
        if (!row) throw new Error('an idempotent ledger entry without a transaction');
        out[r.index] = { created: false, replayed: row };
      }
      return out;
    },
  };
}
