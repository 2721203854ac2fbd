import { describe, expect, it } from 'vitest';
import { COUNTRY_TIME_ZONES, isoDate, localDate, localDateTimeWithOffset } from './dates.ts';
import type { Country } from '../types.ts';

/** What ICU says, formatted independently of dates.ts's offset cache. */
function icu(at: Date, timeZone: string): { date: string; time: string; offset: string } {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'longOffset',
  }).formatToParts(at);
  const get = (t: string) => parts.find((p) => p.type === t)!.value;
  const name = get('timeZoneName'); // "GMT+01:00", or "GMT" at offset zero
  return { date: `${get('year')}-${get('month')}-${get('day')}`, time: `${get('hour')}:${get('minute')}:${get('second')}`, offset: name === 'GMT' ? '+00:00' : name.slice(3) };
}

describe('local dates and times', () => {
  const countries = Object.keys(COUNTRY_TIME_ZONES) as Country[];
  // Around the EU summer-time changes (01:00 UTC, last Sunday of March and October) and midnights.
  const around = ['2026-03-29T00:59:59.999Z', '2026-03-29T01:00:00Z', '2026-10-25T00:59:59Z', '2026-10-25T01:00:00.001Z', '2025-12-31T22:59:59Z', '2025-12-31T23:00:00Z', '2026-06-30T21:30:00Z'];

  it('agrees with ICU at the summer-time changes and around midnight in every country', () => {
    for (const iso of around) {
      for (const country of countries) {
        const at = new Date(iso);
        const want = icu(at, COUNTRY_TIME_ZONES[country]);
        expect(isoDate(localDate(at, country)), `${country} ${iso}`).toBe(want.date);
        expect(localDateTimeWithOffset(at, country), `${country} ${iso}`).toBe(`${want.date}T${want.time}${want.offset}`);
      }
    }
  });

  it('agrees with ICU on 5,000 instants spread over 1970-2100, in order and out of order', () => {
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const from = Date.UTC(1970, 0, 1);
    const to = Date.UTC(2100, 0, 1);
    const instants = Array.from({ length: 5000 }, () => new Date(from + Math.floor(rand() * (to - from))));
    for (const at of [...instants, ...instants.slice().sort((a, b) => a.getTime() - b.getTime())]) {
      const country = countries[Math.floor(rand() * countries.length)]!;
      const want = icu(at, COUNTRY_TIME_ZONES[country]);
      expect(localDateTimeWithOffset(at, country)).toBe(`${want.date}T${want.time}${want.offset}`);
    }
  });

  it('refuses an invalid date as ICU does', () => {
    expect(() => localDate(new Date('nope'), 'FR')).toThrow(RangeError);
    expect(() => localDateTimeWithOffset(new Date(NaN), 'PT')).toThrow(RangeError);
  });
});
