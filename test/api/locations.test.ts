import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKeys } from '../../src/crypto/master-key.ts';
import { unseal } from '../../src/crypto/sealed.ts';
import { ManualClock, startTestApp, TEST_MASTER_KEY, type TestApp } from '../support/harness.ts';
import {
  configs, ES_NIF, FR_SIRET, GR_SUBSCRIPTION_KEY, IT_PIVA, locationBodies, RANDOM_UUID, type SystemKey,
} from '../support/fixtures.ts';
import { locationBody, saleBody, saleLines } from '../support/transactions.ts';

/*
 * The Locations endpoints end to end, through HTTP. The clock is manual: each test moves
 * it on, so "newest first" and "updated_at moves" are exact, not a matter of luck.
 */
let t: TestApp;
const clock = new ManualClock('2026-03-01T09:00:00.000Z');
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t.close());

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LOCATION_FIELDS = [
  'id', 'account_id', 'name', 'country', 'system', 'address', 'tax_id', 'country_config', 'status', 'cert_expiry', 'created_at', 'updated_at',
].sort();

const SPAIN_CONFIG_REQUIRED = 'Spain locations require country_config with system field (ticketbai, verifactu or sii)';
const SPAIN_SYSTEM_INVALID = 'Spain country_config.system must be "ticketbai", "verifactu" or "sii"';
const STATUS_INVALID = "status must be 'active' or 'inactive'";
const LIMIT_INVALID = 'limit must be an integer between 1 and 100';
const OFFSET_INVALID = 'offset must be an integer between 0 and 10000';
const NOT_FOUND = { error: 'location not found' };

const tick = (ms = 1000) => clock.advance(ms);
const nowIso = () => clock.now().toISOString();

const create = (key: string, payload: unknown) => t.request({ method: 'POST', url: '/v1/locations', key, payload: payload as object });
const get = (key: string, id: string) => t.request({ method: 'GET', url: `/v1/locations/${id}`, key });
const list = (key: string, query = '') => t.request({ method: 'GET', url: `/v1/locations${query}`, key });
const patch = (key: string, id: string, payload: unknown) => t.request({ method: 'PATCH', url: `/v1/locations/${id}`, key, payload: payload as object });
const del = (key: string, id: string) => t.request({ method: 'DELETE', url: `/v1/locations/${id}`, key });

/** Creates a location and returns its body; fails the test with the answer otherwise. */
async function created(key: string, payload: unknown): Promise<Record<string, any>> {
  const res = await create(key, payload);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** A restricted key of the account behind `rootKey`. */
async function restrictedKey(rootKey: string, permissions: string[]): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/v1/api-keys', key: rootKey, payload: { name: 'restricted', permissions } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().key;
}

/** The country_config column exactly as stored. */
async function storedConfig(id: string): Promise<Record<string, unknown>> {
  const { rows } = await t.db.query<{ country_config: unknown }>('SELECT country_config FROM locations WHERE id=$1', [id]);
  expect(rows).toHaveLength(1);
  const raw = rows[0]!.country_config;
  return (typeof raw === 'string' ? JSON.parse(raw) : raw) as Record<string, unknown>;
}

const sealKey = deriveKeys(TEST_MASTER_KEY).seal;
const openSubscriptionKey = (id: string, sealed: unknown) => unseal(sealKey, sealed as string, `location:${id}:subscription_key`);
const mask = (secret: string) => `********${secret.slice(-4)}`;

/** country_config as the API returns it after normalization (secrets masked). */
const expectedConfig: Record<SystemKey, Record<string, unknown>> = {
  'es-ticketbai': { ...configs.ticketbai, territory_code: '20' },
  'es-verifactu': { ...configs.verifactu },
  'es-sii': { ...configs.sii },
  'it-sdi': { ...configs.sdi, partita_iva: IT_PIVA },
  'it-dc': { ...configs.dc },
  'fr-nf525': { ...configs.nf525 },
  'pt-saft': { ...configs.saft },
  'gr-mydata': { ...configs.mydata, subscription_key: mask(GR_SUBSCRIPTION_KEY) },
};

describe('POST /v1/locations: a valid location for every system', () => {
  it.each(Object.keys(locationBodies) as SystemKey[])('%s → 201 with the spec fields and the system', async (system) => {
    const { key, accountId } = await t.signup();
    tick();
    const body = locationBodies[system];
    const res = await create(key, body);
    expect(res.statusCode, res.body).toBe(201);
    const loc = res.json();
    expect(Object.keys(loc).sort()).toEqual(LOCATION_FIELDS);
    expect(loc.id).toMatch(UUID_RE);
    expect(loc).toEqual({
      id: loc.id,
      account_id: accountId,
      name: body.name,
      country: body.country,
      system,
      address: 'address' in body ? body.address : null,
      tax_id: body.tax_id,
      country_config: expectedConfig[system],
      status: 'active',
      cert_expiry: null,
      created_at: nowIso(),
      updated_at: nowIso(),
    });

    // What was stored reads back the same.
    const read = await get(key, loc.id);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(loc);
  });

  it('TicketBAI territory by name or by INE code stores both forms', async () => {
    const { key } = await t.signup();
    const byName = await created(key, { ...locationBodies['es-ticketbai'], country_config: { ...configs.ticketbai, territory: 'Bizkaia' } });
    expect(byName.country_config).toMatchObject({ territory: 'bizkaia', territory_code: '48' });
    const byCode = await created(key, { ...locationBodies['es-ticketbai'], country_config: { ...configs.ticketbai, territory: '48' } });
    expect(byCode.country_config).toMatchObject({ territory: 'bizkaia', territory_code: '48' });
    expect(byCode.system).toBe('es-ticketbai');
    const araba = await created(key, { ...locationBodies['es-ticketbai'], country_config: { ...configs.ticketbai, territory: '01', territory_code: '01' } });
    expect(araba.country_config).toMatchObject({ territory: 'araba', territory_code: '01' });
    expect(await storedConfig(byCode.id)).toMatchObject({ territory: 'bizkaia', territory_code: '48' });

    const mismatch = await create(key, { ...locationBodies['es-ticketbai'], country_config: { ...configs.ticketbai, territory: 'araba', territory_code: '48' } });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json()).toEqual({ error: 'country_config.territory_code does not match territory' });
    const unknown = await create(key, { ...locationBodies['es-ticketbai'], country_config: { ...configs.ticketbai, territory: 'navarra' } });
    expect(unknown.json()).toEqual({ error: 'country_config.territory must be one of gipuzkoa, araba, bizkaia (or 20, 01, 48)' });
  });

  it('normalizes: country upper-cased, name/address/tax_id trimmed, blank optional fields stored as null', async () => {
    const { key } = await t.signup();
    const loc = await created(key, { name: '  Café Paris  ', country: 'fr', address: '  1 rue de Rivoli ', tax_id: ` ${FR_SIRET} `, country_config: configs.nf525 });
    expect(loc).toMatchObject({ name: 'Café Paris', country: 'FR', system: 'fr-nf525', address: '1 rue de Rivoli', tax_id: FR_SIRET });
    const bare = await created(key, { name: 'Café Lyon', country: 'FR', address: '', tax_id: '', country_config: configs.nf525 });
    expect(bare).toMatchObject({ address: null, tax_id: null });
  });

  it('accepts the length limits exactly: name 255, address 500, tax_id 50', async () => {
    const { key } = await t.signup();
    const loc = await created(key, { ...locationBodies['fr-nf525'], name: 'n'.repeat(255), address: 'a'.repeat(500), tax_id: 't'.repeat(50) });
    expect(loc.name).toHaveLength(255);
    expect(loc.address).toHaveLength(500);
    expect(loc.tax_id).toHaveLength(50);
  });
});

describe('POST /v1/locations: validation', () => {
  let key: string;
  beforeAll(async () => {
    ({ key } = await t.signup());
  });
  afterAll(async () => {
    // Nothing refused was stored.
    const res = await list(key);
    expect(res.json().total).toBe(0);
  });

  const expect400 = async (payload: unknown, error: string) => {
    const res = await create(key, payload);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error });
  };
  const es = (country_config: unknown) => ({ name: 'Bar', country: 'ES', tax_id: ES_NIF, country_config });
  const it_ = (country_config: unknown, tax_id?: string) => ({ name: 'Bar', country: 'IT', ...(tax_id ? { tax_id } : {}), country_config });

  it('answers the Go-validator message for a missing, empty or too long name', async () => {
    const { name: _n, ...noName } = locationBodies['fr-nf525'];
    await expect400(noName, "Key: 'CreateRequest.Name' Error:Field validation for 'Name' failed on the 'required' tag");
    await expect400({ ...noName, name: '' }, "Key: 'CreateRequest.Name' Error:Field validation for 'Name' failed on the 'required' tag");
    await expect400({ ...noName, name: null }, "Key: 'CreateRequest.Name' Error:Field validation for 'Name' failed on the 'required' tag");
    await expect400({ ...noName, name: 'n'.repeat(256) }, "Key: 'CreateRequest.Name' Error:Field validation for 'Name' failed on the 'max' tag");
    const blank = await create(key, { ...noName, name: '   ' });
    expect(blank.statusCode).toBe(400);
    expect(blank.json().error).toMatch(/^Key: 'CreateRequest\.Name' Error:Field validation for 'Name' failed on the '\w+' tag$/);
    await expect400({ ...noName, name: 42 }, 'name must be a string');
  });

  it('refuses address > 500 and tax_id > 50 characters', async () => {
    await expect400({ ...locationBodies['fr-nf525'], address: 'a'.repeat(501) }, "Key: 'CreateRequest.Address' Error:Field validation for 'Address' failed on the 'max' tag");
    await expect400({ ...locationBodies['fr-nf525'], tax_id: 't'.repeat(51) }, "Key: 'CreateRequest.TaxID' Error:Field validation for 'TaxID' failed on the 'max' tag");
  });

  it('refuses a missing or unsupported country', async () => {
    const { country: _c, ...noCountry } = locationBodies['fr-nf525'];
    await expect400(noCountry, "Key: 'CreateRequest.Country' Error:Field validation for 'Country' failed on the 'required' tag");
    await expect400({ ...noCountry, country: 'DE' }, 'country must be one of ES, IT, FR, PT, GR');
    await expect400({ ...noCountry, country: 'E' }, 'country must be one of ES, IT, FR, PT, GR');
    const long = await create(key, { ...noCountry, country: 'ESP' });
    expect(long.statusCode).toBe(400);
    expect(long.json().error).toBe("Key: 'CreateRequest.Country' Error:Field validation for 'Country' failed on the 'max' tag");
  });

  it('refuses a malformed body and a non-object country_config', async () => {
    const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: '{"name":', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'malformed JSON body' });
    await expect400({ ...locationBodies['fr-nf525'], country_config: ['x'] }, 'country_config must be an object');
    await expect400({ ...locationBodies['fr-nf525'], country_config: 'x' }, 'country_config must be an object');
  });

  it('Spain: config and system required, system must be a known one, tax_id a valid NIF', async () => {
    const { country_config: _cc, ...noConfig } = es(undefined);
    await expect400(noConfig, SPAIN_CONFIG_REQUIRED);
    await expect400(es(null), SPAIN_CONFIG_REQUIRED);
    await expect400(es({ legal_name: 'Ejemplo SL' }), SPAIN_CONFIG_REQUIRED);
    await expect400(es({ ...configs.verifactu, system: '' }), SPAIN_CONFIG_REQUIRED);
    await expect400(es({ ...configs.verifactu, system: 'batuz' }), SPAIN_SYSTEM_INVALID);
    await expect400(es({ ...configs.verifactu, system: 'VERIFACTU' }), SPAIN_SYSTEM_INVALID);
    await expect400(es({ ...configs.verifactu, software_nif: undefined }), 'country_config.software_nif is required for verifactu');
    await expect400(es({ ...configs.ticketbai, tbai_license: ' ' }), 'country_config.tbai_license is required for ticketbai');
    await expect400(es({ ...configs.ticketbai, territory: undefined }), 'country_config.territory is required for ticketbai');
    await expect400(es({ ...configs.sii, tsa_url: 'https://tsa.example.com' }), 'country_config.tsa_url is not a known field for sii');
    await expect400({ ...es(configs.sii), tax_id: 'B12345675' }, 'tax_id must be a valid Spanish NIF');
  });

  it('Italy: routing, partita_iva, formato_trasmissione, codice_fiscale', async () => {
    await expect400(it_(undefined, IT_PIVA), 'Italian locations require country_config with formato_trasmissione (SDI) or system "dc" (Documento Commerciale)');
    await expect400(it_(configs.sdi), 'partita_iva is required');
    await expect400(it_({ ...configs.sdi, formato_trasmissione: 'FPR13' }, IT_PIVA), 'formato_trasmissione must be FPA12 or FPR12');
    await expect400(it_({ ...configs.sdi, codice_fiscale: 'abc' }, IT_PIVA), 'country_config.codice_fiscale must be 11-16 alphanumeric characters');
    await expect400(it_({ ...configs.dc, codice_fiscale: undefined }), 'country_config.codice_fiscale must be 11-16 alphanumeric characters');
    await expect400(it_(configs.sdi, '01234567890'), 'partita_iva check digit is invalid');
  });

  it('France: legal_name and register_id', async () => {
    const { country_config: _cc, ...noConfig } = locationBodies['fr-nf525'];
    await expect400(noConfig, 'country_config.legal_name is required for France locations');
    await expect400({ ...noConfig, country_config: { register_id: FR_SIRET } }, 'country_config.legal_name is required for France locations');
    await expect400({ ...noConfig, country_config: { legal_name: 'Exemple SAS' } }, 'country_config.register_id is required for France locations');
    await expect400({ ...noConfig, country_config: { ...configs.nf525, siret: FR_SIRET } }, 'country_config.siret is not a known field for NF525');
  });

  it('Portugal: series required, atcud_code required', async () => {
    const { country_config: _cc, ...noConfig } = locationBodies['pt-saft'];
    await expect400(noConfig, 'country_config.series is required');
    await expect400({ ...noConfig, country_config: { series: {} } }, 'country_config.series is required');
    await expect400({ ...noConfig, country_config: { series: { FT: { prefix: 'A' } } } }, 'country_config.series[FT].atcud_code is required');
    await expect400({ ...noConfig, tax_id: '123456780', country_config: configs.saft }, 'tax_id must be a valid Portuguese NIF');
  });

  it('Greece: afm, subscription_key, env, afm = tax_id', async () => {
    const body = locationBodies['gr-mydata'];
    await expect400({ ...body, country_config: undefined }, 'country_config.afm must be a valid 9-digit AFM');
    await expect400({ ...body, country_config: { ...configs.mydata, afm: '094259217' } }, 'country_config.afm must be a valid 9-digit AFM');
    await expect400({ ...body, country_config: { ...configs.mydata, subscription_key: undefined } }, 'country_config.subscription_key is required');
    await expect400({ ...body, country_config: { ...configs.mydata, env: 'prod' } }, 'country_config.env must be one of sandbox, production, provider_sandbox, provider_production');
    await expect400({ ...body, country_config: { ...configs.mydata, branch: '0' } }, 'country_config.branch must be an integer >= 0');
    await expect400({ ...body, tax_id: '123456783' }, 'country_config.afm must equal tax_id');
  });

  // The authorities' schemas: InvoicesDoc (branch xs:int, series at most 50), SAF-T PT
  // InvoiceNo ("<type> <prefix>/<n>", `[^/^ ]`, at most 60). The sandbox stub took these and
  // every document of the location would be refused live.
  it('Greece and Portugal: values the authority\'s schema cannot carry', async () => {
    const gr = locationBodies['gr-mydata'];
    await expect400({ ...gr, country_config: { ...configs.mydata, default_series: 'A'.repeat(51) } }, 'country_config.default_series must be 1-50 characters without spaces');
    await expect400({ ...gr, country_config: { ...configs.mydata, branch: 2 ** 40 } }, "country_config.branch must be at most 2147483647 (myDATA's branch is a 32-bit integer)");
    await expect400({ ...gr, country_config: { ...configs.mydata, aade_user_id: 'χρήστης' } }, 'country_config.aade_user_id must be printable ASCII characters (it is sent as an HTTP header)');
    const pt = locationBodies['pt-saft'];
    await expect400({ ...pt, country_config: { series: { FT: { prefix: 'A^1', atcud_code: 'AAJFJMVNTN' } } } }, 'country_config.series[FT].prefix must not contain spaces, "/" or "^"');
    await expect400(
      { ...pt, country_config: { series: { FT: { prefix: 'A'.repeat(47), atcud_code: 'AAJFJMVNTN' } } } },
      'country_config.series[FT].prefix must be at most 46 characters (the SAF-T InvoiceNo "<type> <prefix>/<number>" holds 60)',
    );
  });
});

describe('Greek subscription_key: sealed at rest, masked when read', () => {
  it('seals on create, masks on every read, keeps the secret when the masked config is sent back, replaces it with a new one', async () => {
    const { key } = await t.signup();
    const loc = await created(key, locationBodies['gr-mydata']);
    const aad = `location:${loc.id}:subscription_key`;

    // At rest: sealed, bound to this location and field, never the plaintext.
    const stored = await storedConfig(loc.id);
    expect(stored.subscription_key).toMatch(/^sealed:v1:/);
    expect(JSON.stringify(stored)).not.toContain(GR_SUBSCRIPTION_KEY);
    expect(openSubscriptionKey(loc.id, stored.subscription_key)).toBe(GR_SUBSCRIPTION_KEY);
    expect(() => unseal(sealKey, stored.subscription_key as string, `location:${RANDOM_UUID}:subscription_key`)).toThrow();
    expect(aad).toContain(loc.id);

    // Read: masked to the last 4, in the create answer, GET and the list.
    const masked = `********${GR_SUBSCRIPTION_KEY.slice(-4)}`;
    expect(loc.country_config.subscription_key).toBe(masked);
    const read = (await get(key, loc.id)).json();
    expect(read.country_config.subscription_key).toBe(masked);
    const listed = await list(key);
    expect(listed.json().data[0].country_config.subscription_key).toBe(masked);
    for (const body of [JSON.stringify(loc), JSON.stringify(read), listed.body]) expect(body).not.toContain(GR_SUBSCRIPTION_KEY);

    // PATCH back what was read (masked secret) with another change: the secret stays.
    tick();
    const kept = await patch(key, loc.id, { country_config: { ...read.country_config, legal_name: 'Νέα Επωνυμία ΑΕ' } });
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json().country_config).toMatchObject({ legal_name: 'Νέα Επωνυμία ΑΕ', subscription_key: masked });
    const afterKeep = await storedConfig(loc.id);
    expect(afterKeep.subscription_key).toMatch(/^sealed:v1:/);
    expect(afterKeep.legal_name).toBe('Νέα Επωνυμία ΑΕ');
    expect(openSubscriptionKey(loc.id, afterKeep.subscription_key)).toBe(GR_SUBSCRIPTION_KEY);

    // PATCH with a new secret: replaced, sealed, masked to the new last 4.
    const fresh = 'brand-new-subscription-key-WXYZ';
    tick();
    const replaced = await patch(key, loc.id, { country_config: { ...read.country_config, subscription_key: fresh } });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json().country_config.subscription_key).toBe('********WXYZ');
    expect(replaced.body).not.toContain(fresh);
    const afterReplace = await storedConfig(loc.id);
    expect(afterReplace.subscription_key).toMatch(/^sealed:v1:/);
    expect(JSON.stringify(afterReplace)).not.toContain(fresh);
    expect(openSubscriptionKey(loc.id, afterReplace.subscription_key)).toBe(fresh);

    // A config without the secret is refused, and the stored secret is untouched.
    const { subscription_key: _sk, ...withoutKey } = read.country_config;
    const refused = await patch(key, loc.id, { country_config: withoutKey });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ error: 'country_config.subscription_key is required' });
    expect(openSubscriptionKey(loc.id, (await storedConfig(loc.id)).subscription_key)).toBe(fresh);
  });

  it('masks a short secret entirely and keeps it when the mask is sent back', async () => {
    const { key } = await t.signup();
    const loc = await created(key, { ...locationBodies['gr-mydata'], country_config: { ...configs.mydata, subscription_key: 'sk_123' } });
    expect(loc.country_config.subscription_key).toBe('********');
    const back = await patch(key, loc.id, { country_config: loc.country_config });
    expect(back.statusCode, back.body).toBe(200);
    expect(openSubscriptionKey(loc.id, (await storedConfig(loc.id)).subscription_key)).toBe('sk_123');
  });
});

describe('GET /v1/locations', () => {
  let key: string;
  const ids: { es: string; it: string; fr: string } = { es: '', it: '', fr: '' };
  beforeAll(async () => {
    ({ key } = await t.signup());
    tick();
    ids.es = (await created(key, locationBodies['es-verifactu'])).id;
    tick();
    ids.it = (await created(key, locationBodies['it-sdi'])).id;
    tick();
    ids.fr = (await created(key, locationBodies['fr-nf525'])).id;
  });

  const idsOf = (res: { json(): any }) => res.json().data.map((l: { id: string }) => l.id);

  it('lists newest first as {data,total,limit,offset} with default limit 20', async () => {
    const res = await list(key);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(['data', 'limit', 'offset', 'total']);
    expect(res.json()).toMatchObject({ total: 3, limit: 20, offset: 0 });
    expect(idsOf(res)).toEqual([ids.fr, ids.it, ids.es]);
    for (const l of res.json().data) expect(Object.keys(l).sort()).toEqual(LOCATION_FIELDS);
    // The list items are the same as a GET of each.
    expect(res.json().data[1]).toEqual((await get(key, ids.it)).json());
  });

  it('pages with limit and offset; total is the whole count', async () => {
    const first = await list(key, '?limit=2');
    expect(first.json()).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect(idsOf(first)).toEqual([ids.fr, ids.it]);
    const second = await list(key, '?limit=2&offset=2');
    expect(second.json()).toMatchObject({ total: 3, limit: 2, offset: 2 });
    expect(idsOf(second)).toEqual([ids.es]);
    const middle = await list(key, '?limit=1&offset=1');
    expect(idsOf(middle)).toEqual([ids.it]);
    const past = await list(key, '?offset=10000&limit=100');
    expect(past.statusCode).toBe(200);
    expect(past.json()).toEqual({ data: [], total: 3, limit: 100, offset: 10000 });
  });

  it('filters by country (any case) and by status', async () => {
    const itOnly = await list(key, '?country=IT');
    expect(itOnly.json()).toMatchObject({ total: 1 });
    expect(idsOf(itOnly)).toEqual([ids.it]);
    expect(idsOf(await list(key, '?country=es'))).toEqual([ids.es]);
    expect((await list(key, '?country=GR')).json()).toEqual({ data: [], total: 0, limit: 20, offset: 0 });

    const off = await patch(key, ids.es, { status: 'inactive' });
    expect(off.statusCode).toBe(200);
    try {
      const inactive = await list(key, '?status=inactive');
      expect(inactive.json()).toMatchObject({ total: 1 });
      expect(idsOf(inactive)).toEqual([ids.es]);
      const active = await list(key, '?status=active');
      expect(active.json()).toMatchObject({ total: 2 });
      expect(idsOf(active)).toEqual([ids.fr, ids.it]);
      expect(idsOf(await list(key, '?status=active&country=ES'))).toEqual([]);
      expect(idsOf(await list(key, '?status=inactive&country=ES'))).toEqual([ids.es]);
    } finally {
      await patch(key, ids.es, { status: 'active' });
    }
  });

  it.each([
    ['?status=bogus', STATUS_INVALID],
    ['?status=ACTIVE', STATUS_INVALID],
    ['?status=deleted', STATUS_INVALID],
    ['?limit=0', LIMIT_INVALID],
    ['?limit=101', LIMIT_INVALID],
    ['?limit=abc', LIMIT_INVALID],
    ['?limit=1.5', LIMIT_INVALID],
    // Decimal digits only: what `+text` would also read as a number is refused.
    ['?limit=1e2', LIMIT_INVALID],
    ['?limit=0x10', LIMIT_INVALID],
    ['?offset=1e3', OFFSET_INVALID],
    ['?offset=-1', OFFSET_INVALID],
    ['?offset=10001', OFFSET_INVALID],
    ['?country=ESP', 'country must be a 2-letter ISO 3166-1 code'],
  ])('refuses %s with 400', async (query, error) => {
    const res = await list(key, query);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error });
  });

  it('accepts the page bounds exactly: limit 1 and 100, offset 0', async () => {
    expect((await list(key, '?limit=1')).json()).toMatchObject({ limit: 1, total: 3 });
    expect((await list(key, '?limit=100&offset=0')).json()).toMatchObject({ limit: 100, offset: 0, total: 3 });
  });
});

describe('GET /v1/locations/{id}', () => {
  it('returns the location; an unknown or malformed id is 404 location not found', async () => {
    const { key } = await t.signup();
    const loc = await created(key, locationBodies['pt-saft']);
    const res = await get(key, loc.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(loc);

    for (const id of [RANDOM_UUID, crypto.randomUUID(), 'not-a-uuid', '123', `${loc.id}x`]) {
      const missing = await get(key, id);
      expect(missing.statusCode, id).toBe(404);
      expect(missing.json()).toEqual(NOT_FOUND);
    }
  });

  // Ids the router refuses, or that cannot be ours, still answer in the API's own shape.
  it('an id longer than 100 characters is 404 location not found too', async () => {
    const { key } = await t.signup();
    const res = await get(key, 'a'.repeat(101));
    expect(res.json()).toEqual(NOT_FOUND);
    expect(res.statusCode).toBe(404);
  });

  it('a badly percent-encoded id is answered with the {error: string} shape', async () => {
    const { key } = await t.signup();
    const res = await get(key, '%E0%A4%A');
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(Object.keys(res.json())).toEqual(['error']);
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('needs an API key', async () => {
    const res = await t.request({ method: 'GET', url: `/v1/locations/${RANDOM_UUID}` });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'missing or invalid Authorization header' });
  });
});

describe('PATCH /v1/locations/{id}', () => {
  it('changes name, address and status; updated_at moves, created_at does not', async () => {
    const { key } = await t.signup();
    tick();
    const loc = await created(key, locationBodies['es-verifactu']);
    const createdAt = nowIso();

    tick(5000);
    const renamed = await patch(key, loc.id, { name: '  Bar Pepe Centro ', address: 'Calle Nueva 3' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toEqual({ ...loc, name: 'Bar Pepe Centro', address: 'Calle Nueva 3', updated_at: nowIso() });
    expect(renamed.json().created_at).toBe(createdAt);
    expect(renamed.json().updated_at).not.toBe(createdAt);

    tick();
    const cleared = await patch(key, loc.id, { address: null });
    expect(cleared.json()).toMatchObject({ address: null, name: 'Bar Pepe Centro', updated_at: nowIso() });

    tick();
    const off = await patch(key, loc.id, { status: 'inactive' });
    expect(off.json()).toMatchObject({ status: 'inactive', updated_at: nowIso() });
    const on = await patch(key, loc.id, { status: 'active' });
    expect(on.json().status).toBe('active');

    // The change is stored, not only answered.
    expect((await get(key, loc.id)).json()).toEqual(on.json());
  });

  it('re-validates country_config: a valid one is stored (and may switch system), an invalid one changes nothing', async () => {
    const { key } = await t.signup();
    const loc = await created(key, locationBodies['es-verifactu']);

    tick();
    const changed = await patch(key, loc.id, { country_config: { ...configs.verifactu, installation_number: ' 002 ' } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().country_config).toEqual({ ...configs.verifactu, installation_number: '002' });
    expect(await storedConfig(loc.id)).toEqual({ ...configs.verifactu, installation_number: '002' });

    tick();
    const switched = await patch(key, loc.id, { country_config: { ...configs.ticketbai, territory: '48' } });
    expect(switched.statusCode, switched.body).toBe(200);
    expect(switched.json()).toMatchObject({ system: 'es-ticketbai', country_config: { territory: 'bizkaia', territory_code: '48' } });

    const before = (await get(key, loc.id)).json();
    tick();
    const cases: Array<[unknown, string]> = [
      [{ country_config: { ...configs.verifactu, software_nif: '' } }, 'country_config.software_nif is required for verifactu'],
      [{ country_config: { system: 'batuz' } }, SPAIN_SYSTEM_INVALID],
      [{ country_config: null }, SPAIN_CONFIG_REQUIRED],
      [{ country_config: [] }, 'country_config must be an object'],
      // The other changes of a refused PATCH are not applied either.
      [{ name: 'Should not stick', status: 'inactive', country_config: { legal_name: 'x' } }, SPAIN_CONFIG_REQUIRED],
    ];
    for (const [body, error] of cases) {
      const res = await patch(key, loc.id, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toEqual({ error });
    }
    expect((await get(key, loc.id)).json()).toEqual(before);
  });

  it('seals the system (and TicketBAI\'s territory) once the location has transactions: a cancel goes where its original went', async () => {
    const { key } = await t.signup();
    const loc = await created(key, locationBodies['es-ticketbai']);
    const sale = await t.request({ method: 'POST', url: '/v1/transactions', key, payload: saleBody(loc.id, { timestamp: t.clock.now().toISOString() }) });
    expect(sale.statusCode, sale.body).toBe(201);
    const before = (await get(key, loc.id)).json();
    tick();
    for (const [config, error] of [
      [configs.verifactu, 'country_config.system cannot be changed once the location has transactions (it issues es-ticketbai records): create a new location for es-verifactu'],
      [{ ...configs.ticketbai, territory: 'bizkaia' }, 'country_config.territory cannot be changed once the location has transactions: create a new location'],
    ] as const) {
      const res = await patch(key, loc.id, { country_config: config });
      expect([res.statusCode, res.json()]).toEqual([400, { error }]);
    }
    expect((await get(key, loc.id)).json()).toEqual(before);
    // Other fields still change, and the territory given again (as a code) is no change.
    const renamed = await patch(key, loc.id, { country_config: { ...configs.ticketbai, territory: '20', legal_name: 'Otro Nombre SL' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json().country_config).toMatchObject({ territory: 'gipuzkoa', legal_name: 'Otro Nombre SL' });
  });

  it.each([
    [{ status: 'paused' }, STATUS_INVALID],
    [{ status: 'deleted' }, STATUS_INVALID],
    [{ name: '' }, 'name must be 1-255 characters'],
    [{ name: 'n'.repeat(256) }, 'name must be 1-255 characters'],
    [{ country: 'IT' }, 'country cannot be changed'],
    [{ name: 'Renamed', country: 'FR' }, 'country cannot be changed'],
    [{ tax_id: 'B87654321' }, 'tax_id cannot be changed'],
    [{ tax_id: '' }, 'tax_id cannot be changed'],
    [{ name: 'Renamed', tax_id: 'X1234567L' }, 'tax_id cannot be changed'],
  ])('refuses %j with 400 and changes nothing', async (body, error) => {
    const { key } = await t.signup();
    const loc = await created(key, locationBodies['es-sii']);
    tick();
    const res = await patch(key, loc.id, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error });
    expect((await get(key, loc.id)).json()).toEqual(loc);
  });

  it('a blank address clears it (null), as on create, not an empty string', async () => {
    const { key } = await t.signup();
    const loc = await created(key, locationBodies['es-verifactu']);
    for (const address of ['', '   ']) {
      const res = await patch(key, loc.id, { address });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().address).toBeNull();
      expect((await get(key, loc.id)).json().address).toBeNull();
      await patch(key, loc.id, { address: 'Gran Vía 2' });
    }
  });

  it('refuses an address > 500 characters with 400 and changes nothing', async () => {
    const { key } = await t.signup();
    const loc = await created(key, locationBodies['es-sii']);
    tick();
    const res = await patch(key, loc.id, { address: 'a'.repeat(501) });
    expect(res.statusCode).toBe(400);
    expect((await get(key, loc.id)).json()).toEqual(loc);
  });

  // PATCH fields carry their own messages, not the create form's Go-validator text.
  it('answers the route\'s own message for an address > 500 characters', async () => {
    const { key } = await t.signup();
    const loc = await created(key, locationBodies['es-sii']);
    const res = await patch(key, loc.id, { address: 'a'.repeat(501) });
    expect(res.json()).toEqual({ error: 'address must be at most 500 characters or null' });
  });

  it('accepts the current country and tax_id (any case, padded)', async () => {
    const { key } = await t.signup();
    const loc = await created(key, locationBodies['es-sii']);
    tick();
    const res = await patch(key, loc.id, { country: 'ES', tax_id: ES_NIF, name: 'Same ids' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ country: 'ES', tax_id: ES_NIF, name: 'Same ids', updated_at: nowIso() });
    const again = await patch(key, loc.id, { country: ' es ', tax_id: ` ${ES_NIF} ` });
    expect(again.statusCode, again.body).toBe(200);

    // A location without tax_id: sending none (blank) is the same value.
    const noTax = await created(key, { name: 'Sin NIF', country: 'FR', country_config: configs.nf525 });
    expect(noTax.tax_id).toBeNull();
    expect((await patch(key, noTax.id, { tax_id: '' })).statusCode).toBe(200);
    const setting = await patch(key, noTax.id, { tax_id: FR_SIRET });
    expect(setting.statusCode).toBe(400);
    expect(setting.json()).toEqual({ error: 'tax_id cannot be changed' });
  });

  it('an unknown, malformed or deleted id is 404 location not found', async () => {
    const { key } = await t.signup();
    const loc = await created(key, locationBodies['pt-saft']);
    expect((await del(key, loc.id)).statusCode).toBe(204);
    for (const id of [RANDOM_UUID, 'not-a-uuid', loc.id]) {
      const res = await patch(key, id, { name: 'x' });
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
    }
  });
});

describe('DELETE /v1/locations/{id}', () => {
  it('soft-deletes: 204, then 404 on GET, PATCH and DELETE, hidden from lists, the row kept', async () => {
    const { key } = await t.signup();
    const keep = await created(key, locationBodies['it-dc']);
    tick();
    const gone = await created(key, locationBodies['it-sdi']);
    expect((await list(key)).json().total).toBe(2);

    tick();
    const res = await del(key, gone.id);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    const after = await get(key, gone.id);
    expect(after.statusCode).toBe(404);
    expect(after.json()).toEqual(NOT_FOUND);
    const listed = await list(key);
    expect(listed.json()).toMatchObject({ total: 1 });
    expect(listed.json().data.map((l: { id: string }) => l.id)).toEqual([keep.id]);
    expect((await list(key, '?country=IT&status=active')).json().total).toBe(1);

    const again = await del(key, gone.id);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual(NOT_FOUND);

    // Soft: the row stays for the fiscal record, marked deleted.
    const { rows } = await t.db.query<{ deleted_at: Date | null }>('SELECT deleted_at FROM locations WHERE id=$1', [gone.id]);
    expect(rows[0]?.deleted_at).not.toBeNull();

    for (const id of [RANDOM_UUID, 'not-a-uuid']) {
      const missing = await del(key, id);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual(NOT_FOUND);
    }
    // The other location is untouched.
    expect((await get(key, keep.id)).json()).toEqual(keep);
  });

  it("keeps serving a deleted location's inspector files (SAF-T, JET, closures, archives), to its account only", async () => {
    const { key } = await t.signup();
    const other = await t.signup();
    const pt = await created(key, locationBody('pt-saft'));
    const fr = await created(key, locationBodies['fr-nf525']);
    for (const loc of [pt, fr]) {
      const sale = await t.request({ method: 'POST', url: '/v1/transactions', key, payload: saleBody(loc.id, { ...(loc === fr ? saleLines['fr-nf525'] : {}), timestamp: t.clock.now().toISOString() }) });
      expect(sale.statusCode, sale.body).toBe(201);
      expect((await del(key, loc.id)).statusCode).toBe(204);
    }
    const period = t.clock.now().toISOString().slice(0, 7);
    const saft = await t.request({ method: 'GET', url: `/v1/locations/${pt.id}/saft?period=${period}`, key });
    expect(saft.statusCode, saft.body).toBe(200);
    expect(saft.body).toContain('<InvoiceNo>');
    const jet = await t.request({ method: 'GET', url: `/v1/locations/${fr.id}/jet`, key });
    expect(jet.statusCode).toBe(200);
    expect(jet.json().total).toBeGreaterThan(0);
    for (const file of ['closures', 'archives']) expect((await t.request({ method: 'GET', url: `/v1/locations/${fr.id}/${file}`, key })).statusCode).toBe(200);
    // Deleted or not, another account's location is not found.
    for (const url of [`/v1/locations/${pt.id}/saft?period=${period}`, `/v1/locations/${fr.id}/jet`]) {
      const res = await t.request({ method: 'GET', url, key: other.key });
      expect([res.statusCode, res.json()]).toEqual([404, NOT_FOUND]);
    }
  });
});

describe('restricted keys', () => {
  it('a read-only key reads but cannot write', async () => {
    const { key: root } = await t.signup();
    const loc = await created(root, locationBodies['fr-nf525']);
    const reader = await restrictedKey(root, ['locations:read']);

    const denied = { error: 'insufficient permission: locations:write required' };
    const post = await create(reader, locationBodies['fr-nf525']);
    expect(post.statusCode).toBe(403);
    expect(post.json()).toEqual(denied);
    const p = await patch(reader, loc.id, { name: 'x' });
    expect(p.statusCode).toBe(403);
    expect(p.json()).toEqual(denied);
    const d = await del(reader, loc.id);
    expect(d.statusCode).toBe(403);
    expect(d.json()).toEqual(denied);

    expect((await list(reader)).json().total).toBe(1);
    expect((await get(reader, loc.id)).json()).toEqual(loc);

    const noRead = await restrictedKey(root, ['account:read']);
    const l = await list(noRead);
    expect(l.statusCode).toBe(403);
    expect(l.json()).toEqual({ error: 'insufficient permission: locations:read required' });
    const g = await get(noRead, loc.id);
    expect(g.statusCode).toBe(403);
    expect(g.json()).toEqual({ error: 'insufficient permission: locations:read required' });
  });

  it('a country-scoped key provisions only in its countries', async () => {
    const { key: root } = await t.signup();
    const esKey = await restrictedKey(root, ['locations:read', 'locations:write', 'country:ES']);

    const es = await create(esKey, locationBodies['es-ticketbai']);
    expect(es.statusCode, es.body).toBe(201);
    expect(es.json().system).toBe('es-ticketbai');

    const it_ = await create(esKey, locationBodies['it-sdi']);
    expect(it_.statusCode).toBe(403);
    expect(it_.json()).toEqual({ error: 'API key is not allowed to act in country IT' });
    const gr = await create(esKey, locationBodies['gr-mydata']);
    expect(gr.json()).toEqual({ error: 'API key is not allowed to act in country GR' });

    // Another country's location (made by the root key) cannot be changed or deleted by it.
    const itLoc = await created(root, locationBodies['it-sdi']);
    const p = await patch(esKey, itLoc.id, { name: 'x' });
    expect(p.statusCode).toBe(403);
    expect(p.json()).toEqual({ error: 'API key is not allowed to act in country IT' });
    const d = await del(esKey, itLoc.id);
    expect(d.statusCode).toBe(403);
    expect(d.json()).toEqual({ error: 'API key is not allowed to act in country IT' });
    expect((await get(root, itLoc.id)).json()).toEqual(itLoc);

    // Its own country's location it may change and delete.
    expect((await patch(esKey, es.json().id, { name: 'Renamed' })).json().name).toBe('Renamed');
    expect((await del(esKey, es.json().id)).statusCode).toBe(204);
  });
});

describe('merchant_count in GET /v1/account/status', () => {
  it('counts active, non-deleted locations', async () => {
    const { key } = await t.signup();
    const count = async () => {
      const res = await t.request({ method: 'GET', url: '/v1/account/status', key });
      expect(res.statusCode).toBe(200);
      return res.json().merchant_count as number;
    };
    expect(await count()).toBe(0);
    const a = await created(key, locationBodies['es-sii']);
    const b = await created(key, locationBodies['pt-saft']);
    const c = await created(key, locationBodies['gr-mydata']);
    expect(await count()).toBe(3);
    expect((await patch(key, a.id, { status: 'inactive' })).statusCode).toBe(200);
    expect(await count()).toBe(2);
    expect((await del(key, b.id)).statusCode).toBe(204);
    expect(await count()).toBe(1);
    expect((await del(key, a.id)).statusCode).toBe(204); // inactive and deleted: still not counted
    expect(await count()).toBe(1);
    expect((await patch(key, c.id, { status: 'inactive' })).statusCode).toBe(200);
    expect(await count()).toBe(0);
  });
});
