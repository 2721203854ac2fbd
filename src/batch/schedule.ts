/**
 * When batch processors run (spec Limits "Batch (Bizkaia) daily at 02:00 UTC"; DECISIONS
 * "Batch": `{processor, cron, timezone, next_run_at}`). Pure.
 *
 * Processors run at most daily (LROE daily, a SAF-T export monthly), so a cron here is
 * five fields, UTC, where minute and hour are single numbers and day of month, month and
 * day of week are a number or `*`. Anything richer is refused when the processor is
 * registered rather than half-understood.
 */
export const BATCH_TIMEZONE = 'UTC';

export interface DailyCron {
  minute: number;
  hour: number;
  dayOfMonth: number | null;
  month: number | null;
  /** 0 = Sunday (7 is accepted as Sunday too). */
  dayOfWeek: number | null;
}

function field(text: string, name: string, min: number, max: number, wildcard: boolean): number | null {
  if (text === '*' && wildcard) return null;
  if (!/^\d{1,2}$/.test(text)) throw new Error(`cron ${name} must be ${wildcard ? 'a number or *' : 'a number'}, got ${JSON.stringify(text)}`);
  const n = Number(text);
  if (n < min || n > max) throw new Error(`cron ${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function parseCron(cron: string): DailyCron {
  const parts = cron.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`cron must have five fields, got ${JSON.stringify(cron)}`);
  const [mi, h, dom, mon, dow] = parts as [string, string, string, string, string];
  const dayOfWeek = field(dow, 'day of week', 0, 7, true);
  const dayOfMonth = field(dom, 'day of month', 1, 31, true);
  // Standard cron ORs a day of month with a day of week; rather than surprise, refuse both.
  if (dayOfWeek !== null && dayOfMonth !== null) throw new Error('cron may restrict the day of month or the day of week, not both');
  return {
    minute: field(mi, 'minute', 0, 59, false)!,
    hour: field(h, 'hour', 0, 23, false)!,
    dayOfMonth,
    month: field(mon, 'month', 1, 12, true),
    dayOfWeek: dayOfWeek === 7 ? 0 : dayOfWeek,
  };
}

/** The first time the cron fires strictly after `now` (UTC). */
export function nextRunAt(cron: string, now: Date): Date {
  const c = parseCron(cron);
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  // Five years reach any day that exists (29 February comes every four).
  for (let i = 0; i < 5 * 366; i++, day.setUTCDate(day.getUTCDate() + 1)) {
    if (c.dayOfMonth !== null && day.getUTCDate() !== c.dayOfMonth) continue;
    if (c.month !== null && day.getUTCMonth() + 1 !== c.month) continue;
    if (c.dayOfWeek !== null && day.getUTCDay() !== c.dayOfWeek) continue;
    const at = new Date(day.getTime() + (c.hour * 60 + c.minute) * 60_000);
    if (at.getTime() > now.getTime()) return at;
  }
  throw new Error(`cron ${JSON.stringify(cron)} never fires`);
}
