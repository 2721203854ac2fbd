/**
 * The periods NF525 closures close (Europe/Paris; the fiscal year is the calendar year, as
 * the records' grand totals: totals.ts) and which closure is due next.
 *
 * A closure is due for:
 * - `daily`: each Paris day before today on which the register (in one environment) has
 *   records not yet covered by a daily closure, oldest first;
 * - `monthly`: a month whose days are all closed (the next day with records is in a later
 *   month, or the month is over), once its last daily closure is written;
 * - `annual`: a fiscal year whose months are all closed, once its last monthly closure is
 *   written.
 * A period without records has no closure. The closure chain's head says what is closed
 * (`ClosureState`, carried in the last closure's `linkData`), so the next closure follows
 * from it and the next day with records alone (`nextClosure`): the scheduled run asks
 * again after each closure, and two runs racing compute the same next closure.
 *
 * Closed is closed: a day, month or year is never closed again, and no daily closure is
 * written inside a closed month or year. A record stamped on a period already closed (a
 * node whose clock lagged, docs/decisions.md "France: a record stamped on a closed day")
 * keeps its own timestamp and is closed on the first day still open (`closingDay`): the
 * daily closures cover the records chain by seq (processor.ts), so no record escapes them.
 */
import { isIsoDate, localDate, localDateTimeWithOffset } from '../../shared/dates.ts';

export type ClosureKind = 'daily' | 'monthly' | 'annual';

/** What the closure chain has closed so far (its head's linkData). */
export interface ClosureState {
  /** The last day closed (`YYYY-MM-DD`), month (`YYYY-MM`), fiscal year (`YYYY`); null: none yet. */
  day: string | null;
  month: string | null;
  year: string | null;
  /** The record seq (of the register's chain) of the last record a daily closure covers; 0: none. */
  lastSeq: number;
}

export const NO_CLOSURE: ClosureState = { day: null, month: null, year: null, lastSeq: 0 };

export interface DueClosure {
  kind: ClosureKind;
  period: string;
}

const monthOf = (period: string): string => period.slice(0, 7);
const yearOf = (period: string): string => period.slice(0, 4);

/** Today in Paris, `YYYY-MM-DD`. */
export const parisToday = (now: Date): string => {
  const d = localDate(now, 'FR');
  return `${d.year}-${d.month}-${d.day}`;
};

/**
 * The closure due next, given what is closed, the next Paris day (before today) with
 * records not yet closed (null: none; the processor passes the `closingDay` of the first
 * record not yet closed), and today's Paris date; null when nothing is due. A daily
 * closure is due only on a day still open (`firstOpenDay`).
 */
export function nextClosure(state: ClosureState, nextDay: string | null, today: string): DueClosure | null {
  // The month whose days are (being) closed but not the month itself; the year likewise.
  const openMonth = state.day !== null && monthOf(state.day) > (state.month ?? '') ? monthOf(state.day) : null;
  const openYear = state.month !== null && yearOf(state.month) > (state.year ?? '') ? yearOf(state.month) : null;
  if (openMonth !== null && (nextDay !== null ? monthOf(nextDay) !== openMonth : openMonth < monthOf(today))) {
    return { kind: 'monthly', period: openMonth };
  }
  // A year closes after its last month: never while one of its months is open.
  if (openYear !== null && (openMonth === null || yearOf(openMonth) !== openYear)
    && (nextDay !== null ? yearOf(nextDay) !== openYear : openYear < yearOf(today))) {
    return { kind: 'annual', period: openYear };
  }
  if (nextDay !== null && nextDay < today && nextDay >= (firstOpenDay(state) ?? '')) return { kind: 'daily', period: nextDay };
  return null;
}

/** The day after `day` (`YYYY-MM-DD`). */
export const nextDate = (day: string): string =>
  new Date(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10)) + 1)).toISOString().slice(0, 10);

/**
 * The first day a daily closure may still close: after the last closed day, month and
 * fiscal year (a closed month or year gets no daily closure after its own); null when
 * nothing is closed yet.
 */
export function firstOpenDay(state: ClosureState): string | null {
  const after: string[] = [];
  if (state.day !== null) after.push(nextDate(state.day));
  if (state.month !== null) {
    const [y, m] = state.month.split('-').map(Number) as [number, number];
    after.push(m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`);
  }
  if (state.year !== null) after.push(`${Number(state.year) + 1}-01-01`);
  return after.length === 0 ? null : after.reduce((x, y) => (y > x ? y : x));
}

/**
 * The day whose daily closure closes a record stamped on Paris day `recordDay`: its own
 * day, or the first day still open when its day is closed already (a late record).
 */
export function closingDay(state: ClosureState, recordDay: string): string {
  const open = firstOpenDay(state);
  return open !== null && recordDay < open ? open : recordDay;
}

/** The state after a closure (the closure's own linkData says the same: closure.ts). */
export function closeIn(state: ClosureState, due: DueClosure, lastSeq: number): ClosureState {
  if (due.kind === 'daily') return { ...state, day: due.period, lastSeq: Math.max(state.lastSeq, lastSeq) };
  if (due.kind === 'monthly') return { ...state, month: due.period };
  return { ...state, year: due.period };
}

/**
 * Every closure due, in order, for `days` (the Paris days with records not yet closed,
 * ascending): what successive runs of `nextClosure` produce. For tests and planning.
 */
export function dueClosures(state: ClosureState, days: readonly string[], today: string): DueClosure[] {
  const out: DueClosure[] = [];
  let s = state;
  let i = 0;
  for (;;) {
    while (i < days.length && days[i]! <= (s.day ?? '')) i++;
    const next = nextClosure(s, i < days.length && days[i]! < today ? days[i]! : null, today);
    if (next === null) return out;
    out.push(next);
    s = closeIn(s, next, 0);
  }
}

/** The instant a Paris wall time happens (the first, if the clock goes back over it). */
export function parisInstant(day: string, time = '00:00:00'): Date {
  if (!isIsoDate(day)) throw new Error(`nf525: ${day} is not a date`);
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const [hh, mm, ss] = time.split(':').map(Number) as [number, number, number];
  for (const offsetHours of [2, 1]) {
    const at = new Date(Date.UTC(y, m - 1, d, hh, mm, ss) - offsetHours * 3_600_000);
    if (localDateTimeWithOffset(at, 'FR').startsWith(`${day}T${time}`)) return at;
  }
  throw new Error(`nf525: ${day} ${time} does not exist in Paris`);
}

/** [from, to) of a period (`YYYY-MM-DD`, `YYYY-MM`, `YYYY`) in Paris, as instants. */
export function periodRange(kind: ClosureKind, period: string): { from: Date; to: Date } {
  if (kind === 'daily') return { from: parisInstant(period), to: parisInstant(nextDate(period)) };
  if (kind === 'monthly') {
    const [y, m] = period.split('-').map(Number) as [number, number];
    const next = m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`;
    return { from: parisInstant(`${period}-01`), to: parisInstant(next) };
  }
  return { from: parisInstant(`${period}-01-01`), to: parisInstant(`${Number(period) + 1}-01-01`) };
}
