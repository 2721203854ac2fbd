/**
 * The receipt on a page of receipt paper, for PDF and PNG: the rows of text.ts in a
 * monospaced font (DejaVu Sans Mono, shipped under assets/fonts: it has the Greek
 * letters, and a deployed image need not have any font installed), 1.5 mm a character
 * as a 203-dpi thermal printer's 12-dot font, the page as wide as the paper (58 or 80 mm)
 * and as long as the receipt; a condensed row (a one-line item) in a smaller size. QR symbols at the size the country fixes, quiet zone around.
 * Positions are in millimetres from the top left.
 */
import { fileURLToPath } from 'node:url';
import type { Receipt } from './model.ts';
import { QUIET_ZONE, qrSymbol, type QrSymbol } from './qr.ts';
import { COLUMNS, CONDENSED_COLUMNS, layoutRows, type PaperWidth } from './text.ts';

export const FONT_FILES = {
  regular: fileURLToPath(new URL('../../assets/fonts/DejaVuSansMono.ttf', import.meta.url)),
  bold: fileURLToPath(new URL('../../assets/fonts/DejaVuSansMono-Bold.ttf', import.meta.url)),
};
/** DejaVu Sans Mono's advance: 1233/2048 em. */
const ADVANCE_EM = 1233 / 2048;
export const CHAR_MM = 1.5;
export const FONT_MM = CHAR_MM / ADVANCE_EM;
export const LINE_MM = 3.2;
const QR_GAP_MM = 1;

export type PageItem =
  /** `scale`: of the font size (a condensed row: columns / condensed columns). */
  | { kind: 'text'; x: number; y: number; text: string; bold: boolean; scale: number }
  | { kind: 'qr'; x: number; y: number; moduleMm: number; symbol: QrSymbol; content: string };

export interface Page {
  widthMm: number;
  heightMm: number;
  items: PageItem[];
}

export function pageLayout(r: Receipt, width: PaperWidth): Page {
  const columns = COLUMNS[width];
  const margin = (width - columns * CHAR_MM) / 2;
  const items: PageItem[] = [];
  let y = margin;
  for (const row of layoutRows(r, columns, CONDENSED_COLUMNS[width])) {
    if (row.kind === 'text') {
      const scale = row.condensed ? columns / CONDENSED_COLUMNS[width] : 1;
      if (row.text.trim() !== '') items.push({ kind: 'text', x: margin, y, text: row.text, bold: row.bold, scale });
      y += LINE_MM;
      continue;
    }
    const symbol = qrSymbol(row.content, row.spec);
    const moduleMm = row.spec.sizeMm / symbol.size;
    const side = (symbol.size + 2 * QUIET_ZONE) * moduleMm;
    y += QR_GAP_MM;
    items.push({ kind: 'qr', x: (width - side) / 2, y, moduleMm, symbol, content: row.content });
    y += side + QR_GAP_MM;
  }
  return { widthMm: width, heightMm: y + margin, items };
}
