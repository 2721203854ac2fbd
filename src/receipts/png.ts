/**
 * The receipt as a PNG, drawn here in JavaScript from the same page as the PDF (page.ts):
 * glyph outlines from the shipped font (fontkit, pdfkit's own font engine) filled with
 * anti-aliasing, QR modules as whole pixels, 8 pixels a millimetre (203 dpi, a thermal
 * printer's resolution), 8-bit greyscale, written here with node's zlib (pngjs is a test tool
 * only: the service must not need it).
 *
 * Why not rasterise the PDF (pdftoppm, a browser): a service must not need a program
 * installed beside it to answer a request. This has no such dependency and takes a few
 * milliseconds.
 *
 * A QR module is a whole number of pixels, rounded up, so the symbol is never smaller
 * than the size the country asks (30 mm: 240 px) and scanners see square modules.
 */
import type * as fontkit from 'fontkit';
import { lazyImport } from '../core/lazy-import.ts';
import { greyscalePng } from '../core/png.ts';
import type { Receipt } from './model.ts';
import { FONT_FILES, FONT_MM, LINE_MM, pageLayout } from './page.ts';
import { QUIET_ZONE } from './qr.ts';
import type { PaperWidth } from './text.ts';

export const PX_PER_MM = 8;
/** Vertical samples per pixel row for anti-aliasing (horizontal coverage is exact). */
const SUBSAMPLES = 4;
/** Curves flattened into this many segments. */
const CURVE_STEPS = 8;

type Edge = { x0: number; y0: number; x1: number; y1: number; dir: 1 | -1 };

export async function renderPng(r: Receipt, width: PaperWidth): Promise<Buffer> {
  const fonts = await loadFonts();
  const page = pageLayout(r, width);
  const w = Math.round(page.widthMm * PX_PER_MM);
  const h = Math.ceil(page.heightMm * PX_PER_MM);
  // Coverage of black, 0..1, per pixel.
  const ink = new Float32Array(w * h);
  const fontPx = FONT_MM * PX_PER_MM;
  for (const item of page.items) {
    if (item.kind === 'text') {
      const font = item.bold ? fonts.bold : fonts.regular;
      const scale = (fontPx * item.scale) / font.unitsPerEm;
      // The line box is LINE_MM high; the glyphs' box (ascent to descent) is centred in it.
      const boxPx = (font.ascent - font.descent) * scale;
      const baseline = item.y * PX_PER_MM + (LINE_MM * PX_PER_MM - boxPx) / 2 + font.ascent * scale;
      let x = item.x * PX_PER_MM;
      const edges: Edge[] = [];
      for (const ch of item.text) {
        const glyph = font.glyphForCodePoint(ch.codePointAt(0)!);
        if (ch !== ' ') edges.push(...glyphEdges(glyph.path.commands, x, baseline, scale));
        x += glyph.advanceWidth * scale;
      }
      fill(ink, w, h, edges);
      continue;
    }
    const modulePx = Math.ceil(item.moduleMm * PX_PER_MM);
    const side = (item.symbol.size + 2 * QUIET_ZONE) * modulePx;
    // Centred on the page; the quiet zone is the page's white.
    const x0 = Math.round((w - side) / 2) + QUIET_ZONE * modulePx;
    const y0 = Math.round(item.y * PX_PER_MM) + QUIET_ZONE * modulePx;
    for (let row = 0; row < item.symbol.size; row++) {
      for (let col = 0; col < item.symbol.size; col++) {
        if (!item.symbol.dark(row, col)) continue;
        for (let y = y0 + row * modulePx; y < y0 + (row + 1) * modulePx && y < h; y++) {
          ink.fill(1, y * w + x0 + col * modulePx, y * w + x0 + (col + 1) * modulePx);
        }
      }
    }
  }
  return greyPng(w, h, ink);
}


/** An 8-bit greyscale PNG of the coverage (1: black), each row with filter 0 (none). */
function greyPng(w: number, h: number, ink: Float32Array): Buffer {
  const raw = Buffer.alloc((w + 1) * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) raw[y * (w + 1) + 1 + x] = 255 - Math.round(Math.min(1, ink[y * w + x]!) * 255);
  }
  return greyscalePng(w, h, 8, raw);
}

/** The shipped fonts, opened with the first PNG, fontkit with them (core/lazy-import.ts). */
const loadFonts = lazyImport(async () => {
  const fk = await import('fontkit');
  return { regular: fk.openSync(FONT_FILES.regular), bold: fk.openSync(FONT_FILES.bold) };
});

/** A glyph's outline as line segments in pixels (font units are y-up from the baseline). */
function glyphEdges(commands: readonly fontkit.PathCommand[], ox: number, baseline: number, scale: number): Edge[] {
  const edges: Edge[] = [];
  const px = (x: number) => ox + x * scale;
  const py = (y: number) => baseline - y * scale;
  let sx = 0, sy = 0, cx = 0, cy = 0;
  const line = (x: number, y: number) => {
    if (y !== cy) edges.push(cy < y ? { x0: cx, y0: cy, x1: x, y1: y, dir: 1 } : { x0: x, y0: y, x1: cx, y1: cy, dir: -1 });
    cx = x;
    cy = y;
  };
  for (const c of commands) {
    const a = c.args;
    switch (c.command) {
      case 'moveTo':
        if (cx !== sx || cy !== sy) line(sx, sy);
        sx = cx = px(a[0]!);
        sy = cy = py(a[1]!);
        break;
      case 'lineTo':
        line(px(a[0]!), py(a[1]!));
        break;
      case 'quadraticCurveTo': {
        const [x0, y0, qx, qy, x1, y1] = [cx, cy, px(a[0]!), py(a[1]!), px(a[2]!), py(a[3]!)];
        for (let i = 1; i <= CURVE_STEPS; i++) {
          const t = i / CURVE_STEPS, u = 1 - t;
          line(u * u * x0 + 2 * u * t * qx + t * t * x1, u * u * y0 + 2 * u * t * qy + t * t * y1);
        }
        break;
      }
      case 'bezierCurveTo': {
        const [x0, y0, ax, ay, bx, by, x1, y1] = [cx, cy, px(a[0]!), py(a[1]!), px(a[2]!), py(a[3]!), px(a[4]!), py(a[5]!)];
        for (let i = 1; i <= CURVE_STEPS; i++) {
          const t = i / CURVE_STEPS, u = 1 - t;
          line(
            u * u * u * x0 + 3 * u * u * t * ax + 3 * u * t * t * bx + t * t * t * x1,
            u * u * u * y0 + 3 * u * u * t * ay + 3 * u * t * t * by + t * t * t * y1,
          );
        }
        break;
      }
      case 'closePath':
        line(sx, sy);
        break;
    }
  }
  if (cx !== sx || cy !== sy) line(sx, sy);
  return edges;
}

/** Non-zero winding scanline fill: SUBSAMPLES scanlines per pixel row, exact coverage along x. */
function fill(ink: Float32Array, w: number, h: number, edges: Edge[]): void {
  if (edges.length === 0) return;
  let top = Infinity, bottom = -Infinity;
  for (const e of edges) {
    top = Math.min(top, e.y0);
    bottom = Math.max(bottom, e.y1);
  }
  const weight = 1 / SUBSAMPLES;
  const crossings: { x: number; dir: number }[] = [];
  for (let py = Math.max(0, Math.floor(top)); py < Math.min(h, Math.ceil(bottom)); py++) {
    for (let s = 0; s < SUBSAMPLES; s++) {
      const y = py + (s + 0.5) / SUBSAMPLES;
      crossings.length = 0;
      for (const e of edges) {
        if (y < e.y0 || y >= e.y1) continue;
        crossings.push({ x: e.x0 + ((y - e.y0) / (e.y1 - e.y0)) * (e.x1 - e.x0), dir: e.dir });
      }
      crossings.sort((a, b) => a.x - b.x);
      let winding = 0;
      for (let i = 0; i < crossings.length - 1; i++) {
        winding += crossings[i]!.dir;
        if (winding !== 0) span(ink, py * w, w, crossings[i]!.x, crossings[i + 1]!.x, weight);
      }
    }
  }
}

/** Adds `weight` × the covered part of each pixel of [x0, x1) in one row. */
function span(ink: Float32Array, rowStart: number, w: number, x0: number, x1: number, weight: number): void {
  const a = Math.max(0, x0), b = Math.min(w, x1);
  if (b <= a) return;
  const first = Math.floor(a), last = Math.floor(b);
  if (first === last) {
    ink[rowStart + first]! += (b - a) * weight;
    return;
  }
  ink[rowStart + first]! += (first + 1 - a) * weight;
  for (let x = first + 1; x < last; x++) ink[rowStart + x]! += weight;
  if (last < w) ink[rowStart + last]! += (b - last) * weight;
}
