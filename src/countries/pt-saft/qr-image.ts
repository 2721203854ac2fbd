/**
 * The document QR code as a PNG image (AT "Especificações Técnicas Código QR" v1.0,
 * FORMATS.md §7.3): error correction M, byte mode, version 9 at least, a quiet zone
 * around it. A POS that cannot draw QR codes prints this image (the `qr_image` render
 * hint points to GET /v1/transactions/{id}/qr.png, which draws it on demand through the
 * plug-in's `qrImage`) instead of encoding the `qr` hint's content.
 *
 * The symbol is made by the `qrcode` package (`create`: segments, error correction,
 * placement); the choice of its data mask (saftQrModules) and the PNG around it are
 * written here, 1 bit per pixel and synchronously (qrcode's own PNG writer is a stream). Pure:
 * the same content gives the same bytes.
 */
import { qrModulesPng } from '../../core/png.ts';
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
export function saftQrSymbol(content: string, maskPattern?: QRCode.QRCodeMaskPattern): QRCode.QRCode {
  // Version 9 when the content fits it (the usual case), else the smallest that holds it:
  // asking qrcode for version 9 with more data would throw.
  const data = Buffer.from(content, 'utf8');
  const fits = data.length <= V9_M_BYTE_CAPACITY;
  return QRCode.create([{ data, mode: 'byte' }], {
    errorCorrectionLevel: 'M',
    ...(fits ? { version: QR_MIN_VERSION } : {}),
    ...(maskPattern !== undefined ? { maskPattern } : {}),
  });
}

/**
 * The symbol's modules (1 dark), row by row, with the data mask ISO/IEC 18004 §7.8.3
 * selects: the one of the 8 with the lowest penalty (N1-N4), first on a tie. This is what
 * qrcode's `create` does when no mask is given (tests compare both), computed here on flat
 * arrays: qrcode's own selection is most of the cost of a document's QR image.
 */
export function saftQrModules(content: string): { size: number; modules: Uint8Array; maskPattern: number; version: number } {
  const symbol = saftQrSymbol(content, 0);
  const size = symbol.modules.size;
  const masks = maskTables(size, symbol.modules.reservedBit);
  const unmasked = Uint8Array.from(symbol.modules.data);
  xorInto(unmasked, masks[0]!);
  let best: Uint8Array | undefined;
  let bestMask = 0;
  let lowest = Infinity;
  for (let p = 0; p < 8; p++) {
    const m = Uint8Array.from(unmasked);
    xorInto(m, masks[p]!);
    setFormatInfo(m, size, p);
    const penalty = penaltyOf(m, size);
    if (penalty < lowest) {
      lowest = penalty;
      best = m;
      bestMask = p;
    }
  }
  return { size, modules: best!, maskPattern: bestMask, version: symbol.version };
}

/** ISO/IEC 18004 table 10: whether mask `p` flips the module at (i row, j column). */
function maskAt(p: number, i: number, j: number): boolean {
  switch (p) {
    case 0: return (i + j) % 2 === 0;
    case 1: return i % 2 === 0;
    case 2: return j % 3 === 0;
    case 3: return (i + j) % 3 === 0;
    case 4: return (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0;
    case 5: return ((i * j) % 2) + ((i * j) % 3) === 0;
    case 6: return (((i * j) % 2) + ((i * j) % 3)) % 2 === 0;
    default: return (((i * j) % 3) + ((i + j) % 2)) % 2 === 0;
  }
}

/**
 * The 8 masks of a symbol size as arrays of 0/1 (1: the module flips), reserved modules
 * (function patterns, format and version information) left 0. They depend on the size
 * (the version) alone, and so does the reserved map: kept per size.
 */
const maskCache = new Map<number, Uint8Array[]>();
function maskTables(size: number, reserved: Uint8Array): Uint8Array[] {
  let tables = maskCache.get(size);
  if (tables === undefined) {
    tables = Array.from({ length: 8 }, (_, p) => {
      const t = new Uint8Array(size * size);
      for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) t[i * size + j] = !reserved[i * size + j] && maskAt(p, i, j) ? 1 : 0;
      return t;
    });
    maskCache.set(size, tables);
  }
  return tables;
}

function xorInto(m: Uint8Array, mask: Uint8Array): void {
  for (let k = 0; k < m.length; k++) m[k]! ^= mask[k]!;
}

/** The 15 format bits (level M = 00, mask p; BCH(15,5), XOR 101010000010010) in their two copies. */
function setFormatInfo(m: Uint8Array, size: number, p: number): void {
  const value = (0 << 3) | p; // level M: indicator 00
  let d = value << 10;
  for (let bit = 14; bit >= 10; bit--) if ((d >> bit) & 1) d ^= 0x537 << (bit - 10);
  const bits = ((value << 10) | d) ^ 0x5412;
  for (let i = 0; i < 15; i++) {
    const v = (bits >> i) & 1;
    // vertical copy
    const row = i < 6 ? i : i < 8 ? i + 1 : size - 15 + i;
    m[row * size + 8] = v;
    // horizontal copy
    const col = i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1;
    m[8 * size + col] = v;
  }
  m[(size - 8) * size + 8] = 1; // the dark module
}

/** ISO/IEC 18004 §7.8.3.1 penalty (N1 3, N2 3, N3 40, N4 10), as qrcode computes it. */
function penaltyOf(m: Uint8Array, size: number): number {
  let n1 = 0;
  let n2 = 0;
  let n3 = 0;
  for (let a = 0; a < size; a++) {
    let runRow = 0;
    let runCol = 0;
    let lastRow = -1;
    let lastCol = -1;
    let bitsRow = 0;
    let bitsCol = 0;
    for (let b = 0; b < size; b++) {
      const h = m[a * size + b]!; // along row a
      const v = m[b * size + a]!; // along column a
      if (h === lastRow) runRow++;
      else {
        if (runRow >= 5) n1 += 3 + (runRow - 5);
        lastRow = h;
        runRow = 1;
      }
      if (v === lastCol) runCol++;
      else {
        if (runCol >= 5) n1 += 3 + (runCol - 5);
        lastCol = v;
        runCol = 1;
      }
      bitsRow = ((bitsRow << 1) & 0x7ff) | h;
      bitsCol = ((bitsCol << 1) & 0x7ff) | v;
      if (b >= 10) {
        if (bitsRow === 0x5d0 || bitsRow === 0x05d) n3++;
        if (bitsCol === 0x5d0 || bitsCol === 0x05d) n3++;
      }
      if (a < size - 1 && b < size - 1) {
        const sum = h + m[a * size + b + 1]! + m[(a + 1) * size + b]! + m[(a + 1) * size + b + 1]!;
        if (sum === 0 || sum === 4) n2++;
      }
    }
    if (runRow >= 5) n1 += 3 + (runRow - 5);
    if (runCol >= 5) n1 += 3 + (runCol - 5);
  }
  let dark = 0;
  for (let k = 0; k < m.length; k++) dark += m[k]!;
  const n4 = Math.abs(Math.ceil((dark * 100) / m.length / 5) - 10);
  return n1 + n2 * 3 + n3 * 40 + n4 * 10;
}

/** The PNG of the content's QR symbol (black on white, 1-bit greyscale). */
export function saftQrPng(content: string): Buffer {
  const { size, modules } = saftQrModules(content);
  return qrModulesPng(size, (row, col) => modules[row * size + col] === 1, QR_SCALE, QR_MARGIN);
}

/** The image as the render hint carries it. */
export const saftQrDataUrl = (content: string): string => `data:image/png;base64,${saftQrPng(content).toString('base64')}`;
