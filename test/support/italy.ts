/** A valid partita IVA (10 digits and the Luhn-style check digit), fresh per call: SdI file names are per transmitter. */
let pivaSeq = Number(String(Date.now()).slice(-6)) * 100;
export function freshPartitaIva(): string {
  const base = String(1_000_000_000 + (++pivaSeq % 1_000_000_000)).slice(0, 10);
  let sum = 0;
  for (let i = 0; i < 10; i++) {
    const d = Number(base[i]);
    if (i % 2 === 0) sum += d;
    else sum += d * 2 > 9 ? d * 2 - 9 : d * 2;
  }
  return `${base}${(10 - (sum % 10)) % 10}`;
}
