import pg from 'pg';

/**
 * Samples pg_stat_activity of one database while a measurement runs, to show what the
 * backends serving it were doing: running SQL, waiting for a lock (e.g. a hash chain's
 * head row), waiting for the client's next statement inside a transaction (the Node
 * round trip), or flushing the WAL at commit.
 */
export interface ActivityProfile {
  samples: number;
  intervalMs: number;
  /** Average number of the database's backends in each state over the samples. */
  avg: {
    /** Executing a statement, not waiting on anything. */
    running: number;
    /** Executing, but blocked on a heavyweight lock (wait_event_type = Lock). */
    lockWait: number;
    /** Executing, waiting for I/O (WAL flush at commit, …), wait_event_type = IO. */
    ioWait: number;
    /** Executing, waiting for an LWLock (WAL insertion, buffer mapping, …). */
    lwlockWait: number;
    /** Executing, any other wait. */
    otherWait: number;
    /** `idle in transaction`: inside BEGIN … COMMIT, waiting for the client's next statement. */
    idleInTransaction: number;
    /** Idle in the pool. */
    idle: number;
  };
  /** The most frequent wait events seen (type:event → average backends). */
  topWaits: Record<string, number>;
  /** WAL written by the whole server between start and stop (pg_current_wal_lsn), bytes. */
  walBytes: number;
}

export interface ActivitySampler {
  stop(): Promise<ActivityProfile>;
}

export async function sampleActivity(connectionString: string, database: string, intervalMs = 50): Promise<ActivitySampler> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  const lsn = async () => (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
  const lsnStart = await lsn();
  const sums = { running: 0, lockWait: 0, ioWait: 0, lwlockWait: 0, otherWait: 0, idleInTransaction: 0, idle: 0 };
  const waits = new Map<string, number>();
  let samples = 0;
  let running = true;

  const loop = (async () => {
    while (running) {
      const started = Date.now();
      const res = await client.query<{ state: string | null; wtype: string | null; wevent: string | null; n: number }>(
        `SELECT state, wait_event_type AS wtype, wait_event AS wevent, count(*)::int AS n
         FROM pg_stat_activity
         WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'
         GROUP BY 1, 2, 3`,
        [database],
      );
      samples++;
      for (const r of res.rows) {
        if (r.state === 'active') {
          if (r.wtype === null) sums.running += r.n;
          else {
            if (r.wtype === 'Lock') sums.lockWait += r.n;
            else if (r.wtype === 'IO') sums.ioWait += r.n;
            else if (r.wtype === 'LWLock') sums.lwlockWait += r.n;
            else sums.otherWait += r.n;
            const k = `${r.wtype}:${r.wevent}`;
            waits.set(k, (waits.get(k) ?? 0) + r.n);
          }
        } else if (r.state === 'idle in transaction') sums.idleInTransaction += r.n;
        else if (r.state === 'idle') sums.idle += r.n;
      }
      const wait = intervalMs - (Date.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();

  return {
    async stop() {
      running = false;
      await loop;
      const walBytes = Number((await client.query<{ d: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint::text AS d', [lsnStart])).rows[0]!.d);
      await client.end();
      const n = Math.max(1, samples);
      const round = (x: number) => Math.round((x / n) * 100) / 100;
      const topWaits = Object.fromEntries(
        [...waits.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, v]) => [k, round(v)]),
      );
      return {
        samples,
        intervalMs,
        avg: {
          running: round(sums.running), lockWait: round(sums.lockWait), ioWait: round(sums.ioWait), lwlockWait: round(sums.lwlockWait),
          otherWait: round(sums.otherWait), idleInTransaction: round(sums.idleInTransaction), idle: round(sums.idle),
        },
        topWaits,
        walBytes,
      };
    },
  };
}
