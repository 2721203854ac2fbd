/**
 * Golden files: one register's first three records on the fixed clock and the fixed P-256
 * key (test/fixtures/signing/record-key-p256.pem): a sale, a refund, and the sale's
 * cancellation, chained. ECDSA signatures are randomized (record.ts), so the golden
 * copies have the signature values replaced by markers (`<signature 1>`, …); everything
 * else, including the exact signed messages (golden/messages.txt), is compared byte for
 * byte. `UPDATE_GOLDEN=1` rewrites them; review the diff before committing.
 *
 * Each real signature is then verified independently by OpenSSL (`openssl dgst -sha256
 * -verify` with the public key PEM, the raw r||s converted to DER), and the chain by
 * verifyNf525Chain.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { nf525 } from './index.ts';
import { nf525Message, rawToDer, type Nf525Record } from './record.ts';
import { verifyNf525Chain } from './verify.ts';
import type { BuildInput, FiscalRecord, TransactionDraft } from '../types.ts';
import { FIXED_RECORD_PUBLIC_KEY_PATH, NOW, SOFTWARE, draft, fixedRecordKey, line, location } from '../shared/test-fixtures.ts';

const GOLDEN = new URL('./golden/', import.meta.url);
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const loc = location('fr-nf525');
const at = (minutes: number) => new Date(NOW.getTime() + minutes * 60_000);

/** A sale of two lines at 20 % and 5.5 %. */
const sale: TransactionDraft = draft({
  items: [
    line({ description: 'Menu du jour', unit_price: 1500, tax_rate: 10, tax_amount: 150, total_amount: 1650 }),
    line({ description: 'Vin rouge', quantity: 2, unit_price: 450, tax_rate: 20, tax_amount: 180, total_amount: 1080 }),
    line({ description: 'Eau', unit_price: 200, tax_rate: 5.5, tax_amount: 11, total_amount: 211 }),
  ],
});
/** A refund of one bottle. */
const refund: TransactionDraft = draft({
  type: 'refund',
  timestamp: at(5).toISOString(),
  items: [line({ description: 'Vin rouge', unit_price: 450, tax_rate: 20, tax_amount: 90, total_amount: 540 })],
});

function buildChain(): { file: string; record: FiscalRecord }[] {
  const base = (over: Partial<BuildInput>): BuildInput => ({
    transactionId: '',
    kind: 'record',
    tx: sale,
    location: loc,
    environment: 'test',
    now: NOW,
    chain: { seq: 1, previous: null },
    software: SOFTWARE,
    recordKey: fixedRecordKey(),
    ...over,
  });
  const link = (r: FiscalRecord, seq: number, now: Date) => ({
    seq,
    previous: { fingerprint: r.fingerprint, fiscalId: r.fiscalId, issuedAt: now.toISOString(), linkData: r.linkData ?? null },
  });
  const first = nf525.build(base({ transactionId: '0b6f9c1e-3d2a-4c5b-9e8f-000000000001' }));
  const second = nf525.build(base({ transactionId: '0b6f9c1e-3d2a-4c5b-9e8f-000000000002', tx: refund, now: at(5), chain: link(first, 2, NOW) }));
  const third = nf525.build(base({
    transactionId: '0b6f9c1e-3d2a-4c5b-9e8f-000000000003',
    kind: 'cancellation',
    tx: { ...sale, timestamp: at(9).toISOString(), metadata: { cancellation_reason: 'wrong table' } },
    original: { transactionId: '0b6f9c1e-3d2a-4c5b-9e8f-000000000001', fiscalId: first.fiscalId, tx: sale, issuedAt: NOW.toISOString(), documentNumber: first.documentNumber ?? null },
    now: at(9),
    chain: link(second, 3, at(5)),
  }));
  return [
    { file: '1-sale.json', record: first },
    { file: '2-refund.json', record: second },
    { file: '3-cancellation.json', record: third },
  ];
}

const chain = buildChain();
const bodies = chain.map((c) => JSON.parse(c.record.body) as Nf525Record);
const signatures = bodies.map((b) => b.signature.value);

/** Replaces every signature value by its marker. */
const mask = (text: string): string => signatures.reduce((t, sig, i) => t.split(sig).join(`<signature ${i + 1}>`), text);

function expectGolden(name: string, built: string): void {
  const file = new URL(name, GOLDEN);
  if (UPDATE) {
    fs.mkdirSync(GOLDEN, { recursive: true });
    fs.writeFileSync(file, built);
  }
  expect(fs.existsSync(file), `golden/${name} is missing: run the test with UPDATE_GOLDEN=1`).toBe(true);
  expect(built, `golden/${name} differs (UPDATE_GOLDEN=1 rewrites it)`).toBe(fs.readFileSync(file, 'utf8'));
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nf525-golden-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** `openssl dgst -sha256 -verify` on a message and a base64url r||s signature: OpenSSL's own verdict. */
function opensslVerify(message: string, signature: string, name: string): { ok: boolean; output: string } {
  const msg = path.join(tmp, `${name}.txt`);
  const sig = path.join(tmp, `${name}.sig.der`);
  fs.writeFileSync(msg, message, 'utf8');
  fs.writeFileSync(sig, rawToDer(Buffer.from(signature, 'base64url')));
  try {
    const out = execFileSync('openssl', ['dgst', '-sha256', '-verify', fileURLToPath(FIXED_RECORD_PUBLIC_KEY_PATH), '-signature', sig, msg], { encoding: 'utf8' });
    return { ok: true, output: out.trim() };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() };
  }
}

describe('NF525 golden records', () => {
  it.each(chain.map((c, i) => [c.file, i] as const))('%s matches its golden file (signature values masked)', (file, i) => {
    expectGolden(file, mask(chain[i]!.record.body));
    // The same record indented, for a reader of the repository (not what is stored).
    expectGolden(file.replace(/\.json$/, '.pretty.json'), `${JSON.stringify(JSON.parse(mask(chain[i]!.record.body)), null, 2)}\n`);
  });

  it('the signed messages match golden/messages.txt (signature values masked)', () => {
    expectGolden('messages.txt', `${bodies.map((b) => mask(nf525Message(b))).join('\n')}\n`);
  });

  it('the message as docs/decisions.md describes it, rebuilt here without record.ts, is the one signed', () => {
    // An independent reading of the documented format (what a third-party verifier writes).
    const rate = (r: number) => {
      const [u, d = ''] = r.toFixed(6).replace(/0+$/, '').split('.');
      return `${u}.${d.padEnd(2, '0')}`;
    };
    const documented = (b: Nf525Record): string => {
      const lines = b.lines
        .map((l) => `${Number(l.quantity.toFixed(6))};${l.unit_price};${rate(l.tax_rate)};${l.tax_amount};${l.total_amount};${Buffer.from(l.description).toString('base64url')}`)
        .join('\n');
      const g = b.grand_totals;
      return [
        'NF525R2', b.register_id, b.environment, b.seq, b.document_number, b.operation, b.timestamp,
        b.vat.map((v) => `${v.rate}:${v.excl_tax}:${v.tax}:${v.incl_tax}`).join(';'),
        b.totals.excl_tax, b.totals.tax, b.totals.incl_tax, g.perpetual.excl_tax, g.perpetual.incl_tax,
        g.day.period, g.day.excl_tax, g.day.incl_tax, g.month.period, g.month.excl_tax, g.month.incl_tax,
        g.fiscal_year.period, g.fiscal_year.excl_tax, g.fiscal_year.incl_tax,
        b.cancels?.document_number ?? '', crypto.createHash('sha256').update(lines).digest('hex'),
        b.payment_method, Buffer.from(b.cancels?.reason ?? '').toString('base64url'), b.signature.key_id, b.signature.previous ?? '',
      ].join('|');
    };
    expect(bodies.map(documented)).toEqual(bodies.map((b) => nf525Message(b)));
  });

  it.each(chain.map((c, i) => [c.file, i] as const))('%s: openssl verifies its signature with the public key PEM', (file, i) => {
    const v = opensslVerify(nf525Message(bodies[i]!), signatures[i]!, file);
    expect(v.output).toBe('Verified OK');
    expect(v.ok).toBe(true);
  });

  it('key_id is the SHA-256 of the public key\'s DER SubjectPublicKeyInfo, as openssl writes it', () => {
    const der = execFileSync('openssl', ['pkey', '-pubin', '-in', fileURLToPath(FIXED_RECORD_PUBLIC_KEY_PATH), '-outform', 'DER']);
    const keyId = execFileSync('openssl', ['dgst', '-sha256', '-r'], { input: der, encoding: 'utf8' }).split(' ')[0];
    expect(bodies.map((b) => b.signature.key_id)).toEqual([keyId, keyId, keyId]);
  });

  it('openssl refuses a signature over a changed amount', () => {
    const message = nf525Message(bodies[0]!).replace('|2941|', '|2940|');
    expect(message).not.toBe(nf525Message(bodies[0]!));
    const v = opensslVerify(message, signatures[0]!, 'tampered');
    expect(v.ok).toBe(false);
    expect(v.output).toContain('Verification failure');
  });

  it('the chain: each record signs its predecessor\'s signature; verifyNf525Chain finds no break', () => {
    expect(bodies.map((b) => b.signature.previous)).toEqual([null, signatures[0], signatures[1]]);
    expect(chain.map((c) => c.record.fingerprint)).toEqual(signatures);
    expect(verifyNf525Chain(chain.map((c) => c.record.body), fixedRecordKey().publicKeyPem)).toEqual({ ok: true, count: 3, lastSignature: signatures[2] });
  });

  it('numbers, operations, totals: sale +29.41, refund -5.40, cancellation -29.41; the grand total follows', () => {
    expect(chain.map((c) => c.record.fiscalId)).toEqual(['73282932000074-00000001', '73282932000074-00000002', '73282932000074-00000003']);
    expect(bodies.map((b) => [b.operation, b.totals.incl_tax, b.grand_totals.perpetual.incl_tax])).toEqual([
      ['sale', 2941, 2941],
      ['refund', -540, 2401],
      ['cancellation', -2941, -540],
    ]);
    expect(bodies[0]!.vat).toEqual([
      { rate: '5.50', excl_tax: 200, tax: 11, incl_tax: 211 },
      { rate: '10.00', excl_tax: 1500, tax: 150, incl_tax: 1650 },
      { rate: '20.00', excl_tax: 900, tax: 180, incl_tax: 1080 },
    ]);
    expect(bodies[2]!.cancels).toEqual({ document_number: '73282932000074-00000001', transaction_id: '0b6f9c1e-3d2a-4c5b-9e8f-000000000001', reason: 'wrong table' });
    expect(bodies[2]!.grand_totals).toEqual({
      perpetual: { excl_tax: -450, incl_tax: -540 },
      day: { period: '2026-01-15', excl_tax: -450, incl_tax: -540 },
      month: { period: '2026-01', excl_tax: -450, incl_tax: -540 },
      fiscal_year: { period: '2026', excl_tax: -450, incl_tax: -540 },
    });
  });

  it('render hints: the document number and four characters of the signature (3rd, 7th, 13th, 19th)', () => {
    const sig = signatures[0]!;
    expect(chain[0]!.record.renderHints).toEqual([
      { key: 'document_number', placement: 'header', mandatory: true, kind: 'text', value: '73282932000074-00000001' },
      { key: 'signature_extract', placement: 'footer_bottom', mandatory: true, kind: 'text', value: `${sig[2]}${sig[6]}${sig[12]}${sig[18]}` },
    ]);
  });
});
