import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import { cpuBetween, cpuSnapshot } from './proc-cpu.ts';

/**
 * The floor of a hash chain guarded by a row lock in PostgreSQL, with nothing of the
 * service around it: how many appends per second ONE chain can take on this machine,
 * depending on how many round trips happen while its head row is locked.
 *
 * Each append: BEGIN; lock the head (the service's upsert `INSERT … ON CONFLICT DO UPDATE
 * … RETURNING`); compute the fingerprint in Node (sha256 of previous + body, as the
 * service does); then `statementsAfterLock` statements (the record, the head update,
 * other rows) or all of it in one statement; COMMIT. `batch` > 1 appends that many
 * records in the same transaction (one lock, one commit for several requests).
 * 50 concurrent callers on a pg.Pool of 20, as the service (or `callers`: 1 = queued in Node).
 */
export interface FloorVariant {
  label: string;
  /** Round trips between the lock and COMMIT: 1 (one statement does it all), 2 (record, head), 3+ (and other rows). */
  statementsAfterLock: number;
  /** Records appended per transaction. */
  batch: number;
  /** Callers at once (default: the concurrency ÷ batch). 1 = the appends of the chain queued in Node, one transaction at a time. */
  callers?: number;
}

export interface FloorResult extends FloorVariant {
  appendsPerSecond: number;
  transactionsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  nodeCpuPct: number;
  postgresCpuPct: number | undefined;
}

const DDL = `
DROP TABLE IF EXISTS floor_records, floor_heads, floor_other;
CREATE TABLE floor_heads (chain_key text PRIMARY KEY, seq bigint NOT NULL, last_fingerprint text, updated_at timestamptz NOT NULL);
CREATE TABLE floor_records (
  id uuid PRIMARY KEY, chain_key text NOT NULL, seq bigint NOT NULL, previous_fingerprint text, fingerprint text NOT NULL,
  body text NOT NULL, created_at timestamptz NOT NULL);
CREATE UNIQUE INDEX floor_records_chain_seq ON floor_records (chain_key, seq);
CREATE TABLE floor_other (id uuid PRIMARY KEY, chain_key text NOT NULL, data jsonb NOT NULL, created_at timestamptz NOT NULL);
`;

const BODY = JSON.stringify({ placeholder: true, lines: Array.from({ length: 8 }, (_, i) => ({ i, description: 'Menú del día', amount: 1320 })) });

export async function runChainFloor(connectionString: string, variants: FloorVariant[], seconds: number, concurrency = 50): Promise<FloorResult[]> {
  const pool = new pg.Pool({ connectionString, max: 20 });
  pool.on('error', () => {});
  const out: FloorResult[] = [];
  try {
    await pool.query(DDL);
    for (const v of variants) {
      const chainKey = `floor:${randomUUID()}`;
      const latencies: number[] = [];
      let appends = 0;
      let txs = 0;
      let stop = false;
      const one = async () => {
        const t0 = performance.now();
        const c = await pool.connect();
        try {
          await c.query('BEGIN');
          const now = new Date();
          const head = (await c.query<{ seq: string; last_fingerprint: string | null }>(
            `INSERT INTO floor_heads (chain_key, seq, updated_at) VALUES ($1, 0, $2)
             ON CONFLICT (chain_key) DO UPDATE SET chain_key = EXCLUDED.chain_key RETURNING seq, last_fingerprint`,
            [chainKey, now],
          )).rows[0]!;
          let seq = Number(head.seq);
          let prev = head.last_fingerprint;
          const rows: unknown[][] = [];
          for (let i = 0; i < v.batch; i++) {
            seq++;
            const fp = createHash('sha256').update(`${prev ?? ''}\n${BODY}`).digest('hex');
            rows.push([randomUUID(), chainKey, seq, prev, fp, BODY, now]);
            prev = fp;
          }
          if (v.statementsAfterLock <= 1) {
            // Everything in one statement: the records, the head, the other row.
            const params: unknown[] = [];
            const values = rows.map((r) => `(${r.map((x) => `$${params.push(x)}`).join(', ')})`).join(', ');
            const p = params.length;
            await c.query(
              `WITH rec AS (INSERT INTO floor_records (id, chain_key, seq, previous_fingerprint, fingerprint, body, created_at) VALUES ${values}),
                    oth AS (INSERT INTO floor_other (id, chain_key, data, created_at) VALUES ($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}))
               UPDATE floor_heads SET seq = $${p + 5}, last_fingerprint = $${p + 6}, updated_at = $${p + 4} WHERE chain_key = $${p + 2}`,
              [...params, randomUUID(), chainKey, JSON.stringify({ n: rows.length }), now, seq, prev],
            );
          } else {
            for (const r of rows) {
              await c.query('INSERT INTO floor_records (id, chain_key, seq, previous_fingerprint, fingerprint, body, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', r);
            }
            await c.query('UPDATE floor_heads SET seq = $2, last_fingerprint = $3, updated_at = $4 WHERE chain_key = $1', [chainKey, seq, prev, now]);
            for (let i = 2; i < v.statementsAfterLock; i++) {
              await c.query('INSERT INTO floor_other (id, chain_key, data, created_at) VALUES ($1, $2, $3, $4)', [randomUUID(), chainKey, JSON.stringify({ i }), now]);
            }
          }
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK').catch(() => {});
          throw err;
        } finally {
          c.release();
        }
        const ms = performance.now() - t0;
        for (let i = 0; i < v.batch; i++) latencies.push(ms);
        appends += v.batch;
        txs++;
      };
      const cpu0 = process.cpuUsage();
      const m0 = cpuSnapshot();
      const t0 = performance.now();
      const callers = v.callers ?? Math.max(1, Math.round(concurrency / v.batch));
      const loops = Array.from({ length: callers }, async () => {
        while (!stop) await one();
      });
      await new Promise((r) => setTimeout(r, seconds * 1000));
      stop = true;
      await Promise.all(loops);
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const machine = cpuBetween(m0, cpuSnapshot(), wallMs);
      latencies.sort((a, b) => a - b);
      const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 10) / 10;
      // The chain must be whole: seq 1..N.
      const chk = (await pool.query<{ n: string; max: string }>('SELECT count(*) AS n, max(seq) AS max FROM floor_records WHERE chain_key = $1', [chainKey])).rows[0]!;
      if (Number(chk.n) !== appends || Number(chk.max) !== appends) throw new Error(`chain floor ${v.label}: ${chk.n} records, max seq ${chk.max}, ${appends} appends`);
      out.push({
        ...v,
        appendsPerSecond: Math.round((appends / wallMs) * 1000),
        transactionsPerSecond: Math.round((txs / wallMs) * 1000),
        p50Ms: at(0.5),
        p99Ms: at(0.99),
        nodeCpuPct: Math.round(((cpu.user + cpu.system) / 1000 / wallMs) * 100),
        postgresCpuPct: machine.postgresPct === undefined ? undefined : Math.round(machine.postgresPct),
      });
    }
  } finally {
    await pool.end();
  }
  return out;
}
