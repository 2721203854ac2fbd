import { performance } from 'node:perf_hooks';
import type { Db, Queryable } from '../../src/store/db.ts';

/**
 * A Db that times every statement it passes on, for profiling runs only (never in the
 * measured benchmark). Statements are grouped by their SQL text (whitespace collapsed,
 * cut at 90 characters). For each database transaction it records:
 *   - acquire: from `db.transaction()` to the callback starting (pool checkout + BEGIN);
 *   - body: the callback (the statements of the transaction);
 *   - commit: from the callback's end to `transaction()` resolving (COMMIT, fsync);
 *   - lock hold: from the end of the statement matching `lockStatement` (the chain head
 *     lock) to the end of the transaction: how long the lock is held.
 * And the event-loop delay of the process meanwhile: a 10 ms interval timer notes how late
 * it fires (how long a ready callback, e.g. a socket read, waits for the thread; a long
 * chain of promise callbacks that never yields shows here too).
 */
export interface StatementStat {
  sql: string;
  calls: number;
  inTransaction: number;
  totalMs: number;
  meanMs: number;
  maxMs: number;
}

export interface ProbeSnapshot {
  wallMs: number;
  statements: StatementStat[];
  totalStatements: number;
  transactions: number;
  tx: { acquireMeanMs: number; bodyMeanMs: number; commitMeanMs: number; totalMeanMs: number };
  lock: { holds: number; waitMeanMs: number; holdMeanMs: number; holdP99Ms: number; holdTotalMs: number };
  eventLoopDelayMs: { mean: number; p50: number; p99: number; max: number };
}

const keyOf = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 90);

export interface DbProbe {
  db: Db;
  reset(): void;
  snapshot(): ProbeSnapshot;
}

export function probeDb(inner: Db, lockStatement = /^INSERT INTO chain_heads/): DbProbe {
  let stats = new Map<string, { calls: number; inTx: number; total: number; max: number }>();
  let txCount = 0;
  let acquire = 0;
  let body = 0;
  let commit = 0;
  let total = 0;
  let lockWait = 0;
  let holds: number[] = [];
  let started = performance.now();
  let lags: number[] = [];
  let expected = performance.now() + 10;
  const ticker = setInterval(() => {
    const now = performance.now();
    lags.push(Math.max(0, now - expected));
    expected = now + 10;
  }, 10);
  ticker.unref();

  const record = (sql: string, ms: number, inTx: boolean) => {
    const k = keyOf(sql);
    let s = stats.get(k);
    if (!s) stats.set(k, (s = { calls: 0, inTx: 0, total: 0, max: 0 }));
    s.calls++;
    if (inTx) s.inTx++;
    s.total += ms;
    if (ms > s.max) s.max = ms;
  };

  const timedQuery = (q: Pick<Queryable, 'query'>, inTx: boolean, onLock?: (end: number) => void): Queryable['query'] =>
    async (sql, params) => {
      const t0 = performance.now();
      try {
        return await q.query(sql, params);
      } finally {
        const t1 = performance.now();
        record(sql, t1 - t0, inTx);
        if (onLock && lockStatement.test(sql.trimStart())) {
          lockWait += t1 - t0;
          onLock(t1);
        }
      }
    };

  const db: Db = {
    kind: inner.kind,
    query: timedQuery(inner, false),
    // The ordered pipe too (its statements stand alone, like `query`'s).
    pipe: inner.pipe ? { query: timedQuery(inner.pipe, false) } : undefined,
    exec: (sql) => inner.exec(sql),
    subscribe: (channel, listener) => inner.subscribe(channel, listener),
    close: () => inner.close(),
    async transaction(fn) {
      const t0 = performance.now();
      let tFn = t0;
      let tFnEnd = t0;
      let locked: number | undefined;
      try {
        return await inner.transaction(async (tx) => {
          tFn = performance.now();
          try {
            return await fn({ query: timedQuery(tx, true, (end) => (locked = end)), exec: (sql) => tx.exec(sql) });
          } finally {
            tFnEnd = performance.now();
          }
        });
      } finally {
        const t1 = performance.now();
        txCount++;
        acquire += tFn - t0;
        body += tFnEnd - tFn;
        commit += t1 - tFnEnd;
        total += t1 - t0;
        if (locked !== undefined) holds.push(t1 - locked);
      }
    },
  };

  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    db,
    reset() {
      stats = new Map();
      txCount = acquire = body = commit = total = lockWait = 0;
      holds = [];
      started = performance.now();
      lags = [];
    },
    snapshot() {
      const statements = [...stats.entries()]
        .map(([sql, s]) => ({ sql, calls: s.calls, inTransaction: s.inTx, totalMs: r2(s.total), meanMs: r2(s.total / s.calls), maxMs: r2(s.max) }))
        .sort((a, b) => b.totalMs - a.totalMs);
      const sorted = [...holds].sort((a, b) => a - b);
      const lagSorted = [...lags].sort((a, b) => a - b);
      const lagAt = (q: number) => r2(lagSorted[Math.min(lagSorted.length - 1, Math.floor(q * lagSorted.length))] ?? 0);
      // The window's end counts too: a loop still blocked now has not fired its timer yet.
      const pending = Math.max(0, performance.now() - expected);
      const n = Math.max(1, txCount);
      return {
        wallMs: r2(performance.now() - started),
        statements,
        totalStatements: statements.reduce((a, s) => a + s.calls, 0),
        transactions: txCount,
        tx: { acquireMeanMs: r2(acquire / n), bodyMeanMs: r2(body / n), commitMeanMs: r2(commit / n), totalMeanMs: r2(total / n) },
        lock: {
          holds: holds.length,
          waitMeanMs: r2(lockWait / Math.max(1, holds.length)),
          holdMeanMs: r2(holds.reduce((a, b) => a + b, 0) / Math.max(1, holds.length)),
          holdP99Ms: r2(sorted[Math.floor(sorted.length * 0.99)] ?? 0),
          holdTotalMs: r2(holds.reduce((a, b) => a + b, 0)),
        },
        eventLoopDelayMs: {
          mean: r2(lags.reduce((a, b) => a + b, 0) / Math.max(1, lags.length)), p50: lagAt(0.5), p99: lagAt(0.99),
          max: r2(Math.max(pending, lagSorted[lagSorted.length - 1] ?? 0)),
        },
      };
    },
  };
}
