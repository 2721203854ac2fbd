import crypto from 'node:crypto';
import { describe, it, expect } from 'vitest';
import { nf525 } from './index.ts';
import { linesText, nf525Message, quantityText, rateText, signMessage, verifyMessage, type Nf525Record } from './record.ts';
import { readNf525Totals } from './totals.ts';
import { verifyNf525Chain } from './verify.ts';
import type { BuildInput, FiscalRecord, TransactionDraft } from '../types.ts';
import { NOW, SOFTWARE, TX_ID, draft, fixedRecordKey, line, location, txCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { toRecordKey } from '../../crypto/record-key.ts';

const loc = location('fr-nf525');
const key = fixedRecordKey();

/** Builds a run of records on one register, each on the link the previous one left. */
function run(steps: { tx?: TransactionDraft; now: Date; env?: 'test' | 'live'; cancels?: number }[]): FiscalRecord[] {
  const out: FiscalRecord[] = [];
  steps.forEach((s, i) => {
    const prev = out[i - 1];
    const original = s.cancels !== undefined ? out[s.cancels]! : undefined;
    const input: BuildInput = {
      transactionId: `tx-${i + 1}`,
      kind: original ? 'cancellation' : 'record',
      tx: s.tx ?? draft(),
      original: original
        ? { transactionId: `tx-${s.cancels! + 1}`, fiscalId: original.fiscalId, tx: s.tx ?? draft(), issuedAt: NOW.toISOString(), documentNumber: original.documentNumber ?? null }
        : undefined,
      location: loc,
      environment: s.env ?? 'test',
      now: s.now,
      chain: { seq: i + 1, previous: prev ? { fingerprint: prev.fingerprint, fiscalId: prev.fiscalId, issuedAt: NOW.toISOString(), linkData: prev.linkData ?? null } : null },
      software: SOFTWARE,
      recordKey: key,
    };
    out.push(nf525.build(input));
  });
  return out;
}

const body = (r: FiscalRecord) => JSON.parse(r.body) as Nf525Record;
/** A sale at a French rate, as validateTransaction takes it (rates.ts); draft()'s line is at 21 %, which only build() is given below. */
const frenchSale = () => draft({ items: [line({ tax_rate: 20, tax_amount: 200, total_amount: 1200 })] });

describe('fr-nf525 record', () => {
  it('nothing required in metadata; success at creation; signed with an ec-p256 record key', () => {
    expect(nf525.validateTransaction(frenchSale(), txCtx(loc))).toEqual({});
    expect(nf525.initialStatus(loc)).toBe('success');
    expect(nf525.capabilities).toMatchObject({ recordKey: 'ec-p256', cancellationJoinsChain: true, chained: true, signsLocally: true });
  });

  it('fiscal id: register id and sequence; not a placeholder; the fingerprint is the signature', () => {
    const { record } = validatedBuild(nf525, loc, frenchSale(), { chain: { seq: 35, previous: null } });
    expect(record).toMatchObject({ fiscalId: '73282932000074-00000035', documentNumber: '73282932000074-00000035', placeholder: false, contentType: 'application/json', qrData: null });
    const b = body(record);
    expect(record.fingerprint).toBe(b.signature.value);
    expect(verifyMessage(nf525Message(b), b.signature.value, key.publicKey)).toBe(true);
    expect(record.renderHints.map((h) => [h.key, h.value])).toEqual([
      ['document_number', '73282932000074-00000035'],
      ['signature_extract', [3, 7, 13, 19].map((p) => b.signature.value[p - 1]).join('')],
    ]);
  });

  it('keeps the shop\'s name and address its ticket prints (for duplicates), outside the signed message', () => {
    const shop = { ...loc, name: 'Boulangerie du Marché', address: '1 place du Marché, 69001 Lyon' };
    const { record } = validatedBuild(nf525, shop, frenchSale());
    expect(body(record).location).toEqual({ name: 'Boulangerie du Marché', address: '1 place du Marché, 69001 Lyon' });
    const { record: plain } = validatedBuild(nf525, loc, frenchSale());
    expect(body(plain).location).toEqual({ name: 'Shop', address: null });
    // Not signed (as legal_name): the same message whatever the shop is called.
    expect(nf525Message(body(record)).split('|').slice(0, -1)).toEqual(nf525Message(body(plain)).split('|').slice(0, -1));
  });

  it('refuses to build without the record key', () => {
    expect(() => nf525.build({ transactionId: TX_ID, kind: 'record', tx: draft(), location: loc, environment: 'test', now: NOW, chain: { seq: 1, previous: null }, software: SOFTWARE }))
      .toThrow(/no record key/);
  });

  it('rates: percent with at least two decimals; quantities plain; lines text', () => {
    expect([20, 5.5, 2.1, 10, 0, 1.05, 0.125, 8.5].map(rateText)).toEqual(['20.00', '5.50', '2.10', '10.00', '0.00', '1.05', '0.125', '8.50']);
    expect([1, 10, 100, 2.5, 0.333, 0.000001, 1234.56].map(quantityText)).toEqual(['1', '10', '100', '2.5', '0.333', '0.000001', '1234.56']);
    expect(linesText([
      { description: 'Café crème', quantity: 2, unit_price: 250, tax_rate: 10, tax_amount: 50, total_amount: 550 },
      { description: 'Eau | plate', quantity: 0.5, unit_price: 200, tax_rate: 5.5, tax_amount: 6, total_amount: 106 },
    ])).toBe(`2;250;10.00;50;550;${Buffer.from('Café crème').toString('base64url')}\n0.5;200;5.50;6;106;${Buffer.from('Eau | plate').toString('base64url')}`);
  });

  it('period totals reset when the Paris day, month or year changes; the perpetual total never does', () => {
    // 2026-01-31 22:30 UTC is 23:30 in Paris; 23:30 UTC is 00:30 on 1 February; 2026-12-31 23:30 UTC is 2027 in Paris.
    const records = run([
      { now: new Date('2026-01-31T22:30:00Z') },
      { now: new Date('2026-01-31T23:30:00Z') },
      { now: new Date('2026-02-01T10:00:00Z') },
      { now: new Date('2026-12-31T23:30:00Z') },
    ]).map(body);
    expect(records.map((r) => r.timestamp)).toEqual(['2026-01-31T23:30:00+01:00', '2026-02-01T00:30:00+01:00', '2026-02-01T11:00:00+01:00', '2027-01-01T00:30:00+01:00']);
    expect(records.map((r) => [r.grand_totals.perpetual.incl_tax, r.grand_totals.day.incl_tax, r.grand_totals.month.incl_tax, r.grand_totals.fiscal_year.incl_tax])).toEqual([
      [1210, 1210, 1210, 1210],
      [2420, 1210, 1210, 2420],
      [3630, 2420, 2420, 3630],
      [4840, 1210, 1210, 1210],
    ]);
    expect(records[3]!.grand_totals.fiscal_year.period).toBe('2027');
  });

  it('test and live records share the chain, never their totals', () => {
    const records = run([{ now: NOW }, { now: NOW, env: 'live' }, { now: NOW }, { now: NOW, env: 'live' }]);
    expect(records.map((r) => body(r).grand_totals.perpetual.incl_tax)).toEqual([1210, 1210, 2420, 2420]);
    expect(readNf525Totals(records[3]!.linkData, 'test')?.perpetual).toEqual({ excl: 2000, incl: 2420 });
    expect(readNf525Totals(records[3]!.linkData, 'live')?.perpetual).toEqual({ excl: 2000, incl: 2420 });
    expect(verifyNf525Chain(records.map((r) => r.body), key.publicKey)).toMatchObject({ ok: true, count: 4 });
  });

  it('a cancellation is a new chained record naming the original, negating it', () => {
    const [sale, cancel] = run([{ now: NOW }, { now: NOW, cancels: 0 }]).map(body);
    expect(cancel).toMatchObject({
      operation: 'cancellation',
      seq: 2,
      cancels: { document_number: sale!.document_number, transaction_id: 'tx-1' },
      totals: { excl_tax: -1000, tax: -210, incl_tax: -1210 },
      signature: { previous: sale!.signature.value },
    });
    expect(cancel!.grand_totals.perpetual).toEqual({ excl_tax: 0, incl_tax: 0 });
  });

  it('a refund and a void count negative; cancelling a refund counts positive', () => {
    const records = run([{ now: NOW, tx: draft({ type: 'refund' }) }, { now: NOW, tx: draft({ type: 'void' }) }, { now: NOW, tx: draft({ type: 'refund' }), cancels: 0 }]).map(body);
    expect(records.map((r) => [r.operation, r.totals.incl_tax])).toEqual([['refund', -1210], ['void', -1210], ['cancellation', 1210]]);
  });

  it('records before totals were kept (no linkData) start the totals from zero', () => {
    const [r] = run([{ now: NOW }]);
    const next = nf525.build({
      transactionId: 'tx-2', kind: 'record', tx: draft(), location: loc, environment: 'test', now: NOW, software: SOFTWARE, recordKey: key,
      chain: { seq: 2, previous: { fingerprint: 'a'.repeat(64), fiscalId: r!.fiscalId, issuedAt: NOW.toISOString(), linkData: null } },
    });
    expect(body(next).grand_totals.perpetual.incl_tax).toBe(1210);
    expect(body(next).signature.previous).toBe('a'.repeat(64));
  });
});

describe('verifyNf525Chain', () => {
  const records = run([{ now: NOW }, { now: NOW, tx: draft({ type: 'refund' }) }, { now: NOW }, { now: NOW, cancels: 2 }]);
  const bodies = records.map((r) => r.body);

  it('a sound chain', () => {
    expect(verifyNf525Chain(bodies, key.publicKeyPem)).toEqual({ ok: true, count: 4, lastSignature: records[3]!.fingerprint });
    expect(verifyNf525Chain([], key.publicKey)).toEqual({ ok: true, count: 0, lastSignature: null });
  });

  it('a removed record: the next one is the break', () => {
    const v = verifyNf525Chain([bodies[0]!, bodies[2]!, bodies[3]!], key.publicKey);
    expect(v).toEqual({ ok: false, count: 1, break: { index: 1, seq: 3, documentNumber: '73282932000074-00000003', reason: 'seq 3 follows seq 1: a record is missing or out of order' } });
  });

  it('a changed line (its detail is signed through its digest) breaks its signature', () => {
    const tampered = bodies[0]!.replace('"description":"Coffee"', '"description":"Tea"');
    expect(tampered).not.toBe(bodies[0]);
    expect(verifyNf525Chain([tampered], key.publicKey)).toMatchObject({ ok: false, break: { index: 0, reason: 'the signature does not verify over the record\'s data' } });
  });

  it('a seq or an amount that is not an integer', () => {
    const b = JSON.parse(bodies[0]!) as Nf525Record;
    expect(verifyNf525Chain([{ ...b, seq: '1' as never }], key.publicKey)).toMatchObject({ ok: false, break: { reason: 'seq and amounts must be integers (cents)' } });
    expect(verifyNf525Chain([{ ...b, totals: { ...b.totals, tax: 210.4 } }], key.publicKey)).toMatchObject({ ok: false, break: { reason: 'seq and amounts must be integers (cents)' } });
  });

  it('two records swapped: the first out of place is the break', () => {
    expect(verifyNf525Chain([bodies[0]!, bodies[2]!, bodies[1]!, bodies[3]!], key.publicKey)).toMatchObject({
      ok: false, count: 1, break: { index: 1, seq: 3, reason: 'seq 3 follows seq 1: a record is missing or out of order' },
    });
  });

  it('a changed amount breaks its own signature', () => {
    const tampered = bodies[1]!.replace('"incl_tax":-1210', '"incl_tax":-1200');
    expect(tampered).not.toBe(bodies[1]);
    const v = verifyNf525Chain([bodies[0]!, tampered, bodies[2]!], key.publicKey);
    expect(v).toMatchObject({ ok: false, count: 1, break: { index: 1, seq: 2, reason: 'the signature does not verify over the record\'s data' } });
  });

  it('a record re-signed with another key', () => {
    const other = toRecordKey('ec-p256', crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
    expect(verifyNf525Chain(bodies, other.publicKey)).toMatchObject({ ok: false, count: 0, break: { index: 0, reason: expect.stringMatching(/^signed with another key/) } });
  });

  it('a chain rebuilt from a record with forged totals: re-signed records verify alone, the totals do not add up', () => {
    // A forger with the key rebuilds record 2 on a previous link whose totals are not record 1's.
    const forged = nf525.build({
      transactionId: 'tx-2', kind: 'record', tx: draft({ type: 'refund' }), location: loc, environment: 'test', now: NOW, software: SOFTWARE, recordKey: key,
      chain: { seq: 2, previous: { fingerprint: records[0]!.fingerprint, fiscalId: records[0]!.fiscalId, issuedAt: NOW.toISOString(), linkData: { ...records[0]!.linkData, 'test.gt_incl': '0' } } },
    });
    const v = verifyNf525Chain([bodies[0]!, forged.body], key.publicKey);
    expect(v).toMatchObject({ ok: false, break: { index: 1, reason: 'grand totals do not continue those of the record before it' } });
  });

  it('a run from the middle of the chain, with and without the record before it', () => {
    expect(verifyNf525Chain(bodies.slice(2), key.publicKey)).toMatchObject({ ok: true, count: 2 });
    expect(verifyNf525Chain(bodies.slice(2), key.publicKey, { before: bodies[1]! })).toMatchObject({ ok: true, count: 2 });
    expect(verifyNf525Chain(bodies.slice(2), key.publicKey, { before: bodies[0]! })).toMatchObject({ ok: false, break: { index: 0, reason: expect.stringMatching(/^seq 3 follows seq 1/) } });
  });

  it('not JSON, or not a record', () => {
    expect(verifyNf525Chain(['<xml/>'], key.publicKey)).toMatchObject({ ok: false, break: { index: 0, seq: null, reason: 'not JSON' } });
    expect(verifyNf525Chain(['{"seq":1}'], key.publicKey)).toMatchObject({ ok: false, break: { index: 0, seq: 1, reason: 'not an NF525 record (format/version)' } });
  });
});

/** Re-signs records in order with the register's key, relinking each to the one before (a forger with the key, or a faulty build). */
function resign(records: Nf525Record[]): string[] {
  let previous: string | null = null;
  return records.map((r) => {
    const unsigned = { ...r, signature: { ...r.signature, previous } };
    const value = signMessage(nf525Message(unsigned), key.signer);
    previous = value;
    return JSON.stringify({ ...unsigned, signature: { ...unsigned.signature, value } });
  });
}

describe('record version 2 (fr-audit): the payment and a cancellation\'s reason are signed', () => {
  it('a cash sale turned into a card sale breaks its signature', () => {
    const [sale] = run([{ now: NOW, tx: draft({ payment_method: 'cash' }) }]).map(body);
    expect(sale).toMatchObject({ version: 2, payment_method: 'cash' });
    expect(nf525Message(sale!).split('|')[0]).toBe('NF525R2');
    expect(verifyNf525Chain([JSON.stringify(sale)], key.publicKey)).toMatchObject({ ok: true });
    expect(verifyNf525Chain([JSON.stringify({ ...sale, payment_method: 'card' })], key.publicKey))
      .toMatchObject({ ok: false, break: { index: 0, reason: 'the signature does not verify over the record\'s data' } });
  });

  it('a cancellation carries the reason given, signed; without one it is null', () => {
    const withReason = { ...draft(), metadata: { cancellation_reason: 'erreur de table' } };
    const [, cancel] = run([{ now: NOW }, { now: NOW, tx: withReason, cancels: 0 }]).map(body);
    expect(cancel!.cancels).toEqual({ document_number: '73282932000074-00000001', transaction_id: 'tx-1', reason: 'erreur de table' });
    const [, plain] = run([{ now: NOW }, { now: NOW, cancels: 0 }]).map(body);
    expect(plain!.cancels!.reason).toBeNull();
    const sale = run([{ now: NOW }])[0]!.body;
    expect(verifyNf525Chain([sale, JSON.stringify({ ...cancel, cancels: { ...cancel!.cancels, reason: 'autre motif' } })], key.publicKey))
      .toMatchObject({ ok: false, break: { index: 1, reason: 'the signature does not verify over the record\'s data' } });
  });

  it('version 1 records (26 fields, NF525R1) still verify and a version 2 record may follow them; never the reverse', () => {
    const [a, b, c] = run([{ now: NOW }, { now: NOW }, { now: NOW }]).map(body);
    const v1 = (r: Nf525Record): Nf525Record => ({ ...r, version: 1 });
    const old = resign([v1(a!), v1(b!), c!]);
    expect(nf525Message(JSON.parse(old[0]!) as Nf525Record).split('|')).toHaveLength(26);
    expect(nf525Message(JSON.parse(old[0]!) as Nf525Record).startsWith('NF525R1|')).toBe(true);
    expect(verifyNf525Chain(old, key.publicKey)).toMatchObject({ ok: true, count: 3 });
    // A version 1 record signs no payment method: a downgrade after version 2 would sign less.
    expect(verifyNf525Chain(resign([a!, v1(b!)]), key.publicKey))
      .toMatchObject({ ok: false, break: { index: 1, reason: 'a version 1 record follows a version 2 record' } });
    expect(verifyNf525Chain([JSON.stringify({ ...a, version: 3 })], key.publicKey)).toMatchObject({ ok: false, break: { reason: 'not an NF525 record (format/version)' } });
  });
});

describe('verifyNf525Chain: a cancellation is the exact opposite of one earlier record, once (fr-audit)', () => {
  const two = draft({ items: [line({ quantity: 2, total_amount: 2420, tax_amount: 420 })] });

  it('a cancellation whose amounts are not its original\'s negated', () => {
    // Built (and signed) by build itself from another draft than the original's.
    const bodies = run([{ now: NOW }, { now: NOW, tx: two, cancels: 0 }]).map((r) => r.body);
    expect(verifyNf525Chain(bodies, key.publicKey)).toMatchObject({
      ok: false, count: 1, break: { index: 1, seq: 2, reason: 'is not the opposite of 73282932000074-00000001 (its lines, VAT breakdown and totals negated)' },
    });
  });

  it('a record cancelled twice, and a cancellation cancelled', () => {
    expect(verifyNf525Chain(run([{ now: NOW }, { now: NOW, cancels: 0 }, { now: NOW, cancels: 0 }]).map((r) => r.body), key.publicKey)).toMatchObject({
      ok: false, break: { index: 2, reason: 'cancels 73282932000074-00000001, which a cancellation before it already cancels' },
    });
    expect(verifyNf525Chain(run([{ now: NOW }, { now: NOW, cancels: 0 }, { now: NOW, cancels: 1 }]).map((r) => r.body), key.publicKey)).toMatchObject({
      ok: false, break: { index: 2, reason: 'cancels 73282932000074-00000002, itself a cancellation' },
    });
  });

  it('a cancellation naming another transaction than its original\'s, or of the other environment', () => {
    const [s, c] = run([{ now: NOW }, { now: NOW, cancels: 0 }]).map(body);
    expect(verifyNf525Chain(resign([s!, { ...c!, cancels: { ...c!.cancels!, transaction_id: 'tx-9' } }]), key.publicKey)).toMatchObject({
      ok: false, break: { index: 1, reason: 'names transaction tx-9 for 73282932000074-00000001, whose transaction is tx-1' },
    });
    const mixed = run([{ now: NOW, env: 'live' }, { now: NOW, cancels: 0 }]).map((r) => r.body);
    expect(verifyNf525Chain(mixed, key.publicKey)).toMatchObject({ ok: false, break: { index: 1, reason: 'cancels 73282932000074-00000001, a live record' } });
  });

  it('a sound cancellation of a refund, and one whose original is before the run (not checkable here)', () => {
    const bodies = run([{ now: NOW, tx: draft({ type: 'refund' }) }, { now: NOW }, { now: NOW, tx: draft({ type: 'refund' }), cancels: 0 }]).map((r) => r.body);
    expect(verifyNf525Chain(bodies, key.publicKey)).toMatchObject({ ok: true, count: 3 });
    expect(verifyNf525Chain(bodies.slice(2), key.publicKey, { before: bodies[1]! })).toMatchObject({ ok: true, count: 1 });
  });
});
