/**
 * The SII submission deadline of an issued invoice.
 *
 * The law: Reglamento del IVA (RD 1624/1992) art. 69.Dos, as written by RD 596/2016 and
 * amended by RD 1075/2017 (in force since 1 January 2018): the records of issued
 * invoices are sent "en un plazo de cuatro días naturales desde la expedición de la
 * factura", and "en el cómputo del plazo de cuatro días naturales se excluirán los
 * sábados, los domingos y los declarados festivos nacionales".
 *
 * Choice: Saturdays ARE excluded. The issue's and the spec's wording ("4-day deadline
 * excluding Sundays and national holidays", spec limits table "4 calendar days (Sundays
 * and holidays excluded)") is the original 2016 text of RD 596/2016, before RD
 * 1075/2017 added Saturdays. DECISIONS.md says nothing on it, so the law in force wins.
 * Current secondary sources agree: AEAT's SII pages as quoted by advisers ("se excluyen
 * los sábados, domingos y festivos nacionales") and MarosaVAT's "SII due dates"
 * (https://marosavat.com/recursos/manuales/spanish-vat-basics/sii-due-dates/: "The term
 * of four calendar days excludes Saturdays, Sundays and national holidays").
 *
 * Counting: the day of issue is not counted; the period starts the next day (Código
 * Civil art. 5.1: a period of days counted from a given day excludes that day). The four countable days are
 * the next days that are neither Saturday, Sunday nor a national holiday, and the
 * deadline is the end of the fourth one (23:59:59.999) in Madrid: AEAT's books follow
 * the peninsular calendar, the same zone the invoice date is taken in (shared/dates.ts).
 *
 * National holidays ("fiestas laborales de ámbito nacional", Estatuto de los
 * Trabajadores art. 37.2 and RD 2001/1983 art. 45): the holidays `date-holidays` lists
 * for ES without a region, type `public` (its ES data follows the yearly BOE resolution
 * on "fiestas laborales"): fixed dates plus Good Friday, which every region keeps, and
 * the Monday that replaces a national holiday falling on a Sunday when the BOE moves it
 * nationally. Regional and local holidays (Jueves Santo, 19 March…) do not count.
 *
 * The outer limit of the same article: "en ningún caso podrá ser posterior al 16 del mes
 * siguiente a aquel en que se hubiera producido el devengo del impuesto". The accrual is the
 * operation's (LIVA art. 75: delivery, service rendered, or an advance payment, the days
 * RD 1619/2012 art. 6.1.f names), which the record states as FechaOperacion when it is not
 * the issue date (`metadata.operation_date`, ../es/operation-date.ts); without one the
 * operation is of the issue day, whose 16th of the next month is always later than four
 * working days. So an invoice issued long after its operation is due by the end of that
 * 16th (Madrid), even when the four days would run later.
 *
 * Not modelled: invoices issued by the customer or a third party (8 days).
 */
import Holidays from 'date-holidays';
import { isDmyDate, localDate, localDateTimeWithOffset, parseDmy } from '../shared/dates.ts';
import type { TransactionDraft } from '../types.ts';

/** Countable days of art. 69.Dos RIVA. */
export const SII_WORKING_DAYS = 4;

const spain = new Holidays('ES', { types: ['public'], timezone: 'Europe/Madrid' });
const holidaysByYear = new Map<number, ReadonlySet<string>>();

/** The national public holidays of a year, as YYYY-MM-DD. */
export function nationalHolidays(year: number): ReadonlySet<string> {
  let set = holidaysByYear.get(year);
  if (set === undefined) {
    set = new Set(spain.getHolidays(year).filter((h) => h.type === 'public').map((h) => h.date.slice(0, 10)));
    holidaysByYear.set(year, set);
  }
  return set;
}

/** Saturday, Sunday or a national holiday: the day is not counted. */
export function isExcludedDay(year: number, month: number, day: number): boolean {
  const d = new Date(Date.UTC(year, month - 1, day));
  const weekday = d.getUTCDay();
  if (weekday === 0 || weekday === 6) return true;
  return nationalHolidays(d.getUTCFullYear()).has(d.toISOString().slice(0, 10));
}

/**
 * End of the fourth countable day after the invoice's issue date, as an instant. The
 * issue date is the record's `metadata.issue_date` (DD-MM-YYYY, validated), which an
 * integrator may set to an earlier day than the transaction's creation (an invoice
 * reported late); without it, the Madrid date of the creation.
 */
export function siiSubmissionDeadline({ createdAt, tx }: { createdAt: Date; tx: TransactionDraft }): Date {
  const given = tx.metadata.issue_date;
  const issued = typeof given === 'string' && isDmyDate(given) ? parseDmy(given) : localDate(createdAt, 'ES');
  // Calendar arithmetic on UTC midnights: no time zone or DST in the day count.
  const cursor = new Date(Date.UTC(Number(issued.year), Number(issued.month) - 1, Number(issued.day)));
  let counted = 0;
  while (counted < SII_WORKING_DAYS) {
    cursor.setUTCDate(cursor.getUTCDate() + 1);
    if (!isExcludedDay(cursor.getUTCFullYear(), cursor.getUTCMonth() + 1, cursor.getUTCDate())) counted++;
  }
  const fourDays = endOfMadridDay(cursor.getUTCFullYear(), cursor.getUTCMonth(), cursor.getUTCDate());
  const operation = tx.metadata.operation_date;
  if (typeof operation !== 'string' || !isDmyDate(operation)) return fourDays;
  // The 16th of the month after the operation's (Date.UTC rolls month 12 into January).
  const op = parseDmy(operation);
  const next = new Date(Date.UTC(Number(op.year), Number(op.month), 16));
  const accrualLimit = endOfMadridDay(next.getUTCFullYear(), next.getUTCMonth(), next.getUTCDate());
  return accrualLimit < fourDays ? accrualLimit : fourDays;
}

/**
 * 23:59:59.999 of a Madrid calendar date. The offset is read at 21:59 UTC of that date,
 * which is that same evening in Madrid (UTC+1 or +2), after any DST change of the day.
 */
function endOfMadridDay(year: number, monthIndex: number, day: number): Date {
  const wall = Date.UTC(year, monthIndex, day, 23, 59, 59, 999);
  const probe = new Date(Date.UTC(year, monthIndex, day, 21, 59, 0));
  const m = /([+-])(\d{2}):(\d{2})$/.exec(localDateTimeWithOffset(probe, 'ES'));
  const offsetMin = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  return new Date(wall - offsetMin * 60_000);
}
