import { badRequest, forbidden } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { AuthContext } from '../services/auth-context.ts';
import type { Deps } from '../services/deps.ts';
import { fleetRepo, type FleetScope } from '../store/repos/fleet-repo.ts';
import { BASELINE_WINDOW_MS, STORAGE_THRESHOLD, detectAnomalies } from './anomalies.ts';
import type { Alert, DataPoint, Point, Range } from './types.ts';

/** A data point may be ahead of the server clock by this much (an engine's clock drifts), not more. */
export const MAX_CLOCK_AHEAD_MS = 5 * 60_000;
/**
 * The earliest reading taken: an engine whose clock was reset (1970, year 1) would send
 * points that no metrics range shows, and before year 100 the store's date does not
 * round-trip (the point was stored yet counted a duplicate).
 */
export const EARLIEST_READING = new Date('2020-01-01T00:00:00Z');
/** Alerts listed in a metrics answer (the counts cover all of the range). */
export const RECENT_ALERTS = 20;

/**
 * Each range's length and bucket. `1h` reads the raw points (one-minute buckets); the
 * others read the account's hourly sums (fleet_account_hourly): 30 days is at most 720
 * rows whatever the fleet's size and the engines' reporting rate (bench/fleet.ts).
 */
export const RANGE_PLAN: Record<Range, { ms: number; bucketSeconds: number; hourly: boolean }> = {
  '1h': { ms: 3600_000, bucketSeconds: 60, hourly: false },
  '6h': { ms: 6 * 3600_000, bucketSeconds: 3600, hourly: true },
  '24h': { ms: 24 * 3600_000, bucketSeconds: 3600, hourly: true },
  '7d': { ms: 7 * 24 * 3600_000, bucketSeconds: 6 * 3600, hourly: true },
  '30d': { ms: 30 * 24 * 3600_000, bucketSeconds: 24 * 3600, hourly: true },
};

export interface IngestResult {
  agent_id: string;
  accepted: number;
  duplicates: number;
  alerts: Array<{ id: string; type: string; message: string; observed_at: Date }>;
}

const rate = (failed: number, total: number) => (total > 0 ? failed / total : 0);
const scopeOf = (auth: AuthContext): FleetScope => ({ accountId: auth.accountId, environment: auth.environment });

/** Checks the schema cannot express; each message names the field. */
function checkPoint(p: DataPoint, now: Date): Point {
  const ts = new Date(p.timestamp);
  if (Number.isNaN(ts.getTime())) throw badRequest('timestamp must be an RFC 3339 date-time');
  if (ts.getTime() > now.getTime() + MAX_CLOCK_AHEAD_MS) throw badRequest('timestamp must not be more than 5 minutes in the future');
  if (ts.getTime() < EARLIEST_READING.getTime()) throw badRequest('timestamp must not be before 2020-01-01 (is the agent\'s clock set?)');
  if (p.transactions_failed > p.transactions_total) throw badRequest('transactions_failed must not exceed transactions_total');
  if (p.storage_used_bytes > p.storage_total_bytes) throw badRequest('storage_used_bytes must not exceed storage_total_bytes');
  for (const d of p.deadline_alerts ?? []) {
    if (d.due_at !== undefined && Number.isNaN(new Date(d.due_at).getTime())) throw badRequest('deadline_alerts.due_at must be an RFC 3339 date-time');
  }
  const { timestamp: _t, ...rest } = p;
  return { ...rest, ts };
}

export function createFleetService(deps: Pick<Deps, 'db' | 'clock'>) {
  const { db, clock } = deps;
  return {
    /**
     * Stores a batch and runs anomaly detection on it, in one database transaction: the
     * 202 means the points are stored and their alerts recorded. A resent point (same
     * agent and timestamp) is skipped, counters and alerts included.
     */
    async ingest(auth: AuthContext, agentId: string, batch: DataPoint[]): Promise<IngestResult> {
      const now = clock.now();
      const points = batch.map((p) => checkPoint(p, now));
      const s = scopeOf(auth);
      return db.transaction(async (tx) => {
        const prev = await fleetRepo.lockAgent(tx, s, agentId);
        const stored = await fleetRepo.insertPoints(tx, s, agentId, points, now);
        // One point per timestamp: the first of the batch wins, as in the table.
        const seen = new Set<number>();
        const fresh = points.filter((p) => {
          const t = p.ts.getTime();
          if (!stored.has(t) || seen.has(t)) return false;
          seen.add(t);
          return true;
        });
        let alerts: Array<Alert & { id: string }> = [];
        if (fresh.length) {
          const first = fresh.reduce((a, p) => (p.ts < a ? p.ts : a), fresh[0]!.ts);
          const latest = fresh.reduce((a, p) => (p.ts > a.ts ? p : a), fresh[0]!);
          // The baseline: the agent's hours before this batch's first hour.
          const baseline = await fleetRepo.baseline(tx, s, agentId, new Date(first.getTime() - BASELINE_WINDOW_MS), first);
          alerts = detectAnomalies(fresh, prev, baseline).map((a) => ({ ...a, id: newId() }));
          const added = await fleetRepo.addToHours(tx, s, agentId, fresh);
          await fleetRepo.upsertAgent(tx, s, agentId, latest, first);
          await fleetRepo.insertAlerts(tx, s, agentId, alerts, now);
          // Last: the account's hour rows are shared by all its agents (held until the commit only).
          await fleetRepo.addToAccountHours(tx, s, added);
        }
        return {
          agent_id: agentId,
          accepted: fresh.length,
          duplicates: points.length - fresh.length,
          alerts: alerts.map((a) => ({ id: a.id, type: a.type, message: a.message, observed_at: a.observed_at })),
        };
      });
    },

    async metrics(auth: AuthContext, accountId: string | undefined, range: Range) {
      if (accountId !== undefined && accountId.toLowerCase() !== auth.accountId.toLowerCase()) {
        throw forbidden("cannot read another account's fleet metrics");
      }
      const plan = RANGE_PLAN[range];
      const to = clock.now();
      const from = new Date(to.getTime() - plan.ms);
      const s = scopeOf(auth);
      const [rows, active, gauges, counts, recent] = await Promise.all([
        fleetRepo.series(db, s, from, to, plan.bucketSeconds, plan.hourly),
        fleetRepo.activeAgents(db, s, from, to),
        fleetRepo.gauges(db, s, STORAGE_THRESHOLD),
        fleetRepo.alertCounts(db, s, from, to),
        fleetRepo.recentAlerts(db, s, from, to, RECENT_ALERTS),
      ]);
      // Every bucket of the range, empty ones as zeros (a chart needs the gaps).
      const byBucket = new Map(rows.map((r) => [r.bucket, r]));
      const step = plan.bucketSeconds;
      const series = [];
      for (let b = Math.floor(from.getTime() / 1000 / step) * step; b * 1000 <= to.getTime(); b += step) {
        const r = byBucket.get(b);
        const t = r?.transactions_total ?? 0;
        const f = r?.transactions_failed ?? 0;
        series.push({ timestamp: new Date(b * 1000), transactions_total: t, transactions_failed: f, error_rate: rate(f, t), agents: r?.agents ?? 0 });
      }
      const total = rows.reduce((n, r) => n + r.transactions_total, 0);
      const failed = rows.reduce((n, r) => n + r.transactions_failed, 0);
      return {
        account_id: auth.accountId,
        environment: auth.environment,
        range,
        from,
        to,
        bucket_seconds: step,
        agents: { total: gauges.agents, active: active },
        transactions: { total, failed, error_rate: rate(failed, total) },
        queue: { pending: gauges.queue_pending, dead: gauges.queue_dead },
        storage: {
          used_bytes: gauges.storage_used_bytes,
          total_bytes: gauges.storage_total_bytes,
          utilization: rate(gauges.storage_used_bytes, gauges.storage_total_bytes),
          agents_over_90_percent: gauges.agents_over_threshold,
        },
        alerts: {
          total: Object.values(counts).reduce((n, c) => n + c, 0),
          by_type: { error_rate_spike: 0, dead_queue_entries: 0, storage_high: 0, deadline: 0, ...counts },
          recent: recent.map((a) => ({ ...a, value: a.value === null ? null : Number(a.value), threshold: a.threshold === null ? null : Number(a.threshold) })),
        },
        series,
      };
    },
  };
}
export type FleetService = ReturnType<typeof createFleetService>;
