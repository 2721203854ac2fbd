/**
 * How the Italian receipts (the Documento Commerciale and the SDI courtesy copy) print what
 * their records carry: a day as the documento commerciale prints it (`DD-MM-YYYY`, the AdE
 * layout's "N. 0005-0009 del 03-06-2020"), the same in the SDI copy's references; and the
 * records' amounts (`Amount2DecimalType`: `12.34`, `-0.01`) read back into cents.
 */

/** `2026-03-01` → `01-03-2026`; anything else is printed as it is. */
export function italianDay(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  return m ? `${m[3]}-${m[2]}-${m[1]}` : iso;
}

/** An Amount2DecimalType (`12.34`, `-0.01`) in cents; undefined when it is not one. */
export function centsOf(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(-)?([0-9]{1,13})\.([0-9]{2})$/.exec(value.trim());
  if (!m) return undefined;
  const cents = Number(m[2]) * 100 + Number(m[3]);
  return m[1] ? -cents : cents;
}
