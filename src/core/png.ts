import zlib from 'node:zlib';

/** The 8 bytes every PNG file starts with. */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A greyscale PNG from rows already laid out as the format wants them (each row a filter
 * byte, 0, then its samples at `bitDepth` bits), with node:zlib alone: the service draws
 * its images (the Portuguese QR, receipts) without an image library at run time.
 */
export function greyscalePng(width: number, height: number, bitDepth: 1 | 8, rows: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = bitDepth;
  header[9] = 0; // greyscale; compression, filter, interlace: 0
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A QR symbol as a 1-bit PNG: `size` modules a side, each `scale` pixels, inside a quiet
 * zone of `margin` modules; `dark(row, col)` says which modules are dark. Pure: the same
 * symbol gives the same bytes.
 */
export function qrModulesPng(size: number, dark: (row: number, col: number) => boolean, scale: number, margin: number): Buffer {
  const side = (size + 2 * margin) * scale;
  const rowBytes = Math.ceil(side / 8);
  // Each row: filter byte 0, then the pixels, 1 bit each, most significant first; 1 = white.
  // One row is drawn per module row and repeated `scale` times.
  const raw = Buffer.alloc((rowBytes + 1) * side, 0xff);
  const line = Buffer.alloc(rowBytes + 1, 0xff);
  line[0] = 0;
  // Bits past the image's width in the last byte stay 1 (ignored by readers).
  for (let y = 0; y < side; y++) raw[y * (rowBytes + 1)] = 0;
  for (let my = 0; my < size; my++) {
    line.fill(0xff, 1);
    for (let mx = 0; mx < size; mx++) {
      if (!dark(my, mx)) continue;
      const x0 = (mx + margin) * scale;
      for (let x = x0; x < x0 + scale; x++) line[1 + (x >> 3)]! &= ~(0x80 >> (x & 7));
    }
    const y0 = (my + margin) * scale;
    for (let y = y0; y < y0 + scale; y++) line.copy(raw, y * (rowBytes + 1));
  }
  return greyscalePng(side, side, 1, raw);
}

