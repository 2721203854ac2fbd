import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../core/clock.ts';
import type { Db, DbStats } from '../store/db.ts';
import { createMetrics } from './metrics.ts';

const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

/** A store that answers the queue statement with `rows` (or fails), and reports `stats`. */
function fakeDb(rows: unknown[] | Error, stats?: DbStats): Db {
  return {
    kind: 'postgres',
    query: async () => {
      if (rows instanceof Error) throw rows;
      return { rows, rowCount: rows.length } as never;
    },
    exec: async () => {},
    transaction: async () => { throw new Error('unused'); },
    subscribe: () => ({ live: false, close() {} }),
    close: async () => {},
    ...(stats ? { stats: () => stats } : {}),
  } as Db;
}

const line = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe('createMetrics', () => {
  it('queue gauges: a series per status, kind and system; the oldest due job of a kind and system across its statuses', async () => {
    const clock = new ManualClock('2026-03-02T10:00:00.000Z');
    const m = createMetrics({
      db: fakeDb([
        { status: 'pending', kind: 'submit', system: 'es-sii', jobs: 3, oldest_due: new Date('2026-03-02T09:59:50Z') },
        { status: 'failed', kind: 'submit', system: 'es-sii', jobs: 1, oldest_due: new Date('2026-03-02T09:58:00Z') },
        { status: 'dead', kind: 'deliver_webhook', system: null, jobs: 2, oldest_due: null },
      ]),
      clock, log, defaultMetrics: false,
    });
    const text = await m.scrape();
    expect(line(text, 'fiscal_queue_jobs').sort()).toEqual([
      'fiscal_queue_jobs{status="dead",kind="deliver_webhook",system="none"} 2',
      'fiscal_queue_jobs{status="failed",kind="submit",system="es-sii"} 1',
      'fiscal_queue_jobs{status="pending",kind="submit",system="es-sii"} 3',
    ]);
    expect(line(text, 'fiscal_queue_oldest_pending_age_seconds')).toEqual(['fiscal_queue_oldest_pending_age_seconds{kind="submit",system="es-sii"} 120']);
    expect(line(text, 'fiscal_queue_scrape_success')).toEqual(['fiscal_queue_scrape_success 1']);
    // Default metrics off: no process series.
    expect(text).not.toContain('nodejs_eventloop_lag_seconds');
  });

  it('a failed queue query still answers, with fiscal_queue_scrape_success 0 and no stale queue series', async () => {
    const rows: unknown[] = [{ status: 'pending', kind: 'submit', system: 'es-sii', jobs: 3, oldest_due: null }];
    let fail = false;
    const db = fakeDb(rows);
    const m = createMetrics({ db: { ...db, query: async (...a: Parameters<Db['query']>) => { if (fail) throw new Error('down'); return db.query(...a); } } as Db, clock: new ManualClock(), log, defaultMetrics: false });
    expect(line(await m.scrape(), 'fiscal_queue_jobs')).toHaveLength(1);
    fail = true;
    const text = await m.scrape();
    expect(line(text, 'fiscal_queue_scrape_success')).toEqual(['fiscal_queue_scrape_success 0']);
    expect(line(text, 'fiscal_queue_jobs')).toEqual([]);
  });

  it('pool gauges from Db.stats, labelled with the store', async () => {
    const m = createMetrics({ db: fakeDb([], { total: 7, idle: 2, waiting: 4, max: 20 }), clock: new ManualClock(), log, defaultMetrics: false });
    const text = await m.scrape();
    expect(line(text, 'svc_db_pool_connections')).toEqual(['svc_db_pool_connections{store="postgres"} 7']);
    expect(line(text, 'svc_db_pool_idle_connections')).toEqual(['svc_db_pool_idle_connections{store="postgres"} 2']);
    expect(line(text, 'svc_db_pool_waiting')).toEqual(['svc_db_pool_waiting{store="postgres"} 4']);
    expect(line(text, 'svc_db_pool_max_connections')).toEqual(['svc_db_pool_max_connections{store="postgres"} 20']);
  });

  it('each instance has its own registry: the same names twice in one process, no collision', async () => {
    const a = createMetrics({ db: fakeDb([]), clock: new ManualClock(), log, defaultMetrics: false });
    const b = createMetrics({ db: fakeDb([]), clock: new ManualClock(), log, defaultMetrics: false });
    a.rateLimits.rejected('sandbox');
    a.httpRequest('GET', '/v1/transactions/:id', 200, 0.003);
    expect(line(await a.scrape(), 'svc_rate_limit_rejections_total')).toEqual(['svc_rate_limit_rejections_total{bucket="sandbox"} 1']);
    expect(line(await b.scrape(), 'svc_rate_limit_rejections_total')).toEqual([]);
    expect(line(await a.scrape(), 'svc_http_requests_total')).toEqual(['svc_http_requests_total{method="GET",route="/v1/transactions/:id",status_code="200"} 1']);
  });
});
