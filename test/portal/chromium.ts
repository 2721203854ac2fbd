import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Debian's chromium (.ci/run installs it); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless Chromium with a fresh profile and nothing that talks to the network on its own
 * (no component updates, sync, QUIC or background fetches): the tests and the screenshot
 * script see only the portal. `close` also removes the profile.
 */
export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const profile = await fs.mkdtemp(path.join(os.tmpdir(), 'portal-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`,
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
      await fs.rm(profile, { recursive: true, force: true });
    },
  };
}
