import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE, startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, frenchSaleBody, saleBody } from '../support/transactions.ts';
import { launchChromium } from './chromium.ts';

/**
 * The portal end to end in headless Chromium (puppeteer-core, Debian's chromium): a real
 * HTTP server on 127.0.0.1, a fresh browser profile, keyboard sign-in, a location created
 * after a validation error, a sale and its receipt, a failed sale and its translated
 * error, another account's URL → 404. The page must raise no CSP violation and no console
 * error on the way.
 *
 * Run on PGlite only: the pages are the same on both stores (test/portal/portal.test.ts
 * covers both), and a browser run costs CI time.
 */
describe.skipIf(STORE === 'postgres')('portal in headless Chromium', () => {
  let t: TestApp;
  let base: string;
  let chromium: Awaited<ReturnType<typeof launchChromium>>;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    chromium = await launchChromium();
    browser = chromium.browser;
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    // Pages answered 400/404 on purpose; anything else logged as an error (a CSP violation, a
    // script error) or a sub-resource that did not load is a problem.
    page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(String(e)));
    // (Chromium asks /favicon.ico of a page that names no icon, as the receipt page does: not a fault of the page.)
    page.on('response', (r) => { if (r.request().resourceType() !== 'document' && r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`); });
  });
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  const text = (selector: string) => page.$eval(selector, (e) => (e as HTMLElement).innerText);
  async function submit(selector = 'main form button[type=submit]') {
    await Promise.all([page.waitForNavigation(), page.click(selector)]);
  }

  it('sign-in with the keyboard only, a location after a validation error, a sale and its receipt, a failure and its translation, a foreign URL → 404', async () => {
    const { key } = await t.signup();
    const foreign = await t.signup();
    const foreignLocation = await createLocation(t, foreign.key, 'fr-nf525');

    // Keyboard only: Tab to the key field (it is autofocused; Tab from the top reaches it too), type, Enter.
    await page.goto(`${base}/portal/sign-in`);
    // Chromium applies autofocus at its next rendering opportunity, which may come after the
    // load event goto waits for (missed once in CI on a busy machine): wait for it, 2 s at most.
    await page.waitForFunction(() => document.activeElement?.id === 'f-api_key', { timeout: 2_000 }).catch(() => {});
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-api_key');
    await page.evaluate(() => (document.activeElement as HTMLElement).blur());
    for (let i = 0; i < 5 && (await page.evaluate(() => document.activeElement?.id)) !== 'f-api_key'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-api_key');
    // The focused field shows a visible focus ring.
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid');
    await page.keyboard.type(key);
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(new URL(page.url()).pathname).toBe('/portal/account');
    expect(await text('h1')).toBe('Account');
    // The session cookie is invisible to scripts.
    expect(await page.evaluate(() => document.cookie)).toBe('');

    // A location: the server's message under the config field, then success.
    await Promise.all([page.waitForNavigation(), page.click('nav a[href="/portal/locations"]')]);
    await Promise.all([page.waitForNavigation(), page.click('a[href="/portal/locations/new"]')]);
    await page.type('#f-name', 'Café Paris');
    await page.select('#f-country', 'FR');
    await page.type('#f-tax_id', '73282932000074');
    await submit();
    expect(await text('#f-country_config-error')).toBe('country_config.legal_name is required for France locations');
    expect(await page.$eval('#f-country_config', (e) => e.getAttribute('aria-describedby'))).toContain('f-country_config-error');
    expect(await page.$eval('#f-name', (e) => (e as HTMLInputElement).value)).toBe('Café Paris');
    await page.$eval('#f-country_config', (e) => { (e as HTMLTextAreaElement).value = ''; });
    await page.type('#f-country_config', '{"legal_name": "Exemple SAS", "register_id": "73282932000074"}');
    await submit();
    expect(await text('.notice')).toBe('Location created.');
    expect(await text('h1')).toBe('Location Café Paris');
    const locationId = /\/portal\/locations\/([0-9a-f-]{36})/.exec(page.url())![1]!;

    // A test sale through the API, its page and its receipt.
    const sale = (await createTx(t, key, frenchSaleBody(locationId))).json();
    await t.worker.drain();
    await Promise.all([page.waitForNavigation(), page.click('nav a[href="/portal/transactions"]')]);
    await Promise.all([page.waitForNavigation(), page.click(`a[href="/portal/transactions/${sale.id}"]`)]);
    expect(await text('main')).toContain('20.40 EUR');
    await Promise.all([page.waitForNavigation(), page.click(`a[href="/portal/transactions/${sale.id}/receipt"]`)]);
    const receipt = await text('main');
    const stored = (await t.request({ method: 'GET', url: `/v1/transactions/${sale.id}`, key })).json();
    for (const hint of stored.render_hints.filter((h: { kind: string; mandatory: boolean }) => h.kind === 'text' && h.mandatory)) expect(receipt).toContain(hint.value);
    // The receipt service's French receipt (src/receipts): French number format.
    expect(receipt).toMatch(/TOTAL TTC EUR\s+20,40/);
    // The receipt is a page of its own (printable, no portal navigation): back to the portal.
    await page.goBack({ waitUntil: 'load' });

    // A failed sale (the sandbox's reject:<code>) and its translated error.
    const spain = await createLocation(t, key, 'es-verifactu');
    const failed = (await createTx(t, key, saleBody(spain, { metadata: { sandbox_outcome: 'reject:4102' } }))).json();
    await t.worker.drain();
    const translated = (await t.request({ method: 'GET', url: `/v1/transactions/${failed.id}`, key })).json().error_message;
    expect(translated).toEqual(expect.any(String));
    await Promise.all([page.waitForNavigation(), page.click('nav a[href="/portal/failures"]')]);
    const failures = await text('main');
    expect(failures).toContain('Why it failed');
    expect(failures).toContain(translated);
    expect(failures).toContain('4102');

    // Another account's location: the 404 page, with status 404.
    const res = await page.goto(`${base}/portal/locations/${foreignLocation}`);
    expect(res?.status()).toBe(404);
    expect(await text('h1')).toBe('Not found');
    expect(await text('main')).not.toContain('Café Paris');

    // Phone width: nothing wider than the screen (tables scroll inside their box).
    await page.setViewport({ width: 390, height: 844 });
    await page.goto(`${base}/portal/transactions`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    expect(problems, problems.join("\n")).toEqual([]);
  });
});
