import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { getSystem, statuses } from '../../src/countries/registry.ts';
import { inEnvironment } from '../../src/countries/shared/chain-key.ts';
import type { LocationForFiscal, TransactionDraft } from '../../src/countries/types.ts';
import type { SystemKey } from '../support/fixtures.ts';
import { IT_PIVA, configs } from '../support/fixtures.ts';
import { startTestApp, unlimitedLimiter, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, fiscalRecordOf, saleBody, saleMetadata } from '../support/transactions.ts';
import { firstTagText } from '../support/xml-tools.ts';

/*
 * Migration 0056: the numbers issued before the register of issued numbers (migration 0049)
 * get the `issued` row their plug-in gives them today (FiscalSystem.issuedDocument), so a
 * reused number is a 409 and a refund naming such an invoice finds it. What a store had
 * before 0049 is simulated by deleting the rows the creates registered; the migration's
 * rows must equal them (and what each plug-in's own `issuedDocument` names, computed here
 * from the stored transaction and its location, as the core forms the row).
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T10:00:00.000Z'), limiter: unlimitedLimiter() });
});
afterAll(() => t.close());

const MIGRATION = fs.readFileSync(new URL('../../src/store/migrations/0056_issued_backfill.sql', import.meta.url), 'utf8');
const backfill = () => t.db.exec(MIGRATION);

const sale = (loc: string, system: SystemKey, metadata: Record<string, unknown>, over: Record<string, unknown> = {}) =>
  saleBody(loc, { ...(system === 'it-sdi' ? sdiSale : {}), ...over, metadata: { ...(saleMetadata[system] ?? {}), ...metadata } });

/** An Italian sale: one 22 % line, a consumer (a TD07 names its buyer by codice fiscale). */
const sdiSale = {
  items: [{ description: 'Reso', quantity: 1, unit_price: 1000, tax_rate: 22, tax_amount: 220, total_amount: 1220 }],
  pretax_amount: 1000, tax_amount: 220, total_amount: 1220,
  customer_context: { codice_fiscale: 'RSSMRA85T10A562S' },
};

async function created(key: string, body: object): Promise<string> {
  const res = await createTx(t, key, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

interface Row { chain_key: string; role: string; document: string; transaction_id: string; created_at: string; numbering_key: string | null; number: string | null; alias: string | null }

async function issuedRows(ids: string[]): Promise<Row[]> {
  const res = await t.db.query<Row & { created_at: Date | string }>(
    `SELECT chain_key, role, document, transaction_id, created_at, numbering_key, number::text AS number, alias
       FROM chain_documents WHERE role = 'issued' AND transaction_id = ANY($1::uuid[])`, [ids]);
  return sortRows(res.rows.map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() })));
}

const sortRows = (rows: Row[]) => rows.sort((a, b) => `${a.transaction_id} ${a.chain_key} ${a.document}`.localeCompare(`${b.transaction_id} ${b.chain_key} ${b.document}`));

/**
 * The rows the core registers for these transactions today (services/transaction-entry.ts
 * `onceDocumentsOf`): each plug-in's `issuedDocument` of the stored draft and its location,
 * in the plug-in's scope or else the record's chain, per environment.
 */
async function pluginRows(ids: string[]): Promise<Row[]> {
  const res = await t.db.query<{
    id: string; environment: 'test' | 'live'; system: string; type: string; normalized: TransactionDraft; created_at: Date | string;
    location_id: string; account_id: string; name: string; country: string; tax_id: string | null; address: string | null; country_config: Record<string, unknown>;
  }>(
    `SELECT t.id, t.environment, t.system, t.type, t.normalized, t.created_at, l.id AS location_id, l.account_id, l.name, l.country, l.tax_id, l.address, l.country_config
       FROM transactions t JOIN locations l ON l.id = t.location_id WHERE t.id = ANY($1::uuid[])`, [ids]);
  const out: Row[] = [];
  for (const r of res.rows) {
    if (r.type === 'cancellation') continue;
    const system = getSystem(r.system);
    const location = { id: r.location_id, account_id: r.account_id, name: r.name, country: r.country, tax_id: r.tax_id, address: r.address, config: r.country_config } as LocationForFiscal;
    const tx = typeof r.normalized === 'string' ? JSON.parse(r.normalized) as TransactionDraft : r.normalized;
    const issued = system.issuedDocument?.({ tx, location }) ?? null;
    if (!issued) continue;
    out.push({
      chain_key: inEnvironment(issued.scope ?? system.chainKey({ location, tx }), r.environment),
      role: 'issued',
      document: issued.document,
      transaction_id: r.id,
      created_at: new Date(r.created_at).toISOString(),
      numbering_key: issued.counter ? inEnvironment(issued.counter.numberingKey, r.environment) : null,
      number: issued.counter ? String(issued.counter.number) : null,
      alias: issued.alias ?? null,
    });
  }
  return sortRows(out);
}

async function clientMax(keys: string[]): Promise<Record<string, string | null>> {
  const res = await t.db.query<{ numbering_key: string; client_max: string | null }>(
    'SELECT numbering_key, client_max::text AS client_max FROM number_series WHERE numbering_key = ANY($1::text[]) ORDER BY numbering_key', [keys]);
  return Object.fromEntries(res.rows.map((r) => [r.numbering_key, r.client_max]));
}

/** What a store had before migration 0049: no `issued` row for these transactions, the series' client_max not raised by them. */
async function forget(ids: string[], keys: string[]): Promise<void> {
  await t.db.query("DELETE FROM chain_documents WHERE role = 'issued' AND transaction_id = ANY($1::uuid[])", [ids]);
  await t.db.query('UPDATE number_series SET client_max = NULL WHERE numbering_key = ANY($1::text[])', [keys]);
}

describe('migration 0056 registers the numbers issued before the register', () => {
  it('each system\'s transactions get exactly the row its plug-in registers (scope or chain, counter, alias, live keys); others none; run twice, the same', async () => {
    const { key } = await t.signup();
    const vf = await createLocation(t, key, 'es-verifactu');
    const tbai = await createLocation(t, key, 'es-ticketbai');
    const tbaiSeries = await createLocation(t, key, 'es-ticketbai', { name: 'Bar Pepe Zarautz', country_config: { ...configs.ticketbai, series: 'Z' } });
    const sii = await createLocation(t, key, 'es-sii');
    const sdi = await createLocation(t, key, 'it-sdi');
    const sdiNoTaxId = await createLocation(t, key, 'it-sdi', { name: 'Senza tax_id', tax_id: undefined, country_config: { ...configs.sdi, partita_iva: IT_PIVA } });
    const ids = [
      // VERI*FACTU: in the counter's form (series K, number 7; series T-2026, number 7), not (0042), a number sent as an integer, the default series.
      await created(key, sale(vf, 'es-verifactu', { series: 'K', invoice_number: '7' })),
      await created(key, sale(vf, 'es-verifactu', { series: 'T', invoice_number: '2026-7' })),
      await created(key, sale(vf, 'es-verifactu', { series: 'K', invoice_number: '0042' })),
      await created(key, sale(vf, 'es-verifactu', { invoice_number: 43 })),
      await created(key, sale(vf, 'es-verifactu', {})),
      // TicketBAI: series given, the location's default series, the default A; a number not in the counter's form.
      await created(key, sale(tbai, 'es-ticketbai', { series: 'K', invoice_number: '7' })),
      await created(key, sale(tbaiSeries, 'es-ticketbai', { invoice_number: '8' })),
      await created(key, sale(tbai, 'es-ticketbai', { invoice_number: 'X-9' })),
      await created(key, sale(tbai, 'es-ticketbai', {})),
      // SII: with and without series.
      await created(key, sale(sii, 'es-sii', { series: 'T', invoice_number: '2026-7' })),
      await created(key, sale(sii, 'es-sii', { invoice_number: '99' })),
      await created(key, sale(sii, 'es-sii', {})),
      // SdI: the default TD01, a TD07 of another year, a refund (TD04), a location whose partita IVA is in its config only.
      await created(key, sale(sdi, 'it-sdi', { invoice_number: 'FT/1' })),
      await created(key, sale(sdi, 'it-sdi', { invoice_number: 'FS/2', tipo_documento: 'TD07', invoice_date: '2025-12-30' })),
      await created(key, sale(sdi, 'it-sdi', { invoice_number: 'NC/3' }, { type: 'refund' })),
      await created(key, sale(sdiNoTaxId, 'it-sdi', { invoice_number: 'FS/4', tipo_documento: 'TD07' })),
    ];
    // A cancellation (of the sale, accepted) registers no number.
    await t.worker.drain();
    await t.worker.drain();
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${ids[0]}/cancel`, key, payload: {} });
    expect(cancel.statusCode, cancel.body).toBeLessThan(300);
    ids.push(cancel.json().id as string);

    const live = await issuedRows(ids);
    expect(live).toEqual(await pluginRows(ids));
    expect(live).toHaveLength(13);
    const keys = [...new Set(live.flatMap((r) => (r.numbering_key ? [r.numbering_key] : [])))];
    expect(keys).toHaveLength(5);
    const maxBefore = await clientMax(keys);

    await forget(ids, keys);
    expect(await issuedRows(ids)).toEqual([]);
    await backfill();
    expect(await issuedRows(ids)).toEqual(live);
    expect(await clientMax(keys)).toEqual(maxBefore);
    await backfill();
    expect(await issuedRows(ids)).toEqual(live);

    // Drafts as older versions stored them (or as a plug-in reads what validation would not
    // store today): no default series or tipo_documento, a number as a JSON number, a blank
    // series, a number whose part before its last dash is no series (no counter's).
    const edit = (id: string, sql: string, value?: unknown) =>
      t.db.query(`UPDATE transactions SET normalized = (${sql})::json WHERE id = $1`, value === undefined ? [id] : [id, JSON.stringify(value)]);
    await edit(ids[2]!, "jsonb_set(normalized::jsonb, '{metadata,invoice_number}', $2::jsonb)", 'x y-5');
    await edit(ids[6]!, "normalized::jsonb #- '{metadata,series}'");
    await edit(ids[9]!, "jsonb_set(normalized::jsonb, '{metadata,series}', $2::jsonb)", '');
    await edit(ids[10]!, "jsonb_set(normalized::jsonb, '{metadata,invoice_number}', $2::jsonb)", 99);
    await edit(ids[12]!, "normalized::jsonb #- '{metadata,tipo_documento}'");
    await edit(ids[14]!, "normalized::jsonb #- '{metadata,tipo_documento}'");
    await forget(ids, []);
    await backfill();
    const older = await issuedRows(ids);
    expect(older).toEqual(await pluginRows(ids));
    expect(older.filter((r) => [ids[2], ids[6], ids[9], ids[10], ids[12], ids[14]].includes(r.transaction_id)).map((r) => [r.document, r.numbering_key?.split(':').pop() ?? null])).toEqual(
      expect.arrayContaining([['K-x y-5', null], ['Z 8', 'Z'], ['2026-7', null], ['99', null], ['TD01 2026 FT/1', null], ['TD04 2026 NC/3', null]]),
    );

    // Live keys: the `:live` twins of the chain, scope and series (a live row's series created).
    await t.db.query("UPDATE transactions SET environment = 'live' WHERE id = ANY($1::uuid[])", [ids]);
    await forget(ids, keys);
    await backfill();
    const liveRows = await issuedRows(ids);
    expect(liveRows).toEqual(await pluginRows(ids));
    expect(liveRows.map((r) => r.chain_key.endsWith(':live'))).toEqual(liveRows.map(() => true));
    expect(await clientMax(keys.map((k) => `${k}:live`))).toEqual(Object.fromEntries(keys.map((k) => [`${k}:live`, maxBefore[k]])));
    await t.db.query("UPDATE transactions SET environment = 'test' WHERE id = ANY($1::uuid[])", [ids]);

    // A transaction that has an `issued` row keeps it alone, whatever its key.
    await t.db.query("UPDATE chain_documents SET chain_key = 'elsewhere' WHERE role = 'issued' AND transaction_id = $1", [ids[1]]);
    await backfill();
    expect((await issuedRows([ids[1]!])).map((r) => r.chain_key)).toEqual(['elsewhere']);
  });

  it('a number issued before is a 409 again, per system; one the authority refused stays free', async () => {
    const { key } = await t.signup();
    const cases: [SystemKey, Record<string, unknown>][] = [
      ['es-verifactu', { series: 'B', invoice_number: '5' }],
      ['es-ticketbai', { series: 'B', invoice_number: '5' }],
      ['es-sii', { series: 'B', invoice_number: '5' }],
      ['it-sdi', { invoice_number: 'FT/5' }],
    ];
    for (const [system, metadata] of cases) {
      const loc = await createLocation(t, key, system);
      const first = await created(key, sale(loc, system, metadata));
      const refused = await created(key, sale(loc, system, { ...metadata, invoice_number: `${String(metadata.invoice_number)}9` }));
      await t.db.query('UPDATE transactions SET status = $2 WHERE id = $1', [refused, statuses.refused[0]]);
      await forget([first, refused], []);
      // Before the backfill the number is free (what a store upgraded from before 0049 did).
      const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: sale(loc, system, metadata) });
      expect(preview.statusCode, `${system} ${preview.body}`).toBe(200);
      await backfill();
      const again = await createTx(t, key, sale(loc, system, metadata));
      expect(again.statusCode, `${system} ${again.body}`).toBe(409);
      expect(again.json().error).toContain('was already issued');
      expect((await createTx(t, key, sale(loc, system, { ...metadata, invoice_number: `${String(metadata.invoice_number)}9` }))).statusCode, system).toBe(201);
    }
  });

  it('Italy: a refund naming a TD07 issued before the register is its TD08 after the backfill (by number and date, and by number alone)', async () => {
    const { key } = await t.signup();
    const sdi = await createLocation(t, key, 'it-sdi');
    const td07 = await created(key, sale(sdi, 'it-sdi', { invoice_number: 'FS/2026/0200', tipo_documento: 'TD07', invoice_date: '2026-02-27' }));
    await forget([td07], []);
    const refund = (n: string, named: Record<string, unknown>) => created(key, sale(sdi, 'it-sdi', { invoice_number: n, ...named }, { type: 'refund' }));
    const named = { original_invoice_number: 'FS/2026/0200', original_invoice_date: '2026-02-27' };
    expect(firstTagText(await fiscalRecordOf(t, key, await refund('NC/2026/0200', named)), 'TipoDocumento')).toBe('TD04');
    await backfill();
    const dated = await fiscalRecordOf(t, key, await refund('NC/2026/0201', named));
    expect(firstTagText(dated, 'TipoDocumento')).toBe('TD08');
    expect(dated).toContain('<NumeroFR>FS/2026/0200</NumeroFR><DataFR>2026-02-27</DataFR>');
    const byNumber = await fiscalRecordOf(t, key, await refund('NC/2026/0202', { original_invoice_number: 'FS/2026/0200' }));
    expect(firstTagText(byNumber, 'TipoDocumento')).toBe('TD08');
  });
});
