import type { Queryable } from '../db.ts';
import type { AgentState, Alert, Baseline, Point } from '../../fleet/types.ts';

export interface FleetScope {
  accountId: string;
  environment: string;
}

export interface AlertRow {
  id: string;
  agent_id: string;
  type: string;
  message: string;
  value: number | null;
  threshold: number | null;
  observed_at: Date;
  created_at: Date;
}

export interface SeriesRow {
  bucket: number; // epoch seconds of the bucket's start
  transactions_total: number;
  transactions_failed: number;
  agents: number;
}

/** What a batch added to the agent's hours: per hour, points and sums; the hours new for the agent. */
export interface HoursAdded {
  hours: Array<[number, { n: number; t: number; f: number }]>;
  newAgentHours: Set<number>;
}

const HOUR_MS = 3600_000;
const hourOf = (d: Date) => new Date(Math.floor(d.getTime() / HOUR_MS) * HOUR_MS);

/** Multi-row VALUES: ($1, $2, …), ($n+1, …). */
function values(rows: readonly unknown[][]): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const sql = rows.map((r) => `(${r.map((v) => { params.push(v); return `$${params.length}`; }).join(', ')})`).join(', ');
  return { sql, params };
}

export const fleetRepo = {
  /** Stores the points; answers the timestamps (ms) of those newly stored (a resent point is skipped). */
  async insertPoints(q: Queryable, s: FleetScope, agentId: string, points: readonly Point[], now: Date): Promise<Set<number>> {
    const v = values(points.map((p) => [
      s.accountId, s.environment, agentId, p.ts, p.transactions_total, p.transactions_failed, p.queue_pending, p.queue_dead,
      p.storage_used_bytes, p.storage_total_bytes, JSON.stringify(p.adapter_versions), now,
    ]));
    const res = await q.query<{ ts: Date }>(
      `INSERT INTO fleet_points (account_id, environment, agent_id, ts, transactions_total, transactions_failed, queue_pending, queue_dead,
         storage_used_bytes, storage_total_bytes, adapter_versions, received_at)
       VALUES ${v.sql} ON CONFLICT DO NOTHING RETURNING ts`, v.params);
    return new Set(res.rows.map((r) => new Date(r.ts).getTime()));
  },

  /**
   * The agent's latest state, locked: two batches of one agent are applied one after the
   * other, also its very first ones (no row to lock yet: a transaction-scoped advisory
   * lock on the agent's key), so a condition is never announced twice.
   */
  async lockAgent(q: Queryable, s: FleetScope, agentId: string): Promise<AgentState | null> {
    await q.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`fleet:${s.accountId}:${s.environment}:${agentId}`]);
    const r = await q.query<{ last_seen_at: Date; queue_dead: string; storage_used_bytes: string; storage_total_bytes: string }>(
      `SELECT last_seen_at, queue_dead, storage_used_bytes, storage_total_bytes FROM fleet_agents
       WHERE account_id = $1 AND environment = $2 AND agent_id = $3`, [s.accountId, s.environment, agentId]);
    const row = r.rows[0];
    if (!row) return null;
    return {
      last_seen_at: new Date(row.last_seen_at), queue_dead: Number(row.queue_dead),
      storage_used_bytes: Number(row.storage_used_bytes), storage_total_bytes: Number(row.storage_total_bytes),
    };
  },

  /** Sums of the agent's hours in [from, before). */
  async baseline(q: Queryable, s: FleetScope, agentId: string, from: Date, before: Date): Promise<Baseline> {
    const r = await q.query<{ t: number | null; f: number | null }>(
      `SELECT sum(transactions_total)::float8 AS t, sum(transactions_failed)::float8 AS f FROM fleet_hourly
       WHERE account_id = $1 AND environment = $2 AND agent_id = $3 AND hour >= $4 AND hour < $5`,
      [s.accountId, s.environment, agentId, hourOf(from), hourOf(before)]);
    return { transactions_total: Number(r.rows[0]?.t ?? 0), transactions_failed: Number(r.rows[0]?.f ?? 0) };
  },

  /**
   * Adds the points' counters to the agent's hours (then `addToAccountHours`). Hours are
   * written in ascending order, so two batches touching the same hours lock them in the
   * same order (no deadlock); an agent's first point in an hour counts it in `agents`.
   */
  async addToHours(q: Queryable, s: FleetScope, agentId: string, points: readonly Point[]): Promise<HoursAdded> {
    const byHour = new Map<number, { n: number; t: number; f: number }>();
    for (const p of points) {
      const h = hourOf(p.ts).getTime();
      const acc = byHour.get(h) ?? { n: 0, t: 0, f: 0 };
      acc.n += 1; acc.t += p.transactions_total; acc.f += p.transactions_failed;
      byHour.set(h, acc);
    }
    const hours = [...byHour].sort((a, b) => a[0] - b[0]);
    const v = values(hours.map(([h, a]) => [s.accountId, s.environment, new Date(h), agentId, a.n, a.t, a.f]));
    const res = await q.query<{ hour: Date; inserted: boolean }>(
      `INSERT INTO fleet_hourly (account_id, environment, hour, agent_id, points, transactions_total, transactions_failed)
       VALUES ${v.sql}
       ON CONFLICT (account_id, environment, hour, agent_id) DO UPDATE SET
         points = fleet_hourly.points + excluded.points,
         transactions_total = fleet_hourly.transactions_total + excluded.transactions_total,
         transactions_failed = fleet_hourly.transactions_failed + excluded.transactions_failed
       RETURNING hour, (xmax = 0) AS inserted`, v.params);
    const newAgentHours = new Set(res.rows.filter((r) => r.inserted).map((r) => new Date(r.hour).getTime()));
    return { hours, newAgentHours };
  },

  /**
   * Adds `addToHours`' sums to the account's hours. Every agent of the account writes these
   * rows: the service calls this last in its transaction, so the row lock is held for the
   * commit only.
   */
  async addToAccountHours(q: Queryable, s: FleetScope, added: HoursAdded): Promise<void> {
    const { hours, newAgentHours } = added;
    const w = values(hours.map(([h, a]) => [s.accountId, s.environment, new Date(h), a.n, a.t, a.f, newAgentHours.has(h) ? 1 : 0]));
    await q.query(
      `INSERT INTO fleet_account_hourly (account_id, environment, hour, points, transactions_total, transactions_failed, agents)
       VALUES ${w.sql}
       ON CONFLICT (account_id, environment, hour) DO UPDATE SET
         points = fleet_account_hourly.points + excluded.points,
         transactions_total = fleet_account_hourly.transactions_total + excluded.transactions_total,
         transactions_failed = fleet_account_hourly.transactions_failed + excluded.transactions_failed,
         agents = fleet_account_hourly.agents + excluded.agents`, w.params);
  },

  /** Records the newest point's gauges as the agent's state (an older point changes nothing). */
  async upsertAgent(q: Queryable, s: FleetScope, agentId: string, latest: Point, firstTs: Date): Promise<void> {
    await q.query(
      `INSERT INTO fleet_agents (account_id, environment, agent_id, first_seen_at, last_seen_at, queue_pending, queue_dead,
         storage_used_bytes, storage_total_bytes, adapter_versions)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (account_id, environment, agent_id) DO UPDATE SET
         first_seen_at = least(fleet_agents.first_seen_at, excluded.first_seen_at),
         last_seen_at = greatest(fleet_agents.last_seen_at, excluded.last_seen_at),
         queue_pending = CASE WHEN excluded.last_seen_at > fleet_agents.last_seen_at THEN excluded.queue_pending ELSE fleet_agents.queue_pending END,
         queue_dead = CASE WHEN excluded.last_seen_at > fleet_agents.last_seen_at THEN excluded.queue_dead ELSE fleet_agents.queue_dead END,
         storage_used_bytes = CASE WHEN excluded.last_seen_at > fleet_agents.last_seen_at THEN excluded.storage_used_bytes ELSE fleet_agents.storage_used_bytes END,
         storage_total_bytes = CASE WHEN excluded.last_seen_at > fleet_agents.last_seen_at THEN excluded.storage_total_bytes ELSE fleet_agents.storage_total_bytes END,
         adapter_versions = CASE WHEN excluded.last_seen_at > fleet_agents.last_seen_at THEN excluded.adapter_versions ELSE fleet_agents.adapter_versions END`,
      [s.accountId, s.environment, agentId, firstTs, latest.ts, latest.queue_pending, latest.queue_dead,
        latest.storage_used_bytes, latest.storage_total_bytes, JSON.stringify(latest.adapter_versions)]);
  },

  async insertAlerts(q: Queryable, s: FleetScope, agentId: string, alerts: ReadonlyArray<Alert & { id: string }>, now: Date): Promise<void> {
    if (!alerts.length) return;
    const v = values(alerts.map((a) => [a.id, s.accountId, s.environment, agentId, a.type, a.message, a.value, a.threshold, a.observed_at, now]));
    await q.query(
      `INSERT INTO fleet_alerts (id, account_id, environment, agent_id, type, message, value, threshold, observed_at, created_at) VALUES ${v.sql}`,
      v.params);
  },

  /**
   * Counters per bucket of `bucketSeconds` over [from, to]: from the raw points (`agents`:
   * distinct agents of the bucket), or from the account's hourly sums (`hourly`, every hour
   * that starts in the range; `agents`: the most agents that reported in one of its hours).
   */
  async series(q: Queryable, s: FleetScope, from: Date, to: Date, bucketSeconds: number, hourly: boolean): Promise<SeriesRow[]> {
    const sql = hourly
      ? `SELECT (floor(extract(epoch FROM hour) / $5::int) * $5::int)::float8 AS bucket,
              sum(transactions_total)::float8 AS transactions_total, sum(transactions_failed)::float8 AS transactions_failed, max(agents)::int AS agents
         FROM fleet_account_hourly WHERE account_id = $1 AND environment = $2 AND hour >= $3 AND hour <= $4 GROUP BY 1 ORDER BY 1`
      : `SELECT (floor(extract(epoch FROM ts) / $5::int) * $5::int)::float8 AS bucket,
              sum(transactions_total)::float8 AS transactions_total, sum(transactions_failed)::float8 AS transactions_failed, count(DISTINCT agent_id)::int AS agents
         FROM fleet_points WHERE account_id = $1 AND environment = $2 AND ts >= $3 AND ts <= $4 GROUP BY 1 ORDER BY 1`;
    const r = await q.query<SeriesRow>(sql, [s.accountId, s.environment, hourly ? hourOf(from) : from, to, bucketSeconds]);
    return r.rows.map((x) => ({ bucket: Number(x.bucket), transactions_total: Number(x.transactions_total), transactions_failed: Number(x.transactions_failed), agents: Number(x.agents) }));
  },

  /** Agents whose newest point is in [from, to]. */
  async activeAgents(q: Queryable, s: FleetScope, from: Date, to: Date): Promise<number> {
    const r = await q.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM fleet_agents WHERE account_id = $1 AND environment = $2 AND last_seen_at >= $3 AND last_seen_at <= $4`,
      [s.accountId, s.environment, from, to]);
    return Number(r.rows[0]?.n ?? 0);
  },

  /** The fleet now: sums of every agent's latest gauges. */
  async gauges(q: Queryable, s: FleetScope, threshold: number) {
    const r = await q.query<Record<string, number>>(
      `SELECT count(*)::int AS agents, coalesce(sum(queue_pending), 0)::float8 AS queue_pending, coalesce(sum(queue_dead), 0)::float8 AS queue_dead,
              coalesce(sum(storage_used_bytes), 0)::float8 AS storage_used_bytes, coalesce(sum(storage_total_bytes), 0)::float8 AS storage_total_bytes,
              count(*) FILTER (WHERE storage_total_bytes > 0 AND storage_used_bytes > storage_total_bytes * $3::float8)::int AS agents_over_threshold,
              max(last_seen_at) AS last_seen_at
       FROM fleet_agents WHERE account_id = $1 AND environment = $2`, [s.accountId, s.environment, threshold]);
    const g = r.rows[0] ?? {};
    return {
      agents: Number(g.agents ?? 0), queue_pending: Number(g.queue_pending ?? 0), queue_dead: Number(g.queue_dead ?? 0),
      storage_used_bytes: Number(g.storage_used_bytes ?? 0), storage_total_bytes: Number(g.storage_total_bytes ?? 0),
      agents_over_threshold: Number(g.agents_over_threshold ?? 0),
    };
  },

  async alertCounts(q: Queryable, s: FleetScope, from: Date, to: Date): Promise<Record<string, number>> {
    const r = await q.query<{ type: string; n: number }>(
      `SELECT type, count(*)::int AS n FROM fleet_alerts WHERE account_id = $1 AND environment = $2 AND observed_at >= $3 AND observed_at <= $4 GROUP BY type`,
      [s.accountId, s.environment, from, to]);
    return Object.fromEntries(r.rows.map((x) => [x.type, Number(x.n)]));
  },

  async recentAlerts(q: Queryable, s: FleetScope, from: Date, to: Date, limit: number): Promise<AlertRow[]> {
    const r = await q.query<AlertRow>(
      `SELECT id, agent_id, type, message, value, threshold, observed_at, created_at FROM fleet_alerts
       WHERE account_id = $1 AND environment = $2 AND observed_at >= $3 AND observed_at <= $4
       ORDER BY observed_at DESC, id LIMIT $5`, [s.accountId, s.environment, from, to, limit]);
    return r.rows;
  },
};
