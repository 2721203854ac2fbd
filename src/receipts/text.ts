/**
 * The receipt laid out in a fixed number of columns, the way a thermal printer prints it
 * (58 mm paper: 32 columns, 80 mm: 48, in the printers' standard 12×24 font). Plain
 * text, ESC/POS, PDF and PNG all draw these rows. Nothing is ever cut: a value longer
 * than a line wraps (at spaces when it can, else anywhere), so mandatory items stay whole.
 */
import type { ReceiptQrSpec } from '../countries/types.ts';
import type { Block, Receipt } from './model.ts';

export type PaperWidth = 58 | 80;
export const COLUMNS: Readonly<Record<PaperWidth, number>> = { 58: 32, 80: 48 };
/** The printers' condensed font (Epson font B, 9×17 dots): 42 and 64 columns. */
export const CONDENSED_COLUMNS: Readonly<Record<PaperWidth, number>> = { 58: 42, 80: 64 };

export type Row =
  /** `condensed`: in the condensed font (a one-line item too wide for the normal one). */
  | { kind: 'text'; text: string; bold: boolean; key?: string | undefined; condensed?: boolean | undefined }
  | { kind: 'qr'; key: string; content: string; spec: ReceiptQrSpec };

/**
 * The receipt's rows at `columns` characters a line; text rows are padded for centring,
 * never longer than `columns`. With `condensedColumns` (a printer's condensed font), a
 * one-line item too wide for `columns` is one condensed row instead of wrapping.
 */
export function layoutRows(r: Receipt, columns: number, condensedColumns?: number): Row[] {
  const rows: Row[] = [];
  for (const section of r.sections) {
    for (const b of section.blocks) {
      if (b.kind === 'text' && b.oneLine && condensedColumns !== undefined && chars(b.text).length > columns) {
        rows.push(...wrap(b.text, condensedColumns).map((t) => ({ kind: 'text' as const, text: t, bold: b.bold, key: b.key, condensed: true })));
      } else rows.push(...blockRows(b, columns));
    }
  }
  return rows;
}

function blockRows(b: Block, columns: number): Row[] {
  switch (b.kind) {
    case 'rule':
      return [{ kind: 'text', text: '-'.repeat(columns), bold: false }];
    case 'qr':
      return [b];
    case 'text':
      return wrap(b.text, columns).map((t) => ({ kind: 'text', text: b.align === 'center' ? center(t, columns) : t, bold: b.bold, key: b.key }));
    case 'pair': {
      const right = chars(b.right);
      const left = wrap(b.left, columns);
      const last = chars(left[left.length - 1]!);
      const out = left.slice(0, -1);
      if (last.length + 1 + right.length <= columns) out.push(last.join('') + ' '.repeat(columns - last.length - right.length) + b.right);
      else out.push(last.join(''), ' '.repeat(Math.max(0, columns - right.length)) + b.right);
      return out.map((t) => ({ kind: 'text', text: t, bold: b.bold }));
    }
  }
}

/** Code points, so that a Greek or accented letter is one column. */
const chars = (s: string): string[] => [...s];

/** Lines of at most `columns` characters: breaks at spaces, else inside a word (URLs, ids). */
export function wrap(text: string, columns: number): string[] {
  const out: string[] = [];
  for (const whole of text.split('\n')) {
    // A paragraph's indent is kept on its first line (a line item's detail).
    const indent = whole.length - whole.trimStart().length;
    const paragraph = whole.slice(indent);
    let line: string[] = chars(whole.slice(0, Math.min(indent, columns - 1)));
    for (const word of paragraph.split(' ')) {
      let w = chars(word);
      const fresh = line.length === 0 || line.every((c) => c === ' ');
      if (!fresh && line.length + 1 + w.length <= columns) {
        line.push(' ', ...w);
        continue;
      }
      if (fresh && line.length + w.length <= columns) {
        line.push(...w);
        continue;
      }
      if (!fresh) out.push(line.join(''));
      line = [];
      while (w.length > columns) {
        out.push(w.slice(0, columns).join(''));
        w = w.slice(columns);
      }
      line = w;
    }
    out.push(line.join(''));
  }
  return out;
}

const center = (t: string, columns: number): string => ' '.repeat(Math.floor((columns - chars(t).length) / 2)) + t;

/**
 * Plain text: the rows, and each QR symbol's content in its place (a plain-text printer
 * cannot draw the symbol: the POS draws it from this content, or asks for ESC/POS).
 */
export function renderText(r: Receipt, width: PaperWidth): string {
  const columns = COLUMNS[width];
  const lines: string[] = [];
  for (const row of layoutRows(r, columns)) {
    if (row.kind === 'text') lines.push(row.text.trimEnd());
    else lines.push('[QR]', ...chunks(row.content, columns));
  }
  return `${lines.join('\n')}\n`;
}

/** The content cut every `columns` characters, nothing dropped (a QR content's spaces count). */
function chunks(content: string, columns: number): string[] {
  const c = chars(content);
  const out: string[] = [];
  for (let i = 0; i < c.length; i += columns) out.push(c.slice(i, i + columns).join(''));
  return out;
}
