/**
 * Portuguese NIF (número de identificação fiscal): 9 digits, the last a mod-11 check
 * digit: weights 9..2 on the first 8 digits, check = 11 - (sum mod 11), and 0 when
 * that gives 10 or 11. No NIF starts with 0 (the first digit is the holder type).
 */
export function isValidPortugueseNif(value: string): boolean {
  if (!/^[1-9][0-9]{8}$/.test(value)) return false;
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += Number(value[i]) * (9 - i);
  const rest = sum % 11;
  const check = rest < 2 ? 0 : 11 - rest;
  return Number(value[8]) === check;
}
