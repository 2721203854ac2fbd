/**
 * Golden receipts: every system's receipt as HTML and as 80 mm text in its country's
 * language, and as 58 mm text in English, built from the real plug-ins on the fixed clock
 * and ids (test/support/receipt-cases.ts), kept byte for byte in golden/ so that any change to what a
 * customer or an inspector reads shows up in review. `UPDATE_GOLDEN=1` rewrites them
 * (review the diff); without it a missing file fails, as in countries/shared/golden.ts.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderReceipt } from './render.ts';
import { receiptCases } from '../../test/support/receipt-cases.ts';

const DIR = new URL('./golden/', import.meta.url);
const UPDATE = process.env.UPDATE_GOLDEN === '1';

function expectGolden(name: string, built: string): void {
  const file = new URL(name, DIR);
  if (UPDATE && (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== built)) fs.writeFileSync(file, built);
  expect(fs.existsSync(file), `golden/${name} is missing: run the test with UPDATE_GOLDEN=1`).toBe(true);
  expect(built, `golden/${name} differs (UPDATE_GOLDEN=1 rewrites it)`).toBe(fs.readFileSync(file, 'utf8'));
}

/**
 * NF525 signatures are ECDSA, randomized (fr-nf525/record.ts): the extract printed from one
 * differs at every build. The golden files hold a fixed one in its place; the other tests
 * check the real extract is printed.
 */
const cases = (await receiptCases()).map((c) => ({
  ...c,
  source: {
    ...c.source,
    transaction: {
      ...c.source.transaction,
      render_hints: c.source.transaction.render_hints.map((h) => (h.key === 'signature_extract' ? { ...h, value: 'SIG4' } : h)),
    },
  },
}));

describe('golden receipts', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s: HTML and text', async (name, c) => {
    const lang = c.system.receipt!.language;
    const html = await renderReceipt(c.source, { format: 'html', width: 80, lang });
    expectGolden(`${name}.html`, html.body as string);
    const text = await renderReceipt(c.source, { format: 'text', width: 80, lang });
    expectGolden(`${name}.txt`, text.body as string);
    const en = await renderReceipt(c.source, { format: 'text', width: 58, lang: 'en' });
    expectGolden(`${name}.en-58.txt`, en.body as string);
  });

  it('a text receipt never has a line wider than its paper', async () => {
    for (const c of cases) {
      for (const width of [58, 80] as const) {
        const text = (await renderReceipt(c.source, { format: 'text', width, lang: 'en' })).body as string;
        for (const line of text.split('\n')) expect([...line].length, `${c.name} ${width} mm: ${line}`).toBeLessThanOrEqual(width === 58 ? 32 : 48);
      }
    }
  });
});
