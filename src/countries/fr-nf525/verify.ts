/**
 * Verifies a run of NF525 records of one register, in chain order, the way an auditor
 * would with nothing but the records and the register's public key: every signature is
 * recomputed over the message rebuilt from the record's own fields (record.ts), every
 * link is checked against the record before it, and the grand totals are re-added. A
 * cancellation whose original is in the run must be its exact opposite, and cancel it once.
 * Records of every version in record.ts `MESSAGE_TAGS` verify; a chain never goes back a version.
 * The archive verifier reuses it on the records of an archive.
 *
 * The answer is the first break, if any: which record (its index in `records`, its seq
 * and number) and why. Records before it are sound; nothing after it is judged (a break
 * makes everything after it unprovable, which is the point of the chain).
 *
 * A run may start anywhere in the chain: `options.before` is the record just before the
 * first (already verified, e.g. the last record of the previous archive), against which
 * the first record's link and totals are checked. Without it, a run starting at seq 1 must
 * have no previous signature and start its totals from zero; a run starting later takes
 * its first record's previous signature and totals as given. Totals are kept per
 * environment (totals.ts): a record is checked against the last record of its own
 * environment seen in the run (or `before`, when of that environment).
 */
import crypto from 'node:crypto';
import { recordKeyId } from '../../crypto/record-key.ts';
import { MESSAGE_TAGS, NF525_FORMAT, SIGNATURE_ALGORITHM, nf525Message, verifyMessage, type Nf525Record } from './record.ts';
import { nf525Number } from './build.ts';
import { nextTotals, type Nf525Totals } from './totals.ts';

export interface ChainBreak {
  /** Index of the broken record in `records`. */
  index: number;
  seq: number | null;
  documentNumber: string | null;
  reason: string;
}

export type Nf525ChainVerification =
  | { ok: true; count: number; lastSignature: string | null }
  | { ok: false; count: number; break: ChainBreak };

export interface VerifyOptions {
  /** The record just before the first one (already verified). */
  before?: string | Nf525Record | undefined;
}

const parse = (r: string | Nf525Record): Nf525Record | null => {
  if (typeof r !== 'string') return r;
  try {
    const v = JSON.parse(r) as unknown;
    return typeof v === 'object' && v !== null ? (v as Nf525Record) : null;
  } catch {
    return null;
  }
};

const totalsOf = (r: Nf525Record): Nf525Totals => {
  const g = r.grand_totals;
  return {
    perpetual: { excl: g.perpetual.excl_tax, incl: g.perpetual.incl_tax },
    day: { period: g.day.period, excl: g.day.excl_tax, incl: g.day.incl_tax },
    month: { period: g.month.period, excl: g.month.excl_tax, incl: g.month.incl_tax },
    year: { period: g.fiscal_year.period, excl: g.fiscal_year.excl_tax, incl: g.fiscal_year.incl_tax },
  };
};

const sameTotals = (a: Nf525Totals, b: Nf525Totals): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Why a record's own content is unsound (format, signature, internal sums); null when it is sound. */
function recordFault(r: Nf525Record, publicKey: crypto.KeyObject, keyId: string): string | null {
  if (r.format !== NF525_FORMAT || typeof r.version !== 'number' || MESSAGE_TAGS[r.version] === undefined) return 'not an NF525 record (format/version)';
  const cents = (v: unknown) => Number.isSafeInteger(v);
  const g0 = r.grand_totals;
  const amounts = [
    r.totals.excl_tax, r.totals.tax, r.totals.incl_tax, g0.perpetual.excl_tax, g0.perpetual.incl_tax, g0.day.excl_tax, g0.day.incl_tax,
    g0.month.excl_tax, g0.month.incl_tax, g0.fiscal_year.excl_tax, g0.fiscal_year.incl_tax, ...r.vat.flatMap((v) => [v.excl_tax, v.tax, v.incl_tax]),
  ];
  if (!Number.isSafeInteger(r.seq) || r.seq < 1 || !amounts.every(cents)) return 'seq and amounts must be integers (cents)';
  const sig = r.signature;
  if (typeof sig !== 'object' || sig === null || sig.algorithm !== SIGNATURE_ALGORITHM || typeof sig.value !== 'string') return 'no ES256 signature';
  if (sig.key_id !== keyId) return `signed with another key (key_id ${String(sig.key_id)}, expected ${keyId})`;
  let message: string;
  try {
    message = nf525Message(r);
  } catch (err) {
    return `unreadable record: ${(err as Error).message}`;
  }
  if (!verifyMessage(message, sig.value, publicKey)) return 'the signature does not verify over the record\'s data';
  if (r.document_number !== nf525Number(r.register_id, r.seq)) return `document number ${r.document_number} is not register ${r.register_id}, seq ${r.seq}`;
  if ((r.operation === 'cancellation') !== (r.cancels !== null)) return 'a cancellation must name the record it cancels, and only a cancellation';
  const t = r.totals;
  if (t.excl_tax + t.tax !== t.incl_tax) return 'totals: excl_tax + tax differs from incl_tax';
  if (r.vat.length > 0) {
    const sum = r.vat.reduce((s, v) => ({ excl: s.excl + v.excl_tax, tax: s.tax + v.tax, incl: s.incl + v.incl_tax }), { excl: 0, tax: 0, incl: 0 });
    if (sum.excl !== t.excl_tax || sum.tax !== t.tax || sum.incl !== t.incl_tax) return 'totals differ from the sum of the VAT breakdown';
  }
  const g = r.grand_totals;
  if (g.day.period !== r.timestamp.slice(0, 10) || g.month.period !== r.timestamp.slice(0, 7) || g.fiscal_year.period !== r.timestamp.slice(0, 4)) {
    return 'grand total periods are not those of the record\'s timestamp';
  }
  return null;
}

const negated = (v: number): number => -v + 0;

/**
 * Why a cancellation is unsound against its original, when the run holds the original
 * (an earlier archive's original cannot be checked here): a cancellation annuls one earlier
 * record of its register and environment, once, by exactly its opposite (the same lines,
 * every amount negated: BOI-TVA-DECLA-30-10-30, corrections are "opérations de « moins »"
 * that leave the original intact). Null when sound or not checkable.
 */
function cancellationOf(r: Nf525Record, seen: ReadonlyMap<string, Nf525Record>, cancelled: ReadonlySet<string>): string | null {
  if (r.operation !== 'cancellation' || r.cancels === null) return null;
  const number = r.cancels.document_number;
  if (cancelled.has(number)) return `cancels ${number}, which a cancellation before it already cancels`;
  const o = seen.get(number);
  if (o === undefined) return null;
  if (o.operation === 'cancellation') return `cancels ${number}, itself a cancellation`;
  if (o.environment !== r.environment) return `cancels ${number}, a ${o.environment} record`;
  if (o.transaction_id !== r.cancels.transaction_id) return `names transaction ${r.cancels.transaction_id} for ${number}, whose transaction is ${o.transaction_id}`;
  const opposite = {
    totals: { excl_tax: negated(o.totals.excl_tax), tax: negated(o.totals.tax), incl_tax: negated(o.totals.incl_tax) },
    vat: o.vat.map((v) => ({ rate: v.rate, excl_tax: negated(v.excl_tax), tax: negated(v.tax), incl_tax: negated(v.incl_tax) })),
    lines: o.lines,
  };
  if (JSON.stringify({ totals: r.totals, vat: r.vat, lines: r.lines }) !== JSON.stringify(opposite)) {
    return `is not the opposite of ${number} (its lines, VAT breakdown and totals negated)`;
  }
  return null;
}

export function verifyNf525Chain(records: readonly (string | Nf525Record)[], publicKey: crypto.KeyObject | string, options: VerifyOptions = {}): Nf525ChainVerification {
  const key = typeof publicKey === 'string' ? crypto.createPublicKey(publicKey) : publicKey;
  const keyId = recordKeyId(key);
  const before = options.before !== undefined ? parse(options.before) : null;
  let previous: Nf525Record | null = before;
  const lastOfEnv = new Map<string, Nf525Record>();
  if (before) lastOfEnv.set(before.environment, before);
  // From the register's first record, an environment's first record starts its totals from zero.
  const fromOrigin = before === null && parse(records[0] ?? '')?.seq === 1;
  // The records of the run by number (a cancellation's original, when the run holds it) and those cancelled.
  const seen = new Map<string, Nf525Record>();
  if (before) seen.set(before.document_number, before);
  const cancelled = new Set<string>();

  for (let index = 0; index < records.length; index++) {
    const raw = records[index]!;
    const r = parse(raw);
    const fail = (reason: string): Nf525ChainVerification => ({
      ok: false,
      count: index,
      break: { index, seq: typeof r?.seq === 'number' ? r.seq : null, documentNumber: typeof r?.document_number === 'string' ? r.document_number : null, reason },
    });
    if (r === null) return fail('not JSON');
    let fault: string | null;
    try {
      fault = recordFault(r, key, keyId);
    } catch (err) {
      fault = `unreadable record: ${(err as Error).message}`;
    }
    if (fault !== null) return fail(fault);

    if (previous !== null) {
      if (r.register_id !== previous.register_id) return fail(`register ${r.register_id} follows register ${previous.register_id}`);
      // A register moves to a newer record format, never back (a downgraded record would sign less).
      if (r.version < previous.version) return fail(`a version ${r.version} record follows a version ${previous.version} record`);
      if (r.seq !== previous.seq + 1) return fail(`seq ${r.seq} follows seq ${previous.seq}: a record is missing or out of order`);
      if (r.signature.previous !== previous.signature.value) return fail('its previous signature is not the signature of the record before it');
    } else if (r.seq === 1 && r.signature.previous !== null) {
      return fail('the register\'s first record names a previous signature');
    }

    const base = lastOfEnv.get(r.environment);
    if (base !== undefined || fromOrigin) {
      const expected = nextTotals(base ? totalsOf(base) : null, { day: r.grand_totals.day.period, month: r.grand_totals.month.period, year: r.grand_totals.fiscal_year.period }, {
        excl: r.totals.excl_tax,
        incl: r.totals.incl_tax,
      });
      if (!sameTotals(expected, totalsOf(r))) return fail('grand totals do not continue those of the record before it');
    }
    const cancellationFault = cancellationOf(r, seen, cancelled);
    if (cancellationFault !== null) return fail(cancellationFault);
    if (r.operation === 'cancellation') cancelled.add(r.cancels!.document_number);
    seen.set(r.document_number, r);

    lastOfEnv.set(r.environment, r);
    previous = r;
  }
  return { ok: true, count: records.length, lastSignature: previous?.signature.value ?? null };
}
