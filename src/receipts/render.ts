/**
 * One receipt in the format asked for (GET /v1/transactions/{id}/receipt, DECISIONS
 * "Beyond the spec"): the query's `format`, `width`, `lang` and `escpos` checked here with
 * a 400 that says what is allowed, then the model (model.ts) drawn by the format's writer.
 */
import { badRequest } from '../core/errors.ts';
import type { ReceiptLanguage } from '../countries/types.ts';
import { renderEscPos } from './escpos.ts';
import { RECEIPT_CSP, renderHtml } from './html.ts';
import { buildReceipt, receiptLanguages, type ReceiptSource } from './model.ts';
import { renderPdf } from './pdf.ts';
import { renderPng } from './png.ts';
import { renderText, type PaperWidth } from './text.ts';

export const FORMATS = ['html', 'pdf', 'png', 'text', 'escpos'] as const;
export type ReceiptFormat = (typeof FORMATS)[number];

export interface ReceiptOptions {
  format: ReceiptFormat;
  width: PaperWidth;
  lang: ReceiptLanguage;
}

export interface RenderedReceipt {
  contentType: string;
  body: Buffer | string;
  /** Response headers beside the content type (the HTML page's CSP, a file name). */
  headers: Record<string, string>;
}

const one = (v: unknown): string | undefined => (Array.isArray(v) ? one(v[v.length - 1]) : typeof v === 'string' ? v : undefined);

/**
 * The query's options: `format` html (default), pdf, png, text, or escpos (also
 * `format=text&escpos=1`); `width` 58 or 80 (mm, default 80); `lang` the country's
 * language or `en` (default: the country's).
 */
export function receiptOptions(query: Record<string, unknown>, languages: readonly ReceiptLanguage[]): ReceiptOptions {
  const format = one(query.format) ?? 'html';
  if (!(FORMATS as readonly string[]).includes(format)) throw badRequest(`format must be one of: ${FORMATS.join(', ')}`);
  const escpos = one(query.escpos);
  if (escpos !== undefined && !['0', '1', 'true', 'false'].includes(escpos)) throw badRequest('escpos must be 1 or 0');
  const wantsEscPos = escpos === '1' || escpos === 'true';
  if (wantsEscPos && format !== 'text' && format !== 'escpos') throw badRequest('escpos applies to format=text only');
  const width = one(query.width) ?? '80';
  if (width !== '58' && width !== '80') throw badRequest('width must be 58 or 80 (paper width in mm)');
  const lang = one(query.lang) ?? languages[0]!;
  if (!(languages as readonly string[]).includes(lang)) throw badRequest(`lang must be one of: ${languages.join(', ')}`);
  return { format: wantsEscPos ? 'escpos' : (format as ReceiptFormat), width: Number(width) as PaperWidth, lang: lang as ReceiptLanguage };
}

export async function renderReceipt(src: ReceiptSource, o: ReceiptOptions): Promise<RenderedReceipt> {
  const receipt = buildReceipt(src, o.lang);
  // Files are shown inline, with a name for when they are saved.
  const file = (ext: string) => ({ 'content-disposition': `inline; filename="receipt-${src.transaction.id}.${ext}"` });
  switch (o.format) {
    case 'html':
      return { contentType: 'text/html; charset=utf-8', body: renderHtml(receipt), headers: { 'content-security-policy': RECEIPT_CSP } };
    case 'text':
      return { contentType: 'text/plain; charset=utf-8', body: renderText(receipt, o.width), headers: {} };
    case 'escpos':
      return { contentType: 'application/vnd.escpos', body: renderEscPos(receipt, o.width), headers: file('bin') };
    case 'pdf':
      return { contentType: 'application/pdf', body: await renderPdf(receipt, o.width, src.transaction.created_at), headers: file('pdf') };
    case 'png':
      return { contentType: 'image/png', body: await renderPng(receipt, o.width), headers: file('png') };
  }
}

export { receiptLanguages };
