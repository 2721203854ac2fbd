/**
 * Screenshots of the merchant portal's main pages at desktop (1280 px) and phone (390 px)
 * widths, saved as docs/portal/<page>-<width>.png (docs/portal.md shows them).
 *
 *   node --import tsx scripts/portal-screenshots.ts [out-dir]
 *
 * Builds the service in-process on an in-memory PGlite store (test keys, the sandbox
 * authority), seeds one merchant (two locations, a sale, a rejected sale with its
 * translated error, a webhook with a test delivery to a local receiver, a restricted key),
 * then drives headless Chromium (test/portal/chromium.ts) through the pages.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import fs from 'node:fs/promises';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { systemClock } from '../src/core/clock.ts';
import { deriveKeys } from '../src/crypto/master-key.ts';
import { buildApp } from '../src/http/app.ts';
import { createMemoryLimiter } from '../src/ratelimit/memory-limiter.ts';
import { createRuntime } from '../src/runtime.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPgliteDb } from '../src/store/pglite-db.ts';
import { launchChromium } from '../test/portal/chromium.ts';

const OUT = path.resolve(process.argv[2] ?? 'docs/portal');
const WIDTHS = [{ name: 'desktop', width: 1280, height: 800 }, { name: 'phone', width: 390, height: 844 }] as const;

async function main() {
  const db = await openPgliteDb();
  await migrate(db);
  const limiter = createMemoryLimiter();
  const rt = createRuntime({
    db, clock: systemClock, limiter, keys: deriveKeys(Buffer.alloc(32, 7)),
    log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
    config: { liveEnabled: false, mode: 'cloud', webhookAllowInsecure: true },
  });
  const app = await buildApp(rt);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const receiver = http.createServer((req, res) => { req.resume(); req.on('end', () => res.end('ok')); });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));

  const api = async (method: string, url: string, key: string | undefined, payload?: unknown) => {
    const res = await app.inject({ method: method as 'GET', url, payload: payload as object, headers: key ? { authorization: `Bearer ${key}` } : {} });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };

  // One merchant with something on every page.
  const signup = await api('POST', '/v1/accounts', undefined, { name: 'Bar Pepe SL', billing_email: 'owner@barpepe.example' });
  const key: string = signup.api_key.key;
  const paris = await api('POST', '/v1/locations', key, {
    name: 'Café Paris', country: 'FR', address: '1 rue de Rivoli, Paris', tax_id: '73282932000074',
    country_config: { legal_name: 'Exemple SAS', register_id: '73282932000074' },
  });
  const madrid = await api('POST', '/v1/locations', key, {
    name: 'Bar Pepe Madrid', country: 'ES', address: 'Gran Vía 2, Madrid', tax_id: 'B12345674',
    country_config: { system: 'verifactu', legal_name: 'Ejemplo SL', certificate_id: 'cert_1', software_nif: 'B12345674' },
  });
  const sale = (locationId: string, metadata: Record<string, unknown> = {}) => ({
    location_id: locationId, timestamp: new Date().toISOString(), currency: 'EUR', payment_method: 'card',
    items: [
      { description: 'Menú del día', quantity: 1, unit_price: 1200, tax_rate: 10, tax_amount: 120, total_amount: 1320 },
      { description: 'Vino', quantity: 2, unit_price: 300, tax_rate: 21, tax_amount: 126, total_amount: 726 },
    ],
    pretax_amount: 1800, tax_amount: 246, total_amount: 2046, metadata,
  });
  const ok = await api('POST', '/v1/transactions', key, sale(paris.id));
  await api('POST', '/v1/transactions', key, sale(madrid.id));
  await api('POST', '/v1/transactions', key, sale(madrid.id, { sandbox_outcome: 'reject:4102' }));
  const hook = await api('POST', '/v1/webhooks', key, {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, events: ['transaction.fiscalized', 'transaction.failed'], description: 'Till system',
  });
  await api('POST', '/v1/api-keys', key, { name: 'POS till 1', permissions: ['transactions:write', 'transactions:read'] });
  await rt.worker.drain();

  await fs.mkdir(OUT, { recursive: true });
  const chromium = await launchChromium();
  try {
    const page = await chromium.browser.newPage();
    const shoot = async (name: string) => {
      for (const w of WIDTHS) {
        await page.setViewport({ width: w.width, height: w.height });
        await page.screenshot({ path: path.join(OUT, `${name}-${w.name}.png`) as `${string}.png`, fullPage: true });
      }
    };
    await page.goto(`${base}/portal/sign-in`);
    await shoot('sign-in');
    await page.type('#f-api_key', key);
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    await shoot('account');
    await page.goto(`${base}/portal/locations`);
    await shoot('locations');
    await page.goto(`${base}/portal/locations/new`);
    await page.type('#f-name', 'Café Lyon');
    await page.select('#f-country', 'FR');
    await Promise.all([page.waitForNavigation(), page.click('main form button[type=submit]')]);
    await shoot('location-validation-error');
    await page.goto(`${base}/portal/transactions`);
    await shoot('transactions');
    await page.goto(`${base}/portal/transactions/${ok.id}`);
    await shoot('transaction');
    await page.goto(`${base}/portal/transactions/${ok.id}/receipt`);
    await shoot('receipt');
    await page.goto(`${base}/portal/failures`);
    await shoot('failures');
    await page.goto(`${base}/portal/webhooks/${hook.id}`);
    await Promise.all([page.waitForNavigation(), page.click('main form button[type=submit]')]);
    await rt.worker.drain();
    await page.goto(`${base}/portal/webhooks/${hook.id}`);
    await shoot('webhook');
    await page.goto(`${base}/portal/api-keys`);
    await shoot('api-keys');
  } finally {
    await chromium.close();
    await app.close();
    await new Promise((r) => receiver.close(r));
    await rt.worker.stop();
    rt.changes.close();
    rt.mailer.close();
    await limiter.close();
    await db.close();
  }
  console.log(`screenshots written to ${OUT}`);
}

await main();
