/**
 * Receipts for every system, read back with independent readers (test-tools.ts): every
 * mandatory render hint is on the receipt in every format (a QR decoded back from the
 * image to its exact content), the QR drawn with the country's parameters, the Greek
 * offline label, the languages, ESC/POS commands, and the options' 400s.
 */
import { describe, expect, it } from 'vitest';
import type { RenderHint } from '../countries/types.ts';
import { ValidationError } from '../core/errors.ts';
import { buildReceipt } from './model.ts';
import { qrSymbol } from './qr.ts';
import { receiptOptions, renderReceipt, type ReceiptFormat } from './render.ts';
import { PX_PER_MM } from './png.ts';
import { receiptCases, type ReceiptCase } from '../../test/support/receipt-cases.ts';
import { decodePngQr, decodeQr, parseEscPos, pdfText, pdfToPng, squeeze } from './test-tools.ts';
import { wrap } from './text.ts';

const cases = await receiptCases();
const byName = (name: string): ReceiptCase => cases.find((c) => c.name === name)!;
const render = (c: ReceiptCase, format: ReceiptFormat, over: { lang?: 'en'; width?: 58 | 80 } = {}) =>
  renderReceipt(c.source, { format, width: over.width ?? 80, lang: over.lang ?? c.system.receipt!.language });

const qrHint = (c: ReceiptCase): RenderHint | undefined => c.source.transaction.render_hints.find((h) => h.kind === 'qr_url' || h.kind === 'qr_data');
const mandatoryTexts = (c: ReceiptCase): RenderHint[] => c.source.transaction.render_hints.filter((h) => h.mandatory && h.kind === 'text');

/** The QR rules of FORMATS.md: level M everywhere; Portugal version 9 at least. */
const EXPECTED_QR: Record<string, { level: 'M'; minVersion?: number }> = {
  'es-ticketbai': { level: 'M' }, 'es-verifactu': { level: 'M' }, 'pt-saft': { level: 'M', minVersion: 9 }, 'gr-mydata': { level: 'M' }, 'gr-mydata-offline': { level: 'M' },
};

describe('receipts: every mandatory item, every format', () => {
  it('each system has receipt facts and the cases cover every system with a QR and the Greek offline label', () => {
    const LANGUAGE = { ES: 'es', IT: 'it', FR: 'fr', PT: 'pt', GR: 'el' } as const;
    for (const c of cases) expect(c.system.receipt?.language, c.name).toBe(LANGUAGE[c.system.country]);
    expect(cases.filter((c) => qrHint(c)).map((c) => c.name).sort()).toEqual(['es-ticketbai', 'es-verifactu', 'gr-mydata', 'pt-saft']);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s: HTML, text, ESC/POS and PDF carry every mandatory text hint whole', async (_name, c) => {
    const texts = mandatoryTexts(c);
    expect(texts.length, 'a receipt with no mandatory item tests nothing').toBeGreaterThan(0);
    const html = (await render(c, 'html')).body as string;
    const text = (await render(c, 'text')).body as string;
    const text58 = (await render(c, 'text', { width: 58 })).body as string;
    const escpos = parseEscPos((await render(c, 'escpos')).body as Buffer);
    const pdf = pdfText((await render(c, 'pdf')).body as Buffer);
    for (const h of texts) {
      const label = c.system.receipt!.labels[h.key];
      // In HTML: the hint's own element, its value whole (escaped), after its label.
      const element = html.match(new RegExp(`<p[^>]* data-hint="${h.key}">([^<]*)</p>`))?.[1];
      expect(element, `${h.key} in HTML`).toBeDefined();
      expect(element!.replace(/&amp;/g, '&'), h.key).toContain(h.value);
      if (label) expect(element!.startsWith(label[c.system.receipt!.language]!), `${h.key} label`).toBe(true);
      for (const [format, body] of [['text', text], ['text 58', text58], ['escpos', escpos.text], ['pdf', pdf]] as const) {
        expect(squeeze(body), `${h.key} in ${format}`).toContain(squeeze(h.value));
      }
    }
  });

  it.each(cases.filter((c) => qrHint(c)).map((c) => [c.name, c] as const))('%s: the QR decodes back to the exact content from the PNG, the PDF (pdftoppm), ESC/POS, at the legal size', async (name, c) => {
    const hint = qrHint(c)!;
    const expected = EXPECTED_QR[name]!;
    for (const width of [80, 58] as const) {
      const png = decodePngQr((await render(c, 'png', { width })).body as Buffer);
      expect(png?.data, `PNG ${width} mm`).toBe(hint.value);
      // 30 to 40 mm (TicketBAI, VERI*FACTU, AT) at the PNG's 8 px a millimetre.
      expect(png!.sidePx / PX_PER_MM).toBeGreaterThanOrEqual(29.5);
      expect(png!.sidePx / PX_PER_MM).toBeLessThanOrEqual(40);
      if (expected.minVersion) expect(png!.version).toBeGreaterThanOrEqual(expected.minVersion);

      const page = decodePngQr(pdfToPng((await render(c, 'pdf', { width })).body as Buffer, 300));
      expect(page?.data, `PDF ${width} mm`).toBe(hint.value);
      // The PDF draws the symbol at exactly 30 mm (jsQR's corners are within a module of it).
      expect(page!.sidePx / (300 / 25.4)).toBeGreaterThanOrEqual(29.3);
      expect(page!.sidePx / (300 / 25.4)).toBeLessThanOrEqual(31);
      if (expected.minVersion) expect(page!.version).toBeGreaterThanOrEqual(expected.minVersion);
    }
    // The symbol itself: the country's level and minimum version.
    const symbol = qrSymbol(hint.value, c.system.receipt!.qr[hint.key]!);
    expect(c.system.receipt!.qr[hint.key]!.errorCorrectionLevel).toBe(expected.level);
    if (expected.minVersion) expect(symbol.version).toBeGreaterThanOrEqual(expected.minVersion);

    const escpos = parseEscPos((await render(c, 'escpos')).body as Buffer);
    if (expected.minVersion) {
      // No printer takes a minimum version: the symbol goes as a raster image.
      expect(escpos.nativeQrs).toEqual([]);
      const [image] = escpos.images;
      expect(decodeQr(image!.rgba, image!.width, image!.height)?.data).toBe(hint.value);
      expect(decodeQr(image!.rgba, image!.width, image!.height)!.version).toBeGreaterThanOrEqual(expected.minVersion);
    } else {
      expect(escpos.images).toEqual([]);
      expect(escpos.nativeQrs).toEqual([{ content: hint.value, errorCorrection: 49 /* M */, moduleDots: expect.any(Number) }]);
      const modules = qrSymbol(hint.value, { errorCorrectionLevel: 'M', sizeMm: 30 }).size;
      expect(modules * escpos.nativeQrs[0]!.moduleDots! / 8).toBeGreaterThanOrEqual(30);
    }
    expect(escpos.cut).toBe(true);
    // Plain text carries the content whole for a POS that draws it.
    expect(squeeze((await render(c, 'text', { width: 58 })).body as string)).toContain(squeeze(hint.value));
  }, 30_000);

  it('HTML draws the QR as an inline SVG of the country\'s printed size, and loads nothing', async () => {
    const html = (await render(byName('pt-saft'), 'html')).body as string;
    const svg = html.match(/<figure data-hint="qr"><svg [^>]*width="([\d.]+)mm" [^>]*viewBox="0 0 (\d+) \2"/);
    expect(svg).not.toBeNull();
    // 30 mm for the symbol, plus the quiet zone of 4 modules each side; version 9: 53 modules.
    expect(Number(svg![1])).toBeCloseTo((30 * 61) / 53, 1);
    expect(html).not.toMatch(/<script|<img|<link|src=|href=/);
  });
});

describe('receipts: country items', () => {
  const text = async (name: string, lang?: 'en') => (await render(byName(name), 'text', lang ? { lang } : {})).body as string;

  it('Portugal: ATCUD immediately above the QR, the 4 hash characters with "Processado por programa certificado", the QR image hint not drawn twice', async () => {
    const t = await text('pt-saft');
    const hints = Object.fromEntries(byName('pt-saft').source.transaction.render_hints.map((h) => [h.key, h.value]));
    expect(t).toContain(`ATCUD:${hints.atcud}\n[QR]\n`);
    expect(squeeze(t)).toContain(squeeze(`${hints.hash_extract}-Processado por programa certificado n.º 9999/AT`));
    expect(t.split(hints.hash_extract!).length - 1, 'the 4 characters once in the text, once in the QR').toBe(2);
    expect(t).not.toContain('/qr.png');
  });

  it('TicketBAI: the identifier, then the QR; VERI*FACTU: "QR tributario:", the QR, the legend', async () => {
    const tbai = byName('es-ticketbai').source.transaction.render_hints;
    expect(await text('es-ticketbai')).toContain(`${tbai[0]!.value}\n[QR]\n`);
    expect(await text('es-verifactu')).toMatch(/QR tributario:\n\[QR\]\n[^]*\nVERI\*FACTU\n$/);
  });

  it('TicketBAI at 58 mm: the identifier stays on one line in the condensed font (ESC/POS font B, PDF, PNG); plain text can only wrap it', async () => {
    const c = byName('es-ticketbai');
    const id = c.source.transaction.render_hints.find((h) => h.key === 'tbai_id')!.value;
    expect(id.length).toBeGreaterThan(32);
    const escpos = (await render(c, 'escpos', { width: 58 })).body as Buffer;
    expect(escpos.includes(Buffer.concat([Buffer.from([0x1b, 0x4d, 1]), Buffer.from(`${id}\n`, 'latin1'), Buffer.from([0x1b, 0x4d, 0])]))).toBe(true);
    expect(parseEscPos(escpos).text.split('\n')).toContain(id);
    expect(pdfText((await render(c, 'pdf', { width: 58 })).body as Buffer).split('\n').map((l) => l.trim())).toContain(id);
    expect(squeeze((await render(c, 'text', { width: 58 })).body as string)).toContain(id);
  });

  it('Spain: the title follows the invoice type (F2 simplified, F1 with the customer\'s tax id, R5/R1 corrective)', () => {
    const c = byName('es-verifactu').source;
    const titled = (over: Record<string, unknown>) => buildReceipt({ ...c, transaction: { ...c.transaction, normalized: { ...c.transaction.normalized, ...over } } }, 'es').title;
    // The stored metadata carries the type validation chose (es/invoice.ts).
    expect(c.transaction.normalized.metadata.invoice_type).toBe('F2');
    expect(titled({})).toBe('Factura simplificada');
    const buyer = { customer_context: { tax_id: 'B12345674' } };
    expect(titled({ ...buyer, metadata: { invoice_type: 'F1' } })).toBe('Factura');
    expect(titled({ type: 'refund', metadata: { invoice_type: 'R5' } })).toBe('Factura rectificativa simplificada');
    expect(titled({ type: 'refund', ...buyer, metadata: { invoice_type: 'R1' } })).toBe('Factura rectificativa');
    expect(titled({ type: 'refund', metadata: {} })).toBe('Factura rectificativa simplificada');
  });

  it('the document number at the top where no hint carries it: VERI*FACTU NumSerieFactura, TicketBAI series-number, myDATA series-aa', async () => {
    expect(await text('es-verifactu')).toMatch(/\nFecha: [^\n]+\nFactura n\.º A-1\n/);
    expect(await text('es-ticketbai')).toMatch(/\nFecha: [^\n]+\nFactura n\.º A-1\n/);
    expect(await text('gr-mydata')).toMatch(/\nΗμερομηνία: [^\n]+\nΣειρά-Α\/Α A-1\n/);
    expect(await text('gr-mydata', 'en')).toContain('\nSeries-No. A-1\n');
    // Portugal's number is its `invoice_no` hint: not printed twice.
    expect((await text('pt-saft')).split('FS A2026/1').length - 1).toBe(1 + 1 /* in the QR content */);
  });

  it('a cancellation\'s receipt is titled as its system says, or says so under the title where the system says nothing', async () => {
    const c = byName('es-verifactu');
    const cancelled = { ...c, source: { ...c.source, transaction: { ...c.source.transaction, type: 'cancellation' } } };
    // Spain: an annulment is no invoice (src/receipts/corrections.test.ts has every system).
    expect((await render(cancelled, 'text')).body).toMatch(/\n\s+Anulación de factura\n/);
    expect((await render(cancelled, 'text')).body).not.toContain('Factura simplificada');
    expect((await render(cancelled, 'text', { lang: 'en' })).body).toMatch(/\n\s+Invoice annulment\n/);
    expect((await render(c, 'text')).body).not.toContain('Anulación');
    // A system without correction facts keeps its title with the generic line beneath.
    const bare = { ...cancelled, source: { ...cancelled.source, system: { receipt: { ...c.system.receipt!, correction: undefined } } } };
    expect((await render(bare, 'text')).body).toContain('Factura simplificada\n');
    expect((await render(bare, 'text')).body).toMatch(/\n\s+ANULACIÓN\n/);
    expect((await render(bare, 'text', { lang: 'en' })).body).toMatch(/\n\s+CANCELLATION\n/);
  });

  it('Greece: MARK, UID and authentication code; the offline label only on the offline receipt, before the footer', async () => {
    const online = await text('gr-mydata');
    const offline = await text('gr-mydata-offline');
    const label = byName('gr-mydata-offline').system.offline!.label.value;
    expect(online).toMatch(/\nΜΑΡΚ \d{15}\n/);
    expect(squeeze(online)).not.toContain(squeeze(label));
    expect(squeeze(offline)).toContain(squeeze(label));
    expect(offline).not.toContain('ΜΑΡΚ');
    const html = (await render(byName('gr-mydata-offline'), 'html')).body as string;
    expect(html).toMatch(/<section class="footer_top">\n<p data-hint="late_transmission_label">/);
    // The PDF and the PNG are drawn from the same rows: the label in the PDF's text.
    expect(squeeze(pdfText((await render(byName('gr-mydata-offline'), 'pdf')).body as Buffer))).toContain(squeeze(label));
  });

  it('France: ticket number, signature extract, the software name and version', async () => {
    const t = await text('fr-nf525');
    expect(t).toMatch(/\nTicket n° \S+-00000001\n/);
    expect(t).toMatch(/\nSignature \S{4}\n/);
    expect(t).toContain('Logiciel de caisse : fiscal-api 0.1.0');
  });

  it('France: the shop\'s name and address as the ticket\'s record kept them, not the location\'s current ones; a record without them prints the current ones', () => {
    const c = byName('fr-nf525');
    const moved = { ...c.source, location: { ...c.source.location, name: 'Nouvelle Enseigne', address: '2 rue de Rivoli, 75001 Paris' } };
    const merchant = (src: typeof c.source) => buildReceipt(src, 'fr').sections.find((s) => s.name === 'merchant')!.blocks.map((b) => (b.kind === 'text' ? b.text : ''));
    expect(merchant(moved)).toEqual(merchant(c.source));
    expect(merchant(moved)).toEqual(expect.arrayContaining(['Shop', 'Calle Mayor 1, 20001']));
    // A record stored before the location was kept in it: the location as it is now.
    const body = JSON.parse(c.source.transaction.record!) as Record<string, unknown>;
    delete body.location;
    const old = { ...moved, transaction: { ...moved.transaction, record: JSON.stringify(body) } };
    expect(merchant(old)).toEqual(expect.arrayContaining(['Nouvelle Enseigne', '2 rue de Rivoli, 75001 Paris']));
  });

  it('languages: the country\'s by default, English on request; Greek in ESC/POS code page 1253', async () => {
    expect(await text('gr-mydata')).toContain('ΣΥΝΟΛΟ EUR');
    const en = await text('gr-mydata', 'en');
    expect(en).toContain('TOTAL EUR');
    expect(en).toMatch(/\nMARK \d{15}\n/);
    expect(en).toContain('RETAIL SALES RECEIPT');
    expect(await text('it-dc', 'en')).toContain('COMMERCIAL DOCUMENT of sale or service');
    expect(await text('pt-saft', 'en')).toContain('Simplified invoice');
    expect((await render(byName('es-sii'), 'html', { lang: 'en' })).body).toContain('<html lang="en">');
    const escpos = parseEscPos((await render(byName('gr-mydata'), 'escpos')).body as Buffer);
    expect(escpos.codeTable).toBe(47);
    expect(escpos.text).toContain('ΑΠΟΔΕΙΞΗ ΛΙΑΝΙΚΗΣ ΠΩΛΗΣΗΣ');
    expect(parseEscPos((await render(byName('pt-saft'), 'escpos')).body as Buffer).text).toContain('Pagamento: cartão');
  });
});

describe('receipts: rules of the renderer', () => {
  const source = byName('es-ticketbai').source;

  it('a mandatory hint is never dropped: an over-long value wraps whole, a mandatory image is printed as its path, an unknown placement goes to the body', () => {
    const long = 'X'.repeat(130);
    const hints: RenderHint[] = [
      { key: 'long', placement: 'footer_bottom', mandatory: true, kind: 'text', value: long },
      { key: 'img', placement: 'footer_bottom', mandatory: true, kind: 'image_url', value: '/v1/x.png' },
      { key: 'odd', placement: 'somewhere' as never, mandatory: true, kind: 'text', value: 'odd-value' },
      { key: 'opt', placement: 'footer_bottom', mandatory: false, kind: 'image_url', value: '/v1/skipped.png' },
    ];
    const r = buildReceipt({ ...source, transaction: { ...source.transaction, render_hints: hints } }, 'en');
    const all = r.sections.flatMap((s) => s.blocks.map((b) => (b.kind === 'text' ? b.text : '')));
    expect(all).toContain(long);
    expect(all).toContain('/v1/x.png');
    expect(r.sections.find((s) => s.name === 'body')!.blocks).toMatchObject([{ text: 'odd-value' }]);
    expect(all.join('')).not.toContain('skipped');
  });

  it('wrap keeps every character of a word longer than the line and breaks at spaces otherwise', () => {
    expect(wrap('ab cd efghijklmn', 5)).toEqual(['ab cd', 'efghi', 'jklmn']);
    expect(wrap('  indented detail line', 10)).toEqual(['  indented', 'detail', 'line']);
    expect(wrap('Φρέντο εσπρέσο', 6)).toEqual(['Φρέντο', 'εσπρέσ', 'ο']);
  });

  it('options: defaults, aliases, and a 400 naming what is allowed', () => {
    expect(receiptOptions({}, ['es', 'en'])).toEqual({ format: 'html', width: 80, lang: 'es' });
    expect(receiptOptions({ format: 'text', escpos: '1', width: '58', lang: 'en' }, ['es', 'en'])).toEqual({ format: 'escpos', width: 58, lang: 'en' });
    const bad = (q: Record<string, unknown>, message: string) => {
      let err: unknown;
      try {
        receiptOptions(q, ['pt', 'en']);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toBe(message);
    };
    bad({ format: 'docx' }, 'format must be one of: html, pdf, png, text, escpos');
    bad({ lang: 'es' }, 'lang must be one of: pt, en');
    bad({ width: '110' }, 'width must be 58 or 80 (paper width in mm)');
    bad({ format: 'pdf', escpos: '1' }, 'escpos applies to format=text only');
    bad({ escpos: 'yes' }, 'escpos must be 1 or 0');
  });

  it('the same transaction gives the same PDF and PNG bytes', async () => {
    const c = byName('pt-saft');
    expect((await render(c, 'pdf')).body).toEqual((await render(c, 'pdf')).body);
    expect((await render(c, 'png')).body).toEqual((await render(c, 'png')).body);
  });
});
