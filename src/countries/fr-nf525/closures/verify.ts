/**
 * Verifies a register's closure chain (`verifyClosures`) or its JET (`verifyJet`), in chain
 * order, with nothing but the documents and the location's public key: each signature over
 * the message rebuilt from the document's own fields (closure.ts, jet.ts), each link to the
 * document before, and for closures what their sums must satisfy:
 * - excl + tax = incl, the VAT breakdown sums to the totals, the period has the kind's form;
 * - daily closures: periods ascending, records after the previous daily's last record,
 *   and the perpetual grand total moves by exactly the day's totals (from zero for the
 *   environment's first closure when the run starts at seq 1);
 * - a monthly (annual) closure follows the last daily (monthly) closure of its period, and
 *   its totals are the sum of those closures when the run holds them all (it starts at seq 1).
 * Answers as `verifyNf525Chain` (verify.ts): `{ok: true, count, lastSignature}` or the
 * first break. `options.before`: the document just before the first one (already verified),
 * when a run starts mid-chain (an archive).
 */
import crypto from 'node:crypto';
import { recordKeyId } from '../../../crypto/record-key.ts';
import { SIGNATURE_ALGORITHM, verifyMessage } from '../record.ts';
import type { ChainBreak, Nf525ChainVerification } from '../verify.ts';
import { CLOSURE_FORMAT, CLOSURE_VERSION, closureMessage, closureNumber, type Nf525Closure } from './closure.ts';
import { JET_EVENTS, JET_FORMAT, JET_VERSION, REGISTER_FIELD, jetMessage, jetNumber, type Nf525JetEntry } from './jet.ts';

const PERIOD = { daily: /^\d{4}-\d{2}-\d{2}$/, monthly: /^\d{4}-\d{2}$/, annual: /^\d{4}$/ } as const;

const parse = <T>(r: string | T): T | null => {
  if (typeof r !== 'string') return r;
  try {
    const v = JSON.parse(r) as unknown;
    return typeof v === 'object' && v !== null ? (v as T) : null;
  } catch {
    return null;
  }
};

interface Signed {
  register_id: string;
  environment: string;
  seq: number;
  number: string;
  signature: { algorithm: string; key_id: string; previous: string | null; value: string };
}

/**
 * The chain walk both verifiers share: per document its own fault (`fault`), then its link
 * to the one before (register, environment, seq + 1, previous signature).
 */
function walk<T extends Signed>(
  docs: readonly (string | T)[], publicKey: crypto.KeyObject | string, before: string | T | undefined,
  fault: (d: T, key: crypto.KeyObject) => string | null,
  follows: (d: T, previous: T | null, fromOrigin: boolean) => string | null,
  registerMoves: (d: T, previous: T) => boolean = () => false,
): Nf525ChainVerification {
  const key = typeof publicKey === 'string' ? crypto.createPublicKey(publicKey) : publicKey;
  const keyId = recordKeyId(key);
  let previous: T | null = before !== undefined ? parse<T>(before) : null;
  const fromOrigin = previous === null && parse<T>(docs[0] ?? '')?.seq === 1;
  for (let index = 0; index < docs.length; index++) {
    const d = parse<T>(docs[index]!);
    const fail = (reason: string): Nf525ChainVerification => ({
      ok: false, count: index,
      break: { index, seq: typeof d?.seq === 'number' ? d.seq : null, documentNumber: typeof d?.number === 'string' ? d.number : null, reason } satisfies ChainBreak,
    });
    if (d === null) return fail('not JSON');
    let why: string | null;
    try {
      const sig = d.signature;
      if (!Number.isSafeInteger(d.seq) || d.seq < 1) why = 'seq must be a positive integer';
      else if (typeof sig !== 'object' || sig === null || sig.algorithm !== SIGNATURE_ALGORITHM || typeof sig.value !== 'string') why = 'no ES256 signature';
      else if (sig.key_id !== keyId) why = `signed with another key (key_id ${String(sig.key_id)}, expected ${keyId})`;
      else why = fault(d, key);
    } catch (err) {
      why = `unreadable: ${(err as Error).message}`;
    }
    if (why !== null) return fail(why);
    if (previous !== null) {
      if ((d.register_id !== previous.register_id && !registerMoves(d, previous)) || d.environment !== previous.environment) return fail('register or environment differs from the document before it');
      if (d.seq !== previous.seq + 1) return fail(`seq ${d.seq} follows seq ${previous.seq}: a document is missing or out of order`);
      if (d.signature.previous !== previous.signature.value) return fail('its previous signature is not the signature of the document before it');
    } else if (d.seq === 1 && d.signature.previous !== null) {
      return fail('the chain\'s first document names a previous signature');
    }
    const link = follows(d, previous, fromOrigin);
    if (link !== null) return fail(link);
    previous = d;
  }
  return { ok: true, count: docs.length, lastSignature: previous?.signature.value ?? null };
}

function closureFault(c: Nf525Closure, key: crypto.KeyObject): string | null {
  if (c.format !== CLOSURE_FORMAT || c.version !== CLOSURE_VERSION) return 'not an NF525 closure (format/version)';
  if (!(c.kind in PERIOD) || !PERIOD[c.kind].test(c.period)) return `period ${String(c.period)} is not a ${String(c.kind)} period`;
  const amounts = [c.totals.excl_tax, c.totals.tax, c.totals.incl_tax, c.grand_total.perpetual.excl_tax, c.grand_total.perpetual.incl_tax,
    c.records.count, c.records.first_seq, c.records.last_seq, ...c.vat.flatMap((v) => [v.excl_tax, v.tax, v.incl_tax])];
  if (!amounts.every((v) => Number.isSafeInteger(v))) return 'amounts and record numbers must be integers';
  if (!verifyMessage(closureMessage(c), c.signature.value, key)) return 'the signature does not verify over the closure\'s data';
  if (c.number !== closureNumber(c.register_id, c.seq)) return `number ${c.number} is not register ${c.register_id}, closure ${c.seq}`;
  if (c.totals.excl_tax + c.totals.tax !== c.totals.incl_tax) return 'totals: excl_tax + tax differs from incl_tax';
  const sum = c.vat.reduce((s, v) => ({ excl: s.excl + v.excl_tax, tax: s.tax + v.tax, incl: s.incl + v.incl_tax }), { excl: 0, tax: 0, incl: 0 });
  if (c.vat.length > 0 && (sum.excl !== c.totals.excl_tax || sum.tax !== c.totals.tax || sum.incl !== c.totals.incl_tax)) return 'totals differ from the sum of the VAT breakdown';
  if (c.records.count < 1 || c.records.first_seq > c.records.last_seq) return 'a closure covers at least one record, first to last';
  return null;
}

export function verifyClosures(closures: readonly (string | Nf525Closure)[], publicKey: crypto.KeyObject | string, options: { before?: string | Nf525Closure | undefined } = {}): Nf525ChainVerification {
  const before = options.before !== undefined ? parse<Nf525Closure>(options.before) : null;
  /** The last closure of each kind, and the closures of each kind since the last of the kind above. */
  const last: Partial<Record<Nf525Closure['kind'], Nf525Closure>> = before ? { [before.kind]: before } : {};
  let days: Nf525Closure[] = [];
  let months: Nf525Closure[] = [];
  const sums = (list: readonly Nf525Closure[], c: Nf525Closure): string | null => {
    const t = list.reduce((s, x) => ({ excl: s.excl + x.totals.excl_tax, tax: s.tax + x.totals.tax, incl: s.incl + x.totals.incl_tax, n: s.n + x.records.count }), { excl: 0, tax: 0, incl: 0, n: 0 });
    if (t.excl !== c.totals.excl_tax || t.tax !== c.totals.tax || t.incl !== c.totals.incl_tax || t.n !== c.records.count) return `${c.kind} ${c.period}: totals are not the sum of its closures`;
    return null;
  };
  return walk<Nf525Closure>(closures, publicKey, options.before, closureFault, (c, _previous, fromOrigin) => {
    if (c.kind === 'daily') {
      const d = last.daily;
      if (d && c.period <= d.period) return `daily ${c.period} does not follow daily ${d.period}`;
      if (d && c.records.first_seq <= d.records.last_seq) return `daily ${c.period} covers records the daily closure before it covers`;
      const base = d ? d.grand_total.perpetual : fromOrigin ? { excl_tax: 0, incl_tax: 0 } : null;
      if (base && (c.grand_total.perpetual.excl_tax !== base.excl_tax + c.totals.excl_tax || c.grand_total.perpetual.incl_tax !== base.incl_tax + c.totals.incl_tax)) {
        return `daily ${c.period}: the perpetual grand total does not move by the day's totals`;
      }
      if (days.length > 0 && days[0]!.period.slice(0, 7) !== c.period.slice(0, 7)) days = [];
      days.push(c);
      last.daily = c;
      return null;
    }
    const below = c.kind === 'monthly' ? last.daily : last.monthly;
    const prefix = c.kind === 'monthly' ? 7 : 4;
    if (!below || below.period.slice(0, prefix) !== c.period) return `${c.kind} ${c.period} does not follow the last closure of its period`;
    const same = last[c.kind];
    if (same && c.period <= same.period) return `${c.kind} ${c.period} does not follow ${c.kind} ${same.period}`;
    if (fromOrigin) {
      const list = c.kind === 'monthly' ? days.filter((x) => x.period.startsWith(c.period)) : months.filter((x) => x.period.startsWith(c.period));
      const bad = sums(list, c);
      if (bad) return bad;
    }
    if (c.grand_total.perpetual.excl_tax !== below.grand_total.perpetual.excl_tax || c.grand_total.perpetual.incl_tax !== below.grand_total.perpetual.incl_tax) {
      return `${c.kind} ${c.period}: the grand total is not that of the period's last closure`;
    }
    if (c.kind === 'monthly') {
      if (months.length > 0 && months[0]!.period.slice(0, 4) !== c.period.slice(0, 4)) months = [];
      months.push(c);
      days = [];
    } else months = [];
    last[c.kind] = c;
    return null;
  });
}

function jetFault(e: Nf525JetEntry, key: crypto.KeyObject): string | null {
  if (e.format !== JET_FORMAT || e.version !== JET_VERSION) return 'not an NF525 JET entry (format/version)';
  if (JET_EVENTS[e.event] !== e.code) return `code ${String(e.code)} is not event ${String(e.event)}`;
  if (typeof e.details !== 'object' || e.details === null || Object.values(e.details).some((v) => typeof v !== 'string')) return 'details must be text';
  if (!verifyMessage(jetMessage(e), e.signature.value, key)) return 'the signature does not verify over the entry\'s data';
  if (e.number !== jetNumber(e.register_id, e.seq)) return `number ${e.number} is not register ${e.register_id}, entry ${e.seq}`;
  return null;
}

/**
 * A register id may change before the register has records (services/locations.ts seals it
 * after), so its JET may hold events of the old id (exports, parameter changes): the chain
 * moves to the new id at the signed `parameters` event that says so (from the id before it,
 * to its own), nowhere else.
 */
const jetRegisterMoves = (e: Nf525JetEntry, previous: Nf525JetEntry): boolean =>
  e.event === 'parameters' && e.details[`${REGISTER_FIELD}.before`] === previous.register_id && e.details[`${REGISTER_FIELD}.after`] === e.register_id;

export function verifyJet(entries: readonly (string | Nf525JetEntry)[], publicKey: crypto.KeyObject | string, options: { before?: string | Nf525JetEntry | undefined } = {}): Nf525ChainVerification {
  return walk<Nf525JetEntry>(entries, publicKey, options.before, jetFault, () => null, jetRegisterMoves);
}
