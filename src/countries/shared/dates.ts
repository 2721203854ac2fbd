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

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar date of `at` in `country`'s legal time zone, zero-padded parts. */
export function localDate(at: Date, country: Country): LocalDate {
  const timeZone = COUNTRY_TIME_ZONES[country];
  let fmt = formatters.get(timeZone);
  if (fmt === undefined) {
    fmt = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, fmt);
  }
  const parts = fmt.formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return { year: get('year'), month: get('month'), day: get('day') };
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

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/**
 * `at` as local wall time with its UTC offset, to the second: `2024-01-01T19:20:30+01:00`
 * (VERI*FACTU `FechaHoraHusoGenRegistro`; TicketBAI and myDATA times likewise).
 */
export function localDateTimeWithOffset(at: Date, country: Country): string {
  const timeZone = COUNTRY_TIME_ZONES[country];
  let fmt = offsetFormatters.get(timeZone);
  if (fmt === undefined) {
    fmt = new Intl.DateTimeFormat('en-CA', {
      timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
    });
    offsetFormatters.set(timeZone, fmt);
  }
  const parts = fmt.formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const wall = Date.UTC(Number(get('year')), Number(get('month')) - 1, Number(get('day')), Number(get('hour')), Number(get('minute')), Number(get('second')));
  const offsetMin = Math.round((wall - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const hhmm = `${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${get('year')}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}:${get('second')}${sign}${hhmm}`;
}
