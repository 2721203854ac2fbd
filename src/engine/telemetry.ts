/**
 * Telemetry from the edge (issue #17 part 7; DECISIONS "Fleet, tokens, embedded engine"):
 * the engine takes data points (its counters since the previous point, its queue, the bytes
 * its data_dir holds, its adapters' versions, and its deadline alerts as `deadline_alerts`,
 * docs/decisions.md "Fleet telemetry") and keeps them in its own store (migration 0030)
 * until the service accepts them: batches of at most 100 to
 * `POST {service_url}/v1/agents/{agent_id}/telemetry`; a batch leaves the store only once
 * answered 202. Offline the outbox is bounded: past MAX_OUTBOX points the oldest are
 * dropped and counted.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { SYSTEMS } from '../countries/registry.ts';
import type { DataPoint } from '../fleet/types.ts';
import type { Db } from '../store/db.ts';
import { engineTelemetryRepo } from '../store/repos/engine-telemetry-repo.ts';
import { transactionsRepo } from '../store/repos/transactions-repo.ts';
import type { QueueStatus } from './queue.ts';

/** The fleet endpoint's batch limit (spec Limits; src/http/routes/v1/fleet.ts MAX_BATCH). */
export const TELEMETRY_BATCH = 100;
/** Points kept while offline; a week of five-minute points is ~2,000. */
export const MAX_OUTBOX = 10_000;
/** The fleet endpoint takes at most 20 deadline alerts per point. */
const MAX_ALERTS_PER_POINT = 20;

/** Bytes under a directory (the engine's whole data_dir: store, keys, token). */
export function directoryBytes(dir: string): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    try {
      if (e.isDirectory()) total += directoryBytes(p);
      else if (e.isFile()) total += fs.statSync(p).size;
    } catch {
      // removed meanwhile (PGlite's temporary files)
    }
  }
  return total;
}

function diskBytes(dir: string, used: number): number {
  try {
    const s = fs.statfsSync(dir);
    return Math.max(used, s.blocks * s.bsize);
  } catch {
    return used;
  }
}

export interface TelemetryDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  dataDir: string;
  accountId: string;
  environment: 'test' | 'live';
  serviceUrl: string;
  agentId: string;
  apiKey: string;
  /** Points kept while offline (default MAX_OUTBOX). */
  maxOutbox?: number;
}

/**
 * When the last data point was taken, kept in data_dir: the counters of the first point
 * after a restart count from there, so the sales made between the last point and a
 * shutdown are counted (they were lost: `since` began again at each init).
 */
export const SINCE_FILE = 'engine-telemetry-since';

function sinceOf(dataDir: string, now: Date): Date {
  try {
    const at = new Date(fs.readFileSync(path.join(dataDir, SINCE_FILE), 'utf8').trim());
    if (!Number.isNaN(at.getTime()) && at.getTime() <= now.getTime()) return at;
  } catch {
    // the first start: counting begins now
  }
  return now;
}

/**
 * Whose points these are: a data_dir may serve a sandbox session and later a production one
 * (or another agent id); each sends only the points it took, with its own key, to its own
 * fleet (the service keeps the test and live fleets apart).
 */
export const outboxOwner = (d: Pick<TelemetryDeps, 'accountId' | 'environment' | 'agentId'>): string => `${d.accountId}/${d.environment}/${d.agentId}`;

export function createTelemetry(d: TelemetryDeps) {
  const owner = outboxOwner(d);
  let since = sinceOf(d.dataDir, d.clock.now());
  let flushing: Promise<number> | null = null;
  const maxOutbox = d.maxOutbox ?? MAX_OUTBOX;

  /** Takes a data point now and keeps it in the outbox (oldest dropped past MAX_OUTBOX). */
  async function collect(queue: QueueStatus): Promise<DataPoint> {
    const now = d.clock.now();
    const counts = await transactionsRepo.countCreatedBetween(d.db, { accountId: d.accountId, environment: d.environment }, since, now);
    since = now;
    const used = directoryBytes(d.dataDir);
    const point: DataPoint = {
      timestamp: now.toISOString(),
      transactions_total: counts.total,
      transactions_failed: counts.failed,
      queue_pending: queue.pending + queue.failed + queue.processing,
      queue_dead: queue.dead,
      storage_used_bytes: used,
      storage_total_bytes: diskBytes(d.dataDir, used),
      adapter_versions: Object.fromEntries(SYSTEMS.map((s) => [s.key, s.version])),
    };
    if (queue.alerts.length > 0) {
      point.deadline_alerts = queue.alerts.slice(0, MAX_ALERTS_PER_POINT).map((a) => ({
        system: a.system,
        message: `transaction ${a.transaction_id} (${a.country}) not yet submitted: ${a.pct_elapsed}% of its submission window elapsed (${a.level})`,
        due_at: a.deadline,
      }));
    }
    const dropped = await d.db.transaction((tx) => engineTelemetryRepo.keep(tx, point, maxOutbox, owner));
    if (dropped > 0) d.log.warn({ dropped }, 'telemetry outbox full: oldest data points dropped');
    try {
      fs.writeFileSync(path.join(d.dataDir, SINCE_FILE), `${now.toISOString()}\n`, { mode: 0o600 });
    } catch (err) {
      d.log.warn({ err }, 'telemetry: the time of this point could not be kept (the next start counts from then)');
    }
    return point;
  }

  /** Sends the outbox in batches; stops at the first batch not answered 202. Returns the points sent. */
  async function flushNow(): Promise<number> {
    let sent = 0;
    for (;;) {
      const rows = await engineTelemetryRepo.oldest<DataPoint>(d.db, TELEMETRY_BATCH, owner);
      if (rows.length === 0) return sent;
      let res: Response;
      try {
        res = await fetch(`${d.serviceUrl}/v1/agents/${encodeURIComponent(d.agentId)}/telemetry`, {
          method: 'POST',
          headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ data_points: rows.map((r) => r.point) }),
          signal: AbortSignal.timeout(10_000),
        });
      } catch (err) {
        d.log.debug({ err }, 'telemetry not sent: service unreachable');
        return sent;
      }
      const last = rows[rows.length - 1]!.s;
      if (res.status === 202) {
        await engineTelemetryRepo.forgetThrough(d.db, last, owner);
        sent += rows.length;
        continue;
      }
      const text = await res.text().catch(() => '');
      if (res.status === 400) {
        // The service will never take these points: keeping them would block every later batch.
        d.log.error({ status: res.status, body: text }, 'telemetry batch refused as invalid: dropped');
        await engineTelemetryRepo.forgetThrough(d.db, last, owner);
        continue;
      }
      d.log.warn({ status: res.status, body: text }, 'telemetry not accepted: kept for later');
      return sent;
    }
  }

  /** One flush at a time (the timer and process_pending may meet). */
  function flush(): Promise<number> {
    flushing ??= flushNow().finally(() => {
      flushing = null;
    });
    return flushing;
  }

  const outbox = (): Promise<{ points: number; dropped: number }> => engineTelemetryRepo.size(d.db);

  return { collect, flush, outbox };
}

export type Telemetry = ReturnType<typeof createTelemetry>;
