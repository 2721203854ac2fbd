/**
 * The TicketBAI CRC-8 (TicketBAI Especificaciones v1.1, Annex 3): polynomial
 * x^8 + x^2 + x + 1 (0x07), initial value 0, no reflection, no final XOR: the catalogue
 * algorithm CRC-8/SMBUS. It closes the TBAI identifier (over its first 36 characters)
 * and the QR URL (`cr`, over the URL before `&cr=`), written as 3 decimal digits.
 */
const TABLE: Uint8Array = (() => {
  const table = new Uint8Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 0x80 ? ((c << 1) ^ 0x07) & 0xff : (c << 1) & 0xff;
    table[n] = c;
  }
  return table;
})();

/** CRC-8/SMBUS over the UTF-8 bytes of `text`. */
export function crc8(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text, 'utf8')) crc = TABLE[(crc ^ byte) & 0xff]!;
  return crc;
}

/** The CRC as TicketBAI writes it: 3 decimal digits, zero-padded ("007"). */
export const crc8Text = (text: string): string => String(crc8(text)).padStart(3, '0');
