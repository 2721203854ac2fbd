import type { TestApp } from './harness.ts';
import { configs, locationBodies, type SystemKey } from './fixtures.ts';

/**
 * The France locations `createLocation` made (their ids): `saleBody` sells them at French
 * rates, since France refuses a line at a rate it does not have (fr-nf525/rates.ts: 21 %
 * is Spanish). Every other location keeps saleBody's lines as they were.
 */
const frenchLocations = new Set<string>();

/**
 * A valid canonical transaction body for a location: two lines, 21 % and 10 % (1800 + 246
 * = 2046); at a France location made by `createLocation`, 20 % and 10 % (1800 + 240 = 2040).
 */
export function saleBody(locationId: string, over: Record<string, unknown> = {}) {
  return {
    location_id: locationId,
    timestamp: '2026-03-02T09:30:00Z',
    currency: 'EUR',
    payment_method: 'card',
    items: [
      { description: 'Menú del día', quantity: 1, unit_price: 1200, tax_rate: 10, tax_amount: 120, total_amount: 1320 },
      { description: 'Vino', quantity: 2, unit_price: 300, tax_rate: 21, tax_amount: 126, total_amount: 726 },
    ],
    pretax_amount: 1800,
    tax_amount: 246,
    total_amount: 2046,
    // A copy: callers edit the body's lines in place.
    ...(frenchLocations.has(locationId) ? structuredClone(saleLines['fr-nf525']) : {}),
    ...over,
  };
}

/**
 * Metadata each system needs for a plain sale. Italy's merchant numbers its invoices and a
 * number is issued once (FiscalSystem.issuedDocument): each read gives the next number.
 */
let sdiInvoice = 0;
export const saleMetadata: Partial<Record<SystemKey, Record<string, unknown>>> = {
  get 'it-sdi'() {
    return { invoice_number: `FT-2026-${String(++sdiInvoice).padStart(4, '0')}` };
  },
  'es-sii': { simplified: true },
};

/**
 * Lines each system needs instead of saleBody's (21 % and 10 %), same net amounts: myDATA
 * has a VAT category for Greek rates only (13 % and 24 % here); France takes French rates
 * only (20 % and 10 %: 21 % is Spanish, fr-nf525/rates.ts).
 */
export const saleLines: Partial<Record<SystemKey, Record<string, unknown>>> = {
  'fr-nf525': {
    items: [
      { description: 'Menu du jour', quantity: 1, unit_price: 1200, tax_rate: 10, tax_amount: 120, total_amount: 1320 },
      { description: 'Vin', quantity: 2, unit_price: 300, tax_rate: 20, tax_amount: 120, total_amount: 720 },
    ],
    pretax_amount: 1800,
    tax_amount: 240,
    total_amount: 2040,
  },
  'gr-mydata': {
    items: [
      { description: 'Μεζέδες', quantity: 1, unit_price: 1200, tax_rate: 13, tax_amount: 156, total_amount: 1356 },
      { description: 'Κρασί', quantity: 2, unit_price: 300, tax_rate: 24, tax_amount: 144, total_amount: 744 },
    ],
    pretax_amount: 1800,
    tax_amount: 300,
    total_amount: 2100,
  },
};

/** saleBody at a France location: saleLines' French lines (10 % and 20 %: 1800 + 240 = 2040). */
export const frenchSaleBody = (locationId: string, over: Record<string, unknown> = {}) =>
  saleBody(locationId, { ...structuredClone(saleLines['fr-nf525']), ...over });

/** Location bodies, Portugal with the simplified-invoice series too. */
export function locationBody(system: SystemKey): Record<string, unknown> {
  if (system === 'pt-saft') {
    return {
      ...locationBodies['pt-saft'],
      country_config: { ...configs.saft, series: { ...configs.saft.series, FS: { prefix: 'B', atcud_code: 'BBJFJMVNTN' }, NC: { prefix: 'C', atcud_code: 'CCJFJMVNTN' } } },
    };
  }
  return locationBodies[system];
}

export async function createLocation(t: TestApp, key: string, system: SystemKey, over: Record<string, unknown> = {}): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { ...locationBody(system), ...over } });
  if (res.statusCode !== 201) throw new Error(`location ${system}: ${res.statusCode} ${res.body}`);
  const id: string = res.json().id;
  if (system === 'fr-nf525') frenchLocations.add(id);
  return id;
}

export async function createTx(t: TestApp, key: string, body: object, headers: Record<string, string> = {}) {
  return t.request({ method: 'POST', url: '/v1/transactions', key, payload: body, headers });
}

export async function getTx(t: TestApp, key: string, id: string) {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}`, key });
  if (res.statusCode !== 200) throw new Error(`get ${id}: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** A create that must answer 201: its transaction. */
export async function createdTx(t: TestApp, key: string, body: object, headers: Record<string, string> = {}): Promise<Record<string, any>> {
  const res = await createTx(t, key, body, headers);
  if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** A create that must answer 400 with exactly `error`. */
export async function refusedTx(t: TestApp, key: string, body: object, error: string): Promise<void> {
  const res = await createTx(t, key, body);
  // Plain throws, as createdTx: the benchmarks import this module outside vitest.
  if (res.statusCode !== 400 || res.json().error !== error) throw new Error(`create: expected 400 ${JSON.stringify({ error })}, got ${res.statusCode} ${res.body}`);
}

/** The value of a transaction's render hint `key` (undefined when it has none). */
export const hintOf = (tx: Record<string, any>, key: string): string | undefined =>
  (tx.render_hints as Array<{ key: string; value: string }>).find((h) => h.key === key)?.value;

/** A transaction's fiscal record as GET …/fiscal-record answers it (200). */
export async function fiscalRecordOf(t: TestApp, key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  if (res.statusCode !== 200) throw new Error(`fiscal record of ${id}: ${res.statusCode} ${res.body}`);
  return res.body;
}
