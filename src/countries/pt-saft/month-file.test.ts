import { describe, expect, it } from 'vitest';
import type { FastifyBaseLogger } from 'fastify';
import { ManualClock } from '../../core/clock.ts';
import { ApiError } from '../../core/errors.ts';
import type { ProcessorDeps } from '../../batch/types.ts';
import { emptyTally } from '../../batch/types.ts';
import { nextRunAt } from '../../batch/schedule.ts';
import type { Db, QueryResult } from '../../store/db.ts';
import type { LocationFileDeps } from '../types.ts';
import { SOFTWARE } from '../shared/test-fixtures.ts';
import { goldenPtCases, goldenPtLocation } from './golden-cases.ts';
import { saft } from './index.ts';
import { SAFT_LOCATION_FILE, lisbonMonthOf, lisbonMonthStart, nextPeriod } from './month-file.ts';
import { PORTUGAL_SAFT, createSaftProcessor, startOfLisbonMonth } from './processor.ts';
import { buildSaftFile } from './saft-file.ts';

/**
 * The store seen by the plug-in, faked by the statements its repo sends: a stored month's
 * file (saft_files), the golden January records (fiscal_records joined with transactions),
 * the open months and the location row (processor), and the inserts.
 */
function fakeDb(o: { stored?: Buffer; records?: boolean | 'unreadable'; months?: Array<{ location_id: string; period: string; documents?: string }>; insertWins?: boolean } = {}) {
  const inserts: unknown[][] = [];
  const rows = (r: unknown[]): QueryResult<any> => ({ rows: r, rowCount: r.length });
  const cases = goldenPtCases();
  const db = {
    kind: 'pglite',
    inserts,
    async query(sql: string, params: unknown[] = []) {
      if (sql.startsWith('INSERT INTO saft_files')) {
        inserts.push(params);
        return { rows: [], rowCount: o.insertWins === false ? 0 : 1 };
      }
      if (sql.startsWith('SELECT * FROM saft_files')) {
        return rows(o.stored ? [{ content: new Uint8Array(o.stored), documents: '4', file_name: 'SAFT_500000000_2026-01.xml' }] : []);
      }
      if (sql.includes('SELECT location_id, period')) return rows(o.months ?? []);
      if (sql.includes('FROM fiscal_records')) {
        if (o.records === 'unreadable') return rows([{ kind: 'record', body: '{"placeholder":true}', normalized: {} }]);
        return rows(o.records === false ? [] : cases.map((c) => ({ kind: c.kind, body: c.record.body, normalized: JSON.stringify(c.tx) })));
      }
      if (sql.startsWith('SELECT * FROM locations')) return rows([{ id: params[0] }]);
      throw new Error(`unexpected statement: ${sql}`);
    },
  };
  return { db: db as unknown as Db & { inserts: unknown[][] }, cases };
}

const silent = { info() {}, warn() {}, error() {} } as unknown as FastifyBaseLogger;
const fileDeps = (db: Db, now: string): LocationFileDeps => ({ db, clock: new ManualClock(now), log: silent, software: SOFTWARE } as unknown as LocationFileDeps);
const expect404 = async (p: Promise<unknown>, message: string) => {
  const err = await p.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  expect([(err as ApiError).status, (err as ApiError).message]).toEqual([404, message]);
};

describe('pt-saft month helpers', () => {
  it('Lisbon months: UTC+0 in winter, UTC+1 in summer', () => {
    expect(lisbonMonthStart('2026-01')).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(lisbonMonthStart('2026-04')).toEqual(new Date('2026-03-31T23:00:00Z'));
    expect(lisbonMonthStart('2026-11')).toEqual(new Date('2026-11-01T00:00:00Z'));
    expect(lisbonMonthOf(new Date('2026-03-31T22:59:59Z'))).toBe('2026-03');
    expect(lisbonMonthOf(new Date('2026-03-31T23:00:00Z'))).toBe('2026-04');
    expect([nextPeriod('2026-01'), nextPeriod('2026-09'), nextPeriod('2026-12')]).toEqual(['2026-02', '2026-10', '2027-01']);
  });
});

describe('the saft location file', () => {
  it('is offered by the plug-in: saft?period=YYYY-MM, Windows-1252 XML', () => {
    expect(saft.locationFiles?.map((f) => [f.path, f.param, f.contentType])).toEqual([['saft', { name: 'period', kind: 'month' }, 'application/xml; charset=windows-1252']]);
  });

  it('a closed month not produced yet: built from the stored records, as buildSaftFile makes it', async () => {
    const { db, cases } = fakeDb();
    const out = await SAFT_LOCATION_FILE.produce(fileDeps(db, '2026-02-01T09:00:00Z'), { location: goldenPtLocation(), value: '2026-01', environment: 'test' });
    const expected = buildSaftFile({
      location: goldenPtLocation(), period: '2026-01', software: SOFTWARE, createdAt: new Date('2026-02-01T09:00:00Z'),
      records: cases.map((c) => ({ kind: c.kind, body: c.record.body, tx: c.tx })),
    });
    expect(Buffer.compare(out.body as Buffer, expected.bytes)).toBe(0);
    expect(out.headers).toEqual({ 'x-saft-status': 'not_produced', 'content-disposition': 'attachment; filename="SAFT_500000000_2026-01.xml"' });
    // The current month: open.
    const open = await SAFT_LOCATION_FILE.produce(fileDeps(db, '2026-01-31T12:00:00Z'), { location: goldenPtLocation(), value: '2026-01', environment: 'test' });
    expect(open.headers?.['x-saft-status']).toBe('open');
  });

  it('a produced month: the stored bytes', async () => {
    const stored = Buffer.from('<?xml version="1.0" encoding="Windows-1252"?>\n<AuditFile>caf\xe9</AuditFile>\n', 'latin1');
    const { db } = fakeDb({ stored });
    const out = await SAFT_LOCATION_FILE.produce(fileDeps(db, '2026-06-01T09:00:00Z'), { location: goldenPtLocation(), value: '2026-01', environment: 'test' });
    expect(Buffer.isBuffer(out.body) && out.body.equals(stored)).toBe(true);
    expect(out.headers?.['x-saft-status']).toBe('produced');
  });

  it('404: no document that month, a month not begun, a location without NIF', async () => {
    const deps = fileDeps(fakeDb({ records: false }).db, '2026-02-01T09:00:00Z');
    await expect404(SAFT_LOCATION_FILE.produce(deps, { location: goldenPtLocation(), value: '2026-01', environment: 'live' }), 'no SAF-T file for 2026-01: the location issued no documents that month');
    await expect404(SAFT_LOCATION_FILE.produce(deps, { location: goldenPtLocation(), value: '2026-03', environment: 'test' }), 'no SAF-T file for 2026-03: the month has not begun');
    await expect404(
      SAFT_LOCATION_FILE.produce(deps, { location: { ...goldenPtLocation(), tax_id: null }, value: '2026-01', environment: 'test' }),
      "no SAF-T file: the location has no Portuguese NIF (tax_id), the file's CompanyID",
    );
  });
});

describe('portugal/saft', () => {
  const processorDeps = (db: Db, now: string, location = goldenPtLocation()): ProcessorDeps =>
    ({ db, clock: new ManualClock(now), log: silent, software: SOFTWARE, locations: { toFiscal: () => location } }) as unknown as ProcessorDeps;

  it('is contributed by the plug-in, monthly on the 1st at 02:00 UTC: after Lisbon midnight in winter and summer', () => {
    const [p] = saft.processors!({} as ProcessorDeps);
    expect(p).toMatchObject({ name: PORTUGAL_SAFT, country: 'PT', cron: '0 2 1 * *' });
    const winter = nextRunAt(p!.cron, new Date('2026-01-15T12:00:00Z'));
    const summer = nextRunAt(p!.cron, new Date('2026-06-15T12:00:00Z'));
    expect([winter, summer]).toEqual([new Date('2026-02-01T02:00:00Z'), new Date('2026-07-01T02:00:00Z')]);
    expect(startOfLisbonMonth(winter)).toEqual(new Date('2026-02-01T00:00:00Z'));
    expect(startOfLisbonMonth(summer)).toEqual(new Date('2026-06-30T23:00:00Z'));
  });

  it('keeps each open month\'s file: a batch per file, its documents accepted; a month another run kept is not counted', async () => {
    const { db } = fakeDb({ months: [{ location_id: 'loc-1', period: '2026-01' }] });
    const ctx = { runId: 'run-1', tally: emptyTally() };
    await createSaftProcessor(processorDeps(db, '2026-02-01T02:00:00Z')).run({ accountId: 'acc-1', environment: 'test' }, ctx);
    expect(ctx.tally).toMatchObject({ batches_created: 1, accepted: 4, failed: 0, errors: [] });
    const [insert] = db.inserts;
    expect(insert!.slice(1, 6)).toEqual(['acc-1', 'test', 'loc-1', '2026-01', 'SAFT_500000000_2026-01.xml']);
    expect(insert!.slice(7, 11)).toEqual([4, '1.00', '204.20', 'run-1']);

    const lost = fakeDb({ months: [{ location_id: 'loc-1', period: '2026-01' }], insertWins: false });
    const ctx2 = { runId: 'run-2', tally: emptyTally() };
    await createSaftProcessor(processorDeps(lost.db, '2026-02-01T02:00:00Z')).run({ accountId: 'acc-1', environment: 'test' }, ctx2);
    expect(ctx2.tally).toMatchObject({ batches_created: 0, accepted: 0, failed: 0 });
  });

  it('a location without NIF: the month\'s documents fail with a configuration error and wait', async () => {
    const { db } = fakeDb({ months: [{ location_id: 'loc-1', period: '2026-01', documents: '5' }] });
    const ctx = { runId: 'run-1', tally: emptyTally() };
    await createSaftProcessor(processorDeps(db, '2026-02-01T02:00:00Z', { ...goldenPtLocation(), tax_id: null })).run({ accountId: 'acc-1', environment: 'test' }, ctx);
    expect(ctx.tally).toMatchObject({ batches_created: 0, failed: 5 });
    expect(ctx.tally.errors).toEqual([{ code: 'configuration_error', message: "2026-01: no SAF-T file: the location has no Portuguese NIF (tax_id), the file's CompanyID", issuer_tax_id: null, kind: 'saft', records: 5 }]);
    expect(db.inserts).toEqual([]);
  });

  it('a record the file cannot read: the month fails (saft_file_error) and waits; the store failing stops the run', async () => {
    const { db } = fakeDb({ months: [{ location_id: 'loc-1', period: '2026-01', documents: '2' }], records: 'unreadable' });
    const ctx = { runId: 'run-1', tally: emptyTally() };
    await createSaftProcessor(processorDeps(db, '2026-02-01T02:00:00Z')).run({ accountId: 'acc-1', environment: 'test' }, ctx);
    expect(ctx.tally).toMatchObject({ batches_created: 0, failed: 2 });
    expect(ctx.tally.errors.map((e) => [e.code, e.message])).toEqual([['saft_file_error', '2026-01: pt-saft: a stored record is not a SAF-T (PT) Invoice']]);

    const down = {
      async query(sql: string) {
        if (sql.includes('SELECT location_id, period')) return { rows: [{ location_id: 'loc-1', period: '2026-01', documents: 1 }], rowCount: 1 };
        if (sql.startsWith('SELECT * FROM locations')) return { rows: [{ id: 'loc-1' }], rowCount: 1 };
        throw new Error('connection lost');
      },
    } as unknown as Db;
    await expect(createSaftProcessor(processorDeps(down, '2026-02-01T02:00:00Z')).run({ accountId: 'acc-1', environment: 'test' }, { runId: 'r', tally: emptyTally() })).rejects.toThrow('connection lost');
  });
});
