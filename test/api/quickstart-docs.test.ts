import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';

/**
 * The quickstarts (docs/quickstart/*.md) as a new integrator reads them: the location and
 * the sale are sent exactly as their curl blocks write them, and what the guide says comes
 * back is what comes back: the stored `country_config`, the created transaction's type,
 * status, amount, system and `fiscal_id` (set or null), and its `render_hints` (key,
 * placement, kind, mandatory, in order). A QR's documented content must be whole: same
 * length and same parameters as the service's (the guides once showed every QR cut at 90
 * characters, without `importe`, `cr` or the AT's fields after `I6`).
 */
const DIR = path.join(import.meta.dirname, '..', '..', 'docs', 'quickstart');
const GUIDES = fs.readdirSync(DIR).filter((f) => f.endsWith('.md')).sort();

interface Guide { location: unknown; sale: Record<string, unknown>; storedConfig: unknown; answer: Record<string, any> }

function readGuide(file: string): Guide {
  const text = fs.readFileSync(path.join(DIR, file), 'utf8');
  // The bodies the curl blocks send: `-d @- <<'EOF' … EOF`.
  const bodies = [...text.matchAll(/<<'EOF'\n([\s\S]*?)\nEOF/g)].map((m) => JSON.parse(m[1]!));
  const jsonBlocks = [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
  if (bodies.length !== 2 || jsonBlocks.length < 2) throw new Error(`${file}: expected a location and a sale body, and two JSON answers`);
  return { location: bodies[0], sale: bodies[1], storedConfig: jsonBlocks[0], answer: jsonBlocks[1] };
}

/** A QR's parameter names: URL query keys, or the AT's `*`-separated field codes. */
const qrFields = (v: string) => v.split(/[?&*]/).slice(1).map((p) => p.split(/[=:]/)[0]);

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ key } = await t.signup());
});
afterAll(() => t.close());

describe('quickstarts: the documented calls and answers', () => {
  it('has a guide per fiscal system', () => {
    expect(GUIDES).toHaveLength(8);
  });

  for (const file of GUIDES) {
    it(`${file}: the location and the sale work as written and answer as documented`, async () => {
      const g = readGuide(file);
      const loc = await t.request({ method: 'POST', url: '/v1/locations', key, payload: g.location as object });
      expect(loc.statusCode, loc.body).toBe(201);
      expect(loc.json().country_config).toEqual(g.storedConfig);

      const sale = await t.request({ method: 'POST', url: '/v1/transactions', key, payload: { ...g.sale, location_id: loc.json().id } });
      expect(sale.statusCode, sale.body).toBe(201);
      const got = sale.json();
      for (const field of ['type', 'status', 'amount', 'currency', 'country', 'system', 'environment'] as const) {
        expect(got[field], field).toBe(g.answer[field]);
      }
      expect(got.fiscal_id === null, 'fiscal_id set or null').toBe(g.answer.fiscal_id === null);

      const shape = (h: any) => ({ key: h.key, placement: h.placement, kind: h.kind, mandatory: h.mandatory });
      expect(got.render_hints.map(shape)).toEqual(g.answer.render_hints.map(shape));
      for (const documented of g.answer.render_hints as any[]) {
        if (documented.kind !== 'qr_url' && documented.kind !== 'qr_data') continue;
        const actual = (got.render_hints as any[]).find((h) => h.key === documented.key).value as string;
        expect(qrFields(documented.value), `${documented.key} parameters`).toEqual(qrFields(actual));
        // Length after URL decoding: a TicketBAI id's signature characters may need escaping.
        expect(decodeURIComponent(documented.value).length, `${documented.key} length`).toBe(decodeURIComponent(actual).length);
      }
    });
  }
});
