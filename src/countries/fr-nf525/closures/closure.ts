/**
 * The NF525 closure (clôture): a signed, chained record that closes a period of one
 * register in one environment: a Paris day, month or fiscal year (periods.ts). It carries
 * the period's totals per VAT rate, the perpetual grand total as of the period's last
 * record, and the records it covers, signed with the location's record key (ES256, as the
 * records: record.ts) over a message that includes the previous closure's signature.
 *
 * Closures have their own chain per register and environment (`closureChainKey`), written
 * through the ledger as entries of kind `closure` (no transaction). The chain head's
 * `linkData` says what is closed (`ClosureState`): `build` refuses a closure that is not
 * the next one (`ClosureConflict`), which makes closing idempotent and race-free (the
 * ledger builds a chain's entries one after the other on its head).
 *
 * The signed message (`closureMessage`), one line of UTF-8, 19 fields joined by `|`, no
 * trailing separator, none of which can contain `|`:
 *
 *    1 `NF525C1`        format tag (closure, version 1)
 *    2 register_id      the location's SIRET/SIREN
 *    3 environment      `test` or `live`
 *    4 seq              the closure's place in its chain, from 1
 *    5 number           `<register_id>-C<seq, 8 digits>`
 *    6 kind             `daily`, `monthly` or `annual`
 *    7 period           `YYYY-MM-DD`, `YYYY-MM` or `YYYY` (Paris; fiscal year = calendar year)
 *    8 timestamp        when the closure was signed, Paris wall time with offset, to the second
 *    9 vat              per VAT rate, rate ascending, `;`-separated `<rate>:<excl>:<tax>:<incl>`
 *                       (as the records' field 8); empty when the period has none
 *   10-12 excl, tax, incl   the period's totals
 *   13-14 gt_excl, gt_incl  the perpetual grand total as of the period's last record
 *   15 records          how many records the closure covers
 *   16 first_seq        the register-chain seq of the first record covered
 *   17 last_seq         of the last (document numbers: `<register_id>-<seq, 8 digits>`)
 *   18 key_id           lowercase hex SHA-256 of the key's DER SubjectPublicKeyInfo
 *   19 previous         the previous closure's signature value; empty for the first
 *
 * Amounts: integer euro cents, signed, decimal, `-` when negative. A daily closure sums
 * its records (`vat` and `totals` of each body, the environment's own records only); a
 * monthly closure sums the month's daily closures, an annual one the year's monthly
 * closures (their grand total and last record are those of the last closure summed).
 */
import crypto from 'node:crypto';
import type { ChainLink } from '../../../core/chain-link.ts';
import type { RecordKey } from '../../../core/record-key.ts';
import { newId } from '../../../core/ids.ts';
import type { LedgerEntry } from '../../../ledger/types.ts';
import { localDateTimeWithOffset } from '../../shared/dates.ts';
import { SIGNATURE_ALGORITHM, signMessage, type VatTotal } from '../record.ts';
import { closeIn, firstOpenDay, type ClosureKind, type ClosureState, type DueClosure } from './periods.ts';

export const CLOSURE_FORMAT = 'nf525.closure';
export const CLOSURE_VERSION = 1;
export const CLOSURE_TAG = 'NF525C1';
export const NF525_SYSTEM = 'fr-nf525';

export const closureChainKey = (locationId: string, environment: 'test' | 'live'): string => `fr-nf525:${locationId}:default:closures:${environment}`;
export const closureNumber = (registerId: string, seq: number): string => `${registerId}-C${String(seq).padStart(8, '0')}`;

export interface Nf525Closure {
  format: typeof CLOSURE_FORMAT;
  version: typeof CLOSURE_VERSION;
  register_id: string;
  environment: 'test' | 'live';
  seq: number;
  number: string;
  kind: ClosureKind;
  period: string;
  timestamp: string;
  vat: VatTotal[];
  totals: { excl_tax: number; tax: number; incl_tax: number };
  grand_total: { perpetual: { excl_tax: number; incl_tax: number } };
  records: { count: number; first_seq: number; last_seq: number };
  software: { name: string; version: string };
  signature: { algorithm: typeof SIGNATURE_ALGORITHM; key_id: string; previous: string | null; value: string };
}

/** What a closure sums, computed before it is appended (closures/processor.ts). */
export interface ClosureContent {
  vat: VatTotal[];
  totals: Nf525Closure['totals'];
  perpetual: { excl_tax: number; incl_tax: number };
  records: Nf525Closure['records'];
}

/** The message a closure's signature covers (see the file comment). */
export function closureMessage(c: Omit<Nf525Closure, 'signature' | 'format' | 'version' | 'software'> & { signature: Pick<Nf525Closure['signature'], 'key_id' | 'previous'> }): string {
  const fields: (string | number)[] = [
    CLOSURE_TAG, c.register_id, c.environment, c.seq, c.number, c.kind, c.period, c.timestamp,
    c.vat.map((v) => `${v.rate}:${v.excl_tax}:${v.tax}:${v.incl_tax}`).join(';'),
    c.totals.excl_tax, c.totals.tax, c.totals.incl_tax,
    c.grand_total.perpetual.excl_tax, c.grand_total.perpetual.incl_tax,
    c.records.count, c.records.first_seq, c.records.last_seq,
    c.signature.key_id, c.signature.previous ?? '',
  ];
  for (const f of fields) if (String(f).includes('|')) throw new Error(`nf525: a signed closure field contains "|": ${String(f)}`);
  return fields.join('|');
}

/** Sums VAT breakdowns per rate (rate ascending; rates as the records write them). */
export function sumVat(lists: readonly (readonly VatTotal[])[]): VatTotal[] {
  const byRate = new Map<string, VatTotal>();
  for (const list of lists) {
    for (const v of list) {
      const t = byRate.get(v.rate) ?? { rate: v.rate, excl_tax: 0, tax: 0, incl_tax: 0 };
      t.excl_tax += v.excl_tax;
      t.tax += v.tax;
      t.incl_tax += v.incl_tax;
      byRate.set(v.rate, t);
    }
  }
  return [...byRate.values()].sort((a, b) => Number(a.rate) - Number(b.rate));
}

/** The closure state a closure chain head carries (null linkData: nothing closed). */
export function readClosureState(linkData: Readonly<Record<string, string>> | null | undefined): ClosureState {
  const seq = Number(linkData?.last_seq ?? '0');
  return {
    day: linkData?.day || null,
    month: linkData?.month || null,
    year: linkData?.year || null,
    lastSeq: Number.isSafeInteger(seq) ? seq : 0,
  };
}

const stateLinkData = (s: ClosureState): Record<string, string> => ({ day: s.day ?? '', month: s.month ?? '', year: s.year ?? '', last_seq: String(s.lastSeq) });

/** A closure that is not the next one of its chain (closed already, by this run or another). */
export class ClosureConflict extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClosureConflict';
  }
}

/** Why `due` cannot follow `state`; null when it is the chain's next closure. */
export function closureConflict(state: ClosureState, due: DueClosure, firstSeq: number): string | null {
  if (due.kind === 'daily') {
    // A closed day, or a day of a closed month or year (a late record closes on the first open day).
    const open = firstOpenDay(state);
    if (open !== null && due.period < open) return `${due.period} is closed already (last daily closure ${state.day ?? 'none'}, month ${state.month ?? 'none'}, year ${state.year ?? 'none'})`;
    if (firstSeq <= state.lastSeq) return `record ${firstSeq} is covered already`;
    return null;
  }
  if (due.kind === 'monthly') {
    if (state.month !== null && due.period <= state.month) return `${due.period} is closed already`;
    if (state.day?.slice(0, 7) !== due.period) return `the days of ${due.period} are not all closed`;
    return null;
  }
  if (state.year !== null && due.period <= state.year) return `${due.period} is closed already`;
  if (state.month?.slice(0, 4) !== due.period) return `the months of ${due.period} are not all closed`;
  return null;
}

export interface ClosureInput {
  accountId: string;
  locationId: string;
  registerId: string;
  environment: 'test' | 'live';
  due: DueClosure;
  content: ClosureContent;
  key: RecordKey;
  software: { name: string; version: string };
}

/** Builds the signed closure on its chain link (pure but for the signature's nonce). */
export function buildClosure(input: ClosureInput, link: ChainLink, now: Date): { closure: Nf525Closure; linkData: Record<string, string> } {
  const state = readClosureState(link.previous?.linkData);
  const conflict = closureConflict(state, input.due, input.content.records.first_seq);
  if (conflict !== null) throw new ClosureConflict(conflict);
  const unsigned = {
    register_id: input.registerId,
    environment: input.environment,
    seq: link.seq,
    number: closureNumber(input.registerId, link.seq),
    kind: input.due.kind,
    period: input.due.period,
    timestamp: localDateTimeWithOffset(now, 'FR'),
    vat: input.content.vat,
    totals: input.content.totals,
    grand_total: { perpetual: input.content.perpetual },
    records: input.content.records,
  };
  const previous = link.previous?.fingerprint ?? null;
  const value = signMessage(closureMessage({ ...unsigned, signature: { key_id: input.key.keyId, previous } }), input.key.signer);
  const closure: Nf525Closure = {
    format: CLOSURE_FORMAT,
    version: CLOSURE_VERSION,
    ...unsigned,
    software: input.software,
    signature: { algorithm: SIGNATURE_ALGORITHM, key_id: input.key.keyId, previous, value },
  };
  return { closure, linkData: stateLinkData(closeIn(state, input.due, input.content.records.last_seq)) };
}

/** The ledger entry of a closure (kind `closure`, no transaction). */
export function closureEntry(input: ClosureInput): LedgerEntry {
  return {
    chainKey: closureChainKey(input.locationId, input.environment),
    // Made once per period (`closureConflict`): decided on the committed head, never on a predicted one.
    refusesOnHead: true,
    build(link, now) {
      const { closure, linkData } = buildClosure(input, link, now);
      return {
        record: {
          id: newId(), transaction_id: null, account_id: input.accountId, system: NF525_SYSTEM, kind: 'closure',
          fingerprint: closure.signature.value, fiscal_id: closure.number, document_number: closure.number, qr_data: null,
          content_type: 'application/json', body: `${JSON.stringify(closure, null, 2)}\n`, placeholder: false,
        },
        linkData,
      };
    },
  };
}

/** SHA-256 hex (for digests in messages). */
export const sha256Hex = (text: string): string => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
