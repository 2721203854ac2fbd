/**
 * Test tools (not a test file): reading rendered receipts back with independent readers.
 * PNG: pngjs then jsQR; PDF: poppler's pdftoppm (to PNG) and pdftotext; ESC/POS: the
 * commands parsed here (text in its code page, GS ( k symbols, GS v 0 raster images).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

// jsqr is CommonJS whose types declare an ES default export: the function is the module or its `default`.
const jsQR = ((jsQRModule as unknown as { default?: typeof jsQRModule.default }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;

export interface DecodedQr {
  data: string;
  version: number;
  /** Side of the symbol (finder pattern corners, quiet zone excluded) in pixels. */
  sidePx: number;
}

/** The QR in an image (RGBA pixels), read by jsQR; undefined when none is found. */
export function decodeQr(data: Uint8Array, width: number, height: number): DecodedQr | undefined {
  const found = jsQR(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width, height);
  if (!found) return undefined;
  const l = found.location;
  return { data: found.data, version: found.version, sidePx: Math.hypot(l.topRightCorner.x - l.topLeftCorner.x, l.topRightCorner.y - l.topLeftCorner.y) };
}

export function decodePngQr(png: Buffer): DecodedQr | undefined {
  const image = PNG.sync.read(png);
  return decodeQr(image.data, image.width, image.height);
}

function withTemp<T>(fn: (dir: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'receipt-'));
  try {
    return fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The PDF's single page as a PNG, by pdftoppm at `dpi`. */
export function pdfToPng(pdf: Buffer, dpi = 300): Buffer {
  return withTemp((dir) => {
    fs.writeFileSync(path.join(dir, 'r.pdf'), pdf);
    execFileSync('pdftoppm', ['-png', '-r', String(dpi), '-singlefile', path.join(dir, 'r.pdf'), path.join(dir, 'r')]);
    return fs.readFileSync(path.join(dir, 'r.png'));
  });
}

/** The PDF's text, by pdftotext (layout kept). */
export function pdfText(pdf: Buffer): string {
  return withTemp((dir) => {
    fs.writeFileSync(path.join(dir, 'r.pdf'), pdf);
    execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', path.join(dir, 'r.pdf'), path.join(dir, 'r.txt')]);
    return fs.readFileSync(path.join(dir, 'r.txt'), 'utf8');
  });
}

export interface EscPosParsed {
  /** The printed text, decoded with the code page ESC t selected. */
  text: string;
  codeTable: number | undefined;
  /** Contents stored with GS ( k (function 180), and the error-correction byte last set (function 169). */
  nativeQrs: { content: string; errorCorrection: number | undefined; moduleDots: number | undefined }[];
  /** GS v 0 raster images as RGBA, for decodeQr. */
  images: { width: number; height: number; rgba: Uint8Array }[];
  cut: boolean;
}

const TABLE_ENCODINGS: Readonly<Record<number, string>> = { 16: 'windows-1252', 47: 'windows-1253' };

/** Parses the ESC/POS commands receipts use; an unknown command throws (the test then fails). */
export function parseEscPos(bytes: Buffer): EscPosParsed {
  const out: EscPosParsed = { text: '', codeTable: undefined, nativeQrs: [], images: [], cut: false };
  let ec: number | undefined;
  let dots: number | undefined;
  let textBytes: number[] = [];
  const flush = () => {
    out.text += new TextDecoder(TABLE_ENCODINGS[out.codeTable ?? 16] ?? 'windows-1252').decode(Uint8Array.from(textBytes));
    textBytes = [];
  };
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b === 0x1b) {
      const cmd = bytes[i + 1];
      if (cmd === 0x40) i += 2;
      else if (cmd === 0x74) { flush(); out.codeTable = bytes[i + 2]; i += 3; }
      else if (cmd === 0x45 || cmd === 0x61 || cmd === 0x4d) i += 3;
      else throw new Error(`unknown ESC command 0x${cmd?.toString(16)} at ${i}`);
    } else if (b === 0x1d) {
      const cmd = bytes[i + 1];
      if (cmd === 0x28 && bytes[i + 2] === 0x6b) {
        const len = bytes[i + 3]! + 256 * bytes[i + 4]!;
        const fn = bytes[i + 6];
        const args = bytes.subarray(i + 7, i + 5 + len);
        if (fn === 0x43) dots = args[0];
        if (fn === 0x45) ec = args[0];
        if (fn === 0x50) out.nativeQrs.push({ content: args.subarray(1).toString('utf8'), errorCorrection: ec, moduleDots: dots });
        i += 5 + len;
      } else if (cmd === 0x76 && bytes[i + 2] === 0x30) {
        const rowBytes = bytes[i + 4]! + 256 * bytes[i + 5]!;
        const height = bytes[i + 6]! + 256 * bytes[i + 7]!;
        const bits = bytes.subarray(i + 8, i + 8 + rowBytes * height);
        const width = rowBytes * 8;
        const rgba = new Uint8Array(width * height * 4).fill(255);
        for (let y = 0; y < height; y++) {
          for (let x = 0; x < width; x++) {
            if (bits[y * rowBytes + (x >> 3)]! & (0x80 >> (x & 7))) rgba.fill(0, (y * width + x) * 4, (y * width + x) * 4 + 3);
          }
        }
        out.images.push({ width, height, rgba });
        i += 8 + rowBytes * height;
      } else if (cmd === 0x56) {
        out.cut = true;
        i += 4;
      } else throw new Error(`unknown GS command 0x${cmd?.toString(16)} at ${i}`);
    } else {
      textBytes.push(b);
      i += 1;
    }
  }
  flush();
  return out;
}

/** Text with every run of white space removed: a wrapped value is found whole. */
export const squeeze = (s: string): string => s.replace(/\s+/g, '');
