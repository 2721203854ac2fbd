import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { SYSTEMS, getSystem } from '../../src/countries/registry.ts';
import { createEngine } from '../../src/engine/index.ts';
import { locationBody, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';
import type { SystemKey } from '../support/fixtures.ts';
import { cleanupDirs, ok, startService, tempDir, type LiveService } from './support.ts';

/*
 * One core, three hosts (issue #17 part 1): the same input through fiscalCall (the engine,
 * its own PGlite store) and through the HTTP API (the service, either store) gives the same
 * fiscal record, for every system of the registry. Both run on one manual clock, so times
 * are equal; what must differ is normalised: ids (UUIDs, random per store) and signature or
 * certificate material (each store has its own sandbox keys), i.e. long base64 and hex runs.
 */
const clock = new ManualClock('2026-03-02T10:00:00.000Z');
let svc: LiveService;
let key: string;
const dataDir = tempDir();
beforeAll(async () => {
  svc = await startService({ clock });
  ({ key } = await svc.t.signup());
});
afterAll(async () => {
  await svc?.close();
  cleanupDirs();
});

const normalise = (s: string) => s
  .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
  // TicketBAI's identifier carries 13 characters of the signature and a CRC over them.
  .replace(/(TBAI-[A-Z0-9]+-\d{6}-)(?:[^-&"]|%2F|%2B){13,39}-\d{3}/g, '$1<sig>-<crc>')
  .replace(/([?&]cr=)\d{3}/g, '$1<crc>')
  .replace(/[A-Za-z0-9+/_-]{40,}={0,2}/g, '<b64>')
  .replace(/\b[0-9A-Fa-f]{32,}\b/g, '<hex>');

describe.each(SYSTEMS.map((s) => s.key as SystemKey))('%s', (system) => {
  it('the engine and the HTTP API build the same record', { timeout: 60_000 }, async () => {
    const country = getSystem(system).country;
    const e = createEngine({ clock, startWorker: false });
    ok(await e.call({ version: 1, method: 'init', params: { api_key: key, environment: 'sandbox', country, service_url: svc.url, data_dir: dataDir, telemetry_interval_seconds: 0 } }));
    try {
      // Read once: Italy's fixture numbers each read afresh, and both sides must build the same invoice.
      const metadata = saleMetadata[system];
      const body = (loc: string) => ({
        ...saleBody(loc, saleLines[system] ?? {}),
        ...(metadata ? { metadata } : {}),
      });
      // Engine
      const eLoc = ok(await e.call({ version: 1, method: 'create_location', params: locationBody(system) })).id;
      const eTx = ok(await e.call({ version: 1, method: 'process_transaction', params: { ...body(eLoc), idempotency_key: `golden-${system}`, inline_timeout_seconds: 0 } }));
      const eRec = ok(await e.call({ version: 1, method: 'get_fiscal_record', params: { id: eTx.id } }));
      // HTTP
      const res = await svc.t.request({ method: 'POST', url: '/v1/locations', key, payload: locationBody(system) });
      expect(res.statusCode, res.body).toBe(201);
      const hLoc = res.json().id;
      const created = await svc.t.request({ method: 'POST', url: '/v1/transactions', key, payload: body(hLoc), headers: { 'idempotency-key': `golden-${system}`, 'x-fiscalization-timeout': '0' } });
      expect(created.statusCode, created.body).toBe(201);
      const hTx = created.json();
      const hRec = await svc.t.request({ method: 'GET', url: `/v1/transactions/${hTx.id}/fiscal-record`, key });
      expect(hRec.statusCode).toBe(200);

      expect(eRec.content_type).toBe(String(hRec.headers['content-type']).split(';')[0]);
      expect(eRec.seq).toBe(Number(hRec.headers['x-fiscal-record-seq']));
      expect(normalise(eRec.body)).toBe(normalise(hRec.body));
      // The transaction answers match too, but for ids and the record's signature-derived values.
      // A receipt's signature extract (NF525, SAF-T: characters of the signature) differs with the key.
    const hints = (t: Record<string, any>) => t.render_hints.map((h: Record<string, unknown>) => (/signature|hash/.test(String(h.key)) ? { ...h, value: '<sig>' } : h));
    // Embedded-Local names a record waiting in its queue `pending_submission` (DECISIONS "Statuses").
    const statusOf = (t: Record<string, any>) => (t.status === 'pending_submission' ? 'pending' : t.status);
    const view = (t: Record<string, any>) => normalise(JSON.stringify({ ...t, id: 0, location_id: 0, account_id: 0, status: statusOf(t), render_hints: hints(t) }));
      expect(view(eTx)).toBe(view(hTx));
    } finally {
      await e.call({ version: 1, method: 'shutdown' });
    }
  });
});
