/**
 * The document QR code as a PNG image (AT "Especificações Técnicas Código QR" v1.0,
 * FORMATS.md §7.3): error correction M, byte mode, version 9 at least, a quiet zone
 * around it. A POS that cannot draw QR codes prints this image (the `qr_image` render
 * hint, a `data:image/png;base64,…` URL) instead of encoding the `qr` hint's content.
 *
 * The symbol is made by the `qrcode` package (`create`: segments, error correction,
 * masking); the PNG around it is written here, 1 bit per pixel and synchronously (build
 * is synchronous and runs on every create; qrcode's own PNG writer is a stream). Pure:
 * the same content gives the same bytes.
 */
import zlib from 'node:zlib';
import QRCode from 'qrcode';

/** AT: "versão mínima 9". */
export const QR_MIN_VERSION = 9;
/** Bytes a version-9 symbol holds in byte mode at level M (ISO/IEC 18004 table 7). */
const V9_M_BYTE_CAPACITY = 180;
/** Pixels per module: 61 modules with the quiet zone → 244 px, which a printer scales to the 30 mm AT asks. */
export const QR_SCALE = 4;
/** Quiet zone, in modules (ISO/IEC 18004: 4). */
export const QR_MARGIN = 4;

/** The QR symbol for the content: byte mode, level M, version 9 or the smallest above that holds it. */
export function saftQrSymbol(content: string): QRCode.QRCode {
  // Version 9 when the content fits it (the usual case), else the smallest that holds it:
  // asking qrcode for version 9 with more data would throw.
  const data = Buffer.from(content, 'utf8');
  const fits = data.length <= V9_M_BYTE_CAPACITY;
  return QRCode.create([{ data, mode: 'byte' }], { errorCorrectionLevel: 'M', ...(fits ? { version: QR_MIN_VERSION } : {}) });
}

/** The PNG of the content's QR symbol (black on white, 1-bit greyscale). */
export function saftQrPng(content: string): Buffer {
  const { modules } = saftQrSymbol(content);
  const side = (modules.size + 2 * QR_MARGIN) * QR_SCALE;
  const rowBytes = Math.ceil(side / 8);
  // Each row: filter byte 0, then the pixels, 1 bit each, most significant first; 1 = white.
  // One row is drawn per module row and repeated QR_SCALE times.
  const raw = Buffer.alloc((rowBytes + 1) * side, 0xff);
  const line = Buffer.alloc(rowBytes + 1, 0xff);
  line[0] = 0;
  // Bits past the image's width in the last byte stay 1 (ignored by readers).
  for (let y = 0; y < side; y++) raw[y * (rowBytes + 1)] = 0;
  for (let my = 0; my < modules.size; my++) {
    line.fill(0xff, 1);
    for (let mx = 0; mx < modules.size; mx++) {
      if (modules.get(my, mx) !== 1) continue;
      const x0 = (mx + QR_MARGIN) * QR_SCALE;
      for (let x = x0; x < x0 + QR_SCALE; x++) line[1 + (x >> 3)]! &= ~(0x80 >> (x & 7));
    }
    const y0 = (my + QR_MARGIN) * QR_SCALE;
    for (let y = y0; y < y0 + QR_SCALE; y++) line.copy(raw, y * (rowBytes + 1));
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  // compression, filter, interlace: 0
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** The image as the render hint carries it. */
export const saftQrDataUrl = (content: string): string => `data:image/png;base64,${saftQrPng(content).toString('base64')}`;

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}
