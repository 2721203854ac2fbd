/**
 * Minor units to the decimal text fiscal formats print (`1210` → `12.10`).
 * Every system here invoices in euros (2 decimals, `.` as separator, no grouping),
 * which is what TicketBAI `ImporteTotalFactura`, the VERI*FACTU QR `importe` and the
 * SAF-T PT QR money fields expect. Integer arithmetic only: never a float.
 */
export function decimal(minor: number): string {
  if (!Number.isSafeInteger(minor)) throw new Error(`decimal: not an integer amount: ${minor}`);
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  const units = Math.floor(abs / 100);
  const cents = abs % 100;
  return `${sign}${units}.${String(cents).padStart(2, '0')}`;
}
