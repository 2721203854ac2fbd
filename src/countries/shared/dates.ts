/**
 * Calendar dates as the authorities write them.
 *
 * A fiscal date is the merchant's local date, not UTC: a sale at 00:30 in Madrid is
 * 23:30 UTC the day before, and its invoice is dated the day it happened. Each country
 * has one legal time zone here (mainland; the Canaries, Azores and Madeira, an hour
 * behind, would need a per-location zone, which locations do not carry yet).
 */
import type { Country } from '../types.ts';

export const COUNTRY_TIME_ZONES: Readonly<Record<Country, string>> = {
  ES: 'Europe/Madrid',
  IT: 'Europe/Rome',
  FR: 'Europe/Paris',
  PT: 'Europe/Lisbon',
  GR: 'Europe/Athens',
};

export interface LocalDate {
  year: string;
  month: string;
  day: string;
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** The offset of `timeZone` from UTC at `ms`, in minutes, read from the ICU zone data. */
function zoneOffsetAt(ms: number, timeZone: string): number {
  let fmt = offsetFormatters.get(timeZone);
  if (fmt === undefined) {
    fmt = new Intl.DateTimeFormat('en-CA', {
      timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
    });
    offsetFormatters.set(timeZone, fmt);
  }
  const parts = fmt.formatToParts(ms);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? NaN);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
}

/**
 * Offsets are looked up once per zone and quarter of an hour: every change of offset in
 * these zones (the EU's summer time starts and ends at 01:00 UTC, Directive 2000/84/EC)
 * falls on a quarter-hour boundary, so the offset at the quarter's start holds for all of
 * it. Why: ICU formatting costs microseconds, and records are dated on every create.
 */
const QUARTER_HOUR_MS = 15 * 60_000;
const lastOffsets = new Map<string, { quarter: number; minutes: number }>();

function offsetMinutes(ms: number, timeZone: string): number {
  if (!Number.isFinite(ms)) throw new RangeError('Invalid time value');
  const quarter = Math.floor(ms / QUARTER_HOUR_MS);
  const last = lastOffsets.get(timeZone);
  if (last !== undefined && last.quarter === quarter) return last.minutes;
  const minutes = zoneOffsetAt(quarter * QUARTER_HOUR_MS, timeZone);
  lastOffsets.set(timeZone, { quarter, minutes });
  return minutes;
}

const two = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** `at` shifted to `country`'s wall clock: read it with the getUTC… methods. */
function wallClock(at: Date, country: Country): { wall: Date; offset: number } {
  const ms = at.getTime();
  const offset = offsetMinutes(ms, COUNTRY_TIME_ZONES[country]);
  return { wall: new Date(ms + offset * 60_000), offset };
}

/** The calendar date of `at` in `country`'s legal time zone, zero-padded parts. */
export function localDate(at: Date, country: Country): LocalDate {
  const { wall } = wallClock(at, country);
  return { year: String(wall.getUTCFullYear()).padStart(4, '0'), month: two(wall.getUTCMonth() + 1), day: two(wall.getUTCDate()) };
}

/** YYYY-MM-DD (ISO 8601; FatturaPA `Data`, SAF-T `InvoiceDate`, myDATA `issueDate`). */
export const isoDate = (d: LocalDate): string => `${d.year}-${d.month}-${d.day}`;
/** DD-MM-YYYY (AEAT: SII and VERI*FACTU `FechaExpedicionFactura`). */
export const dmyDate = (d: LocalDate): string => `${d.day}-${d.month}-${d.year}`;

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  // Day 0 of the next month is the last day of this one (UTC, so no DST surprises).
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** A real calendar date written YYYY-MM-DD (2026-02-30 is refused). */
export function isIsoDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  return m !== null && validDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** A real calendar date written DD-MM-YYYY. */
export function isDmyDate(value: string): boolean {
  const m = /^(\d{2})-(\d{2})-(\d{4})$/.exec(value);
  return m !== null && validDate(Number(m[3]), Number(m[2]), Number(m[1]));
}

/** DD-MM-YYYY → its parts (call after isDmyDate). */
export function parseDmy(value: string): LocalDate {
  const [day = '', month = '', year = ''] = value.split('-');
  return { year, month, day };
}

/**
 * `at` as local wall time with its UTC offset, to the second: `2024-01-01T19:20:30+01:00`
 * (VERI*FACTU `FechaHoraHusoGenRegistro`; TicketBAI and myDATA times likewise).
 */
export function localDateTimeWithOffset(at: Date, country: Country): string {
  const { wall, offset } = wallClock(at, country);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const date = `${String(wall.getUTCFullYear()).padStart(4, '0')}-${two(wall.getUTCMonth() + 1)}-${two(wall.getUTCDate())}`;
  return `${date}T${two(wall.getUTCHours())}:${two(wall.getUTCMinutes())}:${two(wall.getUTCSeconds())}${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}
