/**
 * Greek AFM (Αριθμός Φορολογικού Μητρώου, tax registration number): 9 digits, the
 * last a check digit: the first 8 digits weighted by 2^8 .. 2^1, sum mod 11, mod 10.
 * All zeros passes the check but is never issued.
 */
export function isValidAfm(value: string): boolean {
  if (!/^[0-9]{9}$/.test(value) || value === '000000000') return false;
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += Number(value[i]) * 2 ** (8 - i);
  return ((sum % 11) % 10) === Number(value[8]);
}
