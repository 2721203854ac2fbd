/**
 * The archive format and its verifier, without a store: a day of two records (a sale and
 * a refund, built by the plug-in on the fixed clock and key), its daily and monthly
 * closures and a JET entry, archived as closures/archives.ts does (contentFiles,
 * manifestText, the manifest signed), then verified; broken ones are named. OpenSSL
 * verifies the manifest's signature from the extracted files (offline, no code of ours).
 * The CLI's `main`: help, usage, exit codes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from './verify-archive-cli.ts';
import { FIXED_RECORD_PUBLIC_KEY_PATH, NOW, SOFTWARE, draft, fixedRecordKey, line, location } from '../shared/test-fixtures.ts';
import type { BuildInput } from '../types.ts';
import { ARCHIVE_FILES, MANIFEST_FORMAT, archiveBytes, contentFiles, manifestText, rangeOf } from './archive.ts';
import { verifyNf525Archive } from './archive-verify.ts';
import { buildClosure, type ClosureContent, type ClosureInput, type Nf525Closure } from './closures/closure.ts';
import { buildJet } from './closures/jet.ts';
import { closuresContent, dayContent } from './closures/processor.ts';
import { nf525 } from './index.ts';
import { rawToDer, signMessage, type Nf525Record } from './record.ts';

const loc = location('fr-nf525');
const key = fixedRecordKey();
const software = { name: SOFTWARE.name, version: SOFTWARE.version };
const NIGHT = new Date('2026-02-01T01:00:00.000Z');
const base = (over: Partial<BuildInput>): BuildInput => ({
  transactionId: '0b6f9c1e-3d2a-4c5b-9e8f-000000000001', kind: 'record', location: loc, environment: 'test', now: NOW,
  chain: { seq: 1, previous: null }, software: SOFTWARE, recordKey: key,
  tx: draft({ items: [line({ description: 'Menu du jour', unit_price: 1500, tax_rate: 10, tax_amount: 150, total_amount: 1650 })] }),
  ...over,
});
const r1 = nf525.build(base({}));
const r2 = nf525.build(base({
  transactionId: '0b6f9c1e-3d2a-4c5b-9e8f-000000000002', now: new Date(NOW.getTime() + 3_600_000),
  chain: { seq: 2, previous: { fingerprint: r1.fingerprint, fiscalId: r1.fiscalId, issuedAt: NOW.toISOString(), linkData: r1.linkData ?? null } },
}));
const records = [r1, r2].map((r) => JSON.parse(r.body) as Nf525Record);
const input = (due: ClosureInput['due'], content: ClosureInput['content']): ClosureInput => ({
  accountId: 'acc', locationId: loc.id, registerId: records[0]!.register_id, environment: 'test', due, content, key, software,
});
const daily = buildClosure(input({ kind: 'daily', period: records[0]!.timestamp.slice(0, 10) }, dayContent(records)), { seq: 1, previous: null }, NIGHT);
const monthly = buildClosure(
  input({ kind: 'monthly', period: records[0]!.timestamp.slice(0, 7) }, closuresContent([daily.closure])),
  { seq: 2, previous: { fingerprint: daily.closure.signature.value, fiscalId: daily.closure.number, issuedAt: NIGHT.toISOString(), linkData: daily.linkData } },
  NIGHT,
);
const jet = buildJet({
  accountId: 'acc', locationId: loc.id, registerId: records[0]!.register_id, environment: 'test', event: 'export', key, software,
  details: { file: 'closures', limit: '20', offset: '0', count: '2' },
}, { seq: 1, previous: null }, NIGHT);

function archive(over: { records?: unknown[]; closures?: Nf525Closure[] } = {}): { bytes: Buffer; manifest: string; signature: string } {
  const docs = over.records ?? records;
  const closureDocs = over.closures ?? [daily.closure, monthly.closure];
  const files = contentFiles({
    publicKeyPem: key.publicKeyPem,
    records: { before: null, docs }, closures: { before: null, docs: closureDocs }, jet: { before: null, docs: [jet.entry] },
  });
  const m = closureDocs[closureDocs.length - 1]!;
  const manifest = manifestText({
    format: MANIFEST_FORMAT, version: 1, archive_id: `monthly-${m.period}`, register_id: m.register_id, environment: 'test', kind: 'monthly', period: m.period,
    created_at: '2026-02-01T02:00:00+01:00', software, key_id: key.keyId, closure: { number: m.number, seq: m.seq, signature: m.signature.value },
    records: { ...rangeOf(records), environment_count: 2 }, closures: rangeOf(closureDocs), jet: rangeOf([jet.entry]),
  }, files);
  const signature = signMessage(manifest, key.privateKey);
  return { bytes: archiveBytes(manifest, signature, files), manifest, signature };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nf525-archive-unit-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('verifyNf525Archive', () => {
  it('a sound archive verifies; its files are the documented ones, in order', () => {
    const { bytes } = archive();
    const r = verifyNf525Archive(bytes);
    expect(r).toMatchObject({ ok: true, counts: { records: 2, closures: 2, jet: 1 }, manifest: { key_id: key.keyId } });
    expect((JSON.parse(bytes.toString('utf8')) as { files: Array<{ name: string }> }).files.map((f) => f.name)).toEqual([...ARCHIVE_FILES]);
    expect(verifyNf525Archive(bytes, { expectedKeyId: key.keyId }).ok).toBe(true);
    expect(verifyNf525Archive(bytes, { expectedKeyId: '00'.repeat(32) })).toMatchObject({ ok: false, break: { check: 'public_key' } });
  });

  it('OpenSSL verifies the manifest signature from the extracted files', () => {
    const { manifest, signature } = archive();
    fs.writeFileSync(path.join(tmp, 'manifest.json'), manifest);
    fs.writeFileSync(path.join(tmp, 'sig.der'), rawToDer(Buffer.from(signature, 'base64url')));
    const out = execFileSync('openssl', ['dgst', '-sha256', '-verify', fileURLToPath(FIXED_RECORD_PUBLIC_KEY_PATH), '-signature', path.join(tmp, 'sig.der'), path.join(tmp, 'manifest.json')], { encoding: 'utf8' });
    expect(out.trim()).toBe('Verified OK');
  });

  it('names what is broken: the container, a file missing, a record, the contents, a digest', () => {
    expect(verifyNf525Archive('nope')).toMatchObject({ ok: false, break: { check: 'container', reason: 'not JSON' } });
    expect(verifyNf525Archive('{"format":"zip"}')).toMatchObject({ ok: false, break: { check: 'container' } });
    const { bytes } = archive();
    const c = JSON.parse(bytes.toString('utf8')) as { files: Array<{ name: string; content: string }> };
    const without = { ...c, files: c.files.filter((f) => f.name !== 'jet.json') };
    expect(verifyNf525Archive(JSON.stringify(without))).toMatchObject({ ok: false, break: { check: 'container', file: 'jet.json', reason: 'the file is missing' } });
    // A record's amount changed: its signature.
    const forged = records.map((r, i) => (i === 1 ? { ...r, payment_method: r.payment_method, totals: { ...r.totals, incl_tax: r.totals.incl_tax + 1 } } : r));
    expect(verifyNf525Archive(archive({ records: forged }).bytes)).toMatchObject({ ok: false, break: { check: 'records', index: 1, seq: 2 } });
    // The last record left out (the manifest signed over a file without it): the closure covers it.
    expect(verifyNf525Archive(archive({ records: [records[0]] }).bytes)).toMatchObject({ ok: false, break: { check: 'contents', file: 'records.json' } });
    // A content file changed where no chain looks (the JWK's spacing): its digest.
    const jwk = { ...c, files: c.files.map((f) => (f.name === 'public_key.jwk' ? { ...f, content: `${f.content}\n` } : f)) };
    expect(verifyNf525Archive(JSON.stringify(jwk))).toMatchObject({ ok: false, break: { check: 'digest', file: 'public_key.jwk' } });
  });
});

/** Daily closures built one after the other on their chain, then the month's closure of them. */
function monthOf(days: Array<[string, ClosureContent]>, month: string): Nf525Closure[] {
  const out: Nf525Closure[] = [];
  let link: Parameters<typeof buildClosure>[1] = { seq: 1, previous: null };
  const add = (due: ClosureInput['due'], content: ClosureContent) => {
    const built = buildClosure(input(due, content), link, NIGHT);
    out.push(built.closure);
    link = { seq: built.closure.seq + 1, previous: { fingerprint: built.closure.signature.value, fiscalId: built.closure.number, issuedAt: NIGHT.toISOString(), linkData: built.linkData } };
  };
  for (const [period, content] of days) add({ kind: 'daily', period }, content);
  add({ kind: 'monthly', period: month }, closuresContent(out));
  return out;
}

describe('verifyNf525Archive: a record stamped on a day closed already', () => {
  const day = records[0]!.timestamp.slice(0, 10);
  const month = day.slice(0, 7);
  const next = `${month}-${String(Number(day.slice(8, 10)) + 1).padStart(2, '0')}`;

  it('in the next daily closure (by seq), not its own day\'s: the archive verifies', () => {
    // Record 2 is stamped on the day of record 1, whose closure covers record 1 only: the next day's closes it.
    expect(records[1]!.timestamp.slice(0, 10)).toBe(day);
    const chain = monthOf([[day, dayContent([records[0]!])], [next, dayContent([records[1]!])]], month);
    expect(chain.map((c) => `${c.kind} ${c.period} ${c.records.first_seq}-${c.records.last_seq}`)).toEqual([`daily ${day} 1-1`, `daily ${next} 2-2`, `monthly ${month} 1-2`]);
    const r = verifyNf525Archive(archive({ closures: chain }).bytes);
    expect(r.ok ? true : r.message).toBe(true);
  });

  it('a daily closure that is not the sum of its records is named, though the grand total and the month add up', () => {
    // Day 1 claims both records' totals but covers record 1 only; day 2 covers record 2 with nothing.
    const both = dayContent(records);
    const chain = monthOf([
      [day, { ...both, records: { count: 1, first_seq: 1, last_seq: 1 } }],
      [next, { vat: [], totals: { excl_tax: 0, tax: 0, incl_tax: 0 }, perpetual: both.perpetual, records: { count: 1, first_seq: 2, last_seq: 2 } }],
    ], month);
    const r = verifyNf525Archive(archive({ closures: chain }).bytes);
    expect(r).toMatchObject({ ok: false, break: { check: 'contents', file: 'closures.json' } });
    expect(r.ok === false && r.message).toMatch(new RegExp(`daily ${day} \\(.*-C00000001\\) is not the sum of its records 1-1`));
  });
});

describe('verify-archive CLI', () => {
  const run = (args: string[]) => {
    let out = '';
    let err = '';
    const code = main(args, (s) => { out += s; }, (s) => { err += s; });
    return { code, out, err };
  };
  it('exit codes: 0 OK, 1 a break, 2 usage or I/O; --help documents them', () => {
    expect(run(['--help'])).toMatchObject({ code: 0, out: expect.stringContaining('Exit codes:') });
    expect(run([]).code).toBe(2);
    expect(run([path.join(tmp, 'missing.json')]).code).toBe(2);
    const good = path.join(tmp, 'good.json');
    fs.writeFileSync(good, archive().bytes);
    expect(run([good])).toMatchObject({ code: 0, out: expect.stringMatching(/^OK monthly-/) });
    const bad = path.join(tmp, 'bad.json');
    fs.writeFileSync(bad, archive({ records: [records[1], records[0]] }).bytes);
    expect(run([bad])).toMatchObject({ code: 1, out: expect.stringMatching(/^BROKEN records: records\.json \[1\] \d+-00000001: seq 1 follows seq 2/) });
  });
});
