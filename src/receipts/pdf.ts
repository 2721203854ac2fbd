/**
 * The receipt as a PDF (pdfkit): one page the size of the paper (page.ts), the font
 * embedded (subset), each QR drawn as vector squares at its exact printed size.
 * The document's dates are the transaction's, so the same receipt gives the same bytes.
 */
import fs from 'node:fs';
import { lazyImport } from '../core/lazy-import.ts';
import type { Receipt } from './model.ts';
import { FONT_FILES, FONT_MM, pageLayout } from './page.ts';
import { QUIET_ZONE } from './qr.ts';
import type { PaperWidth } from './text.ts';

const PT_PER_MM = 72 / 25.4;

/** pdfkit, loaded with the first PDF (core/lazy-import.ts). */
const pdfkit = lazyImport(() => import('pdfkit'));

export async function renderPdf(r: Receipt, width: PaperWidth, issuedAt: Date): Promise<Buffer> {
  const { default: PDFDocument } = await pdfkit();
  const page = pageLayout(r, width);
  const pt = (mm: number) => mm * PT_PER_MM;
  const doc = new PDFDocument({
    size: [pt(page.widthMm), pt(page.heightMm)],
    margin: 0,
    lang: r.lang,
    info: { Title: r.title, Producer: 'fiscal-api receipts', Creator: 'fiscal-api', CreationDate: issuedAt, ModDate: issuedAt },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.registerFont('regular', fontBytes('regular'));
  doc.registerFont('bold', fontBytes('bold'));
  doc.fillColor('#000');
  for (const item of page.items) {
    if (item.kind === 'text') {
      doc.font(item.bold ? 'bold' : 'regular').fontSize(pt(FONT_MM * item.scale)).text(item.text, pt(item.x), pt(item.y), { lineBreak: false });
      continue;
    }
    const m = item.moduleMm;
    const side = (item.symbol.size + 2 * QUIET_ZONE) * m;
    doc.rect(pt(item.x), pt(item.y), pt(side), pt(side)).fill('#fff');
    for (let row = 0; row < item.symbol.size; row++) {
      for (let col = 0; col < item.symbol.size; col++) {
        if (!item.symbol.dark(row, col)) continue;
        let run = 1;
        while (col + run < item.symbol.size && item.symbol.dark(row, col + run)) run++;
        doc.rect(pt(item.x + (col + QUIET_ZONE) * m), pt(item.y + (row + QUIET_ZONE) * m), pt(run * m), pt(m));
        col += run - 1;
      }
    }
    doc.fill('#000');
  }
  doc.end();
  return done;
}

/** The font files, read once (pdfkit would read them again for every document). */
const fonts = new Map<keyof typeof FONT_FILES, Buffer>();
function fontBytes(face: keyof typeof FONT_FILES): Buffer {
  let b = fonts.get(face);
  if (b === undefined) {
    b = fs.readFileSync(FONT_FILES[face]);
    fonts.set(face, b);
  }
  return b;
}
