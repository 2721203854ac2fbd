/**
 * The HTML receipt in a real browser (headless Chromium, Debian `chromium`, driven by
 * puppeteer-core; .ci/run installs it): served from 127.0.0.1 with the Content-Security-
 * Policy the API sends, its style applies (the CSP's hash is the style's), nothing is
 * refused, and the QR the page draws (an inline SVG) decodes back to the exact content.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECEIPT_CSP } from './html.ts';
import { renderReceipt } from './render.ts';
import { receiptCases } from '../../test/support/receipt-cases.ts';
import { decodePngQr } from './test-tools.ts';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));

const cases = await receiptCases();
let server: http.Server;
let base: string;
let browser: Browser;
const pages = new Map<string, string>();

beforeAll(async () => {
  if (!CHROMIUM) return;
  server = http.createServer((req, res) => {
    const body = pages.get(req.url ?? '');
    if (body === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': RECEIPT_CSP }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
});

describe.skipIf(!CHROMIUM)('HTML receipts in Chromium', () => {
  it.each(['pt-saft', 'gr-mydata', 'es-ticketbai'])('%s: styled under its CSP, no violation, the QR decodes to the exact content', async (name) => {
    const c = cases.find((x) => x.name === name)!;
    const html = await renderReceipt(c.source, { format: 'html', width: 80, lang: c.system.receipt!.language });
    pages.set(`/${name}`, html.body as string);
    const page = await browser.newPage();
    try {
      const refused: string[] = [];
      page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) refused.push(m.text()); });
      await page.setViewport({ width: 400, height: 1200, deviceScaleFactor: 3 });
      await page.goto(`${base}/${name}`);
      // The style block applied: the receipt is at most 80 mm wide.
      const style = await page.$eval('main.receipt', (el) => getComputedStyle(el).maxWidth);
      expect(style).not.toBe('none');
      expect(refused).toEqual([]);
      const figure = await page.$('figure[data-hint="qr"]');
      const shot = Buffer.from(await figure!.screenshot({ type: 'png' }));
      const hint = c.source.transaction.render_hints.find((h) => h.key === 'qr')!;
      expect(decodePngQr(shot)?.data).toBe(hint.value);
    } finally {
      await page.close();
    }
  }, 30_000);
});
