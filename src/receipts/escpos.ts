/**
 * The receipt as ESC/POS bytes (Epson's command set, which most receipt printers speak):
 * the rows of text.ts in the printer's font, bold where the receipt is, and each QR as
 * the printer's own symbol (GS ( k, function 165-169: model 2, the country's error
 * correction, a module size that makes it at least `sizeMm` at 203 dpi).
 *
 * A printer picks the QR version itself (the smallest that holds the content) and cannot
 * be told a minimum: where the country fixes one (Portugal: version 9 at least) the
 * symbol is drawn here by `qrcode` and sent as a raster image (GS v 0) instead.
 *
 * A one-line item too wide for the normal font (the TicketBAI identifier on 58 mm paper)
 * is printed in font B (ESC M 1), 42 or 64 columns.
 *
 * Text: Latin languages in code page WPC1252 (ESC t 16), Greek in WPC1253 (ESC t 47);
 * a character the page lacks prints as `?`.
 */
import type { ReceiptQrSpec } from '../countries/types.ts';
import type { Receipt } from './model.ts';
import { QUIET_ZONE, qrSymbol } from './qr.ts';
import { COLUMNS, CONDENSED_COLUMNS, layoutRows, type PaperWidth } from './text.ts';

const ESC = 0x1b;
const GS = 0x1d;
const LF = 0x0a;
/** Printer resolution: 203 dpi, 8 dots per millimetre. */
const DOTS_PER_MM = 8;

const CODE_PAGES: Readonly<Record<string, { table: number; encoding: string }>> = {
  latin: { table: 16, encoding: 'windows-1252' },
  el: { table: 47, encoding: 'windows-1253' },
};

export function renderEscPos(r: Receipt, width: PaperWidth): Buffer {
  const page = CODE_PAGES[r.lang === 'el' ? 'el' : 'latin']!;
  const encode = encoder(page.encoding);
  const out: number[] = [ESC, 0x40, ESC, 0x74, page.table];
  let bold = false;
  for (const row of layoutRows(r, COLUMNS[width], CONDENSED_COLUMNS[width])) {
    if (row.kind === 'text') {
      if (row.bold !== bold) {
        out.push(ESC, 0x45, row.bold ? 1 : 0);
        bold = row.bold;
      }
      // ESC M 1: font B (condensed) for a one-line item, then back to font A.
      if (row.condensed) out.push(ESC, 0x4d, 1, ...encode(row.text.trimEnd()), LF, ESC, 0x4d, 0);
      else out.push(...encode(row.text.trimEnd()), LF);
      continue;
    }
    out.push(ESC, 0x61, 1); // centred
    out.push(...(row.spec.minVersion !== undefined ? rasterQr(row.content, row.spec) : nativeQr(row.content, row.spec)));
    out.push(LF, ESC, 0x61, 0);
  }
  // Feed past the cutter, then a partial cut.
  out.push(LF, LF, LF, GS, 0x56, 66, 0);
  return Buffer.from(out);
}

/** Dots per module so that the symbol is at least `sizeMm` wide (the printer allows 1-16). */
function moduleDots(modules: number, spec: ReceiptQrSpec): number {
  return Math.min(16, Math.max(1, Math.ceil((spec.sizeMm * DOTS_PER_MM) / modules)));
}

/** GS ( k: select model 2, module size, error correction, store the data, print. */
function nativeQr(content: string, spec: ReceiptQrSpec): number[] {
  const data = Buffer.from(content, 'utf8');
  // The printer's symbol is the smallest version that holds the data, as qrcode's.
  const size = qrSymbol(content, { ...spec, minVersion: undefined }).size;
  const len = data.length + 3;
  return [
    GS, 0x28, 0x6b, 4, 0, 0x31, 0x41, 0x32, 0x00, // model 2
    GS, 0x28, 0x6b, 3, 0, 0x31, 0x43, moduleDots(size, spec),
    GS, 0x28, 0x6b, 3, 0, 0x31, 0x45, { L: 48, M: 49, Q: 50, H: 51 }[spec.errorCorrectionLevel],
    GS, 0x28, 0x6b, len & 0xff, len >> 8, 0x31, 0x50, 0x30, ...data,
    GS, 0x28, 0x6b, 3, 0, 0x31, 0x51, 0x30,
  ];
}

/** GS v 0: the symbol drawn by qrcode, one bit per dot, quiet zone included. */
function rasterQr(content: string, spec: ReceiptQrSpec): number[] {
  const q = qrSymbol(content, spec);
  const dots = moduleDots(q.size, spec);
  const side = (q.size + 2 * QUIET_ZONE) * dots;
  const rowBytes = Math.ceil(side / 8);
  const bits = new Uint8Array(rowBytes * side);
  for (let y = 0; y < side; y++) {
    const r = Math.floor(y / dots) - QUIET_ZONE;
    for (let x = 0; x < side; x++) {
      const c = Math.floor(x / dots) - QUIET_ZONE;
      if (r >= 0 && c >= 0 && r < q.size && c < q.size && q.dark(r, c)) bits[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
    }
  }
  return [GS, 0x76, 0x30, 0, rowBytes & 0xff, rowBytes >> 8, side & 0xff, side >> 8, ...bits];
}

/** A single-byte encoder for a Windows code page, built from the WHATWG decoder's table. */
const encoders = new Map<string, (s: string) => number[]>();
function encoder(encoding: string): (s: string) => number[] {
  let enc = encoders.get(encoding);
  if (enc === undefined) {
    const decoder = new TextDecoder(encoding);
    const table = new Map<string, number>();
    for (let b = 0x20; b < 0x100; b++) {
      if (b === 0x7f) continue;
      const ch = decoder.decode(Uint8Array.of(b));
      if (ch !== '\ufffd' && !table.has(ch)) table.set(ch, b);
    }
    enc = (s) => [...s].map((ch) => table.get(ch) ?? 0x3f);
    encoders.set(encoding, enc);
  }
  return enc;
}
