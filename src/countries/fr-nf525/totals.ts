/**
 * NF525 grand totals: the register's perpetual grand total (since its first record, never
 * reset) and its period totals (the Paris day, month and fiscal year of the record), each
 * excluding and including tax, in euro cents, signed (refunds, voids and cancellations
 * count negative).
 *
 * They travel along the chain, not in a table: every record carries the totals after it
 * (in its body and its signed message) and leaves them in its `linkData`, which the
 * ledger hands to the next record of the register (`chain.previous.linkData`). The next
 * record adds its own amounts, after resetting each period total whose period changed.
 * A later closure reads the same `linkData` from the chain head (`readNf525Totals`).
 *
 * Test and live records share the register's chain (one chain per location) but never
 * their totals: `linkData` keeps one set per environment (`test.gt_incl`,
 * `live.gt_incl`, …) and a record adds to its own environment's set only, so sandbox
 * sales never reach a live grand total.
 *
 * The fiscal year is the calendar year in Europe/Paris: the France config has no field
 * for another year end (spec: "Other France fields: not shown").
 */
import type { LocalDate } from '../shared/dates.ts';

/** An amount pair, euro cents: excluding tax (HT) and including tax (TTC). */
export interface Amounts {
  excl: number;
  incl: number;
}

/** A period total: the period's key and its amounts. */
export interface PeriodTotal extends Amounts {
  /** `YYYY-MM-DD` (day), `YYYY-MM` (month), `YYYY` (fiscal year), in Europe/Paris. */
  period: string;
}

export interface Nf525Totals {
  perpetual: Amounts;
  day: PeriodTotal;
  month: PeriodTotal;
  year: PeriodTotal;
}

export type Environment = 'test' | 'live';

/** The periods a record issued on local date `d` belongs to. */
export const periodsOf = (d: LocalDate): { day: string; month: string; year: string } => ({
  day: `${d.year}-${d.month}-${d.day}`,
  month: `${d.year}-${d.month}`,
  year: d.year,
});

const add = (a: Amounts, b: Amounts): Amounts => ({ excl: a.excl + b.excl, incl: a.incl + b.incl });

function addToPeriod(previous: PeriodTotal | undefined, period: string, amounts: Amounts): PeriodTotal {
  const base = previous !== undefined && previous.period === period ? previous : { excl: 0, incl: 0 };
  return { period, ...add(base, amounts) };
}

/**
 * The totals after a record of `amounts` in `periods`, following `previous` (the
 * environment's totals after the register's previous record; null for its first).
 */
export function nextTotals(previous: Nf525Totals | null, periods: { day: string; month: string; year: string }, amounts: Amounts): Nf525Totals {
  return {
    perpetual: add(previous?.perpetual ?? { excl: 0, incl: 0 }, amounts),
    day: addToPeriod(previous?.day, periods.day, amounts),
    month: addToPeriod(previous?.month, periods.month, amounts),
    year: addToPeriod(previous?.year, periods.year, amounts),
  };
}

const FIELDS = ['gt_excl', 'gt_incl', 'day', 'day_excl', 'day_incl', 'month', 'month_excl', 'month_incl', 'year', 'year_excl', 'year_incl'] as const;
type Field = (typeof FIELDS)[number];

/**
 * Each environment's `linkData` keys (`test.gt_excl`, …), written once: every create reads
 * and writes all of them (built per call, they were ~4 % of a France record's build).
 */
const KEYS: Record<Environment, Record<Field, string>> = {
  test: Object.fromEntries(FIELDS.map((f) => [f, `test.${f}`])) as Record<Field, string>,
  live: Object.fromEntries(FIELDS.map((f) => [f, `live.${f}`])) as Record<Field, string>,
};

/** The `linkData` entries of one environment's totals, in FIELDS order. */
export function totalsLinkData(env: Environment, t: Nf525Totals): Record<string, string> {
  const k = KEYS[env];
  return {
    [k.gt_excl]: String(t.perpetual.excl),
    [k.gt_incl]: String(t.perpetual.incl),
    [k.day]: t.day.period,
    [k.day_excl]: String(t.day.excl),
    [k.day_incl]: String(t.day.incl),
    [k.month]: t.month.period,
    [k.month_excl]: String(t.month.excl),
    [k.month_incl]: String(t.month.incl),
    [k.year]: t.year.period,
    [k.year_excl]: String(t.year.excl),
    [k.year_incl]: String(t.year.incl),
  };
}

/** The other environment's entries, passed on unchanged. */
export function otherEnvironmentLinkData(linkData: Readonly<Record<string, string>> | null | undefined, env: Environment): Record<string, string> {
  const out: Record<string, string> = {};
  if (!linkData) return out;
  const k = KEYS[env === 'test' ? 'live' : 'test'];
  for (const f of FIELDS) {
    const v = linkData[k[f]];
    if (v !== undefined) out[k[f]] = v;
  }
  return out;
}

const cents = (v: string | undefined): number | null => {
  if (v === undefined || !/^-?[0-9]{1,17}$/.test(v)) return null;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : null;
};

/**
 * One environment's totals from a record's `linkData`; null when it carries none (the
 * register's first record in that environment, or a record from before totals were kept:
 * the totals then start from zero).
 */
export function readNf525Totals(linkData: Readonly<Record<string, string>> | null | undefined, env: Environment): Nf525Totals | null {
  const k = KEYS[env];
  const get = (f: Field) => linkData?.[k[f]];
  const n = {
    gtExcl: cents(get('gt_excl')), gtIncl: cents(get('gt_incl')),
    dayExcl: cents(get('day_excl')), dayIncl: cents(get('day_incl')),
    monthExcl: cents(get('month_excl')), monthIncl: cents(get('month_incl')),
    yearExcl: cents(get('year_excl')), yearIncl: cents(get('year_incl')),
  };
  const day = get('day');
  const month = get('month');
  const year = get('year');
  if (Object.values(n).some((v) => v === null) || day === undefined || month === undefined || year === undefined) return null;
  return {
    perpetual: { excl: n.gtExcl!, incl: n.gtIncl! },
    day: { period: day, excl: n.dayExcl!, incl: n.dayIncl! },
    month: { period: month, excl: n.monthExcl!, incl: n.monthIncl! },
    year: { period: year, excl: n.yearExcl!, incl: n.yearIncl! },
  };
}
