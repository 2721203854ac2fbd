/**
 * The TBAI identifier and the receipt QR URL (TicketBAI Especificaciones v1.1 §4.3.2 and
 * §4.3.3; FORMATS.md §1.1 and §1.3).
 */
import type { Territory } from './territory.ts';
import { crc8Text } from './crc8.ts';

/**
 * `TBAI-<NIF>-<DDMMYY>-<first 13 characters of SignatureValue>-<CRC>`, 39 characters;
 * the CRC is taken over the first 36 (everything up to the fourth `-`).
 */
export function tbaiId(nif: string, ddmmyy: string, signatureValue: string): string {
  const head = `TBAI-${nif}-${ddmmyy}-${signatureValue.slice(0, 13)}-`;
  return `${head}${crc8Text(head)}`;
}

/**
 * QR base URL per territory and environment. Araba: the `/tbai/qrtbai/` form used by
 * Araba's later Anexo IV and every library (the v1.1 spec's `/TBAI/QRTBAI` is older);
 * Bizkaia has one URL for both environments.
 */
const QR_BASE: Readonly<Record<Territory, { live: string; test: string }>> = {
  gipuzkoa: { live: 'https://tbai.egoitza.gipuzkoa.eus/qr/', test: 'https://tbai.prep.gipuzkoa.eus/qr/' },
  araba: { live: 'https://ticketbai.araba.eus/tbai/qrtbai/', test: 'https://pruebas-ticketbai.araba.eus/tbai/qrtbai/' },
  bizkaia: { live: 'https://batuz.eus/QRTBAI/', test: 'https://batuz.eus/QRTBAI/' },
};

export const qrBaseUrl = (territory: Territory, environment: 'test' | 'live'): string => QR_BASE[territory][environment];

/**
 * `<base>?id=…&s=…&nf=…&i=…&cr=…`: values URL-encoded (a `+` in the id becomes `%2B`),
 * `s` left out when there is no series, `i` exactly as `ImporteTotalFactura` in the XML,
 * and `cr` the CRC-8 of the URL built so far, always last.
 */
export function tbaiQrUrl(base: string, p: { id: string; series: string | null; number: string; total: string }): string {
  const enc = encodeURIComponent;
  const series = p.series === null || p.series === '' ? '' : `&s=${enc(p.series)}`;
  const url = `${base}?id=${enc(p.id)}${series}&nf=${enc(p.number)}&i=${enc(p.total)}`;
  return `${url}&cr=${crc8Text(url)}`;
}
