/**
 * Golden files for closures and the JET: a day of two records (a sale and a refund, built
 * by the NF525 plug-in on the fixed clock and key), its daily closure, the month's
 * closure, and a JET entry (an inspector's export). ECDSA signatures are randomized
 * (record.ts), so the golden copies mask the signature values (`<signature 1>`, …) and
 * everything else, the exact signed messages included (golden/closures-messages.txt), is
 * compared byte for byte. `UPDATE_GOLDEN=1` rewrites them. OpenSSL then verifies every real
 * signature (`openssl dgst -sha256 -verify`, the public key PEM, r||s as DER).
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { nf525 } from '../index.ts';
import { rawToDer, type Nf525Record } from '../record.ts';
import type { BuildInput } from '../../types.ts';
import { FIXED_RECORD_PUBLIC_KEY_PATH, NOW, SOFTWARE, draft, fixedRecordKey, line, location } from '../../shared/test-fixtures.ts';
import { buildClosure, closureMessage, type ClosureInput, type Nf525Closure } from './closure.ts';
import { buildJet, detailsText, jetMessage, type Nf525JetEntry } from './jet.ts';
import { closuresContent, dayContent } from './processor.ts';
import { verifyClosures, verifyJet } from './verify.ts';

const GOLDEN = new URL('../golden/', import.meta.url);
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const loc = location('fr-nf525');
const key = fixedRecordKey();
const software = { name: SOFTWARE.name, version: SOFTWARE.version };
/** The next night, 02:00 in Paris (CET). */
const NIGHT = new Date('2026-01-16T01:00:00.000Z');

const base = (over: Partial<BuildInput>): BuildInput => ({
  transactionId: '0b6f9c1e-3d2a-4c5b-9e8f-000000000001', kind: 'record', location: loc, environment: 'test', now: NOW,
  chain: { seq: 1, previous: null }, software: SOFTWARE, recordKey: key,
  tx: draft({ items: [line({ description: 'Menu du jour', unit_price: 1500, tax_rate: 10, tax_amount: 150, total_amount: 1650 }), line({ description: 'Eau', unit_price: 200, tax_rate: 5.5, tax_amount: 11, total_amount: 211 })] }),
  ...over,
});
const r1 = nf525.build(base({}));
const r2 = nf525.build(base({
  transactionId: '0b6f9c1e-3d2a-4c5b-9e8f-000000000002', now: new Date(NOW.getTime() + 3_600_000),
  tx: draft({ type: 'refund', items: [line({ description: 'Eau', unit_price: 200, tax_rate: 5.5, tax_amount: 11, total_amount: 211 })] }),
  chain: { seq: 2, previous: { fingerprint: r1.fingerprint, fiscalId: r1.fiscalId, issuedAt: NOW.toISOString(), linkData: r1.linkData ?? null } },
}));
const records = [r1, r2].map((r) => JSON.parse(r.body) as Nf525Record);

const input = (due: ClosureInput['due'], content: ClosureInput['content']): ClosureInput => ({
  accountId: 'acc', locationId: loc.id, registerId: '73282932000074', environment: 'test', due, content, key, software,
});
const daily = buildClosure(input({ kind: 'daily', period: '2026-01-15' }, dayContent(records)), { seq: 1, previous: null }, NIGHT);
const monthly = buildClosure(
  input({ kind: 'monthly', period: '2026-01' }, closuresContent([daily.closure])),
  { seq: 2, previous: { fingerprint: daily.closure.signature.value, fiscalId: daily.closure.number, issuedAt: NIGHT.toISOString(), linkData: daily.linkData } },
  new Date('2026-02-01T01:00:00.000Z'),
);
const jet = buildJet({
  // An export (its details fixed: a closure event's would carry a randomized signature).
  accountId: 'acc', locationId: loc.id, registerId: '73282932000074', environment: 'test', event: 'export', key, software,
  details: { file: 'closures', limit: '20', offset: '0', count: '2' },
}, { seq: 1, previous: null }, NIGHT);

const closures: Nf525Closure[] = [daily.closure, monthly.closure];
const signatures = [...closures.map((c) => c.signature.value), jet.entry.signature.value];
const mask = (text: string): string => signatures.reduce((t, sig, i) => t.split(sig).join(`<signature ${i + 1}>`), text);

function expectGolden(name: string, built: string): void {
  const file = new URL(name, GOLDEN);
  if (UPDATE) fs.writeFileSync(file, built);
  expect(fs.existsSync(file), `golden/${name} is missing: run the test with UPDATE_GOLDEN=1`).toBe(true);
  expect(built, `golden/${name} differs (UPDATE_GOLDEN=1 rewrites it)`).toBe(fs.readFileSync(file, 'utf8'));
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nf525-closures-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function opensslVerify(message: string, signature: string, name: string): string {
  const msg = path.join(tmp, `${name}.txt`);
  const sig = path.join(tmp, `${name}.sig.der`);
  fs.writeFileSync(msg, message, 'utf8');
  fs.writeFileSync(sig, rawToDer(Buffer.from(signature, 'base64url')));
  try {
    return execFileSync('openssl', ['dgst', '-sha256', '-verify', fileURLToPath(FIXED_RECORD_PUBLIC_KEY_PATH), '-signature', sig, msg], { encoding: 'utf8' }).trim();
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}`.trim();
  }
}

describe('NF525 golden closures and JET entry', () => {
  it('the daily closure, the monthly closure and the JET entry match their golden files (signatures masked)', () => {
    expectGolden('closure-1-daily.json', mask(`${JSON.stringify(daily.closure, null, 2)}\n`));
    expectGolden('closure-2-monthly.json', mask(`${JSON.stringify(monthly.closure, null, 2)}\n`));
    expectGolden('jet-1-export.json', mask(`${JSON.stringify(jet.entry, null, 2)}\n`));
    expectGolden('closures-messages.txt', `${mask([...closures.map((c) => closureMessage(c)), jetMessage(jet.entry)].join('\n'))}\n`);
  });

  it('the daily closure sums the day: per VAT rate, the totals, the grand total of its last record, records 1 to 2', () => {
    expect(daily.closure).toMatchObject({
      kind: 'daily', period: '2026-01-15', timestamp: '2026-01-16T02:00:00+01:00', number: '73282932000074-C00000001',
      vat: [{ rate: '5.50', excl_tax: 0, tax: 0, incl_tax: 0 }, { rate: '10.00', excl_tax: 1500, tax: 150, incl_tax: 1650 }],
      totals: { excl_tax: 1500, tax: 150, incl_tax: 1650 },
      grand_total: { perpetual: { excl_tax: 1500, incl_tax: 1650 } },
      records: { count: 2, first_seq: 1, last_seq: 2 },
    });
    expect(daily.linkData).toEqual({ day: '2026-01-15', month: '', year: '', last_seq: '2' });
    expect(monthly.linkData).toEqual({ day: '2026-01-15', month: '2026-01', year: '', last_seq: '2' });
  });

  it('the messages as docs/decisions.md describes them, rebuilt without closure.ts / jet.ts, are the ones signed', () => {
    const closureDoc = (c: Nf525Closure) => [
      'NF525C1', c.register_id, c.environment, c.seq, c.number, c.kind, c.period, c.timestamp,
      c.vat.map((v) => `${v.rate}:${v.excl_tax}:${v.tax}:${v.incl_tax}`).join(';'), c.totals.excl_tax, c.totals.tax, c.totals.incl_tax,
      c.grand_total.perpetual.excl_tax, c.grand_total.perpetual.incl_tax, c.records.count, c.records.first_seq, c.records.last_seq,
      c.signature.key_id, c.signature.previous ?? '',
    ].join('|');
    expect(closures.map(closureDoc)).toEqual(closures.map((c) => closureMessage(c)));
    const e: Nf525JetEntry = jet.entry;
    const details = Object.keys(e.details).sort().map((k) => `${k}=${Buffer.from(e.details[k]!).toString('base64url')}`).join('\n');
    expect(details).toBe(detailsText(e.details));
    const jetDoc = ['NF525J1', e.register_id, e.environment, e.seq, e.number, e.code, e.event, e.timestamp,
      crypto.createHash('sha256').update(details).digest('hex'), e.signature.key_id, e.signature.previous ?? ''].join('|');
    expect(jetDoc).toBe(jetMessage(e));
  });

  it('openssl verifies every signature with the public key PEM, and refuses a changed total', () => {
    closures.forEach((c, i) => expect(opensslVerify(closureMessage(c), c.signature.value, `closure-${i}`)).toBe('Verified OK'));
    expect(opensslVerify(jetMessage(jet.entry), jet.entry.signature.value, 'jet')).toBe('Verified OK');
    const tampered = closureMessage(daily.closure).replace('|1500|150|1650|', '|1500|150|1651|');
    expect(tampered).not.toBe(closureMessage(daily.closure));
    expect(opensslVerify(tampered, daily.closure.signature.value, 'tampered')).toContain('Verification failure');
  });

  it('verifyClosures and verifyJet find no break; a missing closure, a changed sum or a foreign key break them', () => {
    expect(verifyClosures(closures, key.publicKeyPem)).toEqual({ ok: true, count: 2, lastSignature: signatures[1] });
    expect(verifyJet([jet.entry], key.publicKeyPem)).toEqual({ ok: true, count: 1, lastSignature: signatures[2] });
    expect(verifyClosures([monthly.closure], key.publicKeyPem)).toMatchObject({ ok: false, break: { index: 0 } });
    const other = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    expect(verifyClosures(closures, other)).toMatchObject({ ok: false, break: { index: 0, reason: expect.stringContaining('another key') } });
    const changed = { ...jet.entry, details: { ...jet.entry.details, count: '3' } };
    expect(verifyJet([changed], key.publicKeyPem)).toMatchObject({ ok: false, break: { reason: expect.stringContaining('does not verify') } });
  });

  it('verifyClosures: sums and grand totals are checked across closures, even when each is well signed', () => {
    const after = (c: Nf525Closure, linkData: Record<string, string>) => ({ seq: c.seq + 1, previous: { fingerprint: c.signature.value, fiscalId: c.number, issuedAt: '', linkData } });
    const content = dayContent(records);
    // A second day whose perpetual grand total does not move by its totals.
    const day2 = buildClosure(input({ kind: 'daily', period: '2026-01-16' }, { ...content, records: { count: 1, first_seq: 3, last_seq: 3 } }), after(daily.closure, daily.linkData), NIGHT);
    expect(verifyClosures([daily.closure, day2.closure], key.publicKeyPem)).toMatchObject({ ok: false, break: { index: 1, reason: expect.stringContaining('grand total does not move') } });
    // A month that does not sum its days.
    const wrongMonth = buildClosure(input({ kind: 'monthly', period: '2026-01' }, { ...closuresContent([daily.closure]), totals: { excl_tax: 1, tax: 0, incl_tax: 1 }, vat: [] }), after(daily.closure, daily.linkData), NIGHT);
    expect(verifyClosures([daily.closure, wrongMonth.closure], key.publicKeyPem)).toMatchObject({ ok: false, break: { index: 1, reason: expect.stringContaining('not the sum') } });
    // A closure left out of the run.
    expect(verifyClosures([daily.closure, { ...monthly.closure, seq: 3 }], key.publicKeyPem)).toMatchObject({ ok: false, break: { index: 1 } });
    // Mid-chain: the monthly closure alone verifies after its daily one.
    expect(verifyClosures([monthly.closure], key.publicKeyPem, { before: daily.closure })).toMatchObject({ ok: true, count: 1 });
  });
});
