import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { verifyNf525Archive } from '../../src/countries/fr-nf525/archive-verify.ts';
import type { Nf525JetEntry } from '../../src/countries/fr-nf525/closures/jet.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, frenchSaleBody } from '../support/transactions.ts';

/*
 * France NF525 archives through the API: sales over February 2026 on a fixed clock;
 * `POST /v1/admin/process-pending` on 1 March closes the days and the month and archives
 * the month; `GET /v1/locations/{id}/archives` lists it, `/archives/{archive_id}` downloads
 * it; it verifies with the library and with the CLI (`npm run verify-archive`), and three
 * tamperings are caught and named: a byte changed in a record, a record deleted, two
 * records swapped.
 */

let a: TestApp;
let b: TestApp;
let clock: ManualClock;
let dir: string;
beforeAll(async () => {
  clock = new ManualClock('2026-02-03T09:00:00.000Z');
  a = await startTestApp({ clock });
  b = await startTestApp({ db: a.db, clock });
  dir = mkdtempSync(path.join(tmpdir(), 'nf525-archive-'));
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ROOT = path.resolve(import.meta.dirname, '../..');

function cli(bytes: Buffer | string, name: string): { status: number | null; stdout: string; stderr: string } {
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/countries/fr-nf525/verify-archive-cli.ts', file], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

type OkResult = Extract<ReturnType<typeof verifyNf525Archive>, { ok: true }>;
type Container = { format: string; version: number; files: Array<{ name: string; content: string }> };

/** The archive with one file's text rewritten. */
function rewrite(bytes: Buffer, name: string, fn: (content: string) => string): Buffer {
  const c = JSON.parse(bytes.toString('utf8')) as Container;
  const f = c.files.find((x) => x.name === name)!;
  f.content = fn(f.content);
  return Buffer.from(JSON.stringify(c, null, 2));
}

/** The archive with its records (parsed) rewritten, serialized as the archive writes them. */
const rewriteRecords = (bytes: Buffer, fn: (records: unknown[]) => unknown[]) =>
  rewrite(bytes, 'records.json', (t) => {
    const v = JSON.parse(t) as { before: unknown; records: unknown[] };
    return `${JSON.stringify({ before: v.before, records: fn(v.records) }, null, 2)}\n`;
  });

describe('france archives', () => {
  it('a month of sales: archived once after its monthly closure, listed, downloaded, verified; tamperings named', async () => {
    const { key } = await a.signup();
    const other = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const sale = async (at: string, over: Record<string, unknown> = {}) => {
      clock.set(at);
      const res = await createTx(a, key, frenchSaleBody(loc, over));
      expect(res.statusCode, res.body).toBe(201);
    };
    await sale('2026-02-03T09:00:00.000Z');
    await sale('2026-02-03T15:00:00.000Z');
    await sale('2026-02-10T11:00:00.000Z');
    await sale('2026-02-10T12:00:00.000Z', { type: 'refund' });
    await sale('2026-02-27T18:00:00.000Z');

    // Nothing archived before the month is closed.
    clock.set('2026-02-28T01:00:00.000Z');
    const early = await a.request({ method: 'POST', url: '/v1/admin/process-pending', key });
    expect(early.statusCode, early.body).toBe(200);
    const none = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives`, key });
    expect(none.statusCode, none.body).toBe(200);
    expect(none.json()).toMatchObject({ data: [], total: 0 });

    clock.set('2026-03-01T01:00:00.000Z'); // 02:00 in Paris
    const run = await a.request({ method: 'POST', url: '/v1/admin/process-pending', key });
    expect(run.statusCode, run.body).toBe(200);
    expect((run.json().results as Array<Record<string, unknown>>).find((r) => r.processor === 'france/closures')).toMatchObject({ failed: 0, errors: [] });

    const list = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives`, key });
    expect(list.statusCode, list.body).toBe(200);
    const page = list.json();
    expect(page).toMatchObject({ total: 1, limit: 20, offset: 0 });
    expect(page.data[0]).toMatchObject({
      id: 'monthly-2026-02', kind: 'monthly', period: '2026-02', environment: 'test', closure: expect.stringMatching(/-C00000004$/),
      records: { first_seq: 1, last_seq: 5 }, manifest_sha256: expect.stringMatching(/^[0-9a-f]{64}$/), file_name: expect.stringMatching(/monthly-2026-02\.json$/),
    });

    const dl = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives/monthly-2026-02`, key });
    expect(dl.statusCode, dl.body).toBe(200);
    expect(dl.headers['content-type']).toMatch(/^application\/json/);
    expect(dl.headers['content-disposition']).toBe(`attachment; filename="${page.data[0].file_name}"`);
    const bytes = dl.rawPayload;

    // The library.
    const ok = verifyNf525Archive(bytes);
    expect(ok).toMatchObject({
      ok: true, counts: { records: 5, closures: 4 },
      manifest: { archive_id: 'monthly-2026-02', kind: 'monthly', period: '2026-02', environment: 'test', records: { count: 5, environment_count: 5, first_seq: 1, last_seq: 5 } },
    });
    // A second download is the same archive, byte for byte (rebuilt, not re-signed).
    const again = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives/monthly-2026-02`, key });
    expect(again.rawPayload.equals(bytes)).toBe(true);

    // The CLI.
    const good = cli(bytes, 'good.json');
    expect(good.status, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/^OK monthly-2026-02 /);

    // One byte changed in a record: a digit of the second record's timestamp, in the downloaded bytes.
    const at = bytes.indexOf('2026-02-03T16:00:00+01:00');
    expect(at).toBeGreaterThan(0);
    expect(bytes.indexOf('2026-02-03T16:00:00+01:00', at + 1)).toBe(-1);
    const changed = Buffer.from(bytes);
    changed[at + '2026-02-03T16:00:0'.length] = '1'.charCodeAt(0);
    expect(changed.length).toBe(bytes.length);
    const r1 = verifyNf525Archive(changed);
    expect(r1).toMatchObject({ ok: false, break: { check: 'records', file: 'records.json', index: 1, seq: 2, documentNumber: expect.stringMatching(/-00000002$/) } });
    expect(r1.ok === false && r1.break.reason).toMatch(/signature does not verify/);

    // One record deleted.
    const r2 = verifyNf525Archive(rewriteRecords(bytes, (rs) => rs.filter((_, i) => i !== 2)));
    expect(r2).toMatchObject({ ok: false, break: { check: 'records', index: 2, seq: 4 } });
    expect(r2.ok === false && r2.break.reason).toMatch(/seq 4 follows seq 2: a record is missing or out of order/);

    // Two records swapped.
    const swapped = rewriteRecords(bytes, (rs) => [rs[0], rs[2], rs[1], rs[3], rs[4]]);
    const r3 = verifyNf525Archive(swapped);
    expect(r3).toMatchObject({ ok: false, break: { check: 'records', index: 1, seq: 3 } });
    expect(r3.ok === false && r3.break.reason).toMatch(/seq 3 follows seq 1/);
    const bad = cli(swapped, 'swapped.json');
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/^BROKEN records: records\.json \[1\] .*-00000003: seq 3 follows seq 1/);

    // The manifest itself, or a file the chains do not hold (the key), is caught too.
    expect(verifyNf525Archive(rewrite(bytes, 'manifest.json', (t) => t.replace('"period": "2026-02"', '"period": "2026-01"')))).toMatchObject({ ok: false, break: { check: 'manifest', file: 'manifest.sig' } });
    expect(verifyNf525Archive(rewrite(bytes, 'public_key.jwk', (t) => `${t} `))).toMatchObject({ ok: false, break: { check: 'digest', file: 'public_key.jwk' } });

    // The JET journals the archive (code 50), after the month's closure.
    const jet = await a.request({ method: 'GET', url: `/v1/locations/${loc}/jet?limit=100`, key });
    const events = (jet.json().data as Nf525JetEntry[]).reverse();
    const archived = events.filter((e) => e.event === 'archive');
    expect(archived).toHaveLength(1);
    expect(archived[0]).toMatchObject({ code: '50', details: { archive_id: 'monthly-2026-02', kind: 'monthly', period: '2026-02' } });
    expect(events.findIndex((e) => e.event === 'archive')).toBeGreaterThan(events.findIndex((e) => e.event === 'closure' && e.details.kind === 'monthly'));

    // Idempotent: another run archives nothing more.
    clock.set('2026-03-02T01:00:00.000Z');
    expect((await a.request({ method: 'POST', url: '/v1/admin/process-pending', key })).statusCode).toBe(200);
    expect((await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives`, key })).json()).toMatchObject({ total: 1 });

    // Unknown archive, another account's location: 404.
    for (const id of ['monthly-2026-01', 'annual-2026', 'nonsense']) {
      const res = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives/${id}`, key });
      expect(res.statusCode, id).toBe(404);
    }
    expect((await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives`, key: other.key })).statusCode).toBe(404);
    expect((await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives/monthly-2026-02`, key: other.key })).statusCode).toBe(404);
    // A location whose system has no archives.
    const es = await createLocation(a, key, 'es-verifactu');
    const noArchives = await a.request({ method: 'GET', url: `/v1/locations/${es}/archives/monthly-2026-02`, key });
    expect(noArchives.statusCode).toBe(404);
    expect(noArchives.json().error).toMatch(/has no archives file/);
  });

  it('the end of a fiscal year: the month\'s archive, then the year\'s (its closures), each once and each verifying', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    for (const at of ['2026-11-20T10:00:00.000Z', '2026-12-05T10:00:00.000Z', '2026-12-31T15:00:00.000Z']) {
      clock.set(at);
      expect((await createTx(a, key, frenchSaleBody(loc))).statusCode).toBe(201);
    }
    clock.set('2027-01-01T01:00:00.000Z');
    expect((await a.request({ method: 'POST', url: '/v1/admin/process-pending', key })).statusCode).toBe(200);
    const page = (await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives`, key })).json();
    // Newest first: the year, December, November.
    expect(page.data.map((x: { id: string }) => x.id)).toEqual(['annual-2026', 'monthly-2026-12', 'monthly-2026-11']);
    const results = [];
    for (const id of ['monthly-2026-11', 'monthly-2026-12', 'annual-2026']) {
      const dl = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives/${id}`, key });
      expect(dl.statusCode, dl.body).toBe(200);
      results.push(verifyNf525Archive(dl.rawPayload));
    }
    expect(results.map((r) => (r.ok ? true : r.message))).toEqual([true, true, true]);
    const [nov, dec, year] = results as [OkResult, OkResult, OkResult];
    expect(nov.manifest).toMatchObject({ kind: 'monthly', records: { first_seq: 1, last_seq: 1 }, closures: { count: 2, first_seq: 1, last_seq: 2 } });
    // December's closures start after November's monthly closure; its JET after November's archive.
    expect(dec.manifest).toMatchObject({ kind: 'monthly', records: { first_seq: 2, last_seq: 3 }, closures: { count: 3, first_seq: 3, last_seq: 5 } });
    expect(dec.manifest.jet.first_seq).toBe(nov.manifest.jet.last_seq! + 1);
    // The year: every closure of it, and its records.
    expect(year.manifest).toMatchObject({ kind: 'annual', period: '2026', records: { count: 3, first_seq: 1, last_seq: 3 }, closures: { count: 6, first_seq: 1, last_seq: 6 } });
    clock.set('2027-01-02T01:00:00.000Z');
    expect((await a.request({ method: 'POST', url: '/v1/admin/process-pending', key })).statusCode).toBe(200);
    expect((await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives`, key })).json()).toMatchObject({ total: 3 });
  });

  it('a register deleted before its month is closed: closed and archived all the same; its closures, JET and archive stay readable by its account (NF525 conservation, six years), 404 to another', async () => {
    const { key } = await a.signup();
    const other = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    for (const at of ['2026-07-06T10:00:00.000Z', '2026-07-21T10:00:00.000Z']) {
      clock.set(at);
      expect((await createTx(a, key, frenchSaleBody(loc))).statusCode).toBe(201);
    }
    // The shop closes mid-month: the location is deleted (soft: hidden, no more sales).
    clock.set('2026-07-25T10:00:00.000Z');
    expect((await a.request({ method: 'DELETE', url: `/v1/locations/${loc}`, key })).statusCode).toBe(204);
    expect((await a.request({ method: 'GET', url: `/v1/locations/${loc}`, key })).statusCode).toBe(404);
    clock.set('2026-08-01T01:00:00.000Z');
    expect((await a.request({ method: 'POST', url: '/v1/admin/process-pending', key })).statusCode).toBe(200);
    const closures = await a.request({ method: 'GET', url: `/v1/locations/${loc}/closures`, key });
    expect(closures.statusCode, closures.body).toBe(200);
    expect((closures.json().data as Array<{ kind: string; period: string }>).map((c) => `${c.kind} ${c.period}`)).toEqual(['monthly 2026-07', 'daily 2026-07-21', 'daily 2026-07-06']);
    const page = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives`, key });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.json().data.map((x: { id: string }) => x.id)).toEqual(['monthly-2026-07']);
    const dl = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives/monthly-2026-07`, key });
    expect(dl.statusCode, dl.body).toBe(200);
    expect(verifyNf525Archive(dl.rawPayload)).toMatchObject({ ok: true, manifest: { records: { count: 2 }, closures: { count: 3 } } });
    const jet = await a.request({ method: 'GET', url: `/v1/locations/${loc}/jet?limit=100`, key });
    expect(jet.statusCode, jet.body).toBe(200);
    expect((jet.json().data as Nf525JetEntry[]).map((e) => e.event)).toEqual(expect.arrayContaining(['register_deleted', 'closure', 'archive']));
    for (const url of ['jet', 'closures', 'archives', 'archives/monthly-2026-07']) {
      expect((await a.request({ method: 'GET', url: `/v1/locations/${loc}/${url}`, key: other.key })).statusCode, url).toBe(404);
    }
  });

  it('two nodes racing: the month is archived once, and the archive verifies', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    for (const at of ['2026-05-04T10:00:00.000Z', '2026-05-20T10:00:00.000Z']) {
      clock.set(at);
      expect((await createTx(a, key, frenchSaleBody(loc))).statusCode).toBe(201);
    }
    clock.set('2026-06-01T01:00:00.000Z');
    const runs = await Promise.all([a, b].map((t) => t.request({ method: 'POST', url: '/v1/admin/process-pending', key })));
    for (const r of runs) expect(r.statusCode, r.body).toBe(200);
    const page = (await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives`, key })).json();
    expect(page.data.map((x: { id: string }) => x.id)).toEqual(['monthly-2026-05']);
    const events = (await a.request({ method: 'GET', url: `/v1/locations/${loc}/jet?limit=100`, key })).json().data as Nf525JetEntry[];
    expect(events.filter((e) => e.event === 'archive')).toHaveLength(1);
    const dl = await b.request({ method: 'GET', url: `/v1/locations/${loc}/archives/monthly-2026-05`, key });
    expect(dl.statusCode, dl.body).toBe(200);
    expect(verifyNf525Archive(dl.rawPayload)).toMatchObject({ ok: true, manifest: { records: { count: 2 }, closures: { count: 3 } } });
  });
});
