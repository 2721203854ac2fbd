import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx } from '../support/transactions.ts';

/*
 * France NF525 as a tax inspector sees it, black-box: sales, refunds and cancellations over
 * November 2026 to January 2027 (a fiscal-year boundary in Paris time), `france/closures`
 * run through `POST /v1/admin/process-pending`, then the records (`/fiscal-record`), the
 * closures, the JET and the archives fetched at their DECISIONS paths and checked with
 * node:crypto and the documented message formats only (docs/decisions.md "France"), not
 * with the project's verifier: every signature, every chain link, the perpetual and period
 * grand totals recomputed from the records, each period closed once, the JET events, the
 * archive's manifest and contents. Then `npm run verify-archive` on the good archive and on
 * tampered copies, and the error answers of those routes.
 */

let a: TestApp;
let clock: ManualClock;
let dir: string;
beforeAll(async () => {
  clock = new ManualClock('2026-11-16T09:00:00.000Z');
  a = await startTestApp({ clock, liveEnabled: true });
  dir = mkdtempSync(path.join(tmpdir(), 'nf525-conf-'));
});
afterAll(async () => {
  await a?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ROOT = path.resolve(import.meta.dirname, '../..');

// ---- an inspector's own verifier, from the documented formats -------------------------

type Vat = { rate: string; excl_tax: number; tax: number; incl_tax: number };
type Sig = { algorithm: string; key_id: string; previous: string | null; value: string };
type Rec = {
  register_id: string; environment: string; seq: number; document_number: string; operation: string; timestamp: string;
  version: number; payment_method: string;
  cancels: { document_number: string; transaction_id: string; reason?: string | null } | null;
  lines: Array<{ description: string; quantity: number; unit_price: number; tax_rate: number; tax_amount: number; total_amount: number }>;
  vat: Vat[]; totals: { excl_tax: number; tax: number; incl_tax: number };
  grand_totals: { perpetual: { excl_tax: number; incl_tax: number }; day: P; month: P; fiscal_year: P };
  signature: Sig; transaction_id: string;
};
type P = { period: string; excl_tax: number; incl_tax: number };
type Clo = {
  register_id: string; environment: string; seq: number; number: string; kind: string; period: string; timestamp: string;
  vat: Vat[]; totals: { excl_tax: number; tax: number; incl_tax: number }; grand_total: { perpetual: { excl_tax: number; incl_tax: number } };
  records: { count: number; first_seq: number; last_seq: number }; signature: Sig;
};
type Jet = { register_id: string; environment: string; seq: number; number: string; code: string; event: string; timestamp: string; details: Record<string, string>; signature: Sig };

const b64u = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const sha = (s: string | Buffer) => crypto.createHash('sha256').update(s).digest('hex');
const rate = (r: number) => {
  const s = String(r);
  const d = s.split('.')[1] ?? '';
  return d.length >= 2 ? s : r.toFixed(2);
};
const vatText = (v: Vat[]) => v.map((x) => `${x.rate}:${x.excl_tax}:${x.tax}:${x.incl_tax}`).join(';');

function recordMessage(r: Rec): string {
  const lines = sha(r.lines.map((l) => `${String(l.quantity)};${l.unit_price};${rate(l.tax_rate)};${l.tax_amount};${l.total_amount};${b64u(l.description)}`).join('\n'));
  const g = r.grand_totals;
  // Record version 2 (NF525R2): the payment method and a cancellation's reason (base64url) follow the lines' digest.
  expect(r.version).toBe(2);
  return ['NF525R2', r.register_id, r.environment, r.seq, r.document_number, r.operation, r.timestamp, vatText(r.vat), r.totals.excl_tax, r.totals.tax, r.totals.incl_tax,
    g.perpetual.excl_tax, g.perpetual.incl_tax, g.day.period, g.day.excl_tax, g.day.incl_tax, g.month.period, g.month.excl_tax, g.month.incl_tax,
    g.fiscal_year.period, g.fiscal_year.excl_tax, g.fiscal_year.incl_tax, r.cancels?.document_number ?? '', lines, r.payment_method, b64u(r.cancels?.reason ?? ''),
    r.signature.key_id, r.signature.previous ?? ''].join('|');
}
const closureMessage = (c: Clo) => ['NF525C1', c.register_id, c.environment, c.seq, c.number, c.kind, c.period, c.timestamp, vatText(c.vat), c.totals.excl_tax, c.totals.tax,
  c.totals.incl_tax, c.grand_total.perpetual.excl_tax, c.grand_total.perpetual.incl_tax, c.records.count, c.records.first_seq, c.records.last_seq, c.signature.key_id, c.signature.previous ?? ''].join('|');
const jetMessage = (j: Jet) => {
  const details = sha(Object.keys(j.details).sort().map((k) => `${k}=${b64u(String(j.details[k]))}`).join('\n'));
  return ['NF525J1', j.register_id, j.environment, j.seq, j.number, j.code, j.event, j.timestamp, details, j.signature.key_id, j.signature.previous ?? ''].join('|');
};
const verifies = (pub: crypto.KeyObject, message: string | Buffer, sig: string) =>
  crypto.verify('sha256', typeof message === 'string' ? Buffer.from(message, 'utf8') : message, { key: pub, dsaEncoding: 'ieee-p1363' }, Buffer.from(sig, 'base64url'));

/** Paris wall-clock parts of a signed timestamp (the offset is in it). */
const parisDay = (ts: string) => ts.slice(0, 10);

/** Each record: key id, signature, link, its signed amounts and its grand totals recomputed from the records before. */
function checkRecords(records: Rec[], pub: crypto.KeyObject, keyId: string): Map<string, Rec> {
  const gt = { excl: 0, incl: 0 };
  const period = { day: { p: '', e: 0, i: 0 }, month: { p: '', e: 0, i: 0 }, year: { p: '', e: 0, i: 0 } };
  const byNumber = new Map<string, Rec>();
  for (const [i, r] of records.entries()) {
    expect(r.signature.key_id).toBe(keyId);
    expect(verifies(pub, recordMessage(r), r.signature.value), `record ${r.seq} signature`).toBe(true);
    expect(r.signature.previous).toBe(i === 0 ? null : records[i - 1]!.signature.value);
    // Sign: a sale positive, a refund or a void negative, a cancellation the negation of what it cancels.
    const excl = r.lines.reduce((n, l) => n + l.total_amount - l.tax_amount, 0);
    const incl = r.lines.reduce((n, l) => n + l.total_amount, 0);
    const sign = r.operation === 'sale' ? 1 : r.operation === 'refund' || r.operation === 'void' ? -1 : -Math.sign(byNumber.get(r.cancels!.document_number)!.totals.incl_tax);
    expect(r.totals, `record ${r.seq} totals`).toEqual({ excl_tax: sign * excl, tax: sign * (incl - excl), incl_tax: sign * incl });
    expect(r.vat.reduce((n, v) => n + v.incl_tax, 0)).toBe(r.totals.incl_tax);
    gt.excl += r.totals.excl_tax;
    gt.incl += r.totals.incl_tax;
    const day = parisDay(r.timestamp);
    for (const [k, p] of [['day', day], ['month', day.slice(0, 7)], ['year', day.slice(0, 4)]] as const) {
      const s = period[k];
      if (s.p !== p) Object.assign(s, { p, e: 0, i: 0 });
      s.e += r.totals.excl_tax;
      s.i += r.totals.incl_tax;
    }
    expect(r.grand_totals, `record ${r.seq} grand totals`).toEqual({
      perpetual: { excl_tax: gt.excl, incl_tax: gt.incl },
      day: { period: period.day.p, excl_tax: period.day.e, incl_tax: period.day.i },
      month: { period: period.month.p, excl_tax: period.month.e, incl_tax: period.month.i },
      fiscal_year: { period: period.year.p, excl_tax: period.year.e, incl_tax: period.year.i },
    });
    byNumber.set(r.document_number, r);
  }
  return byNumber;
}

/**
 * Each closure: signature, link, totals and record range recomputed from the records it covers,
 * by the records chain's seq (docs/decisions.md "France: a record stamped on a closed day"): a
 * daily closure covers every record after the previous daily closure's last one up to its own
 * last one, none stamped after its day (a record stamped on a day closed already is in the next
 * daily closure); a monthly (annual) closure the records of its daily (monthly) closures.
 */
function checkClosures(closures: Clo[], records: Rec[], pub: crypto.KeyObject): void {
  const sum = (rs: Array<{ totals: { excl_tax: number; tax: number; incl_tax: number } }>) =>
    rs.reduce((t, r) => ({ excl_tax: t.excl_tax + r.totals.excl_tax, tax: t.tax + r.totals.tax, incl_tax: t.incl_tax + r.totals.incl_tax }), { excl_tax: 0, tax: 0, incl_tax: 0 });
  const chain = [...records].sort((x, y) => x.seq - y.seq);
  let afterSeq = 0;
  let month: Rec[] = [];
  let year: Rec[] = [];
  for (const [i, c] of closures.entries()) {
    expect(c.seq).toBe(i + 1);
    expect(verifies(pub, closureMessage(c), c.signature.value), `closure ${c.number} signature`).toBe(true);
    expect(c.signature.previous).toBe(i === 0 ? null : closures[i - 1]!.signature.value);
    let covered: Rec[];
    if (c.kind === 'daily') {
      covered = chain.filter((r) => r.seq > afterSeq && r.seq <= c.records.last_seq);
      for (const r of covered) expect(parisDay(r.timestamp) <= c.period, `record ${r.seq} stamped after daily ${c.period}`).toBe(true);
      afterSeq = c.records.last_seq;
      month.push(...covered);
    } else if (c.kind === 'monthly') {
      covered = month;
      year.push(...month);
      month = [];
    } else {
      covered = year;
      year = [];
    }
    expect(covered.length, `${c.kind} ${c.period} covers records`).toBeGreaterThan(0);
    expect(c.totals, `${c.kind} ${c.period} totals`).toEqual(sum(covered));
    const last = covered.at(-1)!;
    expect(c.grand_total.perpetual).toEqual(last.grand_totals.perpetual);
    expect(c.records).toEqual({ count: covered.length, first_seq: covered[0]!.seq, last_seq: last.seq });
  }
}

/** Each JET entry: signature and link. */
function checkJet(jet: Jet[], pub: crypto.KeyObject): void {
  for (const [i, j] of jet.entries()) {
    expect(j.seq).toBe(i + 1);
    expect(verifies(pub, jetMessage(j), j.signature.value), `JET ${j.number} (${j.event}) signature`).toBe(true);
    expect(j.signature.previous).toBe(i === 0 ? null : jet[i - 1]!.signature.value);
  }
}

// ---- the scenario ----------------------------------------------------------------------

const line = (description: string, quantity: number, unit: number, rate: number) => {
  const excl = Math.round(quantity * unit);
  const tax = Math.round((excl * rate) / 100);
  return { description, quantity, unit_price: unit, tax_rate: rate, tax_amount: tax, total_amount: excl + tax };
};
function body(loc: string, items: ReturnType<typeof line>[], over: Record<string, unknown> = {}) {
  const pretax = items.reduce((n, i) => n + Math.round(i.quantity * i.unit_price), 0);
  const tax = items.reduce((n, i) => n + i.tax_amount, 0);
  return { location_id: loc, timestamp: clock.now().toISOString(), currency: 'EUR', payment_method: 'card', items, pretax_amount: pretax, tax_amount: tax, total_amount: pretax + tax, ...over };
}

describe('France NF525, an inspector\'s independent check', () => {
  it('records, closures, JET and archives over a year end verify with the public key alone; the totals recompute; each period closes once', async () => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const txIds: string[] = [];
    const at = async (iso: string, items: ReturnType<typeof line>[], over: Record<string, unknown> = {}) => {
      clock.set(iso);
      const res = await createTx(a, key, body(loc, items, over));
      expect(res.statusCode, res.body).toBe(201);
      txIds.push(res.json().id);
      return res.json().id as string;
    };
    const cancel = async (iso: string, id: string) => {
      clock.set(iso);
      const res = await a.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key, payload: { reason: 'erreur de saisie' } });
      expect(res.statusCode, res.body).toBe(201);
      txIds.push(res.json().id);
    };
    const run = async (iso: string) => {
      clock.set(iso);
      const res = await a.request({ method: 'POST', url: '/v1/admin/process-pending', key });
      expect(res.statusCode, res.body).toBe(200);
      const r = (res.json().results as Array<Record<string, unknown>>).find((x) => x.processor === 'france/closures')!;
      expect(r, res.body).toMatchObject({ failed: 0, errors: [] });
      return r;
    };

    await at('2026-11-16T09:00:00.000Z', [line('Menu du jour', 1, 1500, 10), line('Eau', 1, 200, 5.5)]);
    const nov2 = await at('2026-11-16T10:00:00.000Z', [line('Vin rouge', 2, 450, 20)]);
    await at('2026-11-16T11:00:00.000Z', [line('Vin rouge', 1, 450, 20)], { type: 'refund' });
    await cancel('2026-11-17T09:00:00.000Z', nov2); // a sale cancelled the next day
    await run('2026-11-18T01:00:00.000Z'); // 16 and 17 November close; the month is not over
    await at('2026-12-30T08:00:00.000Z', [line('Café', 3, 180, 10), line('Croissant', 2, 120, 5.5)]);
    const refund = await at('2026-12-31T10:00:00.000Z', [line('Café', 1, 180, 10)], { type: 'refund' });
    await at('2026-12-31T22:30:00.000Z', [line('Champagne', 1, 5000, 20)]); // 23:30 in Paris: 2026
    await at('2026-12-31T23:30:00.000Z', [line('Champagne', 1, 5000, 20)]); // 00:30 in Paris: 2027
    await cancel('2027-01-02T10:00:00.000Z', refund); // a refund cancelled: counts positive
    await at('2027-01-02T11:00:00.000Z', [line('Pain', 0.5, 300, 5.5)]);
    await run('2027-01-03T01:00:00.000Z');
    await run('2027-01-03T01:05:00.000Z'); // a second run the same night: nothing more
    await run('2027-02-01T01:00:00.000Z'); // January closes and is archived

    // ---- records, as the inspector gets them
    const records: Rec[] = [];
    for (const id of txIds) {
      const res = await a.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
      expect(res.statusCode, res.body).toBe(200);
      records.push(JSON.parse(res.body));
    }
    records.sort((x, y) => x.seq - y.seq);
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));

    // ---- the public key: from an archive (the only published place)
    const archives = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives?limit=100`, key });
    expect(archives.statusCode, archives.body).toBe(200);
    const archiveIds = (archives.json().data as Array<{ id: string }>).map((x) => x.id);
    expect(archiveIds).toEqual(['monthly-2027-01', 'annual-2026', 'monthly-2026-12', 'monthly-2026-11']);
    const download = async (id: string) => {
      const res = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives/${id}`, key });
      expect(res.statusCode, res.body).toBe(200);
      return res.rawPayload;
    };
    const files = (bytes: Buffer) => Object.fromEntries((JSON.parse(bytes.toString('utf8')).files as Array<{ name: string; content: string }>).map((f) => [f.name, f.content]));
    const dec = files(await download('monthly-2026-12'));
    const pub = crypto.createPublicKey(dec['public_key.pem']!);
    expect(pub.asymmetricKeyDetails).toMatchObject({ namedCurve: 'prime256v1' });
    const keyId = sha(pub.export({ type: 'spki', format: 'der' }));

    // ---- every record: signature, link, totals recomputed
    const byNumber = checkRecords(records, pub, keyId);
    // The year boundary is Paris time: 22:30 UTC on 31 December is 2026, 23:30 UTC is 2027.
    expect(records.map((r) => r.grand_totals.fiscal_year.period)).toEqual(['2026', '2026', '2026', '2026', '2026', '2026', '2026', '2027', '2027', '2027']);

    // ---- closures
    const closures = (await a.request({ method: 'GET', url: `/v1/locations/${loc}/closures?limit=100`, key })).json().data.reverse() as Clo[];
    const expected = ['daily 2026-11-16', 'daily 2026-11-17', 'monthly 2026-11', 'daily 2026-12-30', 'daily 2026-12-31', 'monthly 2026-12', 'annual 2026', 'daily 2027-01-01', 'daily 2027-01-02', 'monthly 2027-01'];
    expect(closures.map((c) => `${c.kind} ${c.period}`)).toEqual(expected); // each period once, in order
    checkClosures(closures, records, pub);

    // ---- the JET
    const jet = (await a.request({ method: 'GET', url: `/v1/locations/${loc}/jet?limit=100`, key })).json().data.reverse() as Jet[];
    checkJet(jet, pub);
    const events = jet.map((j) => j.event);
    expect(events[0]).toBe('software_start');
    expect(events.filter((e) => e === 'software_version')).toHaveLength(1);
    expect(jet.filter((j) => j.event === 'closure').map((j) => j.details.signature)).toEqual(closures.map((c) => c.signature.value));
    expect(jet.filter((j) => j.event === 'archive').map((j) => j.details.archive_id)).toEqual([...archiveIds].reverse());
    expect(jet.filter((j) => j.event === 'export').map((j) => j.details.file)).toEqual(['archives', 'archive', 'closures']);

    // ---- every archive: manifest signature, digests, contents
    for (const id of archiveIds) {
      const f = files(await download(id));
      expect(Object.keys(f)).toEqual(['manifest.json', 'manifest.sig', 'public_key.pem', 'public_key.jwk', 'records.json', 'closures.json', 'jet.json']);
      expect(verifies(pub, Buffer.from(f['manifest.json']!, 'utf8'), f['manifest.sig']!), `${id} manifest signature`).toBe(true);
      const m = JSON.parse(f['manifest.json']!);
      expect(m).toMatchObject({ format: 'nf525.archive.manifest', key_id: keyId, archive_id: id });
      for (const name of ['public_key.pem', 'public_key.jwk', 'records.json', 'closures.json', 'jet.json']) {
        const entry = (m.files as Array<{ name: string; bytes: number; sha256: string }>).find((x) => x.name === name)!;
        expect(entry, `${id} manifest lists ${name}`).toBeDefined();
        expect(entry.sha256).toBe(sha(Buffer.from(f[name]!, 'utf8')));
        expect(entry.bytes).toBe(Buffer.byteLength(f[name]!, 'utf8'));
      }
      const archived = JSON.parse(f['records.json']!).records as Rec[];
      const closure = closures.find((c) => c.number === m.closure.number)!;
      expect(closure.signature.value).toBe(m.closure.signature);
      expect(archived.map((r) => r.seq)).toEqual(records.filter((r) => r.seq >= closure.records.first_seq && r.seq <= closure.records.last_seq).map((r) => r.seq));
      for (const r of archived) expect(r).toEqual(byNumber.get(r.document_number));
      const archivedClosures = JSON.parse(f['closures.json']!).closures as Clo[];
      expect(archivedClosures.at(-1)!.number).toBe(closure.number);
      for (const c of archivedClosures) expect(verifies(pub, closureMessage(c), c.signature.value)).toBe(true);
      for (const j of JSON.parse(f['jet.json']!).entries as Jet[]) expect(verifies(pub, jetMessage(j), j.signature.value)).toBe(true);
    }

    // ---- `npm run verify-archive -- FILE`: the good archive, then tampered copies, each named
    const good = await download('monthly-2026-12');
    const cli = (bytes: Buffer, name: string) => {
      const file = path.join(dir, name);
      writeFileSync(file, bytes);
      const r = spawnSync('npm', ['run', '--silent', 'verify-archive', '--', file], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
      return { status: r.status, out: `${r.stdout}${r.stderr}` };
    };
    const ok = cli(good, 'good.json');
    expect(ok, ok.out).toMatchObject({ status: 0 });
    expect(ok.out).toMatch(/^OK monthly-2026-12 /);
    const container = () => JSON.parse(good.toString('utf8')) as { files: Array<{ name: string; content: string }> };
    const withFile = (name: string, fn: (v: any) => any) => {
      const c = container();
      const fl = c.files.find((x) => x.name === name)!;
      fl.content = `${JSON.stringify(fn(JSON.parse(fl.content)), null, 2)}\n`;
      return Buffer.from(JSON.stringify(c, null, 2));
    };
    // One byte: the day of the champagne sale's timestamp (23:30 → 23:31).
    const i = good.indexOf('2026-12-31T23:30:00+01:00');
    expect(i).toBeGreaterThan(0);
    const oneByte = Buffer.from(good);
    oneByte[i + 15] = '1'.charCodeAt(0);
    const decRecords = records.filter((r) => r.timestamp.startsWith('2026-12'));
    const r1 = cli(oneByte, 'one-byte.json');
    expect(r1.status, r1.out).toBe(1);
    expect(r1.out).toMatch(new RegExp(`^BROKEN records: records\\.json \\[2\\] ${decRecords[2]!.document_number}: .*signature`));
    // A deleted record.
    const r2 = cli(withFile('records.json', (v) => ({ ...v, records: v.records.filter((_: unknown, k: number) => k !== 1) })), 'deleted.json');
    expect(r2.status, r2.out).toBe(1);
    expect(r2.out).toMatch(new RegExp(`^BROKEN records: records\\.json \\[1\\] ${decRecords[2]!.document_number}: `));
    // A reordered pair.
    const r3 = cli(withFile('records.json', (v) => ({ ...v, records: [v.records[1], v.records[0], ...v.records.slice(2)] })), 'reordered.json');
    expect(r3.status, r3.out).toBe(1);
    expect(r3.out).toMatch(new RegExp(`^BROKEN records: records\\.json \\[0\\] ${decRecords[1]!.document_number}: `));
    // A forged closure total (the monthly closure's, its VAT line moved along so the sums still add up).
    const r4 = cli(withFile('closures.json', (v) => {
      const c = v.closures.at(-1);
      c.totals.incl_tax += 100; c.totals.tax += 100; c.vat[0].incl_tax += 100; c.vat[0].tax += 100;
      return v;
    }), 'forged.json');
    expect(r4.status, r4.out).toBe(1);
    expect(r4.out).toMatch(new RegExp(`^BROKEN closures: closures\\.json \\[\\d+\\] ${closures.find((c) => c.period === '2026-12')!.number}: .*signature`));
  });

  it('test and live on one register, a void, odd lines: each environment closes, archives and verifies on its own', async () => {
    const { key: test } = await a.signup();
    const lk = await a.request({ method: 'POST', url: '/v1/api-keys', key: test, payload: { name: 'prod', environment: 'live' } });
    expect(lk.statusCode, lk.body).toBe(201);
    const live = lk.json().key as string;
    const loc = await createLocation(a, test, 'fr-nf525');
    const ids: Record<string, string[]> = { [test]: [], [live]: [] };
    const at = async (k: string, iso: string, items: ReturnType<typeof line>[], over: Record<string, unknown> = {}) => {
      clock.set(iso);
      const res = await createTx(a, k, body(loc, items, over));
      expect(res.statusCode, res.body).toBe(201);
      ids[k]!.push(res.json().id);
      return res.json().id as string;
    };
    await at(test, '2027-02-27T09:00:00.000Z', [line('Menu', 1, 1500, 10)]);
    await at(live, '2027-02-27T09:30:00.000Z', [line('Menu', 2, 1500, 10), line('Eau', 1, 200, 5.5)]);
    await at(live, '2027-02-27T10:00:00.000Z', [line('Menu', 1, 1500, 10)], { type: 'void' });
    const odd = await at(live, '2027-02-28T10:00:00.000Z', [{ description: 'Thé | vert ü 🍵', quantity: 0.333, unit_price: 300, tax_rate: 2.1, tax_amount: 2, total_amount: 102 }]);
    await at(test, '2027-02-28T11:00:00.000Z', [line('Menu', 1, 1500, 10)], { type: 'refund' });
    clock.set('2027-02-28T12:00:00.000Z');
    const c = await a.request({ method: 'POST', url: `/v1/transactions/${odd}/cancel`, key: live, payload: {} });
    expect(c.statusCode, c.body).toBe(201);
    ids[live]!.push(c.json().id);
    clock.set('2027-03-01T01:00:00.000Z');
    // process-pending runs for the key's account and environment (its route's description).
    for (const k of [test, live]) {
      const run = await a.request({ method: 'POST', url: '/v1/admin/process-pending', key: k });
      expect(run.statusCode, run.body).toBe(200);
    }

    for (const [k, env] of [[test, 'test'], [live, 'live']] as const) {
      const records: Rec[] = [];
      for (const id of ids[k]!) records.push(JSON.parse((await a.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key: k })).body));
      expect(records.every((r) => r.environment === env)).toBe(true);
      const list = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives`, key: k });
      expect(list.json().data.map((x: { id: string; environment: string }) => `${x.environment} ${x.id}`), env).toEqual([`${env} monthly-2027-02`]);
      const dl = await a.request({ method: 'GET', url: `/v1/locations/${loc}/archives/monthly-2027-02`, key: k });
      expect(dl.statusCode, dl.body).toBe(200);
      const f = Object.fromEntries((JSON.parse(dl.body).files as Array<{ name: string; content: string }>).map((x) => [x.name, x.content]));
      const pub = crypto.createPublicKey(f['public_key.pem']!);
      checkRecords(records, pub, sha(pub.export({ type: 'spki', format: 'der' })));
      expect(JSON.parse(f['records.json']!).records).toEqual(records);
      const closures = (await a.request({ method: 'GET', url: `/v1/locations/${loc}/closures`, key: k })).json().data.reverse() as Clo[];
      expect(closures.map((x) => `${x.environment} ${x.kind} ${x.period}`)).toEqual([`${env} daily 2027-02-27`, `${env} daily 2027-02-28`, `${env} monthly 2027-02`]);
      checkClosures(closures, records, pub);
      const jet = (await a.request({ method: 'GET', url: `/v1/locations/${loc}/jet?limit=100`, key: k })).json().data.reverse() as Jet[];
      checkJet(jet, pub);
      expect(jet.map((j) => j.event).filter((e) => e !== 'export'), env).toEqual(['software_start', 'software_version', 'closure', 'closure', 'closure', 'archive']);
    }
  });

  it('the inspector routes\' errors: paging 400, unknown archive 404, another account\'s location 404, another system 404; a deleted location still answers', async () => {
    const { key } = await a.signup();
    const other = await a.signup();
    const loc = await createLocation(a, key, 'fr-nf525');
    const es = await createLocation(a, key, 'es-verifactu');
    clock.set('2027-04-10T09:00:00.000Z');
    expect((await createTx(a, key, body(loc, [line('Menu', 1, 1500, 10)]))).statusCode).toBe(201);
    clock.set('2027-05-01T01:00:00.000Z');
    expect((await a.request({ method: 'POST', url: '/v1/admin/process-pending', key })).statusCode).toBe(200);
    const get = async (url: string, k = key) => {
      const r = await a.request({ method: 'GET', url, key: k });
      return [r.statusCode, r.statusCode === 200 ? undefined : r.json()] as const;
    };
    for (const f of ['closures', 'jet', 'archives']) {
      expect(await get(`/v1/locations/${loc}/${f}?limit=0`)).toEqual([400, { error: 'limit must be an integer between 1 and 100' }]);
      expect(await get(`/v1/locations/${loc}/${f}?offset=-1`)).toEqual([400, { error: 'offset must be an integer between 0 and 10000' }]);
      expect(await get(`/v1/locations/${loc}/${f}`, other.key)).toEqual([404, { error: 'location not found' }]);
      expect(await get(`/v1/locations/${es}/${f}`)).toEqual([404, { error: `this location's fiscal system (es-verifactu) has no ${f} file` }]);
      expect(await get(`/v1/locations/00000000-0000-4000-8000-000000000000/${f}`)).toEqual([404, { error: 'location not found' }]);
    }
    // A malformed id of any length is not found (a 201-character one was a 400 of the route's schema).
    for (const id of ['monthly-2027-13', 'monthly-2027-03', 'annual-2027', 'MONTHLY-2027-04', 'monthly-2027-04.json', 'm'.repeat(201)]) {
      expect(await get(`/v1/locations/${loc}/archives/${id}`), id).toEqual([404, { error: 'archive not found' }]);
    }
    expect(await get(`/v1/locations/${loc}/archives/monthly-2027-04`, other.key)).toEqual([404, { error: 'location not found' }]);
    // Six years' retention: a deleted location's closures and archives stay readable.
    expect((await a.request({ method: 'DELETE', url: `/v1/locations/${loc}`, key })).statusCode).toBe(204);
    expect(await get(`/v1/locations/${loc}/closures`)).toEqual([200, undefined]);
    expect(await get(`/v1/locations/${loc}/archives/monthly-2027-04`)).toEqual([200, undefined]);
  });
});
