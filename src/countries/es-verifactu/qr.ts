/**
 * The VERI*FACTU receipt QR (Orden HAC/1177/2024 art. 21 and AEAT's QR specification;
 * FORMATS.md §2.6): `ValidarQR?nif=…&numserie=…&fecha=DD-MM-YYYY&importe=…`, each value
 * percent-encoded in UTF-8 (an `&` in the number becomes `%26`).
 */
const BASE = {
  live: 'https://www2.agenciatributaria.gob.es/wlpl/TIKE-CONT/ValidarQR',
  test: 'https://prewww2.aeat.es/wlpl/TIKE-CONT/ValidarQR',
} as const;

export function verifactuQrUrl(
  environment: 'test' | 'live',
  p: { nif: string; numSerie: string; fecha: string; importe: string },
): string {
  const enc = encodeURIComponent;
  return `${BASE[environment]}?nif=${enc(p.nif)}&numserie=${enc(p.numSerie)}&fecha=${enc(p.fecha)}&importe=${enc(p.importe)}`;
}
